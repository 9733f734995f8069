/**
 * The transport-independent part of a persistent shell: one long-lived `sh`/`bash` fed commands on its
 * stdin, so a command costs a fork in the shell instead of a new process (or exec round trip) from the host.
 * Used by the Docker backend (docker_shell.ts, over an exec's attach stream) and the local backend
 * (local_shell in local.ts, over a child process's pipes).
 *
 * Protocol (all markers carry a per-shell random nonce, so command output cannot forge them):
 *   host  → shell: `hb_run SEQ 'state' 'cwd' 'command' 'K=V'... 'NAME'...` (K=V is exported, a bare NAME unset;
 *                  `state` is '' or, for a carried command, the path prefix of its state files: see below)
 *   shell → host:  stdout and stderr each get `MARK SEQ S\n` before the command is started; stderr then gets
 *                  `MARK SEQ P<pid>\n` once it runs (the pid leads the command's own process group; the line
 *                  may fall anywhere inside the command's stderr and is cut out; left out with `reportPid:
 *                  false`, when the transport can find the command as the shell's child itself), then the
 *                  command's output, then `\nMARK SEQ E<exit code>\n` after it ends. The leading "\n" of the
 *                  end marker is always added, so stripping it restores the output byte for byte. A carried
 *                  command's end marker is `\nMARK SEQ E<exit code> C<cwd>\n` (cwd "" when it saved none).
 * Carried state (the terminal's commands, as the original's one shell per task): the subshell sources
 * `<state>.env` (the exports earlier commands left), cd's to the cwd (126 when it is gone), and after the command
 * (not after its own `exit`, a kill or a timeout) saves `export -p` and `pwd -P` (HB_SAVE). The shell then reads
 * the saved cwd and reports it in the end marker: the report comes from the shell after the command ended, under
 * the nonce the command cannot read. The command can write the state file itself, but the cwd it names is both
 * where the host starts the next command and what the approval gate judges, so it cannot point them apart.
 * Each command gets stdin from /dev/null (the shell's stdin carries the protocol), its own process group
 * (job control under bash, else a session via `setsid`; a timeout kills its whole tree with a group kill),
 * and a subshell (so `cd`, `exit` or `export` in one command do not leak into the next unless it is carried, and
 * `exit` never ends the persistent shell). Output written between commands (by processes a
 * previous command left running) is dropped.
 * The shell prints every marker itself, each in one write, so the command's subshell writes nothing of the
 * protocol: every write costs a wake-up of whatever relays the streams (in Docker the engine's shim and daemon)
 * and of this process.
 * A bash that reads the protocol (`bashReader`, READY's F) gets each request framed instead of as a line: its length
 * in FRAME_HEADER characters, then the request, all ASCII (framedRequest), so that bash takes it in two reads
 * (`read -N`) instead of one read system call per byte of a line.
 * A shell with neither job control nor `setsid` reports UNSUPPORTED and the caller falls back to one process per command.
 *
 * The command's text as the original's (hermes-agent tools/environments/base.py `_wrap_command`: each command is
 * the script `source <snapshot>`, `builtin cd <cwd> || exit 126`, `eval '<command>'`, … run by `bash -c`): a bash
 * with job control that reads framed requests (READY's T) gets each command as a request of that shape
 * (topLevelRequest), evaluated at the shell's top level (no function around the command: `$#` 0, no FUNCNAME,
 * `return` and `local` refused, as there) with `eval '<command>'` on its third line, the requests being evaluated
 * from line 1 of the shell's `-c` string (bashArgs). So bash numbers the command's lines as the original's bash
 * does, and names itself by its `$0`, the name the original's bash had: `/usr/bin/bash: line 3: foo: command not
 * found` (local), `bash: line 3: …` (Docker). Other shells keep `hb_run`, the command inside a function.
 */
import { randomBytes } from "node:crypto";
import { shellQuote, type ExecResult } from "../base.js";
import { OutputCollector } from "./output_capture.js";

export { INTERRUPT_EXIT_CODE, TIMEOUT_EXIT_CODE } from "./command_stop.js";
import { CommandStop } from "./command_stop.js";

