/**
 * Wrappers unwrapped once: `sudo`, `env`, `nohup`, `timeout`, `xargs`, `find -exec`, … hand over to the
 * command they run; `sh -c`, `eval`, `su -c`, `watch` hand over shell text, judged as a line of its own.
 */
import type { SimpleCommand, Word } from "./model.js";

export interface Invocation {
  /** The program (basename, as run) and its arguments. */
  program: string;
  args: Word[];
  /** The program word itself (computed or globbed ones go to the smart approver). */
  word: Word;
  /** Runs with raised rights (sudo, doas, su, pkexec, runuser). */
  elevated: boolean;
  /** Arguments appended at run time (xargs, find -exec {}): targets unknown from the line. */
  runtimeArgs: boolean;
  /** The wrappers passed through, outermost first. */
  via: string[];
  command: SimpleCommand;
}

/** Shell text a wrapper hands over, to be modelled as a line of its own. */
export interface ShellText {
  code: Word;
  /** `sh -c CODE $0 $1 …`: the words the code sees as its positional parameters. */
  positional?: Word[];
  elevated: boolean;
  via: string[];
  command: SimpleCommand;
}

/** Wrapper → options that take a value (so the wrapped command starts after them). */
const WRAPPERS: Record<string, { valued: string[]; elevates?: boolean; positional?: number }> = {
  sudo: { valued: ["-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U", "--user", "--group"], elevates: true },
  doas: { valued: ["-u", "-C"], elevates: true },
  pkexec: { valued: ["--user"], elevates: true },
  env: { valued: ["-u", "--unset", "-C", "--chdir"] },
  nohup: { valued: [] },
  time: { valued: ["-f", "-o"] },
  nice: { valued: ["-n", "--adjustment"] },
  ionice: { valued: ["-c", "-n", "-p"] },
  timeout: { valued: ["-s", "--signal", "-k", "--kill-after"], positional: 1 },
  stdbuf: { valued: ["-i", "-o", "-e"] },
  command: { valued: [] },
  builtin: { valued: [] },
  exec: { valued: ["-a"] },
  setsid: { valued: [] },
  unbuffer: { valued: [] },
  chrt: { valued: [], positional: 1 },
  taskset: { valued: [], positional: 1 },
  flock: { valued: ["-w", "-E"], positional: 1 },
  chroot: { valued: [], positional: 1 },
  gosu: { valued: [], positional: 1, elevates: true },
  "su-exec": { valued: [], positional: 1, elevates: true },
  runuser: { valued: ["-u", "-g"], elevates: true },
  xargs: {
    valued: [
      "-I",
      "-i",
      "-n",
      "-P",
      "-L",
      "-d",
      "-E",
      "-s",
      "-a",
      "--max-args",
      "--max-procs",
      "--delimiter",
      "--arg-file",
    ],
  },
  parallel: { valued: ["-j", "--jobs", "-S"] },
  nsenter: { valued: ["-t", "--target"] },
  systemd_run: { valued: ["-p", "--unit", "-u"] },
  firejail: { valued: [] },
  proxychains: { valued: ["-f"] },
  torsocks: { valued: [] },
  caffeinate: { valued: [] },
  strace: { valued: ["-e", "-o", "-p"] },
  ltrace: { valued: ["-e", "-o"] },
  valgrind: { valued: [] },
  "dbus-launch": { valued: [] },
};

const SHELLS = new Set(["sh", "bash", "zsh", "dash", "ksh", "ash", "busybox sh", "fish", "mksh"]);
export const isShell = (program: string) => SHELLS.has(program);

export const basename = (text: string) => text.slice(text.lastIndexOf("/") + 1);

/** Skips a wrapper's options (and its positional arguments); returns the index of the wrapped command. */
function skipOptions(args: Word[], from: number, spec: { valued: string[]; positional?: number }): number {
  let i = from;
  while (i < args.length) {
    const t = args[i]!.text;
    if (t === "--") return i + 1 + (spec.positional ?? 0);
    if (/^[A-Za-z_][A-Za-z0-9_]*=/.test(t)) i++;
    else if (spec.valued.includes(t)) i += 2;
    else if (t.startsWith("-") && t.length > 1) i++;
    else break;
  }
  return i + (spec.positional ?? 0);
}

/** `-c CODE` of a shell (also `-lc`, `-ec`, `--login -c`). */
function shellCode(args: Word[]): Word | undefined {
  for (let i = 0; i < args.length; i++) {
    const t = args[i]!.text;
    if (!t.startsWith("-")) return undefined;
    if (/^-[a-zA-Z]*c[a-zA-Z]*$/.test(t)) return args[i + 1];
  }
  return undefined;
}

/** Replaces find's `-exec CMD {} ;` by CMD; the `{}` become find's start paths. */
function findExec(args: Word[]): { exec: Word[]; roots: Word[] } | undefined {
  const at = args.findIndex((w) => /^-(exec|execdir|ok|okdir)$/.test(w.text));
  if (at < 0) return undefined;
  const end = args.findIndex((w, i) => i > at && (w.text === ";" || w.text === "+"));
  const roots = args
    .slice(
      0,
      args.findIndex((w) => w.text.startsWith("-") || w.text === "(" || w.text === "!"),
    )
    .filter((w) => w.text !== "");
  const exec = args.slice(at + 1, end < 0 ? undefined : end);
  return { exec, roots: roots.length ? roots : [{ text: ".", literal: true, glob: false }] };
}

