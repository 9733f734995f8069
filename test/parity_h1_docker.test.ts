/**
 * The terminal's workdir in the Docker backend, as the original's (NousResearch/hermes-agent at cb51baec):
 *  - foreground: tools/terminal_tool.py passes the workdir as given to `env.execute(cwd=workdir)`, which
 *    tools/environments/base.py `_wrap_command` makes `builtin cd <workdir>` in a bash that
 *    tools/environments/docker.py `_run_bash` starts with `docker exec` and no `-w`: in the container's start
 *    folder (`docker run -w <cwd>`). A relative workdir is taken from there, not from the tracked cwd;
 *  - background: tools/process_registry.py `spawn_via_env` runs its wrapper with `env.execute(bg_command)`, no
 *    cwd: the workdir is only recorded, the process starts in the tracked cwd with the carried exports;
 *  - the shell's messages: each command is the script of base.py `_wrap_command` (line 3 `eval '<command>'`) run as
 *    `docker exec <id> bash -c <script>`, so bash calls itself `bash` and counts lines from that script
 *    (`bash: line 3: foo: command not found`). The expected text is that, run the same way in the same container.
 * End to end through the tool pipeline, with the persistent shell and with one exec per command.
 */
import { execFileSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Environment } from "../tools/environments/base.js";
import {
  cleanupAllDockerEnvironments,
  createDockerEnvironment,
  removeContainersByLabel,
} from "../tools/environments/docker/docker.js";
import { createToolPipeline } from "../tools/pipeline.js";
import type { ToolContext } from "../tools/registry.js";
import "../tools/terminal_tool.js";
import { ensureDockerTestImages, uniqueRunName } from "./helpers/docker.js";
import type { CwdScenario } from "./helpers/hermes_cwd.js";
import { silentLogger } from "./helpers/local_ctx.js";
import { freshShellState } from "./helpers/shared_shell.js";

const RUN = uniqueRunName("h1docker");
let image = "";
let count = 0;

beforeAll(async () => {
  ({ image } = await ensureDockerTestImages());
}, 600_000);

afterAll(async () => {
  await cleanupAllDockerEnvironments();
  await removeContainersByLabel({ run: RUN });
});

/**
 * One container per variant for its scenarios, each from a fresh one's shell state (helpers/shared_shell.ts):
 * they leave no process running and their files have names of their own.
 */
function variant(persistentShell: boolean): () => Promise<CwdScenario> {
  const id = `h1-${persistentShell ? "shell" : "plain"}`;
  let pending: Promise<Environment> | undefined;
  const env = () =>
    (pending ??= createDockerEnvironment(
      { runName: RUN, taskId: id, hostTaskDir: `/tmp/${RUN}/${id}`, taskTimeoutSec: 600 },
      { image, persistentShell },
    ));
  afterAll(async () => (await pending)?.cleanup());
  return async () => {
    const ctx: ToolContext = { taskId: `${id}-${count++}`, envKind: "docker", getEnv: env, logger: silentLogger };
    await freshShellState(ctx);
    return { ctx, env };
  };
}
const variants = { shell: variant(true), plain: variant(false) };

/** A pipeline whose approval gate records where it was asked to judge each command. */
function gated(s: CwdScenario) {
  const asked: (string | undefined)[] = [];
  const pipeline = createToolPipeline({
    approval: {
      gate: async (_command, opts) => {
        asked.push(opts?.cwd);
        return { allowed: true };
      },
      records: [],
    },
  });
  const term = async (args: Record<string, unknown>) =>
    JSON.parse(await pipeline.call("terminal", args, s.ctx)) as Record<string, unknown>;
  const wait = async (id: unknown) =>
    JSON.parse(await pipeline.call("process", { action: "wait", session_id: id, timeout: 30 }, s.ctx)) as {
      output: string;
    };
  return { asked, term, wait };
}

describe.each([
  ["persistent shell", true],
  ["one exec per command", false],
] as const)("the terminal's workdir in Docker (%s)", (_label, persistentShell) => {
  const scenario = persistentShell ? variants.shell : variants.plain;
  it("a relative workdir is taken from the container's start folder, not the tracked cwd", async () => {
    const s = await scenario();
    const { term } = gated(s);
    const w = (await s.env()).workdir;
    expect((await term({ command: "mkdir -p a/b b && cd a" })).exit_code).toBe(0);
    expect((await term({ command: "pwd", workdir: "b" })).output).toBe(`${w}/b`);
    expect((await term({ command: "pwd" })).output).toBe(`${w}/b`);
  }, 60_000);

  it("a background start ignores its workdir: it runs in the tracked cwd with the exports", async () => {
    const s = await scenario();
    const { asked, term, wait } = gated(s);
    const w = (await s.env()).workdir;
    expect((await term({ command: "mkdir -p bg && cd bg && export HB_BG=5" })).exit_code).toBe(0);
    asked.length = 0;
    const started = await term({ command: 'pwd; echo "[$HB_BG]"', workdir: "/", background: true });
    expect(asked).toEqual([`${w}/bg`]);
    expect((await wait(started.session_id)).output).toBe(`${w}/bg\n[5]\n`);
    // the start moves nothing
    expect((await term({ command: "pwd" })).output).toBe(`${w}/bg`);
  }, 60_000);
});

/** The local file's commands. */
const PREFIX_COMMANDS = [
  "f() {\n  nope_h1\n}\nf",
  "foo_h1",
  "true\nfoo_h1",
  "true\n\n\nfoo_h1",
  "if true; then\n  foo_h1\nfi",
  'echo "[$0][$#][${BASH_SOURCE[0]}][$LINENO][${FUNCNAME[*]}]"',
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

/** The original's per-command script for `command` (base.py `_wrap_command`, its snapshot already made). */
function originalScript(command: string, cwd: string): string {
  const quoted = (t: string) => `'${t.replaceAll("'", "'\\''")}'`;
  return [
    "source /nonexistent-h1-snapshot.sh 2>/dev/null || true",
    `builtin cd ${quoted(cwd)} || exit 126`,
    `eval ${quoted(command)}`,
    "__hermes_ec=$?",
    "exit $__hermes_ec",
  ].join("\n");
}

describe.each([
  ["persistent shell", true],
  ["one exec per command", false],
] as const)("the terminal's shell messages in Docker are the original's (%s)", (_label, persistentShell) => {
  const scenario = persistentShell ? variants.shell : variants.plain;
  it("bash's name, line numbers, $0, $# and no function around the command", async () => {
    const s = await scenario();
    const env = (await s.env()) as Environment & { containerId: string; user?: string };
    const pipeline = createToolPipeline();
    for (const command of PREFIX_COMMANDS) {
      // as the original's `docker exec <id> bash -c <script>`, stdout and stderr on one pipe
      const args = ["exec", ...(env.user ? ["-u", env.user] : []), env.containerId];
      let output: string;
      let exitCode = 0;
      try {
        output = execFileSync(
          "docker",
          [...args, "sh", "-c", 'exec "$0" -c "$1" 2>&1', "bash", originalScript(command, env.workdir)],
          { encoding: "utf8" },
        );
      } catch (err) {
        const e = err as { stdout: string; status: number };
        output = e.stdout;
        exitCode = e.status;
      }
      const ours = JSON.parse(await pipeline.call("terminal", { command }, s.ctx)) as Record<string, unknown>;
      expect({ output: ours.output, exit_code: ours.exit_code }, JSON.stringify(command)).toEqual({
        output: output.trim(),
        exit_code: exitCode,
      });
    }
  }, 120_000);
});
