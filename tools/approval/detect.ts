/**
 * Dangerous-command detection as the gate, `approval check` and the benchmarks use it: the command
 * normalised (normalize.ts), judged by the analyser in next/ (parse → command model → judges over the
 * rule tables), its classes put in the order of the class list (the most severe first).
 */
import { posix } from "node:path";
import { errorMessage } from "../../src/core/errors.js";
import { judgeCommand, type JudgeOptions, type Verdict } from "./next/analyse.js";
import { CLASSES, type ClassKey } from "./next/classes.js";
import type { Finding } from "./next/judges.js";
import { modelCommandLine } from "./next/model.js";
import { normalizeCommand } from "./normalize.js";
import { escapesThroughSymlink, type PathResolver } from "./symlinks.js";

export { normalizeCommand, type PathResolver };

/**
 * `cwd`: the directory the command starts in (absolute); `defaultCwd`: the task's working directory
 * (absolute): paths under it are the task's own.
 */
export type DetectOptions = Pick<JudgeOptions, "cwd" | "defaultCwd">;

export interface PatternMatch {
  key: string;
  description: string;
}

/**
 * `matches`: every matching class, in class-list order (approval by allowlist or session needs all of
 * them); `patternKey` and `description`: the first, most severe, one.
 */
export type Detection = Omit<Verdict, "findings">;

/** Every class the detection can name, in severity order: what `approval patterns` lists. */
export const PATTERN_CLASSES: readonly PatternMatch[] = Object.entries(CLASSES).map(([key, description]) => ({
  key,
  description,
}));

const ORDER = new Map(PATTERN_CLASSES.map((c, i) => [c.key, i]));

/** Classes in class-list order, each once. */
export function inClassOrder(matches: readonly PatternMatch[]): PatternMatch[] {
  const unique = [...new Map(matches.map((m) => [m.key, m])).values()];
  return unique.sort((a, b) => (ORDER.get(a.key) ?? ORDER.size) - (ORDER.get(b.key) ?? ORDER.size));
}

/**
 * The directory the command starts in, absolute: a relative `cwd` is taken from the working directory;
 * with none known, one that stays below it (`sub`) is the task's own and one that leaves it (`..`) is kept
 * as given, so its paths count as outside.
 */
function startDirectory({ cwd, defaultCwd }: DetectOptions): string | undefined {
  if (!cwd || cwd.startsWith("/")) return cwd;
  if (defaultCwd) return posix.resolve(defaultCwd, cwd);
  const rel = posix.normalize(cwd);
  return rel === ".." || rel.startsWith("../") ? cwd : undefined;
}

/** The matches and the judges' findings (the rule rows that fired) for one command. */
export function analyseCommand(
  command: string,
  opts: DetectOptions = {},
): { matches: PatternMatch[]; findings: Finding[] } {
  const text = normalizeCommand(command);
  if (!text) return { matches: [], findings: [] };
  try {
    const verdict = judgeCommand(text, { cwd: startDirectory(opts), defaultCwd: opts.defaultCwd });
    return { matches: inClassOrder(verdict.matches ?? []), findings: verdict.findings };
  } catch (err) {
    // Fail closed: a command the analyser cannot read is asked about, never passed.
    const key: ClassKey = "unanalysable";
    const reason = `the analyser failed: ${errorMessage(err)}`;
    return { matches: [{ key, description: CLASSES[key] }], findings: [{ key, reason }] };
  }
}

export function toDetection(matches: readonly PatternMatch[]): Detection {
  if (!matches.length) return { dangerous: false };
  return { dangerous: true, patternKey: matches[0]!.key, description: matches[0]!.description, matches: [...matches] };
}

/** Is this command dangerous, and by which classes? */
export function detectDangerousCommand(command: string, opts?: DetectOptions): Detection {
  if (typeof command !== "string") return { dangerous: false };
  return toDetection(analyseCommand(command, opts).matches);
}

/** The shell comments of a command, without their `#` (the smart approver sees them as untrusted data). */
export function shellComments(command: string): string[] {
  try {
    return modelCommandLine(normalizeCommand(command)).comments.map((c) => c.replace(/^#\s*/, "").trim());
  } catch {
    return [];
  }
}

const SYMLINK: PatternMatch = { key: "symlink_outside_workdir", description: CLASSES.symlink_outside_workdir };

/**
 * detectDangerousCommand with the targets inside the working directory resolved in the task's environment:
 * a delete, move, write or chmod of `build/*` where `build` links to a host folder is symlink_outside_workdir.
 */
export async function detectDangerousCommandResolved(
  command: string,
  opts: DetectOptions & { workdir: string; realpath: PathResolver },
): Promise<Detection> {
  const root = opts.defaultCwd ?? opts.workdir;
  const { matches } = analyseCommand(command, { ...opts, defaultCwd: root });
  return toDetection(await withSymlinkClass(command, matches, { ...opts, workdir: root }));
}

/** The matches, plus symlink_outside_workdir when a target inside the working directory resolves outside it. */
export async function withSymlinkClass(
  command: string,
  matches: readonly PatternMatch[],
  opts: { workdir: string; cwd?: string; realpath: PathResolver },
): Promise<PatternMatch[]> {
  if (matches.some((m) => m.key === SYMLINK.key)) return [...matches];
  // A resolver that fails throws on: the gate denies what it could not check.
  const escapes = await escapesThroughSymlink(normalizeCommand(command), opts);
  return escapes ? inClassOrder([...matches, SYMLINK]) : [...matches];
}
