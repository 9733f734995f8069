import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import "../tools/terminal_tool.js";
import "../tools/file_tools.js";
import { toPosixEre } from "../tools/file_tools.js";
import type { ApprovalGate } from "../tools/approval/gate.js";
import { createToolPipeline, type ToolPipelineOptions } from "../tools/pipeline.js";
import { registry } from "../tools/registry.js";
import { isAlive, localTask, waitUntil, type LocalTaskFixture } from "./helpers/local_ctx.js";
import { callTool } from "./helpers/tool_call.js";

let task: LocalTaskFixture;

beforeEach(() => {
  task = localTask();
});
afterEach(async () => {
  await task.dispose();
});

async function call(
  name: string,
  args: Record<string, unknown>,
  t: LocalTaskFixture = task,
  opts: ToolPipelineOptions = {},
): Promise<any> {
  return callTool(name, args, t.ctx, opts);
}

describe("registration", () => {
  it("registers the core tools under Hermes' names and toolsets", () => {
    expect(registry.toolsetOf("terminal")).toBe("terminal");
    expect(registry.toolsetOf("process")).toBe("terminal");
    for (const n of ["read_file", "write_file", "patch", "search_files"]) expect(registry.toolsetOf(n)).toBe("file");
    const terminal = registry.get("terminal")!.schema;
    expect(terminal.parameters).toMatchObject({ required: ["command"] });
    // The original's parameters in its order; pty is accepted and ignored, the notices are echoed as there.
    expect(Object.keys((terminal.parameters as any).properties)).toEqual([
      "command",
      "background",
      "timeout",
      "workdir",
      "pty",
      "notify_on_complete",
      "watch_patterns",
    ]);
    expect((terminal.parameters as any).properties.timeout).toMatchObject({ type: "integer", minimum: 1 });
    expect((terminal.parameters as any).properties.timeout.maximum).toBeUndefined();
    expect((terminal.parameters as any).properties.watch_patterns).toMatchObject({
      type: "array",
      items: { type: "string" },
    });
    expect(terminal.description).toMatch(/read_file/);
    expect(terminal.description).toMatch(/search_files/);
  });
});

