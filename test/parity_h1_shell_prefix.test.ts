/**
 * The terminal's shell messages as the original's (NousResearch/hermes-agent at cb51baec): each command is the
 * script of tools/environments/base.py `_wrap_command` (line 1 sources the env snapshot, line 2
 * `builtin cd <cwd> || exit 126`, line 3 `eval '<command>'`, then the re-dump), run by tools/environments/local.py
 * `_run_bash` as `[bash, "-c", script]` with `bash = shutil.which("bash")`. So bash names itself by that path and
 * counts lines from that script: `/usr/bin/bash: line 3: foo: command not found`; `$0` is that path, `$#` 0, and
 * nothing runs in a function. The expected text is that script's own output, run here by the same bash the same
 * way (stdout and stderr on one pipe), and compared with the terminal's output through the tool pipeline, in the
 * local bubblewrap sandbox and the host local environment.
 */
import { spawnSync } from "node:child_process";
import { accessSync, constants, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { Environment } from "../tools/environments/base.js";
import { SandboxEnvironment } from "../tools/environments/local/local_sandbox.js";
import { createToolPipeline } from "../tools/pipeline.js";
import "../tools/terminal_tool.js";
import type { CwdScenario } from "./helpers/hermes_cwd.js";
import { type LocalTaskFixture, localTask, silentLogger } from "./helpers/local_ctx.js";

/** What the original's `shutil.which("bash")` finds: the first executable `bash` on PATH. */
function whichBash(): string {
  for (const dir of (process.env.PATH ?? "").split(":")) {
    try {
      accessSync(join(dir || ".", "bash"), constants.X_OK);
      return join(dir || ".", "bash");
    } catch {}
  }
  return "/usr/bin/bash";
}

/** The original's per-command script for `command` (base.py `_wrap_command`, its snapshot already made). */
function originalScript(command: string, cwd: string): string {
  const quoted = (s: string) => `'${s.replaceAll("'", "'\\''")}'`;
  return [
    "source /nonexistent-h1-snapshot.sh 2>/dev/null || true",
    `builtin cd ${quoted(cwd)} || exit 126`,
    `eval ${quoted(command)}`,
    "__hermes_ec=$?",
    "exit $__hermes_ec",
  ].join("\n");
}

/** The original's output for `command`: its bash runs the script, stdout and stderr merged, then stripped. */
function original(command: string): { output: string; exit_code: number } {
  const bash = whichBash();
  const r = spawnSync("sh", ["-c", 'exec "$0" -c "$1" 2>&1', bash, originalScript(command, "/")], {
    encoding: "utf8",
    cwd: "/",
  });
  return { output: r.stdout.trim(), exit_code: r.status ?? -1 };
}

/** Commands whose output holds no paths of the task (its folder differs between the original and ours); the Docker file has the same list. */
const PREFIX_COMMANDS = [
  "foo_h1",
  "true\nfoo_h1",
  "true\n\n\nfoo_h1",
  "if true; then\n  foo_h1\nfi",
  'echo "[$0][$#][${BASH_SOURCE[0]}][$LINENO][${FUNCNAME[*]}]"',
  "f() {\n  nope_h1\n}\nf",
  "cd /nonexistent-h1",
  "return 1",
  "local x=1",
  "cat <<'EOF'\nx\nEOF\nfoo_h1",
  "echo 'it'\\''s'; foo_h1",
  "echo é\nfoo_h1",
  "x=$(foo_h1)\n(foo_h1)",
  "test $$ -gt 1 && foo_h1",
  'test "$PPID" -gt 1\nfoo_h1',
];

const root = mkdtempSync(join(tmpdir(), "h1-prefix-"));
const closers: (() => Promise<void>)[] = [];
const tasks: LocalTaskFixture[] = [];
afterAll(async () => {
  for (const close of closers) await close();
  for (const t of tasks) await t.dispose();
  rmSync(root, { recursive: true, force: true });
});

function sandbox(): CwdScenario {
  const id = `s${closers.length}`;
  let pending: Promise<Environment> | undefined;
  const env = () =>
    (pending ??= SandboxEnvironment.create({ runName: "h1", taskId: id, hostTaskDir: join(root, id) }, {}));
  closers.push(async () => void (pending && (await (await pending).cleanup())));
  return { ctx: { taskId: id, envKind: "local", getEnv: env, logger: silentLogger }, env };
}

function host(): CwdScenario {
  const t = localTask();
  tasks.push(t);
  return { ctx: t.ctx, env: t.env };
}

async function sameAsOriginal(s: CwdScenario): Promise<void> {
  const pipeline = createToolPipeline();
  for (const command of PREFIX_COMMANDS) {
    const ours = JSON.parse(await pipeline.call("terminal", { command }, s.ctx)) as Record<string, unknown>;
    expect({ output: ours.output, exit_code: ours.exit_code }, JSON.stringify(command)).toEqual(original(command));
  }
}

describe("the terminal's shell messages are the original's (local sandbox)", () => {
  it("bash's name, line numbers, $0, $# and no function around the command", () => sameAsOriginal(sandbox()));
});

describe("the terminal's shell messages are the original's (host local environment)", () => {
  it("bash's name, line numbers, $0, $# and no function around the command", () => sameAsOriginal(host()));
  it("also for a carried command run outside the persistent shell (stdin given)", async () => {
    const env = await host().env();
    for (const command of ["foo_h1", "true\nfoo_h1", 'echo "[$0][$#][${FUNCNAME[*]}]"']) {
      const r = await env.exec(`exec 2>&1; ${command}`, { carry: true, stdin: "" });
      expect(r.stdout.trim(), JSON.stringify(command)).toBe(original(command).output);
    }
  });
});