/**
 * Under bash, the shell runs with job control (`set -m`): each command's subshell leads its own process group
 * without `setsid`, and the command runs in that subshell (`eval`) without a second shell, so a command costs
 * one fork beyond what it starts itself (a command naming `$$` or `$PPID` runs under `exec bash -c`, still
 * without a fork, so those name its own shell). The subshell turns job control off again (the command's own `&` jobs
 * stay in its group, so a group kill reaches them) and drops the protocol's variables and function, so a
 * command cannot read the marker nonce. Other shells use `setsid` and `innerShell -c` (`innerShell` defaults
 * to bash when found on PATH, else sh).
 */
/**
 * Saves the carried state where the command ran, after it (as the original's re-dump after each command): the
 * exported variables (`export -p`, in bash's POSIX mode so that sourcing them inside a function makes globals, not
 * locals) to `$hb_st.env`, the physical cwd (`pwd -P`, as the original) to `$hb_st.cwd` (nothing when the cwd is
 * gone, or its name holds a newline: the tracked one stays). Builtins only, no fork. The files are overwritten in place (`1<>`), never
 * truncated (a truncation costs a journal commit, 0.6 ms on ext4): the exports end with `return 0`, which ends
 * their sourcing before any stale tail, and the cwd is its file's first line (the shell resets it after reading).
 * The redirections are on groups: one that fails on the special builtin `export` itself would end a POSIX shell.
 * `$hb_st` is no secret: what it names only ever decides where the next command starts, and the host judges that
 * same directory.
 */
const HB_SAVE =
  'hb_x=$?; case $hb_st in /*) { if [ -n "$BASH_VERSION" ]; then set -o posix; fi; { export -p; echo return 0; } 1<> "$hb_st.env"; case $PWD in *"\n"*) ;; *) { pwd -P; } 1<> "$hb_st.cwd" ;; esac; } 2>/dev/null ;; esac; exit $hb_x';

/** A `sh -c` script that runs its $1 with eval and then saves the carried state to the prefix $2 (HB_SAVE). */
const CARRIED_WRAP = `hb_c=$1; hb_st=$2; shift 2; eval "$hb_c"; ${HB_SAVE}`;

/**
 * The prefix that joins a command's stderr to its stdout, in the order written, as the original's one pipe
 * (`stderr=subprocess.STDOUT`): the terminal's commands are `STDERR_TO_STDOUT + command`. The scripts of a carried
 * command (topLevelRequest, carriedCommand) take it off and join the streams around the command instead, so the
 * text bash evaluates is the command as written: a syntax error echoes its line as the original's does
 * (`bash: eval: line 3: \`echo ('`, not `\`exec 2>&1; echo ('`). Anywhere else the prefix does the same itself.
 */
export const STDERR_TO_STDOUT = "exec 2>&1; ";

/** The command without STDERR_TO_STDOUT, and whether it had it. */
function stderrJoined(command: string): { command: string; joined: boolean } {
  return command.startsWith(STDERR_TO_STDOUT)
    ? { command: command.slice(STDERR_TO_STDOUT.length), joined: true }
    : { command, joined: false };
}

/**
 * A `sh -c` script for a carried `command` run outside the persistent shell: $1 the state prefix, $2 the cwd. The
 * exports sourced, the cwd entered (126 when it is gone), the command, the state saved; shaped as the original's
 * script (see the header: the command's `eval` on line 3), so bash numbers its lines as the original's does.
 */
export function carriedCommand(command: string): string {
  const c = stderrJoined(command);
  return [
    `${c.joined ? "exec 2>&1; " : ""}hb_st=$1; hb_d=$2; shift 2; if [ -r "$hb_st.env" ]; then . "$hb_st.env"; fi`,
    `cd "$hb_d" || exit 126; unset hb_d`,
    `eval ${shellQuote(c.command)}`,
    HB_SAVE,
  ].join("\n");
}

/**
 * How a bash that reads the protocol is started: `bash --norc --noprofile -c BASH_READER argv0`. It evaluates the
 * first line sent (inOneRead), so the requests are evaluated from line 1 of its `-c` string; `argv0` is its `$0`,
 * the name bash gives itself in its messages. `--norc`: Debian's bash sources `~/.bashrc` even for `-c` when its
 * stdin is a socket (as Node's child pipes are), so the user's rc (a `pyenv init`: 0.7 s) would shape the task's
 * environment.
 */
export const BASH_READER = 'IFS= read -r hb_l && eval "$hb_l"';
export function bashArgs(argv0: string): string[] {
  return ["--norc", "--noprofile", "-c", BASH_READER, argv0];
}

