/**
 * Commands whose bash messages differ with how the shell runs them, and hold no path of the task (shared by
 * parity_s13_shell_messages.test.ts and parity_s13_docker_messages.test.ts).
 */
/** A function of the command's own: its messages are labelled by the source bash records for it (`environment` under `bash -c`). */
export const FUNCTION_COMMANDS = [
  "f() { nosuchcmd_s13; }; f",
  "f() {\n  nope_s13\n}\nf",
  'g() { echo "[${BASH_SOURCE[0]}][${FUNCNAME[0]}]"; caller 0; }; g',
  "f() { cd /nonexistent-s13; }; f",
  // stdout, stderr and the shell's own errors in the order written
  "f() { echo out; echo err >&2; nosuchcmd_s13; echo end; }; f",
  // a command naming its own shell runs in a bash of its own (shell_session.ts NAMES_ITS_SHELL)
  "f() { nosuchcmd_s13; }; f; test $$ -gt 1",
];

/** Syntax errors: bash echoes the offending line of the text it evaluates. */
export const SYNTAX_ERROR_COMMANDS = [
  "echo (",
  "true\necho (",
  "echo ok; fi",
  "if true; then",
  'echo "open',
  "for x in a b; do echo $x; done; done",
  // a command naming its own shell runs in a bash of its own (shell_session.ts NAMES_ITS_SHELL)
  "echo $$ (",
];

/** The original's per-command script for `command` (base.py `_wrap_command` at cb51baec, its snapshot made). */
export function originalScript(command: string, cwd: string): string {
  const quoted = (s: string) => `'${s.replaceAll("'", "'\\''")}'`;
  return [
    "source /nonexistent-s13-snapshot.sh 2>/dev/null || true",
    `builtin cd ${quoted(cwd)} || exit 126`,
    `eval ${quoted(command)}`,
    "__hermes_ec=$?",
    "exit $__hermes_ec",
  ].join("\n");
}