describe("terminal", () => {
  it("returns combined output and the exit code; a non-zero exit is not an error", async () => {
    const r = await call("terminal", { command: "echo one; echo two >&2; echo three; exit 2" });
    expect(r).toEqual({ output: "one\ntwo\nthree", exit_code: 2, error: null });
  });

  it("runs in the task folder, or in workdir (relative or absolute)", async () => {
    expect((await call("terminal", { command: "pwd" })).output).toBe(task.taskDir);
    mkdirSync(join(task.taskDir, "sub"), { recursive: true });
    expect((await call("terminal", { command: "pwd", workdir: "sub" })).output).toBe(join(task.taskDir, "sub"));
    expect((await call("terminal", { command: "pwd", workdir: task.root })).output).toBe(task.root);
  });

  it("kills the command at its timeout with exit code 124", async () => {
    // Without the kill this call would run for 100 s, past the test's own timeout.
    const r = await call("terminal", { command: "echo start; sleep 100 &echo $! > kid.pid; sleep 100", timeout: "1" });
    // The original's result, key for key: no error (a timeout counts as a success) and no extra keys; the note
    // follows the output as it was ("start\n"), so a blank line comes between (tools/environments/base.py:566).
    expect(r).toEqual({ output: "start\n\n[Command timed out after 1s]", exit_code: 124, error: null });
    expect(Object.keys(r)).toEqual(["output", "exit_code", "error"]);
    const kid = Number(readFileSync(join(task.taskDir, "kid.pid"), "utf8"));
    expect(await waitUntil(() => !isAlive(kid), 3000)).toBe(true);
  });

  it("refuses a foreground timeout above 600 s as the original does; pty is accepted", async () => {
    expect(await call("terminal", { command: "echo hi", timeout: 601 })).toEqual({
      error:
        "Foreground timeout 601s exceeds the maximum of 600s. Use background=true with notify_on_complete=true for long-running commands.",
    });
    expect(await call("terminal", { command: "echo hi", pty: true })).toEqual({
      output: "hi",
      exit_code: 0,
      error: null,
    });
  });

  it("caps long output and says so", async () => {
    const r = await call("terminal", { command: "head -c 120000 /dev/zero | tr '\\0' x" });
    expect(r.exit_code).toBe(0);
    // The original's cut and notice, and no extra key (test/parity_hermes_terminal.test.ts has the details).
    expect(Object.keys(r)).toEqual(["output", "exit_code", "error"]);
    expect(r.output).toBe(
      `${"x".repeat(20_000)}\n\n... [OUTPUT TRUNCATED - 70000 chars omitted out of 120000 total] ...\n\n${"x".repeat(30_000)}`,
    );
  });

  it("passes the approval gate first and does not run a blocked command", async () => {
    const seen: unknown[] = [];
    const deny: ApprovalGate = async (command, info) => {
      seen.push({ command, info });
      return { allowed: false, message: "BLOCKED: recursive delete" };
    };
    const denying = { approval: { gate: deny, records: [] } };
    const r = await call("terminal", { command: "touch should_not_exist", workdir: "." }, task, denying);
    // The original's terminal answers a blocked command so (tools/terminal_tool.py at upstream cb51baec, 1663-1668).
    expect(r).toEqual({ output: "", exit_code: -1, error: "BLOCKED: recursive delete", status: "blocked" });
    expect(Object.keys(r)).toEqual(["output", "exit_code", "error", "status"]);
    expect(seen).toEqual([
      {
        command: "touch should_not_exist",
        info: {
          cwd: task.taskDir,
          workdir: task.taskDir,
          backend: "local",
          realpath: expect.any(Function),
          readFile: expect.any(Function),
        },
      },
    ]);
    expect(existsSync(join(task.taskDir, "should_not_exist"))).toBe(false);
    const bg = await call("terminal", { command: "touch bg_should_not_exist", background: true }, task, denying);
    expect(bg.status).toBe("blocked");
    const allowing = { approval: { gate: (async () => ({ allowed: true })) as ApprovalGate, records: [] } };
    expect(await call("terminal", { command: "echo ok" }, task, allowing)).toEqual({
      output: "ok",
      exit_code: 0,
      error: null,
    });
  });

  it("rejects bad arguments naming the field", async () => {
    // A missing command gets the original's error; a blank one runs, as in the original.
    expect((await call("terminal", {})).error).toBe("Invalid command: expected string, got NoneType");
    expect((await call("terminal", { command: "echo", timeout: "soon" })).error).toMatch(/'timeout'/);
    expect(await call("terminal", { command: "   " })).toEqual({ output: "", exit_code: 0, error: null });
  });
});

