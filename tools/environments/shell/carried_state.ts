/**
 * The terminal's shell state carried from one command to the next, as the original's one shell per task keeps
 * it (its BaseEnvironment sources an env snapshot, cd's to the tracked cwd, runs the command, re-dumps the
 * exports and reports the cwd): the tracked cwd here, the exports in a file inside the environment.
 * One per environment (so per task). The persistent shell does the work (ShellCommand.state); this keeps the cwd.
 */
import { randomBytes } from "node:crypto";
import { posix } from "node:path";
import type { ExecOptions, ExecResult } from "../base.js";

export class CarriedState {
  /** Where the next carried command starts: where the last one ended (its own `exit`, a kill or a gone cwd keep it). */
  cwd: string;
  /** Path prefix of `<path>.env` (exports) and `<path>.cwd` inside the environment (ShellCommand.state). */
  readonly path: string;

  /** `dir`: a folder inside the environment the commands can write to. */
  constructor(workdir: string, dir: string) {
    this.cwd = workdir;
    this.path = posix.join(dir, `.hb-shell-${randomBytes(6).toString("hex")}`);
  }

  /** The cwd a command starts in: an explicit one (made absolute by `resolve`), else the tracked one when carried. */
  startCwd(opts: ExecOptions, resolve: (cwd: string) => string, workdir: string): string {
    if (opts.cwd) return resolve(opts.cwd);
    return opts.carry ? this.cwd : workdir;
  }

  /** The state word for the shell (none when the command carries nothing). */
  stateFor(opts: ExecOptions): string | undefined {
    return opts.carry ? this.path : undefined;
  }

  /** Takes the cwd a carried command ended in (a background start moves nothing: the original keeps its cwd). */
  after(opts: ExecOptions, result: ExecResult): ExecResult {
    if (opts.carry === true && result.cwd) this.cwd = posix.normalize(result.cwd);
    return result;
  }
}
