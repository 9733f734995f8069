/**
 * The bubblewrap sandbox of the local backend: how `bwrap` is found and probed, the command line that builds
 * one task's sandbox, and the processes inside a sandbox's pid namespace as the host sees them.
 *
 * The sandbox (one per task, see local_sandbox.ts; what is bound and why: README.md, "The local sandbox's file
 * system"):
 * - new user, pid, ipc, uts, cgroup and (unless the run allows the host network) network namespaces;
 * - a root built from an allow-list, never from the host's root: the system folders programs need (`/usr`,
 *   `/bin`, `/sbin`, `/lib*`, `/etc` with its credential files masked) read-only, each `--sandbox-ro` folder
 *   read-only, the task folder writable at /workspace, bounded private tmpfs for /tmp, /var/tmp, /run, /dev/shm
 *   and $HOME (/home/sandbox), its own /proc and a minimal, read-only /dev. Nothing else of the host: not the harness user's
 *   home, the dataset, the run's output, other tasks' folders, /srv, /opt, /mnt, /media, /data or a checkout;
 * - `--die-with-parent`, so the sandbox dies with the harness thread that started it;
 * - a seccomp filter (seccomp.ts) that refuses the kernel's keyring calls: keyrings belong to no namespace, and the
 *   harness's session keyring would otherwise be the sandbox's too;
 * - the sandbox's processes never run as root (see bwrapLauncher), so its process limit holds.
 */
import { spawn, spawnSync } from "node:child_process";
import {
  accessSync,
  chmodSync,
  closeSync,
  constants,
  copyFileSync,
  lstatSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { randomInt } from "node:crypto";
import { makeTempDirSync } from "../temp_dirs.js";
import { executableOnPath } from "../executable_on_path.js";
import { join, posix } from "node:path";
import { keyringFilter } from "./seccomp.js";

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

/** The host's top-level entries a task sees (read-only, links kept as links): what programs need to run. */
const SYSTEM_ENTRIES = ["usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32", "etc"];
/** Credential files under /etc (and /usr's site-wide configuration), each replaced by an empty file (/dev/null) when present. */
const SECRET_FILES = [
  "/etc/shadow",
  "/etc/shadow-",
  "/etc/gshadow",
  "/etc/gshadow-",
  "/etc/sudoers",
  "/etc/security/opasswd",
  "/etc/krb5.keytab",
  "/etc/ipsec.secrets",
  "/etc/ppp/chap-secrets",
  "/etc/ppp/pap-secrets",
  // World-readable by default, and where a machine keeps a package index's or a proxy's password.
  "/etc/pip.conf",
  "/etc/apt/auth.conf",
  "/etc/environment",
  // The same for pip's first site-wide file on Linux, npm's global npmrc (distributions' /etc, and $PREFIX/etc for
  // an npm under /usr or /usr/local: an `_authToken`), boto's cloud keys and the container registries' logins.
  "/etc/xdg/pip/pip.conf",
  "/etc/npmrc",
  "/usr/etc/npmrc",
  "/usr/local/etc/npmrc",
  "/etc/boto.cfg",
  "/etc/containers/auth.json",
];
/** Folders under /etc that hold keys or credentials, each replaced by an empty read-only one when present. */
const SECRET_DIRS = [
  "/etc/sudoers.d",
  "/etc/ssl/private",
  "/etc/pki/tls/private",
  "/etc/letsencrypt",
  "/etc/NetworkManager/system-connections",
  "/etc/wireguard",
  "/etc/openvpn",
  "/etc/kubernetes",
  "/etc/rancher",
  "/etc/credstore",
  "/etc/credstore.encrypted",
  "/etc/apt/auth.conf.d",
];
/** Top-level folders of the sandbox that are mounts of their own (a path under one needs no folders made). */
const MOUNTED_TOP = new Set([...SYSTEM_ENTRIES, "proc", "dev", "tmp", "var", "run", "home", "workspace"]);
/** Top folders the sandbox makes itself (private tmpfs, or on the root tmpfs), and the tmpfs mount points among them. */
const TMPFS_TOPS = new Set(["tmp", "var", "run", "home"]);
const TMPFS_MOUNTS = new Set(["/tmp", "/var", "/var/tmp", "/run", "/home"]);
/** Default size of each private tmpfs (/tmp, /var/tmp, /run, /home), MiB. */
export const DEFAULT_SANDBOX_TMPFS_MB = 512;

export const BWRAP_INSTALL_HINT =
  "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap)";

/** The bwrap executable on PATH (the harness's own PATH: no fixed fallback, so a PATH without it means "missing"). */
export function findBwrap(pathEnv = process.env.PATH): string | undefined {
  // Looked up once per PATH value: a task's sandbox asks for it again each time.
  if (!foundBwrap || foundBwrap.path !== pathEnv)
    foundBwrap = { path: pathEnv, bwrap: executableOnPath("bwrap", pathEnv) };
  return foundBwrap.bwrap;
}

let foundBwrap: { path: string | undefined; bwrap: string | undefined } | undefined;

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
  const { setpriv, unshare } = rootWrapperTools();
  return {
    bwrap,
    wrapper: [setpriv, `--reuid=${id}`, `--regid=${id}`, "--clear-groups", ...(unshare ? [unshare, "-c"] : [])],
    options: ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"],
    uid: id,
    gid: id,
  };
}

