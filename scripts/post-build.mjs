// Make the CLI entry executable after tsc (npm links bin files, but a plain `node dist/...` user may not).
import { chmodSync, existsSync } from "node:fs";
const cli = new URL("../dist/src/cli.js", import.meta.url);
if (existsSync(cli)) chmodSync(cli, 0o755);