/** A command naming `$$` or `$PPID` gets a shell of its own (see bootScript), so `kill $$` ends the command. */
const NAMES_ITS_SHELL = /\$\$|\$\{\$\}|PPID/;

/** The protocol's functions, removed in each command's subshell. */
const PROTOCOL_FUNCTIONS = "hb_run hb_carried hb_a hb_b hb_d";
/** The protocol's variables a command's subshell drops (hb_st stays for HB_SAVE; hb_dir until the cwd is entered). */
const PROTOCOL_VARIABLES = "hb_mark hb_seq hb_kv hb_setsid hb_jc hb_rc hb_nl hb_end hb_n hb_req hb_c hb_fr";

export function bootScript(mark: string, innerShell?: string, reportPid = true): string {
  return [
    `hb_mark='${mark}'`,
    // A newline for the end markers (portable: sh has no $'\n').
    `hb_nl='\n'`,
    innerShell !== undefined
      ? `hb_shell=${asciiQuote(innerShell)}`
      : `if command -v bash >/dev/null 2>&1; then hb_shell=bash; else hb_shell=sh; fi`,
    `hb_jc=; if [ -n "$BASH_VERSION" ] && set -m 2>/dev/null; then hb_jc=1; fi`,
    // The shell a `$$` command (or any command, without job control) gets when state is carried: $1 the command, $2 hb_st.
    `hb_wrap='${CARRIED_WRAP}'`,
    // Looked up only without job control: a command substitution is a fork, and bash needs no setsid.
    `hb_setsid=; if [ -z "$hb_jc" ]; then hb_setsid=$(command -v setsid); fi`,
    // A carried command's subshell (as the original's snapshot): the exports earlier commands left, then their cwd
    // (gone: 126, as the original's \`builtin cd <cwd> || exit 126\`), the command, the state saved after it
    // (HB_SAVE). A \`$$\` command, or any without job control, gets a shell of its own that evals and saves
    // (hb_wrap). The command's own \`exit\` (or a kill) skips the save: nothing carries, as in the original.
    `hb_carried() {`,
    `  if [ -r "$hb_st.env" ]; then . "$hb_st.env"; fi`,
    `  cd "$hb_dir" || exit 126`,
    `  for hb_kv in "$@"; do case $hb_kv in *=*) export "$hb_kv" ;; *) unset "$hb_kv" ;; esac; done`,
    `  if [ -z "$hb_jc" ]; then exec "$hb_setsid" "$hb_shell" -c "$hb_wrap" "$hb_shell" "$hb_cmd" "$hb_st"; fi`,
    `  set -m; set +m; unset -f ${PROTOCOL_FUNCTIONS}; unset hb_dir ${PROTOCOL_VARIABLES}`,
    `  case $hb_cmd in *'$$'*|*'\${$}'*|*PPID*) exec "$hb_shell" -c "$hb_wrap" "$hb_shell" "$hb_cmd" "$hb_st" ;; esac`,
    `  unset hb_shell hb_wrap; eval "$hb_cmd"; ${HB_SAVE}`,
    `}`,
    // A request's start: its sequence number, state prefix and cwd kept, the start markers printed.
    `hb_a() {`,
    `  hb_seq=$1; hb_st=$2; hb_dir=$3`,
    `  printf '%s %s S\\n' "$hb_mark" "$hb_seq"`,
    `  printf '%s %s S\\n' "$hb_mark" "$hb_seq" >&2`,
    `}`,
    // The first line of a top-level request's subshell (topLevelRequest), before its second enters the cwd: the
    // exports earlier commands left (a carried command), the request's variables (its arguments), job control off
    // in the command's own group (as in hb_run), the protocol's functions and variables gone. \`hb_dx\`: the exit
    // code when the cwd is gone (126 for a carried command, as the original's \`builtin cd <cwd> || exit 126\`).
    `hb_b() {`,
    `  hb_dx=1`,
    `  if [ -n "$hb_st" ]; then hb_dx=126; if [ -r "$hb_st.env" ]; then . "$hb_st.env"; fi; fi`,
    `  for hb_kv in "$@"; do case $hb_kv in *=*) export "$hb_kv" ;; *) unset "$hb_kv" ;; esac; done`,
    `  set -m; set +m; unset -f ${PROTOCOL_FUNCTIONS}; unset ${PROTOCOL_VARIABLES} hb_shell hb_wrap`,
    `}`,
    `hb_run() {`,
    `  hb_cmd=$4; hb_a "$1" "$2" "$3"; shift 4`,
    `  (`,
    `    if [ -n "$hb_st" ]; then hb_carried "$@"; exit; fi`,
    `    cd "$hb_dir" || exit 1`,
    `    for hb_kv in "$@"; do case $hb_kv in *=*) export "$hb_kv" ;; *) unset "$hb_kv" ;; esac; done`,
    // \`$$\` and \`$PPID\` name the shell that runs the command: such a command gets one of its own (exec, no fork),
    // so \`kill $$\` ends the command, not the persistent shell.
    `    if [ -z "$hb_jc" ]; then exec "$hb_setsid" "$hb_shell" -c "$hb_cmd"; fi`,
    // \`set -m\` first makes bash take this subshell's group as its own (shell_pgrp): otherwise a fork that fails
    // anywhere in the command makes bash SIGTERM the whole group (the job's pipeline) instead of failing that
    // one command as \`bash -c\` does.
    `    set -m; set +m; unset -f ${PROTOCOL_FUNCTIONS}; unset hb_dir hb_st ${PROTOCOL_VARIABLES}`,
    `    case $hb_cmd in *'$$'*|*'\${$}'*|*PPID*) exec "$hb_shell" -c "$hb_cmd" ;; esac`,
    `    unset hb_shell hb_wrap; eval "$hb_cmd"`,
    `  ) < /dev/null &`,
    `  hb_d`,
    `}`,
    // A request's end, its command started in the background: the wait, then the end markers.
    // Job control is off while the shell waits: the job already leads its own group, and the shell does not see it
    // stop (a stopped command is waited for until it ends or is killed, as without job control). Not `wait -f`:
    // bash 5.2 can loop in it forever ("wait_for: No record of process") when the job is killed by a signal.
    `hb_d() {`,
    `  [ -z "$hb_jc" ] || set +m`,
    ...(reportPid ? [`  printf '%s %s P%s\\n' "$hb_mark" "$hb_seq" "$!" >&2`] : []),
    `  wait $! 2>/dev/null`,
    `  hb_rc=$?`,
    `  [ -z "$hb_jc" ] || set -m`,
    // One write each: a literal newline in printf's format is flushed by itself (stdout is line-buffered).
    `  hb_end="$hb_nl$hb_mark $hb_seq E$hb_rc$hb_nl"`,
    // The cwd the command saved (its file's first line), reported by this shell after the command ended (the nonce
    // is out of the command's reach); the file is reset to an empty first line for the next command's report.
    `  if [ -n "$hb_st" ]; then`,
    `    hb_c=; { IFS= read -r hb_c; } 2>/dev/null < "$hb_st.cwd"; { printf '\\n'; } 2>/dev/null 1<> "$hb_st.cwd"`,
    `    hb_end="$hb_nl$hb_mark $hb_seq E$hb_rc C$hb_c$hb_nl"`,
    `  fi`,
    `  printf '%s' "$hb_end"`,
    `  printf '%s' "$hb_end" >&2`,
    `}`,
    // READY's flags: F, the requests come framed (a bash reads them, inOneRead); T, top-level requests too (job control).
    `if [ -n "$hb_jc" ] || [ -n "$hb_setsid" ]; then printf '%s READY %s%s\\n' "$hb_mark" "$$" "\${hb_fr:+ F\${hb_jc:+T}}"; else printf '%s UNSUPPORTED\\n' "$hb_mark"; exit 0; fi`,
    ``,
  ].join("\n");
}

