/**
 * Exhaustion of the machine's disk, memory or processes: endless input into a file or a buffering
 * program, huge allocations, loops that fork or create without end, unbounded fan-out, load generators.
 * The knowledge (which programs never end, buffer, create, pace a loop) is data in rules/exhaustion.ts.
 */
import type { CommandLine, Loop, SimpleCommand } from "./model.js";
import { EXHAUST } from "./rules/exhaustion.js";
import { basename, type Invocation } from "./unwrap.js";
import type { Word } from "./words.js";

/** `30G`, `4M`, `1e12` as bytes (0 when not a size). */
export function bytesOf(text: string): number {
  const m = EXHAUST.size.exec(text);
  if (!m) return /^\d+(\.\d+)?e\d+$/i.test(text) ? Number(text) : 0;
  return Number(m[1]) * (EXHAUST.units[(m[2] ?? "")[0]?.toLowerCase() ?? ""] ?? 1);
}

const programOf = (c: SimpleCommand | undefined) => (c?.argv[0] ? basename(c.argv[0].text) : "");
const texts = (words: Word[]) => words.map((w) => w.text);

/** The value of `-c N`, `--bytes=N`, `bs=N`, … */
function optionValue(args: string[], names: RegExp): string | undefined {
  for (let i = 0; i < args.length; i++) {
    const eq = /^([^=]+)=(.*)$/.exec(args[i]!);
    if (eq && names.test(eq[1]!)) return eq[2];
    if (names.test(args[i]!) && args[i + 1] !== undefined) return args[i + 1];
  }
  return undefined;
}

