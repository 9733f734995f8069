/**
 * The bubblewrap sandbox of the local backend: how `bwrap` is found and probed, the command line that builds
 * one task's sandbox, and the processes inside a sandbox's pid namespace as the host sees them.
 *
 * The sandbox (one per task, see local_sandbox.ts):
 * - new user, pid, ipc, uts, cgroup and (unless the run allows the host network) network namespaces;
 * - a read-only view of the host's top-level folders, except `/home`, `/root` and the harness user's home
 *   (hidden), and `/tmp`, `/var/tmp`, `/run` (hidden by private tmpfs: no Docker socket, no host temp files);
 * - the task folder writable at /workspace, a private writable $HOME at /home/sandbox, its own /proc and a
 *   minimal /dev; `--die-with-parent`, so the sandbox dies with the harness thread that started it;
 * - the sandbox's processes never run as root (see bwrapLauncher), so its process limit holds.
 */
import { spawnSync } from "node:child_process";
import { accessSync, chmodSync, constants, copyFileSync, mkdtempSync, readdirSync, type Dirent, readFileSync, readlinkSync, statSync } from "node:fs";
import { randomInt } from "node:crypto";
import { homedir, tmpdir } from "node:os";
import { removeOnExit } from "./temp_dirs.js";
import { join, posix } from "node:path";

export const SANDBOX_WORKDIR = "/workspace";
export const SANDBOX_HOME = "/home/sandbox";
/** Where the harness hands files in and out of the sandbox (a folder of its own, never the task folder). */
export const SANDBOX_IO_DIR = "/tmp/.hermes-io";
export const SANDBOX_UNPRIVILEGED_ID = 65534;
/** Where the sandbox's shells run from: an unreadable copy of bash (see sandboxShellCopy). */
export const SANDBOX_SHELL = "/run/.hermes/bash";
/** A root harness gives each sandbox a uid in [BASE, BASE + SPAN): far above any account's. */
const SANDBOX_UID_BASE = 2_000_000_000;
const SANDBOX_UID_SPAN = 100_000_000;

/** Top-level folders never shown read-only: replaced by a private tmpfs, hidden, or made by bwrap itself. */
const NOT_BOUND = new Set(["proc", "dev", "tmp", "run", "home", "root", "lost+found", "workspace"]);

export const BWRAP_INSTALL_HINT = "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap)";

