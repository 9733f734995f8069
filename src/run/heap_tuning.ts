/**
 * Garbage-collector settings for a run. A loop's live state is small (tens of KB), but with V8's defaults each
 * worker's heap grew to several times its live size before a full collection, and RSS with it: at 256 loops
 * and 20-turn conversations, about 1 MB of RSS per live loop of which most was garbage not yet collected
 * (after a full collection each worker held about 24 MB for 128 loops).
 * A smaller young generation and a lower old-generation growing factor keep the heap near its live size. In
 * the throughput benchmark (scripts/bench/throughput.mjs, 256 loops, 20 turns) this halves RSS per live loop
 * (about 1.0 → 0.45–0.49 MB) and costs about 0.05–0.1 ms of CPU per turn in more full collections: a trade
 * for memory, measured in docs/benchmarks.md.
 */
import { setFlagsFromString } from "node:v8";
import type { ResourceLimits } from "node:worker_threads";

/** Young generation of each worker thread: 24 MB is two 8 MB semi-spaces (V8's default reaches 3 × 16 MB). */
export const WORKER_RESOURCE_LIMITS: ResourceLimits = { maxYoungGenerationSizeMb: 24 };

/**
 * The old generation may grow to 1.5 × its live size before the next full collection (V8 allows up to 4 ×).
 * 1.3 × saved a little more memory but cost more CPU; 2 × left about 0.55 MB per loop.
 */
const HEAP_GROWING_PERCENT = 50;

/**
 * TurboFan inlines up to this much bytecode into one optimised function (V8's default 920). A run's code is
 * mostly large async functions and library code compiled once and run a few thousand times; with the default,
 * optimising them cost about a quarter of a 2,048-task run's CPU (`perf`: V8's compiler threads), more than the
 * inlining saved. 230 took about 10 % off the whole run's CPU, the worker thread's not higher (docs/benchmarks.md).
 */
const MAX_INLINED_BYTECODE_CUMULATIVE = 230;

/**
 * WebAssembly is compiled by the baseline compiler (Liftoff) only. The one module a run loads is the bash grammar
 * of the approval parser (tree-sitter-bash.wasm, 1.4 MB), and V8 then optimised most of it with TurboFan in the
 * background: about 0.7 s of CPU per process that parses a command, while a parse was no faster for it (57–58 µs
 * either way; the time is in the JS glue). Measured parsing 10, 1,000 and 20,000 commands in one process: 0.76,
 * 0.79, 1.93 s of CPU with TurboFan against 0.07, 0.14, 1.21 s without (docs/benchmarks.md).
 */
const WASM_FLAG = "--liftoff-only";

let tuned = false;

/**
 * Sets the old-generation growing factor, the inlining budget and Liftoff-only WebAssembly for every isolate of the
 * process (the main thread and the workers). Each is read when used (at each collection, at each optimisation, at
 * each module's compilation), so setting them after start-up is safe. Each is skipped when the user passed their
 * own on the node command line.
 * Called by a worker thread once its set-up is done (src/run/worker.ts), not before the pool starts: any flag set
 * at run time changes V8's flag hash, and a thread started after that cannot use the code cache built into Node
 * for its own modules (node:http, streams, …): a worker's start-up then took about twice the CPU (40–55 against
 * 85–115 ms for ten of them, measured alone). No WebAssembly is compiled before that point (the approval parser
 * loads with the first command to judge).
 */
export function tuneHeapGrowth(): void {
  if (tuned) return;
  tuned = true;
  const given = (flag: string) => [...process.execArgv, process.env.NODE_OPTIONS ?? ""].some((a) => a.includes(flag));
  if (!given("heap-growing-percent")) setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
  if (!given("max-inlined-bytecode-size-cumulative"))
    setFlagsFromString(`--max-inlined-bytecode-size-cumulative=${MAX_INLINED_BYTECODE_CUMULATIVE}`);
  if (!given("liftoff") && !given("wasm-tier")) setFlagsFromString(WASM_FLAG);
}
