/** Where a path argument points, relative to the task's working directory. */
import { posix } from "node:path";
import { PATH_PATTERNS as P, PLACES } from "./rules/files.js";
import { MKTEMP } from "./rules/words_values.js";
import { UNKNOWN_DIR, type Word } from "./words.js";

/** Where a path lands: the task's own (`inside`), a place of the PLACES table, the system's, or just outside. */
export type PathClass = "inside" | (typeof PLACES)[number][1] | "system" | "outside" | "unknown";

export interface PathContext {
  /** The task's working directory; undefined = relative paths are the task's own. */
  workdir?: string;
  /** Directory the command runs in; undefined = the working directory. */
  cwd?: string;
  /** Directories this line made (`mkdir`): the line's own, like the working directory. */
  made?: Set<string>;
  /** Links this line made (`ln -s TARGET LINK`): link path → target path. */
  links?: Map<string, string>;
}

/** Stands for the working directory when none is given: relative paths are the task's own. */
export const NO_WORKDIR = "/\u0000workdir";

/** `path` is `dir` or a path under it. */
export const within = (path: string, dir: string) => path === dir || path.startsWith(`${dir}/`);

/** The absolute (or `~`-rooted) form of a path word, or undefined when computed. */
export function absolutePath(word: Word, ctx: PathContext): string | undefined {
  if (!word.literal) return undefined;
  const abs = /^[~/]/.test(word.text)
    ? posix.normalize(word.text.replace(/^~[^/]*/, "~"))
    : posix.join(ctx.cwd ?? ctx.workdir ?? NO_WORKDIR, word.text);
  return ctx.links?.size ? throughLinks(abs.replace(/(.)\/$/, "$1"), ctx.links) : abs;
}

/** A path under a link the line made, read as the path under the link's target. */
function throughLinks(abs: string, links: Map<string, string>): string {
  for (const [link, target] of links) if (within(abs, link)) return posix.normalize(target + abs.slice(link.length));
  return abs;
}

/** The path a word names, read as written even when part of it is computed (`/tmp/build-$$`). */
export const pathKey = (word: Word, ctx: PathContext) => absolutePath({ ...word, literal: true }, ctx) ?? "";

/** The word names a link the line made, not a path through it (`rm cfg` removes the link). */
export function isLinkItself(word: Word, ctx: PathContext): boolean {
  if (!ctx.links?.size || word.text.endsWith("/")) return false;
  return ctx.links.has(absolutePath(word, { ...ctx, links: new Map() }) ?? "");
}

/** A directory the line made itself, or a path under one. */
export const madeOnLine = (word: Word, ctx: PathContext): boolean =>
  [...(ctx.made ?? [])].some((dir) => within(pathKey(word, ctx), dir));

/** A relative path that climbs above a working directory nobody named (`..`): outside, not the root. */
const abovePlaceholder = (word: Word, abs: string, ctx: PathContext) =>
  !ctx.workdir &&
  (ctx.cwd ?? NO_WORKDIR) === NO_WORKDIR &&
  /^\.\.(\/|$)/.test(word.text) &&
  !abs.startsWith(NO_WORKDIR);

/**
 * Classifies a path word. Credentials, SSH files and shell start-up files count wherever they sit outside
 * the working directory (under --env host a home can be anywhere).
 */
export function classifyPath(word: Word, ctx: PathContext): PathClass {
  const abs = absolutePath(word, ctx);
  if (abs === undefined || within(abs, UNKNOWN_DIR)) return "unknown";
  if (abs.startsWith(MKTEMP) || within(abs, ctx.workdir ?? NO_WORKDIR)) return "inside";
  const place = PLACES.find(([pattern]) => pattern.test(abs));
  if (place) return place[1];
  if (abovePlaceholder(word, abs, ctx)) return "outside";
  // every entry of a folder (`/opt/*`, `~/*`) weighs as much as the folder
  const whole = word.glob ? /^(.*?)\/\.?\*$/.exec(abs)?.[1] : undefined;
  if (P.system.test(abs) || (whole !== undefined && P.system.test(whole || "/"))) return "system";
  return "outside";
}

/** A class the task does not own. */
export const isForeign = (c: PathClass) => c !== "inside" && c !== "temp";