describe("terminal background + process", () => {
  it("echoes notify_on_complete and watch_patterns with the original's keys (watch_patterns give way)", async () => {
    const flagged = await call("terminal", {
      command: "sleep 0.1",
      background: true,
      notify_on_complete: true,
      watch_patterns: ["ready"],
    });
    expect(Object.keys(flagged)).toEqual([
      "output",
      "session_id",
      "pid",
      "exit_code",
      "error",
      "watch_patterns_ignored",
      "notify_on_complete",
    ]);
    expect(flagged.notify_on_complete).toBe(true);
    const watching = await call("terminal", { command: "sleep 0.1", background: true, watch_patterns: ["ready"] });
    expect(watching.watch_patterns).toEqual(["ready"]);
    for (const id of [flagged.session_id, watching.session_id])
      await call("process", { action: "wait", session_id: id, timeout: 5 });
  });

  it("starts a background process and polls, waits, logs, lists and kills, with the original's results", async () => {
    const started = await call("terminal", {
      command: "for i in 1 2 3; do echo tick$i; sleep 0.2; done; exit 3",
      background: true,
    });
    expect(started).toMatchObject({ output: "Background process started", exit_code: 0, error: null });
    const id = started.session_id as string;
    expect(id).toMatch(/^proc_/);

    const waited = await call("process", { action: "wait", session_id: id, timeout: 10 });
    expect(waited).toEqual({ status: "exited", exit_code: 3, output: "tick1\ntick2\ntick3\n" });

    expect(await call("process", { action: "log", session_id: id, limit: 2 })).toEqual({
      session_id: id,
      status: "exited",
      output: "tick2\ntick3",
      total_lines: 3,
      showing: "2 lines",
    });
    expect((await call("process", { action: "log", session_id: id, offset: 1, limit: 1 })).output).toBe("tick2");
    const polled = await call("process", { action: "poll", session_id: id });
    expect(Object.keys(polled)).toEqual([
      "session_id",
      "command",
      "status",
      "pid",
      "uptime_seconds",
      "output_preview",
      "exit_code",
    ]);
    expect(polled).toMatchObject({
      session_id: id,
      status: "exited",
      pid: started.pid,
      output_preview: "tick1\ntick2\ntick3\n",
      exit_code: 3,
    });
    expect(await call("process", { action: "kill", session_id: id })).toEqual({
      status: "already_exited",
      exit_code: 3,
    });

    const long = (await call("terminal", { command: "echo $$ > long.pid; sleep 100", background: true })).session_id;
    await waitUntil(
      () =>
        existsSync(join(task.taskDir, "long.pid")) &&
        readFileSync(join(task.taskDir, "long.pid"), "utf8").trim() !== "",
    );
    const pid = Number(readFileSync(join(task.taskDir, "long.pid"), "utf8"));
    expect((await call("process", { action: "poll", session_id: long })).status).toBe("running");
    expect(await call("process", { action: "wait", session_id: long, timeout: 1 })).toEqual({
      status: "timeout",
      output: "",
      timeout_note: "Waited 1s, process still running",
    });

    const list = await call("process", { action: "list" });
    expect(list.processes).toHaveLength(2);
    const entry = list.processes.find((p: any) => p.session_id === long);
    expect(Object.keys(entry)).toEqual([
      "session_id",
      "command",
      "cwd",
      "pid",
      "started_at",
      "uptime_seconds",
      "status",
      "output_preview",
    ]);
    expect(entry).toMatchObject({ command: "echo $$ > long.pid; sleep 100", status: "running", output_preview: "" });
    expect(entry.started_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$/);

    expect(await call("process", { action: "kill", session_id: long })).toEqual({ status: "killed", session_id: long });
    expect(await waitUntil(() => !isAlive(pid), 3000)).toBe(true);
    expect(await call("process", { action: "poll", session_id: long })).toMatchObject({
      status: "exited",
      exit_code: -15,
    });
  });

  it("answers a prompt through stdin: write, submit, close (EOF), as the original's process actions", async () => {
    const script =
      'read -r name; echo "hello $name"; read -r more; echo "more=$more"; cat > rest.txt; echo "eof after $(wc -c < rest.txt) bytes"';
    const id = (await call("terminal", { command: script, background: true })).session_id as string;
    expect(await call("process", { action: "write", session_id: id, data: "Ada" })).toEqual({
      status: "ok",
      bytes_written: 3,
    });
    expect(await call("process", { action: "submit", session_id: id, data: " Lovelace" })).toEqual({
      status: "ok",
      bytes_written: 10,
    });
    await waitUntil(
      async () =>
        (await call("process", { action: "poll", session_id: id })).output_preview.includes("hello Ada Lovelace"),
      10_000,
    );
    expect((await call("process", { action: "poll", session_id: id })).status).toBe("running"); // blocked on the next read
    await call("process", { action: "submit", session_id: id, data: "yes" });
    await call("process", { action: "write", session_id: id, data: "tail bytes" });
    expect(await call("process", { action: "close", session_id: id })).toEqual({
      status: "ok",
      message: "stdin closed",
    });
    const done = await call("process", { action: "wait", session_id: id, timeout: 20 });
    expect(done).toEqual({
      status: "exited",
      exit_code: 0,
      output: "hello Ada Lovelace\nmore=yes\neof after 10 bytes\n",
    });
    expect(await call("process", { action: "write", session_id: id, data: "late" })).toEqual({
      status: "already_exited",
      error: "Process has already finished",
    });
    expect(await call("process", { action: "close", session_id: "proc_none" })).toEqual({
      status: "not_found",
      error: "No process with ID proc_none",
    });
  });

  it("a background process that never reads stdin still sees EOF only when closed", async () => {
    const id = (await call("terminal", { command: "cat; echo cat-done", background: true })).session_id as string;
    await call("process", { action: "submit", session_id: id, data: "line" });
    await waitUntil(
      async () => (await call("process", { action: "poll", session_id: id })).output_preview.includes("line"),
      10_000,
    );
    await call("process", { action: "close", session_id: id });
    const done = await call("process", { action: "wait", session_id: id, timeout: 20 });
    expect(done.output).toBe("line\ncat-done\n");
  });

  it("answers unknown sessions and a missing session_id as the original", async () => {
    expect(await call("process", { action: "poll", session_id: "proc_none" })).toEqual({
      status: "not_found",
      error: "No process with ID proc_none",
    });
    expect(await call("process", { action: "kill" })).toEqual({ error: "session_id is required for kill" });
    expect((await call("process", { action: "explode" })).error).toBe(
      "Unknown process action: explode. Use: list, poll, log, wait, kill, write, submit, close",
    );
  });
});

