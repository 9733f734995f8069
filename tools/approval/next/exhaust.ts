/**
 * Exhaustion of the machine's disk, memory or processes: endless input into a file or a buffering
 * program, huge allocations, loops that fork or create without end, unbounded fan-out, load generators.
 * The knowledge (which programs never end, buffer, create, pace a loop) is data in rules/exhaustion.ts.
 */
import { optionValue, upstream, type CommandLine, type Loop, type SimpleCommand } from "./model.js";
import { EXHAUST } from "./rules/exhaustion.js";
import { programOf, type Invocation } from "./unwrap.js";
import { texts, type Word } from "./words.js";

/** `30G`, `4M`, `1e12` as bytes (0 when not a size). */
export function bytesOf(text: string): number {
  const m = EXHAUST.size.exec(text);
  if (!m) return /^\d+(\.\d+)?e\d+$/i.test(text) ? Number(text) : 0;
  return Number(m[1]) * (EXHAUST.units[(m[2] ?? "")[0]?.toLowerCase() ?? ""] ?? 1);
}

/** A command whose output never ends: `yes`, `cat /dev/zero`, `tr … < /dev/urandom`. */
export function isEndless(cmd: SimpleCommand): boolean {
  const p = programOf(cmd);
  const args = texts(cmd.argv.slice(1));
  if (EXHAUST.endlessPrograms.has(p) || (p === "find" && EXHAUST.wholeFilesystem.test(args.join(" ")))) return true;
  if (EXHAUST.boundedReaders.has(p)) return false;
  // an option (`-f`) is never an endless file: the arguments and `<` redirections are what it may read
  const endless = (file: string) => EXHAUST.endlessFiles.test(file);
  return args.some(endless) || cmd.redirects.some((r) => r.op === "<" && endless(r.target.text));
}

const writesFile = (cmd: SimpleCommand) =>
  cmd.redirects.some((r) => r.op.includes(">") && !/^&?\d*$/.test(r.target.text) && r.target.text !== "/dev/null") ||
  (programOf(cmd) === "tee" && cmd.argv.length > 1);

/** A stage that bounds the input it passes on: `head`, `dd`, `pv`, `tr -c`/`tr -n`… */
const bounds = (c: SimpleCommand) =>
  EXHAUST.limiters.has(programOf(c)) || (programOf(c) === "tr" && /^-[a-z]*[cn]$/.test(c.argv[1]?.text ?? ""));

/** Endless input written to a file or held by a buffering program. */
function endlessStream(inv: Invocation): string | undefined {
  const stages = [...upstream(inv.command).reverse(), inv.command];
  const start = stages.findIndex(isEndless);
  if (start < 0 || stages.slice(start + 1).some(bounds)) return undefined;
  const buffers = EXHAUST.buffering.has(inv.program);
  if (writesFile(inv.command) && !EXHAUST.limiters.has(inv.program))
    return `${inv.program} writes endless input to a file`;
  // a buffering stage after the endless one holds all it gets; one that reads an endless file itself reads forever
  if (buffers && start < stages.length - 1) return `${inv.program} buffers endless input`;
  if (buffers && inv.program !== "xargs") return `${inv.program} reads endless input`;
  return undefined;
}

/** dd from an endless source into a file: without a count, or a huge one. */
function ddSize(args: string[]): string | undefined {
  const [from = "", to, count, blockSize = "512"] = ["if", "of", "count", "bs"].map((n) => optionValue(args, [n]));
  if (!EXHAUST.endlessFiles.test(from) || !to || to === "/dev/null") return undefined;
  if (count === undefined && !args.some((a) => /^iflag=.*count_bytes/.test(a)))
    return "dd copies endless input into a file";
  return bytesOf(blockSize) * Number(count) >= EXHAUST.hugeFile ? "dd writes a huge file" : undefined;
}

/** dd, head, fallocate, truncate: sizes beyond reason, or no end at all. */
function hugeSizes(inv: Invocation): string | undefined {
  const args = texts(inv.args);
  if (inv.program === "dd") return ddSize(args);
  const size = bytesOf(optionValue(args, EXHAUST.sizeOptions) ?? "");
  if (inv.program === "head" && size >= EXHAUST.hugeRead && args.some((a) => EXHAUST.endlessFiles.test(a)))
    return `head reads ${size} bytes of endless input`;
  if (/^(fallocate|truncate)$/.test(inv.program) && size >= EXHAUST.hugeFile) return "allocates a huge file";
  return undefined;
}