/** A command whose output never ends: `yes`, `cat /dev/zero`, `tr … < /dev/urandom`. */
export function isEndless(cmd: SimpleCommand): boolean {
  const p = programOf(cmd);
  const args = texts(cmd.argv.slice(1));
  if (EXHAUST.endlessPrograms.has(p) || (p === "find" && EXHAUST.wholeFilesystem.test(args.join(" ")))) return true;
  if (p === "head" || p === "dd") return false;
  const reads = [
    ...args.filter((a) => !a.startsWith("-")),
    ...cmd.redirects.filter((r) => r.op === "<").map((r) => r.target.text),
  ];
  return reads.some((a) => EXHAUST.endlessFiles.test(a)) && !/^(ls|stat|file|test|\[|echo|printf|mknod|chmod)$/.test(p);
}

/** The pipeline from its first command to `cmd`. */
function pipeline(cmd: SimpleCommand): SimpleCommand[] {
  const stages = [cmd];
  for (let c = cmd.pipedFrom; c; c = c.pipedFrom) stages.unshift(c);
  return stages;
}

const writesFile = (cmd: SimpleCommand) =>
  cmd.redirects.some((r) => r.op.includes(">") && !/^&?\d*$/.test(r.target.text) && r.target.text !== "/dev/null") ||
  (programOf(cmd) === "tee" && cmd.argv.length > 1);

/** Endless input written to a file or held by a buffering program. */
function endlessStream(inv: Invocation): string | undefined {
  const stages = pipeline(inv.command);
  const start = stages.findIndex(isEndless);
  if (start < 0) return undefined;
  const after = stages.slice(start);
  if (
    after
      .slice(1)
      .some(
        (c) =>
          EXHAUST.limiters.has(programOf(c)) || (/^-[a-z]*[cn]$/.test(c.argv[1]?.text ?? "") && programOf(c) === "tr"),
      )
  )
    return undefined;
  if (stages.at(-1) !== inv.command) return undefined;
  if (writesFile(inv.command) && !EXHAUST.limiters.has(inv.program))
    return `${inv.program} writes endless input to a file`;
  if (after.length > 1 && EXHAUST.buffering.has(inv.program)) return `${inv.program} buffers endless input`;
  if (after.length === 1 && EXHAUST.buffering.has(inv.program) && inv.program !== "xargs")
    return `${inv.program} reads endless input`;
  return undefined;
}

/** dd, head, fallocate, truncate: sizes beyond reason, or no end at all. */
function hugeSizes(inv: Invocation): string | undefined {
  const args = texts(inv.args);
  if (inv.program === "dd") {
    const from = optionValue(args, /^if$/) ?? "";
    const to = optionValue(args, /^of$/);
    const count = optionValue(args, /^count$/);
    if (!EXHAUST.endlessFiles.test(from) || !to || to === "/dev/null") return undefined;
    if (count === undefined && !args.some((a) => /^iflag=.*count_bytes/.test(a)))
      return "dd copies endless input into a file";
    if (bytesOf(optionValue(args, /^bs$/) ?? "512") * Number(count) >= EXHAUST.hugeFile) return "dd writes a huge file";
  }
  const size = bytesOf(optionValue(args, /^(-c|--bytes|-l|--length|-s|--size)$/) ?? "");
  if (inv.program === "head" && size >= EXHAUST.hugeRead && args.some((a) => EXHAUST.endlessFiles.test(a)))
    return `head reads ${size} bytes of endless input`;
  if ((inv.program === "fallocate" || inv.program === "truncate") && size >= EXHAUST.hugeFile)
    return "allocates a huge file";
  return undefined;
}

/** xargs -P 0, parallel -j0 over a long or endless list. */
export function fanOut(cmd: SimpleCommand): string | undefined {
  const program = programOf(cmd);
  if (program !== "xargs" && program !== "parallel") return undefined;
  const args = cmd.argv.slice(1);
  const procs = optionValue(
    texts(args).flatMap((a) => (/^-[Pj]\d+$/.test(a) ? [a.slice(0, 2), a.slice(2)] : [a])),
    /^(-P|--max-procs|-j|--jobs)$/,
  );
  const unbounded = procs !== undefined && (Number(procs) === 0 || Number(procs) >= EXHAUST.manyParallel);
  if (!unbounded) return undefined;
  const feeder = pipeline(cmd)[0]!;
  const listed = feeder.argv.map((w) => Number(w.text)).filter((n) => Number.isFinite(n));
  const long =
    programOf(feeder) === "seq" && (Math.max(0, ...listed) >= 10_000 || feeder.argv.some((w) => w.text === "inf"));
  const seqAfter = /:::\s.*\$\(seq\s+(\d+\s+)?(\d+)\)/.exec(texts(args).join(" "));
  const literal = seqAfter !== null && Number(seqAfter[2]) >= 1000;
  return long || isEndless(feeder) || literal ? `${program} runs without a bound on processes` : undefined;
}

/** Load generators aimed at another host with high concurrency, rate or duration, or flooding. */
function loadGenerator(inv: Invocation): string | undefined {
  if (!EXHAUST.loadTools.has(inv.program)) return undefined;
  const args = texts(inv.args);
  const target = args.find((a) => /^(https?:\/\/|\d+\.\d+\.\d+\.\d+|[\w-]+\.[\w.-]+)/.test(a)) ?? "";
  if (/^(https?:\/\/)?(localhost|127\.|\[?::1)/.test(target)) return undefined;
  if (args.some((a) => /^(--flood|-f|--faster)$/.test(a)) && /^(ping|hping3|t50)$/.test(inv.program))
    return "floods a host";
  const numbers = args.flatMap((a) => a.split(/[=,]/)).map((a) => Number(a.replace(/^-+\w+=?/, "")));
  const durations = args.filter((a) => /^(\d+)(h|H)$|^\d+(m|M)$/.test(a) && parseInt(a, 10) >= (/h/i.test(a) ? 1 : 30));
  if (
    EXHAUST.loadTools.has(inv.program) &&
    !/^(ping|hping3)$/.test(inv.program) &&
    (numbers.some((n) => n >= 500) || durations.length)
  )
    return `${inv.program} loads ${target || "a host"} heavily`;
  return undefined;
}

/** Judges one invocation; returns the reason it exhausts the machine, if it does. */
export function exhaustion(inv: Invocation): string | undefined {
  const timeout = optionValue(texts(inv.args), /^(-t|--timeout)$/);
  if (/^(stress|stress-ng)$/.test(inv.program) && (timeout === undefined || /^0+[smhd]?$/.test(timeout)))
    return "stress test";
  return endlessStream(inv) ?? hugeSizes(inv) ?? loadGenerator(inv);
}

/** Loops that fork or create without end, or very many times. */
export function loopExhaustion(line: CommandLine): string | undefined {
  const bodies = new Map<Loop, SimpleCommand[]>();
  for (const c of line.commands) for (let l = c.loop; l; l = l.outer) bodies.set(l, [...(bodies.get(l) ?? []), c]);
  for (const [loop, body] of bodies) {
    const programs = body.map(programOf);
    const background =
      body.some((c) => c.background && c.loop === loop) ||
      body.some((c) => c.background && c.loop !== loop && c.loop?.endless);
    const creates = programs.some((p) => EXHAUST.creators.has(p)) || body.some(writesFile);
    const total = count(loop);
    if (loop.endless && !programs.some((p) => EXHAUST.pacers.has(p)) && (creates || background))
      return "an endless loop that creates files or processes";
    if (total === undefined && background && body.some((c) => c.background && (isEndless(c) || c.loop?.endless)))
      return "a loop that starts endless processes in the background";
    if (total === undefined) continue;
    const containers = body.some(
      (c) => /^(docker|podman|nerdctl|kubectl)$/.test(programOf(c)) && /^(run|create)$/.test(c.argv[1]?.text ?? ""),
    );
    if (
      (background && total >= EXHAUST.manyBackground) ||
      (containers && total >= EXHAUST.manyContainers) ||
      (creates && total >= EXHAUST.manyFiles)
    )
      return `a loop that runs ${total} times, leaving processes or files behind`;
    if (background && body.some((c) => c.background && (isEndless(c) || c.loop?.endless)) && total >= 4)
      return "a loop that starts endless processes in the background";
  }
  return undefined;
}

/** How many times a loop's body runs, counting outer loops. */
function count(loop: Loop): number | undefined {
  let total = 1;
  for (let l: Loop | undefined = loop; l; l = l.outer) {
    if (l.count === undefined) return undefined;
    total *= l.count;
  }
  return total;
}