let wrapperTools: { path: string; setpriv: string; unshare: string | undefined } | undefined;

/** setpriv and unshare on this thread's PATH, looked up once per PATH (a dozen file system calls a sandbox). */
function rootWrapperTools(): { setpriv: string; unshare: string | undefined } {
  const path = `${process.env.PATH ?? ""}:/usr/bin:/bin`;
  if (wrapperTools?.path !== path) {
    wrapperTools = {
      path,
      setpriv: executableOnPath("setpriv", path) ?? "/usr/bin/setpriv",
      unshare: executableOnPath("unshare", path),
    };
  }
  return wrapperTools;
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
  /** The fd (in the child) of the seccomp filter (sandboxSeccompFile), read by bwrap and applied to the command. */
  seccompFd?: number;
  /** No reaper: the command is the namespace's pid 1, whose exit status bwrap reads from the kernel (verify). */
  asPid1?: boolean;
  /** Host folders shown read-only at the same path (`--sandbox-ro`). */
  readOnly?: string[];
  /** Size of each private tmpfs, MiB (default DEFAULT_SANDBOX_TMPFS_MB). */
  tmpfsMb?: number;
  /** More bwrap options (binds) placed after the standard layout. */
  extra?: string[];
}

/** bwrap's arguments up to and including `--` and the launcher's wrapper (the shell follows). */
export function bwrapArgs(layout: SandboxLayout, launcher: SandboxLauncher, root = "/"): string[] {
  const userns = launcher.wrapper.length === 0 ? ["--unshare-user"] : [];
  const args = [
    "--die-with-parent",
    ...userns,
    "--unshare-pid",
    "--unshare-ipc",
    "--unshare-uts",
    "--unshare-cgroup-try",
  ];
  if (!layout.hostNetwork) args.push("--unshare-net");
  args.push("--new-session", "--size", String(1 << 20), "--tmpfs", "/");
  args.push(...systemLayout(root));
  // Made by bwrap as root when the harness is root: open to the shell's own uid. Each bounded.
  const size = String((layout.tmpfsMb ?? DEFAULT_SANDBOX_TMPFS_MB) * 1024 * 1024);
  // bwrap's /dev is a tmpfs of no size, the task's own under a harness that is not root (remounted read-only at the
  // end) and root's otherwise, /dev/shm with it: /dev/shm is a bounded tmpfs of its own, open to the task (POSIX
  // shared memory: multiprocessing's locks and queues).
  args.push(
    "--dev",
    "/dev",
    "--perms",
    "1777",
    "--size",
    size,
    "--tmpfs",
    "/dev/shm",
    "--proc",
    "/proc",
    "--perms",
    "1777",
    "--size",
    size,
    "--tmpfs",
    "/tmp",
    "--perms",
    "1777",
    "--size",
    size,
    "--tmpfs",
    "/var/tmp",
  );
  args.push("--size", size, "--tmpfs", "/run");
  args.push("--size", size, "--tmpfs", "/home", "--perms", "0777", "--dir", SANDBOX_HOME);
  for (const dir of layout.readOnly ?? []) {
    // Folders on the way that only the sandbox's root tmpfs holds: made by bwrap as root when the harness is root.
    const parts = dir.split("/").filter(Boolean);
    // Inside the private tmpfs folders too (a toolchain under /tmp): bwrap would make them 0700, closed to the shell's uid.
    const top = parts[0] ?? "";
    if (!MOUNTED_TOP.has(top) || TMPFS_TOPS.has(top)) {
      for (let i = 1; i < parts.length; i++) {
        const path = `/${parts.slice(0, i).join("/")}`;
        if (!TMPFS_MOUNTS.has(path)) args.push("--perms", "0755", "--dir", path);
      }
    }
    args.push("--ro-bind", dir, dir);
  }
  if (layout.workspaceFd !== undefined) args.push("--bind-fd", String(layout.workspaceFd), SANDBOX_WORKDIR);
  else args.push("--dir", SANDBOX_WORKDIR);
  if (layout.ioFd !== undefined) args.push("--bind-fd", String(layout.ioFd), SANDBOX_IO_DIR);
  if (layout.infoFd !== undefined) args.push("--info-fd", String(layout.infoFd));
  if (layout.seccompFd !== undefined) args.push("--seccomp", String(layout.seccompFd));
  if (layout.extra) args.push(...layout.extra);
  // Its folder made by bwrap as root when the harness is root: open to the shell's own uid.
  if (layout.shellCopy !== undefined)
    args.push("--perms", "0755", "--dir", posix.dirname(SANDBOX_SHELL), "--ro-bind", layout.shellCopy, SANDBOX_SHELL);
  if (layout.asPid1) args.push("--as-pid-1");
  args.push("--remount-ro", "/dev", "--remount-ro", "/", "--chdir", SANDBOX_WORKDIR, "--clearenv", ...launcher.options);
  for (const [k, v] of Object.entries(layout.env)) args.push("--setenv", k, v);
  args.push("--", ...launcher.wrapper);
  return args;
}

