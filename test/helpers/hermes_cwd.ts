/**
 * The terminal's carried shell state as the original's (NousResearch/hermes-agent at upstream cb51baec,
 * tools/environments/base.py `_wrap_command`: source the env snapshot, `builtin cd <cwd> || exit 126`,
 * `eval` the command, re-dump `export -p`, report `pwd -P`; tools/file_operations.py `_exec`: the file tools
 * follow the live cwd), as scenarios over the tool pipeline, shared by the local sandbox and Docker test files.
 */
import { expect } from "vitest";
import { detectDangerousCommand } from "../../tools/approval/gate.js";
import type { Environment } from "../../tools/environments/base.js";
import { createToolPipeline } from "../../tools/pipeline.js";
import type { ToolContext } from "../../tools/registry.js";
import "../../tools/terminal_tool.js";
import "../../tools/file_tools.js";

export interface CwdScenario {
  ctx: ToolContext;
  env: () => Promise<Environment>;
}

type Result = { output: string; exit_code: number; error: unknown };

export function cwdCalls(s: CwdScenario) {
  const pipeline = createToolPipeline();
  const term = async (args: Record<string, unknown>): Promise<Result> =>
    JSON.parse(await pipeline.call("terminal", args, s.ctx)) as Result;
  const run = async (command: string, extra: Record<string, unknown> = {}) => term({ command, ...extra });
  return { pipeline, term, run };
}

/** `cd` then `pwd`, and the file tools' relative paths follow. */
export async function cdCarries(s: CwdScenario): Promise<void> {
  const { run, pipeline } = cwdCalls(s);
  const w = (await s.env()).workdir;
  expect((await run("mkdir -p cd1/deep && printf 'hello\\n' > cd1/deep/note.txt && cd cd1/deep")).exit_code).toBe(0);
  expect((await run("pwd")).output).toBe(`${w}/cd1/deep`);
  expect((await s.env()).cwd).toBe(`${w}/cd1/deep`);
  // read_file and write_file resolve a relative path against the terminal's cwd
  const read = JSON.parse(await pipeline.call("read_file", { path: "note.txt" }, s.ctx));
  expect(read.content).toContain("hello");
  await pipeline.call("write_file", { path: "made.txt", content: "x\n" }, s.ctx);
  expect((await run("cat made.txt")).output).toBe("x");
  // `cd ..` relative to the tracked cwd; under bash `cd -` goes nowhere, as the original's: its `cd <cwd>` after
  // sourcing the snapshot sets OLDPWD to the snapshot's PWD, the same folder
  expect((await run("cd ..")).exit_code).toBe(0);
  expect((await run("pwd")).output).toBe(`${w}/cd1`);
  if ((await run("echo ${BASH_VERSION:+bash}")).output === "bash")
    expect((await run("cd - >/dev/null; pwd")).output).toBe(`${w}/cd1`);
  // a workdir runs there and moves the tracked cwd to where it ended, as the original's execute(cwd=workdir)
  expect((await run("pwd", { workdir: w })).output).toBe(w);
  expect((await run("pwd")).output).toBe(w);
}

/** Exported variables carry; plain shell variables do not (the original re-dumps `export -p` only). */
export async function exportCarries(s: CwdScenario): Promise<void> {
  const { run } = cwdCalls(s);
  expect((await run("export HB_CARRY='two words \"q\" $x'; HB_PLAIN=2; export HB_GONE=1")).exit_code).toBe(0);
  expect((await run('echo "[$HB_CARRY][$HB_PLAIN][$HB_GONE]"')).output).toBe('[two words "q" $x][][1]');
  expect((await run("unset HB_GONE")).exit_code).toBe(0);
  expect((await run('echo "[$HB_GONE]"; sh -c \'echo "[$HB_CARRY]"\'')).output).toBe('[]\n[two words "q" $x]');
}

/** A command's own `exit`, or a timeout, carries nothing: the original's marker and re-dump never run. */
export async function exitAndTimeoutCarryNothing(s: CwdScenario): Promise<void> {
  const { run } = cwdCalls(s);
  const w = (await s.env()).workdir;
  expect((await run("pwd", { workdir: w })).exit_code).toBe(0);
  const exited = await run("cd /; export HB_EXITED=1; exit 3");
  expect(exited.exit_code).toBe(3);
  expect((await run('pwd; echo "[$HB_EXITED]"')).output).toBe(`${w}\n[]`);
  const timedOut = await run("cd /; export HB_SLOW=1; sleep 5", { timeout: 1 });
  expect(timedOut.exit_code).toBe(124);
  expect((await run('pwd; echo "[$HB_SLOW]"')).output).toBe(`${w}\n[]`);
  // `$$` commands run in a shell of their own and still carry
  expect((await run("test $$ -gt 1 && cd /")).exit_code).toBe(0);
  expect((await run("pwd")).output).toBe("/");
  expect((await run("pwd", { workdir: w })).output).toBe(w);
}