function executableOnPath(name: string, pathEnv: string | undefined): string | undefined {
  for (const dir of (pathEnv ?? "").split(":").filter(Boolean)) {
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** The bwrap executable on PATH (the harness's own PATH: no fixed fallback, so a PATH without it means "missing"). */
export function findBwrap(pathEnv = process.env.PATH): string | undefined {
  return executableOnPath("bwrap", pathEnv);
}

/**
 * How a sandbox is started by this process. Not root: bwrap as is (its user namespace makes `ulimit -u` count
 * only the sandbox's processes). Root: bwrap keeps only CAP_SETUID/CAP_SETGID for `setpriv`, which turns the
 * sandbox's shell into a uid of its own (random, high, unused by any account), so the process limit counts that
 * sandbox alone and root-only files stay unreadable; `no_new_privs` (bwrap) keeps it from coming back. Then
 * `unshare -c` (util-linux) puts the shell in a user namespace of its own, mapping that uid to itself: only a
 * process of a user namespace other than the host's that runs a program it cannot read is marked not dumpable
 * by the kernel (see sandboxShellCopy). (bwrap itself cannot run as that uid: it could not reach a task folder
 * under a folder only root may enter.)
 */
export interface SandboxLauncher {
  bwrap: string;
  /** Before the shell, after bwrap's `--`. */
  wrapper: string[];
  /** bwrap options that go with the wrapper. */
  options: string[];
  uid: number;
  gid: number;
}

export function bwrapLauncher(bwrap: string): SandboxLauncher {
  const uid = process.getuid?.() ?? SANDBOX_UNPRIVILEGED_ID;
  const gid = process.getgid?.() ?? SANDBOX_UNPRIVILEGED_ID;
  if (uid !== 0) return { bwrap, wrapper: [], options: [], uid, gid };
  const id = SANDBOX_UID_BASE + randomInt(SANDBOX_UID_SPAN);
  const path = `${process.env.PATH ?? ""}:/usr/bin:/bin`;
  const unshare = executableOnPath("unshare", path);
  return {
    bwrap,
    wrapper: [executableOnPath("setpriv", path) ?? "/usr/bin/setpriv", `--reuid=${id}`, `--regid=${id}`, "--clear-groups", ...(unshare ? [unshare, "-c"] : [])],
    options: ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"],
    uid: id,
    gid: id,
  };
}

export interface SandboxLayout {
  /** Share the host's network namespace (the run asked for `--network host`). */
  hostNetwork: boolean;
  /** The fd (in the child) of the task folder, bound at /workspace; absent: an empty tmpfs (probe). */
  workspaceFd?: number;
  /** The fd of the harness's exchange folder, bound at SANDBOX_IO_DIR. */
  ioFd?: number;
  /** The fd bwrap writes `{"child-pid": N}` to (the host pid of the sandbox's init). */
  infoFd?: number;
  env: Record<string, string>;
  /** Host path of the unreadable copy of bash (sandboxShellCopy), bound at SANDBOX_SHELL. */
  shellCopy?: string;
  /** No reaper: the command is the namespace's pid 1, whose exit status bwrap reads from the kernel (verify). */
  asPid1?: boolean;
  /** More bwrap options (binds) placed after the standard layout. */
  extra?: string[];
}

/** bwrap's arguments up to and including `--` and the launcher's wrapper (the shell follows). */
export function bwrapArgs(layout: SandboxLayout, launcher: SandboxLauncher, root = "/"): string[] {
  const userns = launcher.wrapper.length === 0 ? ["--unshare-user"] : [];
  const args = ["--die-with-parent", ...userns, "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"];
  if (!layout.hostNetwork) args.push("--unshare-net");
  args.push("--new-session", "--tmpfs", "/");
  const hidden = new Set([homedir()]);
  for (const entry of rootEntries(root)) {
    const path = `/${entry.name}`;
    if (NOT_BOUND.has(entry.name) || hidden.has(path)) continue;
    if (entry.isSymbolicLink()) args.push("--symlink", readlinkSync(join(root, entry.name)), path);
    else if (entry.isDirectory()) args.push("--ro-bind", path, path);
  }
  // Made by bwrap as root when the harness is root: open to the shell's own uid.
  args.push("--dev", "/dev", "--proc", "/proc", "--perms", "1777", "--tmpfs", "/tmp", "--perms", "1777", "--tmpfs", "/var/tmp", "--tmpfs", "/run");
  args.push("--tmpfs", "/home", "--perms", "0777", "--dir", SANDBOX_HOME);
  if (layout.workspaceFd !== undefined) args.push("--bind-fd", String(layout.workspaceFd), SANDBOX_WORKDIR);
  else args.push("--dir", SANDBOX_WORKDIR);
  if (layout.ioFd !== undefined) args.push("--bind-fd", String(layout.ioFd), SANDBOX_IO_DIR);
  if (layout.infoFd !== undefined) args.push("--info-fd", String(layout.infoFd));
  if (layout.extra) args.push(...layout.extra);
  // Its folder made by bwrap as root when the harness is root: open to the shell's own uid.
  if (layout.shellCopy !== undefined) args.push("--perms", "0755", "--dir", posix.dirname(SANDBOX_SHELL), "--ro-bind", layout.shellCopy, SANDBOX_SHELL);
  if (layout.asPid1) args.push("--as-pid-1");
  args.push("--remount-ro", "/", "--chdir", SANDBOX_WORKDIR, "--clearenv", ...launcher.options);
  for (const [k, v] of Object.entries(layout.env)) args.push("--setenv", k, v);
  args.push("--", ...launcher.wrapper);
  return args;
}

const rootListing = new Map<string, Dirent[]>();

/** The host's top-level folders, read once per process (every sandbox of a run sees the same layout). */
function rootEntries(root: string): Dirent[] {
  let entries = rootListing.get(root);
  if (!entries) {
    entries = readdirSync(root, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name));
    rootListing.set(root, entries);
  }
  return entries;
}

let probed: { ok: true } | { ok: false; reason: string } | undefined;

/**
 * Whether a sandbox can start here (bwrap on PATH, user namespaces allowed): starts one that runs `true`.
 * The answer is kept for the life of the process.
 */
export function probeBwrap(): { ok: true } | { ok: false; reason: string } {
  if (probed) return probed;
  const bwrap = findBwrap();
  if (!bwrap) return (probed = { ok: false, reason: `bwrap (bubblewrap) is not on PATH: ${BWRAP_INSTALL_HINT}, or use --env host (no sandbox) or --env docker` });
  const launcher = bwrapLauncher(bwrap);
  const r = spawnSync(launcher.bwrap, [...bwrapArgs({ hostNetwork: false, env: { PATH: "/usr/bin:/bin" } }, launcher), "/bin/true"], {
    encoding: "utf8",
    timeout: 30_000,
    stdio: ["ignore", "ignore", "pipe"],
  });
  if (r.status === 0) return (probed = { ok: true });
  const why = (r.stderr ?? "").trim().split("\n")[0] || r.error?.message || `exit ${r.status ?? r.signal}`;
  return (probed = { ok: false, reason: `bubblewrap cannot start a sandbox here (${why}): allow user namespaces, or use --env host (no sandbox) or --env docker` });
}

let shellCopy: string | null | undefined;

/**
 * The host path of this process's copy of bash that no sandbox may read (mode 0111, in a 0711 folder), made on
 * first use; undefined when it cannot be made. A process of a user namespace that runs a program it cannot read
 * is marked not dumpable by the kernel (its memory, environ and fds closed to every process without
 * CAP_SYS_PTRACE over the host), so a sandbox's shells started from it keep their protocol nonce to themselves:
 * a command of the same uid cannot read /proc/<shell>/mem. (Outside a user namespace the kernel here leaves such
 * a process dumpable: measured, see README.)
 */
export function sandboxShellCopy(source = "/bin/bash"): string | undefined {
  if (shellCopy !== undefined) return shellCopy ?? undefined;
  try {
    const dir = mkdtempSync(join(tmpdir(), "hermes-shell-"));
    removeOnExit(dir);
    chmodSync(dir, 0o711);
    const path = join(dir, "bash");
    copyFileSync(source, path);
    chmodSync(path, 0o111);
    shellCopy = path;
  } catch {
    shellCopy = null;
  }
  return shellCopy ?? undefined;
}

export interface SandboxProcess {
  hostPid: number;
  /** The parent's pid as this host sees it. */
  hostPpid: number;
  nsPid: number;
  nsPgid: number;
}

/** The pid namespace of a process (`pid:[N]`), undefined when it is gone. */
export function pidNamespaceOf(hostPid: number): string | undefined {
  try {
    return readlinkSync(`/proc/${hostPid}/ns/pid`);
  } catch {
    return undefined;
  }
}

/** The live processes in the pid namespace of `initHostPid` (the sandbox's init), or in namespace `ns`, with their pids as seen inside. */
export function sandboxProcesses(initHostPid: number | undefined, ns = initHostPid === undefined ? undefined : pidNamespaceOf(initHostPid)): SandboxProcess[] {
  if (ns === undefined) return [];
  const found: SandboxProcess[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (readlinkSync(`/proc/${name}/ns/pid`) !== ns) continue;
      const status = readFileSync(`/proc/${name}/status`, "utf8");
      const last = (key: string) => Number(new RegExp(`^${key}:\\s*([\\d\\s]+)$`, "m").exec(status)?.[1]?.trim().split(/\s+/).pop());
      if (/^State:\s*[ZX]/m.test(status)) continue;
      found.push({ hostPid: Number(name), hostPpid: Number(/^PPid:\s*(\d+)/m.exec(status)?.[1]), nsPid: last("NSpid"), nsPgid: last("NSpgid") });
    } catch {
      // gone
    }
  }
  return found;
}
