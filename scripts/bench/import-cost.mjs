// Wall time of one `import` of each start-up dependency, from the package (node_modules) and from its bundle
// (dist/vendor, made by `npm run build`), each in a fresh node process, interleaved.
//   npm run build && node scripts/bench/import-cost.mjs [rounds=3]
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const rounds = Number(process.argv[2] ?? 3);
const packages = [
  ["zod", "zod.js"],
  ["execa", "execa.js"],
  ["yaml", "yaml.js"],
  ["csv-stringify/sync", "csv-stringify__sync.js"],
  ["cli-progress", "cli-progress.js"],
];
const timeImport = (specifier) => {
  const code = `const t = performance.now(); await import(${JSON.stringify(specifier)}); process.stdout.write(String(performance.now() - t));`;
  const r = spawnSync(process.execPath, ["--input-type=module", "-e", code], { cwd: ROOT, encoding: "utf8" });
  if (r.status !== 0) throw new Error(`import ${specifier}: ${r.stderr.trim()}`);
  return Number(r.stdout);
};
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
for (const [pkg, file] of packages) {
  const bundle = join(ROOT, "dist", "vendor", file);
  if (!existsSync(bundle)) throw new Error(`${bundle} is missing: run npm run build first`);
  const raw = [], bundled = [];
  for (let i = 0; i < rounds; i++) {
    raw.push(timeImport(pkg));
    bundled.push(timeImport(pathToFileURL(bundle).href));
  }
  console.log(`${pkg.padEnd(20)} package ${median(raw).toFixed(0).padStart(4)} ms   bundle ${median(bundled).toFixed(0).padStart(4)} ms   ratio ${(median(bundled) / median(raw)).toFixed(2)}  (medians of ${rounds})`);
}