/** The host's top-level system entries as bwrap arguments, per root: they do not come and go during a run. */
const systemEntries = new Map<string, string[]>();

/**
 * The read-only system part of a sandbox's root: each of SYSTEM_ENTRIES that exists (a link as the same link, a
 * folder bound read-only; worked out once per process), then the credential files and folders under /etc masked
 * (SECRET_FILES, SECRET_DIRS, /etc/ssh's private host keys), worked out for each sandbox: a credential file
 * written during a run is masked from the next sandbox on, and one removed does not make bwrap fail (it cannot
 * make a mount point in the read-only /etc).
 */
export function systemLayout(root = "/"): string[] {
  let entries = systemEntries.get(root);
  if (!entries) {
    entries = [];
    for (const name of SYSTEM_ENTRIES) {
      const host = join(root, name);
      let st;
      try {
        st = lstatSync(host);
      } catch {
        continue;
      }
      if (st.isSymbolicLink()) entries.push("--symlink", readlinkSync(host), `/${name}`);
      else if (st.isDirectory()) entries.push("--ro-bind", host, `/${name}`);
    }
    systemEntries.set(root, entries);
  }
  return [...entries, ...secretMasks(root)];
}

function secretMasks(root: string): string[] {
  const args: string[] = [];
  const remount: string[] = [];
  let sshKeys: string[] = [];
  try {
    sshKeys = readdirSync(join(root, "etc/ssh"))
      .filter((n) => /_key$/.test(n))
      .map((n) => `/etc/ssh/${n}`);
  } catch {
    // no /etc/ssh
  }
  for (const path of [...SECRET_FILES, ...sshKeys, ...SECRET_DIRS]) {
    let st;
    try {
      st = lstatSync(join(root, path));
    } catch {
      continue;
    }
    // A link is left as it is: it leads to a masked or unbound place (or, within /etc, to a path masked itself).
    if (st.isDirectory()) {
      args.push("--perms", "0755", "--size", "4096", "--tmpfs", path);
      remount.push("--remount-ro", path);
    } else if (!st.isSymbolicLink()) {
      args.push("--ro-bind", "/dev/null", path);
    }
  }
  return [...args, ...remount];
}

type BwrapProbe = { ok: true } | { ok: false; reason: string };

let probed: BwrapProbe | undefined;
let probing: Promise<BwrapProbe> | undefined;

function missingBwrap(): BwrapProbe {
  return {
    ok: false,
    reason: `bwrap (bubblewrap) is not on PATH: ${BWRAP_INSTALL_HINT}, or use --env host (no sandbox) or --env docker`,
  };
}

/** The probe's command line, with the seccomp filter at fd 3 when there is one (a kernel that refuses it fails the probe). */
function probeCommand(bwrap: string, seccomp: boolean): [string, string[]] {
  const launcher = bwrapLauncher(bwrap);
  const layout: SandboxLayout = {
    hostNetwork: false,
    env: { PATH: "/usr/bin:/bin" },
    ...(seccomp ? { seccompFd: 3 } : {}),
  };
  return [launcher.bwrap, [...bwrapArgs(layout, launcher), "/bin/true"]];
}

/** The seccomp filter opened for one sandbox's start (the caller closes it), or undefined without one. */
export function openSeccompFilter(): number | undefined {
  const file = sandboxSeccompFile();
  if (file === undefined) return undefined;
  try {
    return openSync(file, constants.O_RDONLY);
  } catch {
    return undefined;
  }
}

function probeAnswer(
  status: number | null,
  stderr: string,
  error: string | undefined,
  signal: string | null,
): BwrapProbe {
  if (status === 0) return { ok: true };
  const why = stderr.trim().split("\n")[0] || error || `exit ${status ?? signal}`;
  return {
    ok: false,
    reason: `bubblewrap cannot start a sandbox here (${why}): allow user namespaces, or use --env host (no sandbox) or --env docker`,
  };
}