/** Cuts one command's part out of one output stream: drops everything before its start marker, cuts out its pid line. */
class StreamCut {
  private carry = "";
  private phase: "start" | "body" | "done" = "start";
  pid: number | undefined;
  exitCode: number | undefined;
  /** The cwd the end marker reported (carried state only; "" when the command saved none). */
  cwd: string | undefined;
  /** Whatever could be the beginning of a marker waits for the next chunk. */
  private readonly holdBack: number;

  constructor(
    private readonly startTag: string,
    private readonly pidTag: string,
    private readonly endTag: string,
    private readonly sink: OutputCollector,
  ) {
    this.holdBack = Math.max(pidTag.length, endTag.length) + 8;
  }

  get done(): boolean {
    return this.phase === "done";
  }

  feed(text: string): void {
    let t = this.carry + text;
    this.carry = "";
    if (this.phase === "start") {
      const i = t.indexOf(this.startTag);
      if (i < 0) {
        this.carry = t.slice(Math.max(0, t.length - this.startTag.length));
        return;
      }
      const nl = t.indexOf("\n", i);
      if (nl < 0) {
        this.carry = t.slice(i);
        return;
      }
      t = t.slice(nl + 1);
      this.phase = "body";
    }
    while (this.phase === "body") {
      const p = this.pid === undefined ? t.indexOf(this.pidTag) : -1;
      const e = t.indexOf(this.endTag);
      if (p >= 0 && (e < 0 || p < e)) {
        const nl = t.indexOf("\n", p + this.pidTag.length);
        this.sink.push(t.slice(0, p));
        if (nl < 0) {
          this.carry = t.slice(p);
          return;
        }
        this.pid = Number(t.slice(p + this.pidTag.length, nl));
        t = t.slice(nl + 1);
        continue;
      }
      if (e >= 0) {
        this.sink.push(t.slice(0, e));
        const nl = t.indexOf("\n", e + this.endTag.length);
        if (nl < 0) {
          this.carry = t.slice(e);
          return;
        }
        // `E<code>`, or with carried state `E<code> C<cwd>` (the cwd's first line; "" when none was saved).
        const end = /^(-?\d+)(?: C(.*))?$/.exec(t.slice(e + this.endTag.length, nl));
        this.exitCode = Number(end?.[1] ?? NaN);
        if (end?.[2] !== undefined) this.cwd = end[2];
        this.phase = "done";
        return;
      }
      const keep = Math.min(t.length, this.holdBack);
      this.sink.push(t.slice(0, t.length - keep));
      this.carry = t.slice(t.length - keep);
      return;
    }
  }