export interface Unwrapped {
  invocations: Invocation[];
  shellTexts: ShellText[];
}

/** The programs one simple command runs, wrappers unwrapped (at most a few levels deep). */
export function unwrap(command: SimpleCommand): Unwrapped {
  const out: Unwrapped = { invocations: [], shellTexts: [] };
  unwrapWords(command.argv, command, false, [], false, out, 0);
  return out;
}

function unwrapWords(
  argv: Word[],
  command: SimpleCommand,
  elevated: boolean,
  via: string[],
  runtimeArgs: boolean,
  out: Unwrapped,
  depth: number,
): void {
  const word = argv[0];
  if (!word || depth > 8) return;
  const program = basename(word.text);
  const args = argv.slice(1);
  const spec = WRAPPERS[program];
  if (spec && args.length) {
    const at = skipOptions(args, 0, spec);
    if (program === "env") {
      const split = args.findIndex((w) => w.text === "-S" || w.text === "--split-string");
      if (split >= 0 && args[split + 1])
        return void out.shellTexts.push({ code: args[split + 1]!, elevated, via: [...via, program], command });
    }
    if (at < args.length)
      return unwrapWords(
        args.slice(at),
        command,
        elevated || !!spec.elevates,
        [...via, program],
        runtimeArgs || program === "xargs" || program === "parallel",
        out,
        depth + 1,
      );
  }
  if (isShell(program) || program === "su" || program === "watch" || program === "script") {
    const code =
      program === "su" || program === "script"
        ? args[args.findIndex((w) => w.text === "-c" || w.text === "--command") + 1]
        : program === "watch"
          ? args.at(-1)
          : shellCode(args);
    const findsCode =
      program === "su" || program === "script" ? args.some((w) => w.text === "-c" || w.text === "--command") : !!code;
    const positional = isShell(program) && code ? args.slice(args.indexOf(code) + 1) : [];
    if (findsCode && code)
      return void out.shellTexts.push({
        code,
        positional,
        elevated: elevated || program === "su",
        via: [...via, program],
        command,
      });
  }
  const container = containerCommand(program, args);
  if (container) return unwrapWords(container, command, elevated, [...via, program], runtimeArgs, out, depth + 1);
  if (program === "ssh" && args.length) {
    const rest = sshRemoteCommand(args);
    if (rest.length)
      return void out.shellTexts.push({
        code: { text: rest.map((w) => w.text).join(" "), literal: rest.every((w) => w.literal), glob: false },
        elevated,
        via: [...via, "ssh"],
        command,
      });
  }
  if (program === "eval" && args.length) {
    const code = { text: args.map((w) => w.text).join(" "), literal: args.every((w) => w.literal), glob: false };
    return void out.shellTexts.push({ code, elevated, via: [...via, "eval"], command });
  }
  out.invocations.push({ program, args, word, elevated, runtimeArgs, via, command });
  if (program === "find") {
    const fe = findExec(args);
    if (fe?.exec.length) {
      // `{}` is what find found under its start paths, never a start path itself.
      const found = fe.roots.map((r) => ({ ...r, text: `${r.text.replace(/\/$/, "")}/\u0000found` }));
      const exec = fe.exec.flatMap((w) => (w.text === "{}" ? found : [w]));
      unwrapWords(exec, command, elevated, [...via, "find -exec"], false, out, depth + 1);
    }
  }
}

/** `docker exec [opts] CONTAINER CMD…`, `kubectl exec POD -- CMD…`: the command run inside. */
function containerCommand(program: string, args: Word[]): Word[] | undefined {
  if (/^(docker|podman|nerdctl)$/.test(program) && args[0]?.text === "exec") {
    const at = skipOptions(args, 1, { valued: ["-u", "--user", "-w", "--workdir", "-e", "--env", "--env-file"] });
    return at + 1 < args.length ? args.slice(at + 1) : undefined;
  }
  if (/^(kubectl|oc)$/.test(program) && args[0]?.text === "exec") {
    const dashes = args.findIndex((w) => w.text === "--");
    return dashes > 0 ? args.slice(dashes + 1) : undefined;
  }
  return undefined;
}

/** The command words of `ssh [opts] HOST CMD…`. */
function sshRemoteCommand(args: Word[]): Word[] {
  const at = skipOptions(args, 0, {
    valued: [
      "-p",
      "-i",
      "-l",
      "-o",
      "-F",
      "-J",
      "-L",
      "-R",
      "-D",
      "-b",
      "-c",
      "-e",
      "-m",
      "-S",
      "-W",
      "-w",
      "-E",
      "-B",
      "-I",
      "-O",
      "-Q",
    ],
  });
  return args.slice(at + 1);
}
