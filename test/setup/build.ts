/**
 * Global setup of the projects that run the built CLI: `npm run build` once per vitest process (the projects
 * share it), and only when a build input is newer than the last build (`dist/.build-stamp`, written by
 * scripts/build.mjs), like make.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { join, resolve } from "node:path";

const ROOT = resolve(import.meta.dirname, "..", "..");
const STAMP = join(ROOT, "dist", ".build-stamp");
const INPUTS = ["src", "tools", "toolset_distributions.ts", "scripts/build.mjs", "tsconfig.json", "package.json"];

/** The newest modification time among the files under `path` (0 when it does not exist). */
function newestMtime(path: string): number {
  if (!existsSync(path)) return 0;
  const st = statSync(path);
  if (!st.isDirectory()) return st.mtimeMs;
  let newest = st.mtimeMs;
  for (const entry of readdirSync(path)) newest = Math.max(newest, newestMtime(join(path, entry)));
  return newest;
}

export function buildIsStale(): boolean {
  if (!existsSync(STAMP)) return true;
  const built = statSync(STAMP).mtimeMs;
  return INPUTS.some((p) => newestMtime(join(ROOT, p)) > built);
}

declare global {
  // One build per vitest process, whichever project's setup asks first.
  var hermesTestBuild: Promise<void> | undefined;
}

async function build(): Promise<void> {
  if (!buildIsStale()) return;
  process.stderr.write("test setup: npm run build (a source is newer than dist/)\n");
  const started = Date.now();
  try {
    execFileSync("npm", ["run", "--silent", "build"], {
      cwd: ROOT,
      stdio: ["ignore", "pipe", "pipe"],
      encoding: "utf8",
    });
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string };
    throw new Error(`npm run build failed:\n${e.stdout ?? ""}${e.stderr ?? ""}`);
  }
  process.stderr.write(`test setup: built in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
}

export default async function setup(): Promise<void> {
  globalThis.hermesTestBuild ??= build();
  await globalThis.hermesTestBuild;
}