  /** The part still held back (when the command ends without a marker). */
  flush(): void {
    if (this.phase === "body") this.sink.push(this.carry);
    this.carry = "";
  }
}

/** How the session reaches its shell. */
export interface ShellTransport {
  write(text: string): void;
  /** Sends `signal` to the process group led by each pid (and to the pid itself if it leads none). */
  kill(pids: number[], signal: "SIGTERM" | "SIGKILL"): void;
  /**
   * Sends `signal` to the process group of the command the shell runs now (its child, which leads that group).
   * Required with `reportPid: false`, where the session never learns the command's pid. With `termGraceMs`,
   * the SIGKILL after the grace may come when the group's leader has already ended: the transport must then
   * still reach the group it signalled first.
   */
  killCommand?(shellPid: number, signal: "SIGTERM" | "SIGKILL"): void;
  /** Drops the connection to the shell (streams, child handle). */
  destroy(): void;
}

export interface ShellSessionOptions {
  /** When set, a timeout or abort sends SIGTERM first and SIGKILL this much later; otherwise SIGKILL at once. */
  termGraceMs?: number;
  /** After a kill, how long the shell may take to report the command's end before it is given up on. */
  afterKillGraceMs?: number;
  /** Passed to bootScript. */
  innerShell?: string;
  /**
   * false: the shell does not report each command's pid (one write fewer per command; in Docker every write
   * is relayed by the engine) and a kill goes through `transport.killCommand`. Default true. Without
   * `termGraceMs` only: after its leader ends, what is left of a command's group is no longer the shell's child.
   */
  reportPid?: boolean;
  /**
   * The shell reading the protocol may be bash (started with bashArgs: a bash reading its script from stdin instead
   * would label the command's own functions `main`, not `environment` as the original's `bash -c`) or another shell
   * reading its stdin as a script: the boot script is sent after a line that has bash read it whole (bash reads a
   * script from a pipe one byte per system call, 2 KB of them; `read -N` takes it in one) and another shell skip
   * it; READY then tells which it was.
   */
  bashReader?: boolean;
  /**
   * The name bash gives itself (its `$0`) in a shell of its own for a `$$` command: as the name the shell was
   * started with (bashArgs). Default "bash".
   */
  argv0?: string;
  /** Shell lines run before the boot script, sent with it (one write, and inside its single read for bash). */
  preamble?: string;
}

/**
 * A line that has bash read `script` (ASCII) from stdin in one read and run it (the copy in a variable is dropped
 * before any command runs: it holds the nonce), then read framed requests (framedRequest) until stdin ends; another
 * shell skips it and reads the script as lines. Evaluated on line 1 (bashArgs), so are the requests.
 */
