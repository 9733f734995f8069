// The build: esbuild bundles the CLI and the Piscina worker entry, with the dependencies they load, into
// dist/src/ (cli.js, worker.js and their chunks, split at the code's dynamic imports so a command
// loads only what it uses). One file per chunk instead of hundreds of modules: Node's ES module loader pays
// per file (resolution, package.json lookups, a compile and link), three times per run (the main thread and
// each worker thread). Type checking is `npm run typecheck` (tsc), not part of the build.
// Left outside the bundle: dockerode (loaded only by the Docker backend; its ssh transport has an optional native
// part) and piscina's optional native helper for thread priorities.
import { chmodSync, cpSync, mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { readFile } from "node:fs/promises";
import { createHash } from "node:crypto";
import { build } from "esbuild";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const DIST = join(ROOT, "dist");

/**
 * Piscina is bundled too (as a dependency it was 14 CommonJS files for the main thread and 3 more for each worker).
 * It starts its threads on `worker.js` beside its own index.js: in the bundle that is its worker bundled on its own
 * as dist/src/piscina_worker.js, beside the chunk that holds piscina.
 */
const piscinaWorkerBeside = {
  name: "piscina-worker-beside",
  setup(b) {
    b.onLoad({ filter: /[\\/]node_modules[\\/]piscina[\\/]dist[\\/]index\.js$/ }, async (args) => {
      const text = await readFile(args.path, "utf8");
      const from = "(0, node_path_1.resolve)(__dirname, 'worker.js')";
      if (!text.includes(from)) throw new Error(`build: piscina's worker path not found in ${args.path}`);
      // Resolved at run time by the chunk's own require (the banner's, relative to the chunk), not by the bundler.
      const to = 'require.resolve(["./piscina_worker.js"][0])';
      return { contents: text.replace(from, to), loader: "js" };
    });
  },
};

const started = performance.now();
rmSync(DIST, { recursive: true, force: true });
const options = {
  absWorkingDir: ROOT,
  // Output names keep the paths the code relies on: src/run/runner.ts starts `./worker.js` beside itself and
  // src/report/html/page.ts reads `./client/` beside itself, so every chunk lands in dist/src/ with them.
  chunkNames: "src/[name]-[hash]",
  outdir: DIST,
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  sourcemap: "linked",
  external: ["dockerode", "@napi-rs/nice"],
  plugins: [piscinaWorkerBeside],
  // CommonJS dependencies inside an ES module bundle call require() for Node's built-ins.
  banner: {
    js: 'import { createRequire as __hermesCreateRequire } from "node:module"; const require = __hermesCreateRequire(import.meta.url);',
  },
  logLevel: "warning",
  write: false,
};
// The CLI and the worker are bundled apart. Bundled together, every module both threads load sat in a chunk per
// combination of users: a worker loaded 37 files before its first line ran, each one a resolution, a read and a
// compile. Apart, each thread's modules split only at its own dynamic imports (21 files for the worker). A chunk's
// name carries a hash of its content, so a name both builds write must hold the same text: checked before writing.
const outputs = new Map();
for (const result of await Promise.all([
  build({ ...options, entryPoints: { "src/cli": "src/cli.ts" } }),
  build({
    ...options,
    entryPoints: { "src/worker": "src/run/worker.ts", "src/piscina_worker": "node_modules/piscina/dist/worker.js" },
  }),
])) {
  for (const file of result.outputFiles) {
    const earlier = outputs.get(file.path);
    if (earlier !== undefined && Buffer.compare(earlier, file.contents) !== 0)
      throw new Error(`build: ${file.path} differs between the CLI and the worker bundles`);
    outputs.set(file.path, file.contents);
  }
}
for (const [path, contents] of outputs) {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, contents);
}
// The build's identity (src/store/build_identity.ts): 16 hex digits of a sha256 over the bundle's .js files, names
// and contents, made here once rather than by hashing 5 MB at every run's start.
const buildHash = createHash("sha256");
for (const [path, contents] of [...outputs].filter(([p]) => p.endsWith(".js")).sort(([a], [b]) => (a < b ? -1 : 1))) {
  buildHash.update(`${path.slice(join(DIST, "src").length + 1)}\0`);
  buildHash.update(contents);
  buildHash.update("\0");
}
writeFileSync(join(DIST, "src", "build-id"), `${buildHash.digest("hex").slice(0, 16)}\n`);
// The report page's browser assets (plain JS and CSS, not bundled) beside the chunk that reads them.
cpSync(join(ROOT, "src", "report", "html", "client"), join(DIST, "src", "client"), { recursive: true });
// npm links bin files executable, but a plain `node dist/...` or `./dist/src/cli.js` user may not go through npm.
chmodSync(join(DIST, "src", "cli.js"), 0o755);
// The test setup (test/setup/build.ts) rebuilds only when a source is newer than this stamp.
writeFileSync(join(DIST, ".build-stamp"), `${new Date().toISOString()}\n`);
const chunks = readdirSync(join(DIST, "src")).filter((f) => f.endsWith(".js")).length;
console.log(
  `build: dist/src/cli.js, worker.js and ${chunks - 2} chunks in ${((performance.now() - started) / 1000).toFixed(1)} s`,
);