/**
 * Whether a sandbox can start here (bwrap on PATH, user namespaces allowed): starts one that runs `true`.
 * The answer is kept for the life of the thread. Prefer probeBwrapAsync: this one blocks the thread until the
 * sandbox exits (0.2 s and more on a loaded machine).
 */
export function probeBwrap(): BwrapProbe {
  if (probed) return probed;
  const bwrap = findBwrap();
  if (!bwrap) return (probed = missingBwrap());
  const filter = openSeccompFilter();
  try {
    const [file, args] = probeCommand(bwrap, filter !== undefined);
    const r = spawnSync(file, args, {
      encoding: "utf8",
      timeout: 30_000,
      stdio: ["ignore", "ignore", "pipe", ...(filter !== undefined ? [filter] : [])],
    });
    return (probed = probeAnswer(r.status, r.stderr ?? "", r.error?.message, r.signal));
  } finally {
    if (filter !== undefined) closeSync(filter);
  }
}

/** probeBwrap without blocking the thread: the event loop keeps serving while the probe's sandbox runs. */
export function probeBwrapAsync(): Promise<BwrapProbe> {
  if (probed) return Promise.resolve(probed);
  probing ??= new Promise<BwrapProbe>((resolveProbe) => {
    const bwrap = findBwrap();
    if (!bwrap) return resolveProbe(missingBwrap());
    const filter = openSeccompFilter();
    const [file, args] = probeCommand(bwrap, filter !== undefined);
    let stderr = "";
    let child;
    try {
      child = spawn(file, args, {
        timeout: 30_000,
        stdio: ["ignore", "ignore", "pipe", ...(filter !== undefined ? [filter] : [])],
      });
    } finally {
      if (filter !== undefined) closeSync(filter);
    }
    child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    // A failed spawn may not close: its error is the answer (the first of the two settles the promise).
    child.on("error", (err) => resolveProbe(probeAnswer(null, stderr, err.message, null)));
    child.on("close", (status, signal) => resolveProbe(probeAnswer(status, stderr, undefined, signal)));
  }).then((answer) => (probed ??= answer));
  return probing;
}

let filesDir: string | null | undefined;

/** This thread's folder of files every sandbox binds or reads (mode 0711), made on first use; undefined when it cannot be. */
function sandboxFilesDir(): string | undefined {
  if (filesDir === undefined) {
    try {
      const dir = makeTempDirSync("shell");
      chmodSync(dir, 0o711);
      filesDir = dir;
    } catch {
      filesDir = null;
    }
  }
  return filesDir ?? undefined;
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
    const dir = sandboxFilesDir();
    if (dir === undefined) throw new Error("no folder");
    const path = join(dir, "bash");
    copyFileSync(source, path);
    chmodSync(path, 0o111);
    shellCopy = path;
  } catch {
    shellCopy = null;
  }
  return shellCopy ?? undefined;
}

let seccompFile: string | null | undefined;

/**
 * The host path of this thread's seccomp filter (seccomp.ts: the keyring calls refused), written on first use;
 * undefined where there is no filter for this machine or it cannot be written. Read through a descriptor by bwrap.
 */
export function sandboxSeccompFile(): string | undefined {
  if (seccompFile !== undefined) return seccompFile ?? undefined;
  try {
    const filter = keyringFilter();
    const dir = sandboxFilesDir();
    if (filter === undefined || dir === undefined) throw new Error("no filter");
    const path = join(dir, "seccomp.bpf");
    writeFileSync(path, filter, { mode: 0o600 });
    seccompFile = path;
  } catch {
    seccompFile = null;
  }
  return seccompFile ?? undefined;
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
export function sandboxProcesses(
  initHostPid: number | undefined,
  ns = initHostPid === undefined ? undefined : pidNamespaceOf(initHostPid),
): SandboxProcess[] {
  if (ns === undefined) return [];
  const found: SandboxProcess[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (readlinkSync(`/proc/${name}/ns/pid`) !== ns) continue;
      const status = readFileSync(`/proc/${name}/status`, "utf8");
      const last = (key: string) =>
        Number(new RegExp(`^${key}:\\s*([\\d\\s]+)$`, "m").exec(status)?.[1]?.trim().split(/\s+/).pop());
      if (/^State:\s*[ZX]/m.test(status)) continue;
      found.push({
        hostPid: Number(name),
        hostPpid: Number(/^PPid:\s*(\d+)/m.exec(status)?.[1]),
        nsPid: last("NSpid"),
        nsPgid: last("NSpgid"),
      });
    } catch {
      // gone
    }
  }
  return found;
}