describe("read_file / write_file", () => {
  it("writes with parent dirs and reads numbered lines with paging", async () => {
    const lines = Array.from({ length: 30 }, (_, i) => `line ${i + 1}`).join("\n") + "\n";
    const w = await call("write_file", { path: "deep/dir/f.txt", content: lines });
    expect(w).toEqual({ bytes_written: Buffer.byteLength(lines), dirs_created: true });
    expect(readFileSync(join(task.taskDir, "deep/dir/f.txt"), "utf8")).toBe(lines);

    const all = await call("read_file", { path: "deep/dir/f.txt" });
    expect(Object.keys(all)).toEqual(["content", "total_lines", "file_size", "truncated", "is_binary", "is_image"]);
    expect(all.total_lines).toBe(30);
    expect(all.content.split("\n")[0]).toBe("     1|line 1");
    // As the original: the final newline shows as a last, empty numbered line.
    expect(all.content.split("\n").at(-1)).toBe("    31|");
    expect(all.truncated).toBe(false);

    const page = await call("read_file", { path: join(task.taskDir, "deep/dir/f.txt"), offset: 10, limit: 3 });
    expect(page.content).toBe("    10|line 10\n    11|line 11\n    12|line 12\n    13|");
    expect(page.truncated).toBe(true);
    expect(page.hint).toBe("Use offset=13 to continue reading (showing 10-12 of 30 lines)");
  });

  it("refuses binary files and suggests similar names when not found", async () => {
    await task.env();
    writeFileSync(join(task.taskDir, "blob.dat2"), Buffer.from([0x41, 0x00, 0x42]));
    expect(await call("read_file", { path: "blob.dat2" })).toEqual({
      content: "",
      total_lines: 0,
      file_size: 3,
      truncated: false,
      is_binary: true,
      is_image: false,
      error: "Binary file - cannot display as text. Use appropriate tools to handle this file type.",
    });
    expect((await call("read_file", { path: "pic.png" })).error).toBe(
      "Cannot read binary file 'pic.png' (.png). Use vision_analyze for images, or terminal to inspect binary files.",
    );
    writeFileSync(join(task.taskDir, "config.yaml"), "a: 1\n");
    const nf = await call("read_file", { path: "config.yml" });
    expect(nf).toEqual({
      content: "",
      total_lines: 0,
      file_size: 0,
      truncated: false,
      is_binary: false,
      is_image: false,
      error: "File not found: config.yml",
      similar_files: ["./config.yaml"],
    });
  });

  it("counts identical reads in a row as the original's read-loop guard: a warning at 3, refused at 4; another tool resets", async () => {
    const pipeline = createToolPipeline();
    // A missing file has no time, so every read is made (an unchanged file gets the dedup stub instead).
    const read = async () => JSON.parse(await pipeline.call("read_file", { path: "same.txt" }, task.ctx));
    expect((await read())._warning).toBeUndefined();
    expect((await read())._warning).toBeUndefined();
    expect((await read())._warning).toMatch(/^You have read this exact file region 3 times consecutively/);
    expect(await read()).toMatchObject({
      error: expect.stringMatching(/^BLOCKED: You have read this exact file region 4 times in a row/),
      path: "same.txt",
      already_read: 4,
    });
    await pipeline.call("terminal", { command: "true" }, task.ctx);
    expect(await read()).toMatchObject({ error: "File not found: same.txt" });
    expect((await read())._warning).toBeUndefined();
    // Another region is another key.
    expect((await pipeline.call("read_file", { path: "same.txt", offset: 2 }, task.ctx)).includes("_warning")).toBe(
      false,
    );
  });

  it("answers a re-read of an unchanged window with the original's stub, and reads again once the file changes", async () => {
    const pipeline = createToolPipeline();
    const read = async (args: Record<string, unknown> = {}) =>
      JSON.parse(await pipeline.call("read_file", { path: "d.txt", ...args }, task.ctx));
    await pipeline.call("write_file", { path: "d.txt", content: "x\n" }, task.ctx);
    expect(await read()).toMatchObject({ content: "     1|x\n     2|", total_lines: 1 });
    const stub = { status: "unchanged", path: "d.txt", dedup: true, content_returned: false };
    expect(await read()).toMatchObject(stub);
    expect(Object.keys(await read())).toEqual(["status", "message", "path", "dedup", "content_returned"]);
    expect(await read({ offset: 2 })).toMatchObject({ content: "     2|" });
    await pipeline.call("terminal", { command: "echo y >> d.txt" }, task.ctx);
    expect(await read()).toMatchObject({ content: "     1|x\n     2|y\n     3|", total_lines: 2 });
    expect(await read()).toMatchObject(stub);
  });

  it("a failed write has the original's keys: bytes_written 0, dirs_created false when the folder is not there", async () => {
    await call("write_file", { path: "f.txt", content: "x" });
    expect(await call("write_file", { path: "f.txt/sub.txt", content: "y" })).toEqual({
      bytes_written: 0,
      dirs_created: false,
      error: "Failed to write file: f.txt/sub.txt: Not a directory",
    });
    await call("write_file", { path: "dir/a.txt", content: "x" });
    expect(await call("write_file", { path: "dir", content: "y" })).toEqual({
      bytes_written: 0,
      dirs_created: false,
      error: "Failed to write file: dir: Is a directory",
    });
  });

  it("validates arguments", async () => {
    // Out-of-range pages are clamped, as the original clamps them.
    expect((await call("read_file", { path: "x", offset: 0 })).error).toBe("File not found: x");
    // No content is "" as in the original's handler: an empty file (test/parity_hermes_file_edges.test.ts).
    expect(await call("write_file", { path: "x" })).toEqual({ bytes_written: 0, dirs_created: false });
    expect((await call("write_file", { path: "x", content: 5 })).error).toMatch(/'content'/);
  });
});

