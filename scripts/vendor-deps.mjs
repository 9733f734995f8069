// Bundles the dependencies every run loads at start-up into one file each (dist/vendor/<name>.js) and points
// the compiled modules' imports at them. Node's ES module loader pays per file (resolution, package.json
// lookups, a compile and link each), and zod, execa and yaml are 95, 106 and dozens of files: loaded three
// times per run (the main thread and each worker thread). `node scripts/bench/import-cost.mjs` compares one
// import of each package with its bundle.
// Only the names the compiled code imports are re-exported, so esbuild keeps what they need.
// Packages left as they are: piscina (it starts its own worker script from its folder), dockerode and
// typescript (loaded only on demand), openai and tar-stream (loaded only by the paths that use them).
import { readFileSync, readdirSync, writeFileSync, mkdirSync, rmSync } from "node:fs";
import { dirname, join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
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
for (const [pkg, use] of uses) {
  if (!use.default && use.names.size === 0) continue;
  const lines = [];
  if (use.default) lines.push(`export { default } from ${JSON.stringify(pkg)};`);
  if (use.names.size) lines.push(`export { ${[...use.names].sort().join(", ")} } from ${JSON.stringify(pkg)};`);
  await build({
    stdin: { contents: lines.join("\n"), resolveDir: ROOT, sourcefile: `vendor-${pkg}.js`, loader: "js" },
    bundle: true,
    format: "esm",
    platform: "node",
    target: "node20",
    outfile: fileOf(pkg),
    logLevel: "error",
    legalComments: "inline",
    // CommonJS code inside a package requires node built-ins: give the bundle a real require.
    banner: { js: "import { createRequire as __vendorCreateRequire } from 'node:module'; const require = __vendorCreateRequire(import.meta.url);" },
  });
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