/** The tracked cwd removed: every command fails with 126 (`builtin cd <cwd> || exit 126`) until a workdir moves it. */
export async function removedCwd(s: CwdScenario): Promise<void> {
  const { run } = cwdCalls(s);
  const w = (await s.env()).workdir;
  expect((await run("mkdir -p gone && cd gone", { workdir: w })).exit_code).toBe(0);
  expect((await run("pwd")).output).toBe(`${w}/gone`);
  // removed by the command that runs in it: its `pwd -P` fails, so the tracked cwd stays
  expect((await run("rmdir ../gone")).exit_code).toBe(0);
  const stuck = await run("echo never");
  expect(stuck.exit_code).toBe(126);
  expect(stuck.output).toContain(`${w}/gone`);
  expect(stuck.output).not.toContain("never");
  expect((await run("pwd", { workdir: w })).output).toBe(w);
  expect((await run("pwd")).output).toBe(w);
}

/** The approval gate judges a relative target where the command will run: `rm -rf x` after `cd /` is `rm -rf /x`. */
export async function gateFollowsCwd(s: CwdScenario): Promise<void> {
  const asked: { command: string; cwd?: string }[] = [];
  const pipeline = createToolPipeline({
    approval: {
      gate: async (command, opts) => {
        asked.push({ command, cwd: opts?.cwd });
        const verdict = detectDangerousCommand(command);
        return verdict.dangerous ? { allowed: false, message: `BLOCKED: ${verdict.patternKey}` } : { allowed: true };
      },
      records: [],
    },
  });
  const run = async (command: string) =>
    JSON.parse(await pipeline.call("terminal", { command }, s.ctx)) as Record<string, unknown>;
  const w = (await s.env()).workdir;
  expect((await run(`cd ${w} && mkdir -p x && touch x/keep`)).exit_code).toBe(0);
  expect((await run("rm -rf x/sub")).exit_code).toBe(0);
  expect((await run("cd /")).exit_code).toBe(0);
  asked.length = 0;
  const blocked = await run("rm -rf x");
  expect(asked).toEqual([{ command: "cd '/' && rm -rf x", cwd: "/" }]);
  const direct = detectDangerousCommand("rm -rf /x");
  expect(direct.dangerous).toBe(true);
  expect(detectDangerousCommand(asked[0]!.command).patternKey).toBe(direct.patternKey);
  expect(blocked.status).toBe("blocked");
  // a command that writes its own cwd report moves the gate with the shell: both go to where it points
  expect((await run(`cd ${w}`)).exit_code).toBe(0);
  expect((await run('printf "/\\n" > "$hb_st.cwd"; exit 0')).exit_code).toBe(0);
  asked.length = 0;
  expect((await run("rm -rf x")).status).toBe("blocked");
  expect(asked[0]!.cwd).toBe("/");
  expect((await run("pwd")).output).toBe("/");
  expect((await run(`cd ${w} && test -f x/keep && echo kept`)).output).toBe("kept");
}

/** A background process starts in the terminal's cwd with its exports, as the original's spawn_via_env. */
export async function backgroundStartsThere(s: CwdScenario): Promise<void> {
  const { run, term } = cwdCalls(s);
  const w = (await s.env()).workdir;
  expect((await run("mkdir -p bg && cd bg && export HB_BG=7", { workdir: w })).exit_code).toBe(0);
  const started = (await term({ command: 'pwd; echo "[$HB_BG]"', background: true })) as unknown as {
    session_id: string;
  };
  const { pipeline } = cwdCalls(s);
  const waited = JSON.parse(
    await pipeline.call("process", { action: "wait", session_id: started.session_id, timeout: 30 }, s.ctx),
  );
  expect(waited.output).toBe(`${w}/bg\n[7]\n`);
  // the start itself moves nothing
  expect((await run("pwd")).output).toBe(`${w}/bg`);
}
