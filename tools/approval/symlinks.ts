/**
 * Paths that look inside the working directory but lead out of it through a symlink: `rm -rf build/*`
 * where `build` links to a host folder. The paths a command deletes, writes, moves or changes the
 * mode of are resolved with the environment's realpath.
 */
import { posix } from "node:path";
import { rulesFor } from "./next/judges.js";
import { modelCommandLine, type Word } from "./next/model.js";
import { absolutePath, classifyPath, type PathContext } from "./next/paths.js";
import { unwrap } from "./next/unwrap.js";

/** The real path of a path in the task's environment (symlinks resolved); null when it cannot be resolved. */
export type PathResolver = (path: string) => Promise<string | null>;
/** The same for many paths at once (one round trip to the environment), in their order. */
export type PathsResolver = (paths: readonly string[]) => Promise<(string | null)[]>;

const PATH_EFFECTS = new Set(["delete", "overwrite", "move", "permission"]);
const MAX_TARGETS = 64;

const changesPaths = (program: string) => rulesFor(program).some((r) => PATH_EFFECTS.has(r.effect));

/** Absolute paths inside the working directory that the command deletes, writes, moves or chmods. */
export function insideTargets(command: string, workdir: string, cwd?: string): string[] {
  const ctx: PathContext = { workdir, cwd: cwd ?? workdir };
  const line = modelCommandLine(command, { cwd: ctx.cwd });
  const out = new Set<string>();
  const keep = (word: Word, at: string | undefined) => {
    const where = { ...ctx, cwd: at ?? ctx.cwd };
    if (out.size >= MAX_TARGETS || /^&?\d*$/.test(word.text) || classifyPath(word, where) !== "inside") return;
    const abs = absolutePath(word, where);
    if (abs?.startsWith("/")) out.add(abs);
  };
  for (const r of line.redirects) if (r.op.includes(">")) keep(r.target, ctx.cwd);
  for (const cmd of line.commands) {
    for (const r of cmd.redirects) if (r.op.includes(">")) keep(r.target, cmd.cwd);
    for (const inv of unwrap(cmd).invocations)
      if (changesPaths(inv.program))
        for (const word of inv.args) if (!word.text.startsWith("-")) keep(word, inv.command.cwd);
  }
  return [...out];
}

/** The path is the directory or below it: the way from the directory to it does not climb (`..`). */
const insideDir = (path: string, dir: string) => !/^\.\.(\/|$)/.test(posix.relative(dir, path));

/** Does one of the command's targets inside `workdir` resolve, in the environment, to a place outside it? */
export async function escapesThroughSymlink(
  command: string,
  opts: { workdir: string; cwd?: string; realpath: PathResolver; realpaths?: PathsResolver },
): Promise<boolean> {
  const targets = insideTargets(command, opts.workdir, opts.cwd);
  if (!targets.length) return false;
  // A glob is resolved at its directory; a file that does not exist yet, at its parent.
  const starts = targets.map((target) => {
    const segments = target.split("/");
    const firstGlob = segments.findIndex((s) => /[*?[]/.test(s));
    return firstGlob < 0 ? target : segments.slice(0, firstGlob).join("/") || "/";
  });
  const realpath = await prefetched(opts, starts);
  const root = (await realpath(opts.workdir)) ?? posix.normalize(opts.workdir);
  for (let path of starts) {
    let real = await realpath(path);
    while (real === null && path !== opts.workdir && insideDir(path, opts.workdir)) {
      path = posix.dirname(path);
      real = await realpath(path);
    }
    if (real !== null && !insideDir(real, root)) return true;
  }
  return false;
}

/**
 * With a batch resolver, every path the walk may ask for (the working directory, each start and its folders up to
 * the working directory) is resolved in one round trip (in Docker, one exec instead of one each); the single
 * resolver answers what the batch left out.
 */
async function prefetched(
  opts: { workdir: string; realpath: PathResolver; realpaths?: PathsResolver },
  starts: string[],
): Promise<PathResolver> {
  if (!opts.realpaths) return opts.realpath;
  const wanted = new Set([opts.workdir]);
  for (let path of starts) {
    wanted.add(path);
    while (path !== opts.workdir && insideDir(path, opts.workdir) && path !== "/") {
      path = posix.dirname(path);
      wanted.add(path);
    }
  }
  const paths = [...wanted];
  const answers = await opts.realpaths(paths);
  const known = new Map(paths.map((p, i) => [p, answers[i] ?? null]));
  return (path) => (known.has(path) ? Promise.resolve(known.get(path)!) : opts.realpath(path));
}