/** xargs -P 0, parallel -j0 over a long or endless list. */
export function fanOut(cmd: SimpleCommand): string | undefined {
  const program = programOf(cmd);
  if (program !== "xargs" && program !== "parallel") return undefined;
  const args = texts(cmd.argv.slice(1));
  const procs = Number(optionValue(args, ["-P", "--max-procs", "-j", "--jobs"]));
  if (procs !== 0 && !(procs >= EXHAUST.manyParallel)) return undefined;
  const feeder = upstream(cmd).at(-1) ?? cmd;
  // `seq 100000`, `seq inf`: a list too long to run at once
  const endsFar = (w: Word) => w.text === "inf" || (Number(w.text) >= 10_000 && Number.isFinite(Number(w.text)));
  const long = programOf(feeder) === "seq" && feeder.argv.some(endsFar);
  const literal = Number(/:::\s.*\$\(seq\s+(\d+\s+)?(\d+)\)/.exec(args.join(" "))?.[2]) >= 1000;
  return long || isEndless(feeder) || literal ? `${program} runs without a bound on processes` : undefined;
}

/** Load generators aimed at another host with high concurrency, rate or duration, or flooding. */
function loadGenerator(inv: Invocation): string | undefined {
  if (!EXHAUST.loadTools.has(inv.program)) return undefined;
  const args = texts(inv.args);
  const target = args.find((a) => /^(https?:\/\/|\d+\.\d+\.\d+\.\d+|[\w-]+\.[\w.-]+)/.test(a)) ?? "";
  if (/^(https?:\/\/)?(localhost|127\.|\[?::1)/.test(target)) return undefined;
  if (EXHAUST.flooders.has(inv.program) && args.some((a) => EXHAUST.floodOptions.test(a))) return "floods a host";
  if (EXHAUST.floodOnly.has(inv.program)) return undefined;
  const numbers = args.flatMap((a) => a.split(/[=,]/)).map((a) => Number(a.replace(/^-+\w+=?/, "")));
  const durations = args.filter((a) => /^(\d+)(h|H)$|^\d+(m|M)$/.test(a) && parseInt(a, 10) >= (/h/i.test(a) ? 1 : 30));
  const heavy = numbers.some((n) => n >= 500) || durations.length > 0;
  return heavy ? `${inv.program} loads ${target || "a host"} heavily` : undefined;
}

/** Judges one invocation; returns the reason it exhausts the machine, if it does. */
export function exhaustion(inv: Invocation): string | undefined {
  const timeout = optionValue(texts(inv.args), ["-t", "--timeout"]) ?? "0";
  if (/^(stress|stress-ng)$/.test(inv.program) && /^0+[smhd]?$/.test(timeout)) return "stress test";
  return endlessStream(inv) ?? hugeSizes(inv) ?? loadGenerator(inv);
}

const startsContainer = (c: SimpleCommand) =>
  EXHAUST.containerEngines.has(programOf(c)) && /^(run|create)$/.test(c.argv[1]?.text ?? "");

/** Loops that fork or create without end, or very many times. */
export function loopExhaustion(line: CommandLine): string | undefined {
  const bodies = new Map<Loop, SimpleCommand[]>();
  for (const c of line.commands) for (let l = c.loop; l; l = l.outer) bodies.set(l, [...(bodies.get(l) ?? []), c]);
  for (const [loop, body] of bodies) {
    const programs = body.map(programOf);
    const background = body.some((c) => c.background && (c.loop === loop || c.loop?.endless));
    const endlessInBackground = background && body.some((c) => c.background && (isEndless(c) || c.loop?.endless));
    const creates = programs.some((p) => EXHAUST.creators.has(p)) || body.some(writesFile);
    if (loop.endless && !programs.some((p) => EXHAUST.pacers.has(p)) && (creates || background))
      return "an endless loop that creates files or processes";
    const total = count(loop);
    const many =
      total !== undefined &&
      ((background && total >= EXHAUST.manyBackground) ||
        (body.some(startsContainer) && total >= EXHAUST.manyContainers) ||
        (creates && total >= EXHAUST.manyFiles));
    if (many) return `a loop that runs ${total} times, leaving processes or files behind`;
    if (endlessInBackground && (total === undefined || total >= 4))
      return "a loop that starts endless processes in the background";
  }
  return undefined;
}

/** How many times a loop's body runs, counting outer loops. */
function count(loop: Loop | undefined): number | undefined {
  if (!loop) return 1;
  const outer = count(loop.outer);
  return loop.count === undefined || outer === undefined ? undefined : loop.count * outer;
}
