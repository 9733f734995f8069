/**
 * A persistent shell per container: one long-lived exec running bash (sh when the image has no bash), fed
 * commands on stdin, so a command costs one fork inside the container instead of an exec round trip through
 * the engine (≈50–100 ms). Under bash a command is one job-control subshell (no `setsid`, no second shell);
 * under another sh it is `setsid sh -c` (see shell_session.ts, which holds the protocol; this file connects
 * it to an exec's attach stream). A timeout kills the command's process group with `kill -9 -PGID` from a
 * second exec, the group found through /proc as the shell's child (so the shell need not report each
 * command's pid). Images with neither bash nor `setsid` report UNSUPPORTED and the caller falls back to one
 * exec per command.
 */
import { StringDecoder } from "node:string_decoder";
import type Docker from "dockerode";
import { type ExecResult, shellQuote } from "../base.js";
import { demux, killInContainer, killShellCommandInContainer, startExec } from "./docker_exec.js";
import { bashArgs, ShellSession, type ShellCommand } from "../shell/shell_session.js";

export type { ShellCommand } from "../shell/shell_session.js";

const BOOT_TIMEOUT_MS = 15_000;
/**
 * The exec's command: `sh` looks bash up and replaces itself with it (exec, no extra process), started as a `-c`
 * reader (bashArgs: the requests run from line 1 of its `-c` string), its `$0` `bash`, as the original's
 * `docker exec … bash -c <script>`: its messages read `bash: line 3: …`, and a function the command defines is
 * labelled `environment` (`environment: line 3: …`), as bash labels functions defined while it runs a `-c` string;
 * a bash reading its script from stdin would say `main`. Without bash, `sh` reads its stdin as the script.
 */
export const SHELL_LAUNCH = [
  "sh",
  "-c",
  `if command -v bash >/dev/null 2>&1; then exec bash ${bashArgs("bash").map(shellQuote).join(" ")}; fi; exec sh`,
];

export class PersistentShell {
  private constructor(
    private readonly session: ShellSession,
    private readonly state: { discarding: boolean },
  ) {}

  /** Starts the shell; resolves undefined when the image cannot host it (neither bash nor setsid, or no /proc). */
  static async start(container: Docker.Container, user: string | undefined): Promise<PersistentShell | undefined> {
    const started = await startExec(container, { cmd: SHELL_LAUNCH, user, attachStdin: true });
    const state = { discarding: false };
    // No pid line per command: a kill finds the command as the shell's child (one relayed write fewer each).
    const session = new ShellSession(
      {
        write: (text) => started.stream.write(text),
        // Not for a shell whose container is being removed (`discard`): the removal ends its processes anyway.
        kill: (pids) => {
          if (!state.discarding) void killInContainer(container, user, pids);
        },
        killCommand: (shellPid) => void killShellCommandInContainer(container, user, shellPid),
        destroy: () => started.stream.destroy(),
      },
      { reportPid: false, bashReader: true, argv0: "bash" },
    );
    const outDecoder = new StringDecoder("utf8");
    const errDecoder = new StringDecoder("utf8");
    demux(
      started.stream,
      (b) => session.onOutput("out", outDecoder.write(b)),
      (b) => session.onOutput("err", errDecoder.write(b)),
    );
    const onGone = () => session.onGone();
    started.stream.once("end", onGone);
    started.stream.once("close", onGone);
    started.stream.once("error", onGone);
    if (!(await session.boot(BOOT_TIMEOUT_MS))) {
      session.close();
      return undefined;
    }
    return new PersistentShell(session, state);
  }

  get alive(): boolean {
    return this.session.alive;
  }

  get busy(): boolean {
    return this.session.busy;
  }

  /** Runs one command. Callers must not overlap calls (check `busy`). */
  run(c: ShellCommand): Promise<ExecResult> {
    return this.session.run(c);
  }

  /** Ends the shell (its process group inside the container dies with the exec's stdin closed or killed). */
  close(): void {
    this.session.close();
  }

  /**
   * Ends the shell of a container that is about to be removed: its stream is dropped, with no exec to kill its
   * process group first (an exec costs the engine a `runc exec`, ≈40 ms of CPU; removing the container ends
   * every process in it).
   */
  discard(): void {
    this.state.discarding = true;
    this.session.close();
  }
}
