// Make the CLI entry executable after tsc (npm links bin files, but a plain `node dist/...` user may not),
// and copy the report page's browser assets (plain JS and CSS, not compiled by tsc) beside their loader.
import { chmodSync, cpSync, existsSync } from "node:fs";
const cli = new URL("../dist/src/cli.js", import.meta.url);
if (existsSync(cli)) chmodSync(cli, 0o755);
cpSync(new URL("../src/report/html/client/", import.meta.url), new URL("../dist/src/report/html/client/", import.meta.url), { recursive: true });