function inOneRead(script: string): string {
  const requests = `while IFS= read -r -N ${FRAME_HEADER} hb_n && IFS= read -r -N "$((hb_n))" hb_req; do eval "$hb_req"; done`;
  return `unset hb_l; if [ -n "$BASH_VERSION" ]; then hb_fr=1; IFS= read -r -N ${script.length} hb_boot; eval "$hb_boot"; unset hb_boot; ${requests}; exit; fi\n${script}`;
}

/** Characters of a frame's header: the request's length, space-padded, and a newline. */
const FRAME_HEADER = 12;

/**
 * One request (`command`, ASCII, then `words` quoted) for bash's `read -N`, which counts characters of the
 * shell's locale (the task's, possibly UTF-8): every word is made ASCII, so characters are bytes whatever the
 * locale. A word with other characters is quoted `$'…'` with each byte of its UTF-8 as `\xHH`, which bash turns
 * back into that byte. NUL characters are dropped, as bash drops them from a line it parses (`read` drops them
 * without counting them, which would break the frame).
 */
export function framedRequest(command: string, words: string[]): string {
  const body = [command, ...words.map((w) => (/^[\x01-\x7f]*$/.test(w) ? shellQuote(w) : bytesQuote(w)))].join(" ");
  return `${String(body.length).padStart(FRAME_HEADER - 1)}\n${body}`;
}

/** `word` quoted in ASCII (framedRequest); with `lines`, its newlines stay newlines (bash counts them as lines). */
function asciiQuote(word: string, lines = false): string {
  return /^[\x01-\x7f]*$/.test(word) ? shellQuote(word) : bytesQuote(word, lines);
}

function bytesQuote(word: string, lines = false): string {
  const bytes = Buffer.from(word.replaceAll("\0", ""), "utf8").toString("latin1");
  const escaped = lines ? /[^\n\x20-\x26\x28-\x5b\x5d-\x7e]/g : /[^\x20-\x26\x28-\x5b\x5d-\x7e]/g;
  return `$'${bytes.replace(escaped, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`)}'`;
}

/**
 * A request run at the shell's top level (READY's T: a bash with job control reading framed requests), shaped as
 * the original's per-command script (see the header): line 1 the start (hb_a) and the command's subshell with its
 * sourced exports (hb_b), line 2 its cwd entered, line 3 `eval '<command>'`, then the state saved (HB_SAVE); the
 * shell then waits for it (hb_d). A command naming its own shell (`$$`) runs the same script's lines 3 on in a bash
 * of its own (exec: no fork), named `argv0`. ASCII, with the command's newlines kept. A command given with
 * STDERR_TO_STDOUT gets its subshell's stderr joined to its stdout instead of the prefix.
 */
function topLevelRequest(seq: number, c: ShellCommand, shell: string, argv0: string): string {
  const env = Object.entries(c.env ?? {}).map(([k, v]) => asciiQuote(v === null ? k : `${k}=${v}`));
  const { command, joined } = stderrJoined(c.command);
  const run = `eval ${asciiQuote(command, true)}\n${HB_SAVE}`;
  const line3 = NAMES_ITS_SHELL.test(command)
    ? `exec ${asciiQuote(shell)} -c ${asciiQuote(`hb_st=$1; shift\n:\n${run}`, true)} ${asciiQuote(argv0)} "$hb_st"`
    : run;
  const state = asciiQuote(c.state ?? "");
  return [
    `hb_a ${seq} ${state} ${asciiQuote(c.cwd)}; (hb_b${env.map((w) => ` ${w}`).join("")}`,
    `builtin cd -- "$hb_dir" || exit $hb_dx; unset hb_dir hb_dx`,
    `${line3}) < /dev/null${joined ? " 2>&1" : ""} & hb_d`,
  ].join("\n");
}

export interface ShellCommand {
  command: string;
  cwd: string;
  /**
   * Carried state (the terminal's own commands): the absolute path prefix, inside the shell's filesystem, of the
   * files `<state>.env` and `<state>.cwd`. The command starts with the exports they hold (a cwd that is gone
   * fails it with 126) and saves its own after it; the result's `cwd` is where it ended.
   */
  state?: string;
  /** Exported for this command only; a value of `null` unsets the variable. */
  env?: Record<string, string | null>;
  timeoutMs?: number;
  signal?: AbortSignal;
  cap: number;
}

