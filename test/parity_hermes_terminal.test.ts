/**
 * Foreground terminal results against the original's (NousResearch/hermes-agent at upstream cb51baec,
 * tools/terminal_tool.py `terminal_tool`, on its local backend). Each expected value is what the original
 * returned for the same call; compared as JSON with key order (the original's text uses ", " and ": ").
 */
import { afterAll, describe, expect, it } from "vitest";
import "../tools/terminal_tool.js";
import { createToolPipeline } from "../tools/pipeline.js";
import { localTask } from "./helpers/local_ctx.js";

const task = localTask();
afterAll(() => task.dispose());

const call = async (args: Record<string, unknown>) => createToolPipeline().call("terminal", args, task.ctx);
/** The original's json.dumps text, compact. */
const py = (text: string) => JSON.stringify(JSON.parse(text));

/** `seq 1 20000` as it prints. */
const SEQ = `${Array.from({ length: 20000 }, (_, i) => i + 1).join("\n")}\n`;

describe("terminal output as the original's", () => {
  it("strips white space at both ends and escape sequences (terminal_tool.py:1892-1898, ansi_strip.py)", async () => {
    expect(await call({ command: 'printf "  a\\n\\n"' })).toBe(py('{"output": "a", "exit_code": 0, "error": null}'));
    // 8-bit CSI (U+009B), OSC ended by BEL, DCS ended by ST, an nF escape (charset selection)
    expect(await call({ command: "printf '\\302\\23331mX\\033]0;title\\007Y\\033P1;2q\\033\\\\Z\\033(BW\\n'" })).toBe(
      py('{"output": "XYZW", "exit_code": 0, "error": null}'),
    );
  });

  it("explains exit codes that are no error (terminal_tool.py:1279-1340, 1903-1913)", async () => {
    expect(await call({ command: "grep x /dev/null" })).toBe(
      py('{"output": "", "exit_code": 1, "error": null, "exit_code_meaning": "No matches found (not an error)"}'),
    );
    expect(await call({ command: "FOO=1 /usr/bin/grep -q x /dev/null" })).toBe(
      py('{"output": "", "exit_code": 1, "error": null, "exit_code_meaning": "No matches found (not an error)"}'),
    );
    expect(await call({ command: "test -f /nonexist" })).toBe(
      py(
        '{"output": "", "exit_code": 1, "error": null, "exit_code_meaning": "Condition evaluated to false (expected, not an error)"}',
      ),
    );
    expect(await call({ command: "echo | grep x | cat; false || diff /dev/null /etc/hostname >/dev/null" })).toBe(
      py('{"output": "", "exit_code": 1, "error": null, "exit_code_meaning": "Files differ (expected, not an error)"}'),
    );
    expect(await call({ command: "exit 2" })).toBe(py('{"output": "", "exit_code": 2, "error": null}'));
  });

  it("appends the timeout note to the output as it was, then strips (base.py:566-573)", async () => {
    expect(await call({ command: 'printf "\\n\\n  x  \\n"; sleep 5', timeout: 1 })).toBe(
      py('{"output": "x  \\n\\n[Command timed out after 1s]", "exit_code": 124, "error": null}'),
    );
    expect(await call({ command: "sleep 5", timeout: 1 })).toBe(
      py('{"output": "[Command timed out after 1s]", "exit_code": 124, "error": null}'),
    );
  });

  it("cuts long output to 40 % head and 60 % tail with the original's notice (terminal_tool.py:1881-1890)", async () => {
    const r = JSON.parse(await call({ command: "seq 1 20000" }));
    expect(Object.keys(r)).toEqual(["output", "exit_code", "error"]);
    const notice = "\n\n... [OUTPUT TRUNCATED - 58894 chars omitted out of 108894 total] ...\n\n";
    expect(r.output.length).toBe(50071);
    expect(r.output).toBe(SEQ.slice(0, 20000) + notice + SEQ.slice(-30000).trimEnd());
  });

  it("counts the timeout note in what is cut (base.py:566-573 then terminal_tool.py:1881-1890)", async () => {
    const r = JSON.parse(await call({ command: "seq 1 20000; sleep 5", timeout: 1 }));
    const whole = `${SEQ}\n[Command timed out after 1s]`;
    const notice = "\n\n... [OUTPUT TRUNCATED - 58923 chars omitted out of 108923 total] ...\n\n";
    expect(r.output.length).toBe(50072);
    expect(r.output).toBe(whole.slice(0, 20000) + notice + whole.slice(-30000));
    expect(r.exit_code).toBe(124);
  });

  it("reads timeout 0 as no timeout given: the default (terminal_tool.py:1512 `timeout or default_timeout`)", async () => {
    expect(await call({ command: "sleep 1.5; echo done", timeout: 0 })).toBe(
      py('{"output": "done", "exit_code": 0, "error": null}'),
    );
  });

  it("runs an empty command and refuses a missing one as the original (terminal_tool.py:1486-1496)", async () => {
    expect(await call({ command: "" })).toBe(py('{"output": "", "exit_code": 0, "error": null}'));
    expect(await call({ command: "   " })).toBe(py('{"output": "", "exit_code": 0, "error": null}'));
    expect(await call({})).toBe(
      py(
        '{"output": "", "exit_code": -1, "error": "Invalid command: expected string, got NoneType", "status": "error"}',
      ),
    );
  });

  it("blocks a workdir with shell metacharacters (terminal_tool.py:210-235, 1672-1683)", async () => {
    expect(await call({ command: "pwd", workdir: "/tmp; ls" })).toBe(
      py(
        '{"output": "", "exit_code": -1, "error": "Blocked: workdir contains disallowed character \';\'. Use a simple filesystem path without shell metacharacters.", "status": "blocked"}',
      ),
    );
    expect(await call({ command: "pwd", workdir: "/tmp/it's" })).toBe(
      py(
        '{"output": "", "exit_code": -1, "error": "Blocked: workdir contains disallowed character \\"\'\\". Use a simple filesystem path without shell metacharacters.", "status": "blocked"}',
      ),
    );
    expect(JSON.parse(await call({ command: "pwd", workdir: "/tmp/$(id)", background: true })).error).toBe(
      "Blocked: workdir contains disallowed character '$'. Use a simple filesystem path without shell metacharacters.",
    );
  });

  it("refuses foreground commands that background or start servers, before the gate (terminal_tool.py:1358-1414, 1518-1527)", async () => {
    const refusal = (error: string) => py(`{"output": "", "exit_code": -1, "error": "${error}", "status": "error"}`);
    const amp =
      "Foreground command uses '&' backgrounding. Use terminal(background=true) for long-lived processes, then run health checks and tests in follow-up terminal calls.";
    const wrapper =
      "Foreground command uses shell-level background wrappers (nohup/disown/setsid). Use terminal(background=true) so Hermes can track the process, then run readiness checks and tests in separate commands.";
    const server =
      "This foreground command appears to start a long-lived server/watch process. Run it with background=true, verify readiness (health endpoint/log signal), then execute tests in a separate command.";
    expect(await call({ command: "sleep 0 & # bg" })).toBe(refusal(amp));
    expect(await call({ command: "true &\n" })).toBe(refusal(amp));
    expect(await call({ command: "echo SETSID" })).toBe(refusal(wrapper));
    expect(await call({ command: "pip install uvicorn" })).toBe(refusal(server));
    expect(await call({ command: "python3 -m http.server 8000" })).toBe(refusal(server));
    expect(await call({ command: "vite" })).toBe(refusal(server));
    // help and version calls, '&' without white space around it, and background calls run
    expect(JSON.parse(await call({ command: "nohup --help" })).exit_code).toBe(0);
    expect(await call({ command: "echo a&&echo b" })).toBe(py('{"output": "a\\nb", "exit_code": 0, "error": null}'));
    expect(await call({ command: "sleep 0 &echo x" })).toBe(py('{"output": "x", "exit_code": 0, "error": null}'));
    expect(JSON.parse(await call({ command: "sleep 0 &", background: true })).output).toBe(
      "Background process started",
    );
    // the refusal comes before the approval gate, which is never asked
    const asked: string[] = [];
    const gated = createToolPipeline({
      approval: {
        gate: async (command) => {
          asked.push(command);
          return { allowed: false, message: "BLOCKED: no" };
        },
        records: [],
      },
    });
    expect(await gated.call("terminal", { command: "rm -rf / &" }, task.ctx)).toBe(refusal(amp));
    expect(asked).toEqual([]);
  });
});

describe("process tool arguments as the original's (process_registry.py:1319-1345)", () => {
  const proc = async (args: Record<string, unknown>) => createToolPipeline().call("process", args, task.ctx);
  it("answers an unknown or missing action with its error, and takes a numeric session_id", async () => {
    expect(await proc({ action: "status", session_id: "x" })).toBe(
      py('{"error": "Unknown process action: status. Use: list, poll, log, wait, kill, write, submit, close"}'),
    );
    expect(await proc({})).toBe(
      py('{"error": "Unknown process action: . Use: list, poll, log, wait, kill, write, submit, close"}'),
    );
    expect(await proc({ action: "poll", session_id: 12 })).toBe(
      py('{"status": "not_found", "error": "No process with ID 12"}'),
    );
    expect(await proc({ action: "poll" })).toBe(py('{"error": "session_id is required for poll"}'));
  });
});