describe("patch", () => {
  it("replaces a unique string and returns a diff", async () => {
    await call("write_file", { path: "app.py", content: "a = 1\nb = 2\nc = 3\n" });
    const r = await call("patch", { path: "app.py", old_string: "b = 2", new_string: "b = 20" });
    expect(Object.keys(r)).toEqual(["success", "diff", "files_modified", "lint"]);
    expect(r.diff).toBe("--- a/app.py\n+++ b/app.py\n@@ -1,3 +1,3 @@\n a = 1\n-b = 2\n+b = 20\n c = 3\n");
    expect(r.files_modified).toEqual(["app.py"]);
    expect(["ok", "skipped"]).toContain(r.lint.status);
    expect(readFileSync(join(task.taskDir, "app.py"), "utf8")).toBe("a = 1\nb = 20\nc = 3\n");
  });

  it("refuses missing or ambiguous strings unless replace_all", async () => {
    await call("write_file", { path: "x.txt", content: "foo foo $& bar" });
    expect(await call("patch", { path: "x.txt", old_string: "zzzzzzzz", new_string: "q" })).toEqual({
      success: false,
      error: "Could not find a match for old_string in the file",
      _hint: "old_string not found. Use read_file to verify the current content, or search_files to locate the text.",
    });
    expect(await call("patch", { path: "x.txt", old_string: "foo", new_string: "q" })).toEqual({
      success: false,
      error: "Found 2 matches for old_string. Provide more context to make it unique, or use replace_all=True.",
    });
    const r = await call("patch", { path: "x.txt", old_string: "foo", new_string: "$1", replace_all: true });
    expect(r.success).toBe(true);
    // Replacement text is literal ($-patterns are not special).
    expect(readFileSync(join(task.taskDir, "x.txt"), "utf8")).toBe("$1 $1 $& bar");
    expect(await call("patch", { path: "nope.txt", old_string: "a", new_string: "b" })).toEqual({
      success: false,
      error: "Failed to read file: nope.txt",
    });
    expect(await call("patch", { path: "x.txt", new_string: "b" })).toEqual({
      error: "old_string and new_string required",
    });
  });

  it("matches LF old_string in a CRLF file line by line and puts new_string in as given, as the original", async () => {
    await task.env();
    writeFileSync(join(task.taskDir, "w.txt"), "one\r\ntwo\r\nthree\r\n");
    const r = await call("patch", { path: "w.txt", old_string: "one\ntwo", new_string: "1\n2" });
    expect(r.success).toBe(true);
    expect(readFileSync(join(task.taskDir, "w.txt"), "utf8")).toBe("1\n2\nthree\r\n");
  });

  it("mode 'patch' applies a V4A patch: update (with an @@ anchor), add, move and delete, in one call", async () => {
    await call("write_file", { path: "app.py", content: "def a():\n    return 1\n\ndef b():\n    return 1\n" });
    await call("write_file", { path: "old.txt", content: "bye\n" });
    await call("write_file", { path: "mv/src.txt", content: "x\ny\n" });
    const patch = [
      "*** Begin Patch",
      "*** Update File: app.py",
      "@@ def b():",
      "-    return 1",
      "+    return 2",
      "*** Add File: notes/new.md",
      "+# Notes",
      "+done",
      "*** Update File: mv/src.txt",
      "*** Move to: mv/dst.txt",
      " x",
      "-y",
      "+z",
      "*** Delete File: old.txt",
      "*** End Patch",
    ].join("\n");
    const r = await call("patch", { mode: "patch", patch });
    expect(r).toMatchObject({
      success: true,
      files_modified: ["app.py", "mv/dst.txt"],
      files_created: ["notes/new.md", "mv/dst.txt"],
      files_deleted: ["mv/src.txt", "old.txt"],
    });
    expect(r.diff).toContain("+    return 2");
    const read = (p: string) => readFileSync(join(task.taskDir, p), "utf8");
    expect(read("app.py")).toBe("def a():\n    return 1\n\ndef b():\n    return 2\n"); // the anchor picked the second return
    expect(read("notes/new.md")).toBe("# Notes\ndone"); // as the original: no final newline added
    expect(read("mv/dst.txt")).toBe("x\nz\n");
    expect(existsSync(join(task.taskDir, "mv/src.txt"))).toBe(false);
    expect(existsSync(join(task.taskDir, "old.txt"))).toBe(false);
  });

  it("mode 'patch' changes nothing when any part fails, and names the problem", async () => {
    await call("write_file", { path: "keep.txt", content: "one\ntwo\n" });
    const bad = [
      "*** Begin Patch",
      "*** Update File: keep.txt",
      "-one",
      "+ONE",
      "*** Update File: keep.txt",
      "-missing line",
      "+x",
      "*** End Patch",
    ].join("\n");
    expect(await call("patch", { mode: "patch", patch: bad })).toEqual({
      success: false,
      error:
        "Patch validation failed (no files were modified):\n  • keep.txt: hunk (no hint) not found \u2014 Could not find a match for old_string in the file",
      _hint: "old_string not found. Use read_file to verify the current content, or search_files to locate the text.",
    });
    const missing = [
      "*** Begin Patch",
      "*** Add File: new.txt",
      "+n",
      "*** Delete File: gone.txt",
      "*** End Patch",
    ].join("\n");
    expect((await call("patch", { mode: "patch", patch: missing })).error).toBe(
      "Patch validation failed (no files were modified):\n  • gone.txt: file not found for deletion",
    );
    expect(existsSync(join(task.taskDir, "new.txt"))).toBe(false);
    expect(readFileSync(join(task.taskDir, "keep.txt"), "utf8")).toBe("one\ntwo\n");
    expect(await call("patch", { mode: "patch", patch: "*** Update File: keep.txt" })).toMatchObject({
      success: false,
      error: expect.stringMatching(/^Failed to parse patch: a V4A patch starts with '\*\*\* Begin Patch'/),
    });
    expect(await call("patch", { mode: "patch" })).toEqual({ error: "patch content required" });
    expect(await call("patch", { mode: "diff", patch: "x" })).toEqual({ error: "Unknown mode: diff" });
    expect(await call("patch", { mode: "replace", path: "keep.txt" })).toEqual({
      error: "old_string and new_string required",
    });
  });

  it("advertises the original's patch parameters", () => {
    const params = registry.get("patch")!.schema.parameters as any;
    expect(Object.keys(params.properties)).toEqual([
      "mode",
      "path",
      "old_string",
      "new_string",
      "replace_all",
      "patch",
    ]);
    expect(params.properties.mode).toMatchObject({ enum: ["replace", "patch"], default: "replace" });
    expect(params.properties.replace_all.default).toBe(false);
    // As the original's schema: mode is listed as required, though a call without it is a replace.
    expect(params.required).toEqual(["mode"]);
    const read = registry.get("read_file")!.schema.parameters as any;
    expect(read.properties.limit).toMatchObject({ type: "integer", maximum: 2000, default: 500 });
    expect(read.properties.limit.minimum).toBeUndefined();
    const search = registry.get("search_files")!.schema.parameters as any;
    for (const k of ["limit", "offset", "context"])
      expect([k, search.properties[k].minimum, search.properties[k].maximum]).toEqual([k, undefined, undefined]);
  });
});

