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

/**
 * Does one of the command's targets inside `workdir` resolve, in the environment, to a place outside it? A glob is
 * resolved at its directory; a file that does not exist yet, at its nearest folder that does (up to `workdir`).
 * Every path that walk may need is asked for at once: an environment can answer them in one round trip.
 */
export async function escapesThroughSymlink(
  command: string,
  opts: { workdir: string; cwd?: string; realpath: PathResolver },
): Promise<boolean> {
  const { workdir } = opts;
  const chains = insideTargets(command, workdir, opts.cwd).map((target) => {
    const glob = target.split("/").findIndex((s) => /[*?[]/.test(s));
    const chain = [glob < 0 ? target : target.split("/").slice(0, glob).join("/") || "/"];
    for (let p = chain[0]!; p !== workdir && insideDir(p, workdir); ) chain.push((p = posix.dirname(p)));
    return chain;
  });
  if (!chains.length) return false;
  const paths = [...new Set([workdir, ...chains.flat()])];
  const known = new Map(await Promise.all(paths.map(async (p) => [p, await opts.realpath(p)] as const)));
  const root = known.get(workdir) ?? posix.normalize(workdir);
  return chains.some((chain) => {
    const found = chain.map((p) => known.get(p)).find((r) => r != null);
    return found != null && !insideDir(found, root);
  });
}
