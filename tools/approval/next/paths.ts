/** Where a path argument points, relative to the task's working directory. */
import { posix } from "node:path";
import { MKTEMP, type Word } from "./words.js";

export type PathClass =
  | "inside"
  | "temp"
  | "home-secret"
  | "home"
  | "shell-rc"
  | "ssh"
  | "device"
  | "system"
  | "outside"
  | "unknown";

export interface PathContext {
  /** The task's working directory; undefined = relative paths are the task's own. */
  workdir?: string;
  /** Directory the command runs in; undefined = the working directory. */
  cwd?: string;
}

const SYSTEM =
  /^\/(etc|usr|bin|sbin|lib|lib32|lib64|libx32|boot|proc|sys|var|opt|root|srv|home|mnt|media|snap|run|selinux)?(\/|$)/;
const HARMLESS_DEVICES = /^\/dev\/(null|zero|u?random|stdout|stderr|stdin|tty|fd\/\d+|shm(\/|$))/;
const SECRETS =
  /^~\/(\.ssh|\.aws|\.gnupg|\.kube|\.docker|\.config\/gcloud|\.azure|\.netrc|\.git-credentials|\.pgpass|\.npmrc|\.pypirc|\.vault-token|\.password-store)(\/|$)|^\/etc\/(shadow|gshadow|sudoers)|^\/root\/\.ssh|^\/home\/[^/]+\/\.(ssh|aws|gnupg)/;
const SHELL_RC =
  /^~\/\.(bashrc|bash_profile|profile|zshrc|zprofile|bash_login|bash_logout|inputrc)$|^\/etc\/(profile|bash\.bashrc|environment)(\.d\/|$)/;

/** The absolute (or `~`-rooted) form of a path word, or undefined when computed. */
export function absolutePath(word: Word, ctx: PathContext): string | undefined {
  if (!word.literal) return undefined;
  const text = word.text;
  if (text.startsWith("~")) return posix.normalize(text.replace(/^~[^/]*/, "~"));
  if (text.startsWith("/")) return posix.normalize(text);
  const base = ctx.cwd ?? ctx.workdir ?? "/\u0000workdir";
  return posix.join(base, text);
}

/** Classifies a path word. */
export function classifyPath(word: Word, ctx: PathContext): PathClass {
  const abs = absolutePath(word, ctx);
  if (abs === undefined) return "unknown";
  const root = ctx.workdir ?? "/\u0000workdir";
  if (abs.startsWith(MKTEMP)) return "inside";
  if (abs === root || abs.startsWith(`${root}/`)) return "inside";
  if (SECRETS.test(abs)) return "home-secret";
  if (SHELL_RC.test(abs)) return "shell-rc";
  if (abs.startsWith("~")) return abs.startsWith("~/.ssh") ? "ssh" : "home";
  if (/^\/(tmp|var\/tmp)\/./.test(abs)) return "temp";
  if (abs.startsWith("/dev/")) return HARMLESS_DEVICES.test(abs) ? "temp" : "device";
  if (SYSTEM.test(abs)) return "system";
  return "outside";
}

/** A class the task does not own. */
export const isForeign = (c: PathClass) => c !== "inside" && c !== "temp";
