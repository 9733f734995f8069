// Bundles the dependencies every run loads at start-up into one CommonJS file each (dist/vendor/<name>.cjs,
// loaded with a V8 code cache made here: <name>.cache) behind a small ES module (dist/vendor/<name>.js), and
// points the compiled modules' imports at those. Node's ES module loader pays per file (resolution, package.json
// lookups, a compile and link each), and zod, execa and yaml are 95, 106 and dozens of files: loaded three
// times per run (the main thread and each worker thread). `node scripts/bench/import-cost.mjs` compares one
// import of each package with its bundle.
// Only the names the compiled code imports are re-exported, so esbuild keeps what they need.
// Packages left as they are: piscina (it starts its own worker script from its folder), dockerode and
// typescript (loaded only on demand), openai and tar-stream (loaded only by the paths that use them).
import { readFileSync, readdirSync, writeFileSync, mkdirSync, rmSync } from "node:fs";
import { dirname, join, relative, sep } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { spawnSync } from "node:child_process";
import { build } from "esbuild";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const DIST = join(ROOT, "dist");
const VENDOR = join(DIST, "vendor");
const VENDORED = ["zod", "yaml", "execa", "csv-stringify/sync", "cli-progress", "p-limit"];

const jsFiles = (dir) =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? (e.name === "vendor" ? [] : jsFiles(join(dir, e.name))) : e.name.endsWith(".js") ? [join(dir, e.name)] : [],
  );

// tsc writes static imports as one statement per line: `import X from "p";`, `import { a, b as c } from "p";`.
const importRe = /^import\s+(?:(\w+)\s*,?\s*)?(?:\{([^}]*)\})?\s*from\s+"([^"]+)";$/gm;
const uses = new Map(VENDORED.map((p) => [p, { default: false, names: new Set() }]));
const files = jsFiles(DIST);
for (const file of files) {
  for (const m of readFileSync(file, "utf8").matchAll(importRe)) {
    const use = uses.get(m[3]);
    if (!use) continue;
    if (m[1]) use.default = true;
    for (const spec of (m[2] ?? "").split(",").map((s) => s.trim()).filter(Boolean)) use.names.add(spec.split(/\s+as\s+/)[0]);
  }
}

rmSync(VENDOR, { recursive: true, force: true });
mkdirSync(VENDOR, { recursive: true });
const fileOf = (pkg) => join(VENDOR, `${pkg.replace(/\//g, "__")}.js`);
const bundles = [];
for (const [pkg, use] of uses) {
  if (!use.default && use.names.size === 0) continue;
  const lines = [];
  if (use.default) lines.push(`export { default } from ${JSON.stringify(pkg)};`);
  if (use.names.size) lines.push(`export { ${[...use.names].sort().join(", ")} } from ${JSON.stringify(pkg)};`);
  const shim = fileOf(pkg);
  const cjs = shim.replace(/\.js$/, ".cjs");
  await build({
    stdin: { contents: lines.join("\n"), resolveDir: ROOT, sourcefile: `vendor-${pkg}.js`, loader: "js" },
    bundle: true,
    format: "cjs",
    platform: "node",
    target: "node20",
    outfile: cjs,
    logLevel: "error",
    legalComments: "inline",
  });
  // The ES module the compiled code imports: the bundle's exports, by name.
  const base = cjs.slice(VENDOR.length + 1);
  const shimLines = [`import { loadVendored } from "./load.js";`, `const m = loadVendored(${JSON.stringify(base)});`];
  if (use.default) shimLines.push(`export default m.default;`);
  for (const name of [...use.names].sort()) shimLines.push(`export const ${name} = m.${name};`);
  writeFileSync(shim, shimLines.join("\n") + "\n");
  bundles.push(base);
}

// Each thread that loads a bundle compiles it again (zod's is 0.75 MB, loaded by the main thread and every
// worker). V8's code cache, made here once, turns most of that compile into a deserialisation; V8 checks the
// cache against the source, its own version and flags, and compiles as usual when it does not fit.
writeFileSync(
  join(VENDOR, "load.js"),
  `import { readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Script } from "node:vm";

const here = dirname(fileURLToPath(import.meta.url));

function run(name) {
  const file = join(here, name);
  let cachedData;
  try {
    cachedData = readFileSync(file.replace(/\\.cjs$/, ".cache"));
  } catch {
    // no cache: V8 compiles the source
  }
  const source = "(function (exports, require, module, __filename, __dirname) { " + readFileSync(file, "utf8") + "\\n});";
  const script = new Script(source, { filename: file, cachedData });
  const module = { exports: {} };
  script.runInThisContext().call(module.exports, module.exports, createRequire(file), module, file, here);
  return { script, file, exports: module.exports };
}

/** The exports of a bundle in this folder (name.cjs), compiled with its code cache (name.cache) when V8 accepts it. */
export function loadVendored(name) {
  return run(name).exports;
}

/** Build step: runs the bundle once, then writes its code cache (with the functions that ran compiled). */
export function makeVendorCache(name) {
  const { script, file } = run(name);
  writeFileSync(file.replace(/\\.cjs$/, ".cache"), script.createCachedData());
}
`,
);
const loader = pathToFileURL(join(VENDOR, "load.js")).href;
for (const base of bundles) {
  const made = spawnSync(process.execPath, ["--input-type=module", "-e", `import { makeVendorCache } from ${JSON.stringify(loader)}; makeVendorCache(${JSON.stringify(base)});`], { encoding: "utf8" });
  if (made.status !== 0) {
    console.error(`vendor-deps: loading ${base} failed: ${made.stderr.trim()}`);
    process.exit(1);
  }
}

// Any import of a vendored package left in another form would load the package a second time, unbundled.
const left = [];
for (const file of files) {
  const text = readFileSync(file, "utf8");
  const next = text.replace(importRe, (stmt, _d, _n, pkg) => {
    if (!uses.has(pkg)) return stmt;
    let rel = relative(dirname(file), fileOf(pkg)).split(sep).join("/");
    if (!rel.startsWith(".")) rel = `./${rel}`;
    return stmt.replace(`"${pkg}"`, JSON.stringify(rel));
  });
  if (next !== text) writeFileSync(file, next);
  if (VENDORED.some((p) => next.includes(`"${p}"`))) left.push(file);
}
if (left.length) {
  console.error(`vendor-deps: imports of vendored packages left unrewritten in: ${left.map((f) => relative(ROOT, f)).join(", ")}`);
  process.exit(1);
}