describe("search_files", () => {
  beforeEach(async () => {
    await call("write_file", { path: "src/a.ts", content: "const x = 1;\nfunction hello() {}\n" });
    await call("write_file", { path: "src/b.py", content: "def hello():\n    return 42\n" });
    await call("write_file", { path: "docs/readme.md", content: "say hello\n" });
    await call("write_file", { path: "node_modules/dep/index.js", content: "hello from dep\n" });
  });

  it("finds content with path and line numbers, skipping node_modules", async () => {
    const r = await call("search_files", { pattern: "hello" });
    expect(Object.keys(r)).toEqual(["total_count", "matches"]);
    const found = r.matches.map((m: any) => `${m.path}:${m.line}`).sort();
    expect(found).toEqual(["./docs/readme.md:1", "./src/a.ts:2", "./src/b.py:1"]);
    expect(r.matches.find((m: any) => m.path === "./src/b.py")).toEqual({
      path: "./src/b.py",
      line: 1,
      content: "def hello():",
    });
  });

  it("filters by file_glob and path, and accepts the kind/grep alias and Perl-style escapes", async () => {
    const r = await call("search_files", { pattern: "return \\d+", kind: "grep", path: "src", file_glob: "*.py" });
    expect(r.matches).toEqual([{ path: "src/b.py", line: 2, content: "    return 42" }]);
    const none = await call("search_files", { pattern: "hello", file_glob: "*.rs" });
    expect(none).toEqual({ total_count: 0 });
  });

  it("finds files by glob (target files / find alias) and by plain word", async () => {
    expect(await call("search_files", { pattern: "*.ts", target: "files" })).toEqual({
      total_count: 1,
      files: ["./src/a.ts"],
    });
    // As ripgrep's glob in the original: a plain word matches names ending in it.
    expect((await call("search_files", { pattern: "readme.md", target: "find" })).files).toEqual(["./docs/readme.md"]);
    expect(await call("search_files", { pattern: "readme", target: "files" })).toEqual({ total_count: 0 });
  });

  it("limits results and says more exist", async () => {
    for (let i = 0; i < 5; i++) await call("write_file", { path: `many/f${i}.txt`, content: "needle\nneedle\n" });
    // As the original: only limit + offset lines are read, so a page without context is never "truncated".
    const r = await call("search_files", { pattern: "needle", path: "many", limit: 3 });
    expect(r.matches).toHaveLength(3);
    expect(r.total_count).toBe(3);
    expect(r.truncated).toBeUndefined();
    // Context reads 200 lines more; a cut page is followed by the original's hint line.
    const text = await createToolPipeline().call(
      "search_files",
      { pattern: "needle", path: "many", limit: 3, context: 1 },
      task.ctx,
    );
    const [json, hint] = text.split("\n\n");
    expect(JSON.parse(json!)).toMatchObject({ total_count: 10, truncated: true });
    expect(json).toMatch(/^\{"total_count": 10, "matches": \[\{"path": "many\//);
    expect(hint).toBe(
      "[Hint: Results truncated. Use offset=3 to see more, or narrow with a more specific pattern or file_glob.]",
    );
  });

  it("reports a missing path, a bad regex and a bad target", async () => {
    expect(await call("search_files", { pattern: "x", path: "nowhere" })).toEqual({
      total_count: 0,
      error: "Path not found: nowhere",
    });
    expect(await call("search_files", { pattern: "x", path: "sr" })).toEqual({
      total_count: 0,
      error: "Path not found: sr. Similar paths: ./src",
    });
    expect((await call("search_files", { pattern: "(unclosed" })).error).toMatch(/^Search failed: /);
    // As the original: any other target searches content.
    expect((await call("search_files", { pattern: "hello", target: "everything", path: "docs" })).matches).toHaveLength(
      1,
    );
  });

  it("output_mode files_only lists the files with a match, count their match counts", async () => {
    await call("write_file", { path: "src/c.ts", content: "hello\nhello again\nbye\n" });
    const files = await call("search_files", { pattern: "hello", path: "src", output_mode: "files_only" });
    expect(files.files.sort()).toEqual(["src/a.ts", "src/b.py", "src/c.ts"]);
    expect(files.total_count).toBe(3);
    const counts = await call("search_files", { pattern: "hello", path: "src", output_mode: "count" });
    expect(Object.keys(counts)).toEqual(["total_count", "counts"]);
    expect(counts.total_count).toBe(4);
    expect(Object.entries(counts.counts).sort()).toEqual([
      ["src/a.ts", 1],
      ["src/b.py", 1],
      ["src/c.ts", 2],
    ]);
    const none = await call("search_files", { pattern: "zzz", path: "src", output_mode: "count" });
    expect(none).toEqual({ total_count: 0 });
  });

  it("context adds the lines around each match, marked, also for a path with '-' and digits", async () => {
    await call("write_file", {
      path: "ctx/a-1-b.txt",
      content: "one\ntwo\nMATCH three\nfour\nfive\nsix\nseven\nMATCH eight\n",
    });
    const r = await call("search_files", { pattern: "MATCH", path: "ctx", context: 1 });
    // As the original: context lines are results like the matches (and count in total_count).
    expect(r.matches).toEqual([
      { path: "ctx/a-1-b.txt", line: 2, content: "two" },
      { path: "ctx/a-1-b.txt", line: 3, content: "MATCH three" },
      { path: "ctx/a-1-b.txt", line: 4, content: "four" },
      { path: "ctx/a-1-b.txt", line: 7, content: "seven" },
      { path: "ctx/a-1-b.txt", line: 8, content: "MATCH eight" },
    ]);
    expect(r.total_count).toBe(5);
  });

  it("advertises the original's parameters with their defaults", () => {
    const params = registry.get("search_files")!.schema.parameters as any;
    expect(Object.keys(params.properties)).toEqual([
      "pattern",
      "target",
      "path",
      "file_glob",
      "limit",
      "offset",
      "output_mode",
      "context",
    ]);
    expect(params.properties.output_mode).toMatchObject({
      enum: ["content", "files_only", "count"],
      default: "content",
    });
    expect(params.properties.context.default).toBe(0);
    expect(params.properties.limit.default).toBe(50);
    expect(params.properties.path.default).toBe(".");
    expect(params.required).toEqual(["pattern"]);
  });

  it("translates Perl escapes to POSIX classes", () => {
    expect(toPosixEre("\\d+\\s\\w")).toBe("[0-9]+[[:space:]][[:alnum:]_]");
    expect(toPosixEre("[\\d.]+")).toBe("[0-9.]+");
    expect(toPosixEre("a\\.b")).toBe("a\\.b");
  });
});

const BUSYBOX = ["/usr/bin/busybox", "/bin/busybox"].find((p) => existsSync(p));

describe.skipIf(!BUSYBOX)("search_files with busybox tools only", () => {
  it("works when find, grep, head and sort are busybox applets", async () => {
    const bin = join(task.root, "bb");
    mkdirSync(bin);
    for (const applet of ["sh", "find", "grep", "head", "sort", "ls", "stat", "sed", "cut", "tr", "xargs"])
      symlinkSync(BUSYBOX!, join(bin, applet));
    const env = await task.env();
    // Route every exec of this environment through a PATH holding only busybox applets.
    const realExec = env.exec.bind(env);
    env.exec = (cmd, opts = {}) => realExec(cmd, { ...opts, env: { ...(opts.env ?? {}), PATH: bin } });
    await call("write_file", { path: "p/one.txt", content: "alpha 123\nbeta\n" });
    await call("write_file", { path: "p/two.md", content: "gamma 7\n" });
    const content = await call("search_files", { pattern: "[a-z]+ \\d+", path: "p" });
    expect(content.matches.map((m: any) => `${m.path}:${m.line}`).sort()).toEqual(["p/one.txt:1", "p/two.md:1"]);
    const files = await call("search_files", { pattern: "*.md", target: "files" });
    expect(files.files).toEqual(["./p/two.md"]);
    const glob = await call("search_files", { pattern: "beta", file_glob: "*.txt" });
    expect(glob.matches).toEqual([{ path: "./p/one.txt", line: 2, content: "beta" }]);
  });
});