interface Running {
  seq: number;
  out: StreamCut;
  err: StreamCut;
  finish: (ended: "normal" | "shell-died") => void;
}

export class ShellSession {
  readonly mark = `__HB_${randomBytes(8).toString("hex")}__`;
  private seq = 0;
  private current: Running | undefined;
  private dead = false;
  private pid: number | undefined;
  private bootText = "";
  /** What the shell wrote on stderr before it answered the boot (the end of it): why it did not. */
  private bootStderr = "";
  /** Why the boot failed: "unsupported", "timeout" or "gone". */
  private bootFailure: "unsupported" | "timeout" | "gone" | undefined;
  private bootWaiter: ((ok: boolean) => void) | undefined;
  private readonly afterKillGraceMs: number;
  private readonly goneListeners: (() => void)[] = [];
  private closing = false;
  /** Requests go framed (inOneRead), not as lines. */
  private framed = false;
  /** Requests run at the shell's top level (topLevelRequest). */
  private topLevel = false;

  constructor(
    private readonly transport: ShellTransport,
    private readonly options: ShellSessionOptions = {},
  ) {
    this.afterKillGraceMs = options.afterKillGraceMs ?? 5000;
  }

  /** Sends the boot script; resolves false when the shell cannot host commands (no job control or setsid) or is slow. */
  boot(timeoutMs: number): Promise<boolean> {
    return new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => {
        this.bootFailure = "timeout";
        this.bootWaiter?.(false);
      }, timeoutMs);
      this.bootWaiter = (ok) => {
        clearTimeout(timer);
        this.bootWaiter = undefined;
        resolve(ok);
      };
      if (this.dead) {
        this.bootFailure = "gone";
        return this.bootWaiter(false);
      }
      const script =
        (this.options.preamble ?? "") +
        bootScript(this.mark, this.options.innerShell, this.options.reportPid !== false);
      const ascii = /^[\x01-\x7f]*$/.test(script);
      this.transport.write(this.options.bashReader === true && ascii ? inOneRead(script) : script);
    });
  }

  get alive(): boolean {
    return !this.dead;
  }

  /** Why boot() resolved false, in words, with the end of what the shell wrote on stderr meanwhile. */
  get bootProblem(): string {
    const what =
      this.bootFailure === "unsupported"
        ? "it cannot host commands (no job control or setsid)"
        : this.bootFailure === "timeout"
          ? "it did not answer in time"
          : "it ended before answering";
    const said = this.bootStderr.trim().split("\n").slice(-3).join(" / ");
    return said ? `${what}: ${said}` : what;
  }

  get busy(): boolean {
    return this.current !== undefined;
  }

  /** The shell's own pid, as it reported it at boot. */
  get shellPid(): number | undefined {
    return this.pid;
  }

  /** Feeds decoded text the shell wrote on its stdout ("out") or stderr ("err"). */
  onOutput(stream: "out" | "err", text: string): void {
    if (this.bootWaiter) {
      if (stream !== "out") {
        this.bootStderr = (this.bootStderr + text).slice(-1000);
        return;
      }
      this.bootText += text;
      const ready = new RegExp(`${this.mark} READY (\\d+)(?: (F)(T)?)?\\n`).exec(this.bootText);
      if (ready) {
        this.pid = Number(ready[1]);
        this.framed = ready[2] !== undefined;
        this.topLevel = ready[3] !== undefined;
        this.bootText = "";
        this.bootWaiter(true);
      } else if (this.bootText.includes(`${this.mark} UNSUPPORTED`)) {
        this.bootFailure = "unsupported";
        this.bootWaiter(false);
      }
      return;
    }
    const cur = this.current;
    if (!cur) return;
    (stream === "out" ? cur.out : cur.err).feed(text);
    if (cur.out.done && cur.err.done) cur.finish("normal");
  }

  /** To be called when the shell's streams end or the shell exits. */
  onGone(): void {
    if (this.dead) return;
    this.dead = true;
    if (this.bootWaiter) {
      this.bootFailure ??= "gone";
      this.bootWaiter(false);
    }
    this.current?.finish("shell-died");
    if (!this.closing) for (const listener of this.goneListeners.splice(0)) listener();
  }

  /** `listener` runs once when the shell ends by itself (not through close()). */
  onceGone(listener: () => void): void {
    this.goneListeners.push(listener);
  }

  /** Runs one command. Callers must not overlap calls (check `busy`). */
  run(c: ShellCommand): Promise<ExecResult> {
    if (this.dead) return Promise.reject(new Error("persistent shell is not running"));
    if (this.current) return Promise.reject(new Error("persistent shell is busy"));
    const seq = ++this.seq;
    const stdout = new OutputCollector(c.cap);
    const stderr = new OutputCollector(c.cap);
    const tag = `${this.mark} ${seq} `;
    const out = new StreamCut(`${tag}S`, `${tag}P`, `\n${tag}E`, stdout);
    const err = new StreamCut(`${tag}S`, `${tag}P`, `\n${tag}E`, stderr);

    return new Promise<ExecResult>((resolve) => {
      let killTimer: NodeJS.Timeout | undefined;
      let graceTimer: NodeJS.Timeout | undefined;
      const signalCommand = (signal: "SIGTERM" | "SIGKILL") => {
        const pid = out.pid ?? err.pid;
        if (pid !== undefined) this.transport.kill([pid], signal);
        else if (this.options.reportPid === false && this.transport.killCommand && this.pid !== undefined)
          this.transport.killCommand(this.pid, signal);
        // Before the command reported its pid, only killing the whole shell is sure to stop it.
        else if (this.pid !== undefined) this.transport.kill([this.pid], signal);
      };
      const stop = () => {
        const termGrace = this.options.termGraceMs;
        if (termGrace !== undefined && !killTimer) {
          signalCommand("SIGTERM");
          killTimer = setTimeout(() => signalCommand("SIGKILL"), termGrace);
        } else if (termGrace === undefined) {
          signalCommand("SIGKILL");
        }
        // The shell did not report the end: it is wedged; give up on it.
        graceTimer ??= setTimeout(() => this.close(), this.afterKillGraceMs + (termGrace ?? 0));
      };
      const limits = new CommandStop(c, stop);

      this.current = {
        seq,
        out,
        err,
        finish: (ended) => {
          if (this.current?.seq !== seq) return;
          this.current = undefined;
          limits.dispose();
          if (graceTimer) clearTimeout(graceTimer);
          if (killTimer) {
            clearTimeout(killTimer);
            // What ignored SIGTERM in the command's group (the group outlives its leader) dies now.
            const pid = out.pid ?? err.pid;
            if (pid !== undefined) this.transport.kill([pid], "SIGKILL");
            else if (this.options.reportPid === false && this.transport.killCommand && this.pid !== undefined)
              this.transport.killCommand(this.pid, "SIGKILL");
          }
          out.flush();
          err.flush();
          const { timedOut } = limits;
          const exitCode = limits.exitCode(out.exitCode ?? err.exitCode ?? -1);
          const o = stdout.render();
          const e = stderr.render();
          if (ended === "shell-died" && !limits.stopped) {
            e.text += `${e.text && !e.text.endsWith("\n") ? "\n" : ""}[sandbox shell ended unexpectedly]`;
          }
          const result: ExecResult = {
            exitCode,
            stdout: o.text,
            stderr: e.text,
            timedOut,
            truncated: o.truncated || e.truncated,
          };
          // Only the stdout marker counts (the stderr one says the same): the shell read it after the command.
          if (c.state !== undefined && out.cwd?.startsWith("/")) result.cwd = out.cwd;
          resolve(result);
        },
      };
      if (this.topLevel) {
        const body = topLevelRequest(seq, c, this.options.innerShell ?? "bash", this.options.argv0 ?? "bash");
        this.transport.write(`${String(body.length).padStart(FRAME_HEADER - 1)}\n${body}`);
        return;
      }
      const words = [c.state ?? "", c.cwd, c.command];
      for (const [k, v] of Object.entries(c.env ?? {})) words.push(v === null ? k : `${k}=${v}`);
      this.transport.write(
        this.framed ? framedRequest(`hb_run ${seq}`, words) : `hb_run ${seq} ${words.map(shellQuote).join(" ")}\n`,
      );
    });
  }

  /** Ends the shell: kills its process group, then drops the transport. */
  close(): void {
    this.closing = true;
    if (!this.dead && this.pid !== undefined) this.transport.kill([this.pid], "SIGKILL");
    this.onGone();
    this.transport.destroy();
  }
}
