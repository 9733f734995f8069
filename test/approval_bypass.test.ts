/**
 * Bypasses found in review: working-directory changes, the terminal's workdir, file-tool writes to
 * system and credential paths, and decoded content piped into a shell.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import "../tools/terminal_tool.js";
import "../tools/file_tools.js";
import {
  createApprovalGate,
  detectDangerousCommand,
  type ApprovalGate,
  type PromptRequest,
} from "../tools/approval/gate.js";
import { commandAsRun } from "../tools/gate_effects.js";
import { localTask, type LocalTaskFixture } from "./helpers/local_ctx.js";
import { callTool } from "./helpers/tool_call.js";

const gates = new WeakMap<LocalTaskFixture, ApprovalGate>();

/** One call through the pipeline, with the task's gate as its approval service (none: fail-closed). */
async function call(name: string, args: Record<string, unknown>, t: LocalTaskFixture): Promise<any> {
  const gate = gates.get(t);
  return callTool(name, args, t.ctx, gate ? { approval: { gate, records: [] } } : {});
}

/** A gate that records what it was asked and denies everything, so nothing it is asked about runs. */
function denyAll(): { gate: ApprovalGate; seen: { command: string; cwd?: string }[] } {
  const seen: { command: string; cwd?: string }[] = [];
  return {
    seen,
    gate: async (command, info) => {
      seen.push({ command, cwd: info.cwd });
      return { allowed: false, message: "BLOCKED: test gate denies everything" };
    },
  };
}

const tasks: LocalTaskFixture[] = [];
function task(gate?: ApprovalGate): LocalTaskFixture {
  const t = localTask();
  if (gate) gates.set(t, gate);
  tasks.push(t);
  return t;
}
afterEach(async () => {
  for (const t of tasks.splice(0)) await t.dispose();
});

describe("working-directory changes inside a command", () => {
  it.each([
    ["cd /usr/lib; rm -rf python3", "delete_system_path"],
    ["pushd /usr && rm -rf lib", "delete_system_path"],
    ["cd .. && rm -rf x", "recursive_delete"],
    ["cd / && rm -rf *", "delete_system_path"],
    ["cd sub && cd ../.. && rm -rf build", "recursive_delete"],
    ["cd; rm -rf x", "recursive_delete"],
  ])("flags %s", (command, key) => {
    expect(detectDangerousCommand(command).patternKey).toBe(key);
  });

  // A directory the line made with mktemp is its own (as a /tmp directory it made with mkdir).
  it.each([
    "cd sub && rm -rf build",
    "cd a/b && cd .. && rm -rf build",
    "cd /tmp && rm -f x.log",
    "cd $(mktemp -d) && rm -rf build",
  ])("does not flag %s", (command) => {
    expect(detectDangerousCommand(command)).toEqual({ dangerous: false });
  });

  it("takes a start directory: outside the default one it acts like a cd to it", () => {
    expect(detectDangerousCommand("rm -rf lib", { cwd: "/usr", defaultCwd: "/work/task" }).patternKey).toBe(
      "delete_system_path",
    );
    expect(detectDangerousCommand("rm -rf build", { cwd: "/work", defaultCwd: "/work/task" }).patternKey).toBe(
      "recursive_delete",
    );
    expect(detectDangerousCommand("rm -rf build", { cwd: "..", defaultCwd: "/work/task" }).patternKey).toBe(
      "recursive_delete",
    );
    expect(detectDangerousCommand("rm -rf build", { cwd: "/work/task/sub", defaultCwd: "/work/task" }).dangerous).toBe(
      false,
    );
    expect(detectDangerousCommand("rm -rf build", { cwd: "/work/task", defaultCwd: "/work/task" }).dangerous).toBe(
      false,
    );
    expect(detectDangerousCommand("rm -rf build", { cwd: "sub" }).dangerous).toBe(false);
    expect(detectDangerousCommand("rm -rf build", { cwd: "/opt/x" }).patternKey).toBe("recursive_delete");
  });
});

describe("terminal workdir", () => {
  it("judges the command as it runs: cd to a workdir outside the task folder", () => {
    expect(commandAsRun("rm -rf lib", "/work/task", "/usr")).toBe("cd '/usr' && rm -rf lib");
    expect(commandAsRun("rm -rf lib", "/work/task", "/work/task/sub")).toBe("rm -rf lib");
    expect(commandAsRun("rm -rf lib", "/work/task", "/work/task")).toBe("rm -rf lib");
    expect(commandAsRun("rm -rf lib", "/work/task", undefined)).toBe("rm -rf lib");
    expect(commandAsRun("rm -rf lib", "/work/task", "/work/task2")).toBe("cd '/work/task2' && rm -rf lib");
    expect(detectDangerousCommand(commandAsRun("rm -rf lib", "/work/task", "/usr")).patternKey).toBe(
      "delete_system_path",
    );
  });

  it("asks the gate about workdir=/usr rm -rf lib as a system-path delete, with the real cwd", async () => {
    const { gate, seen } = denyAll();
    const t = task(gate);
    const r = await call("terminal", { workdir: "/usr", command: "rm -rf lib" }, t);
    expect(r.status).toBe("blocked");
    expect(seen).toEqual([{ command: "cd '/usr' && rm -rf lib", cwd: "/usr" }]);
    expect(detectDangerousCommand(seen[0]!.command).patternKey).toBe("delete_system_path");
  });

  it("a real deny gate blocks a relative recursive delete in a workdir outside the task folder", async () => {
    const svc = createApprovalGate({ policy: "deny", taskId: "t" });
    const t = task(svc.gate);
    const outside = join(t.root, "outside");
    mkdirSync(join(outside, "lib"), { recursive: true });
    writeFileSync(join(outside, "lib", "keep"), "x");
    const r = await call("terminal", { workdir: outside, command: "rm -rf lib" }, t);
    expect(r.status).toBe("blocked");
    expect(r.error).toMatch(/^BLOCKED/);
    expect(existsSync(join(outside, "lib", "keep"))).toBe(true);
    expect(svc.records.map((x) => [x.pattern, x.command])).toEqual([
      ["recursive_delete", `cd '${outside}' && rm -rf lib`],
    ]);

    // Inside the task folder (relative or absolute workdir) the same delete is not asked about.
    mkdirSync(join(t.taskDir, "sub", "build"), { recursive: true });
    const ok = await call("terminal", { workdir: join(t.taskDir, "sub"), command: "rm -rf build && echo gone" }, t);
    expect(ok).toMatchObject({ output: "gone", exit_code: 0 });
    expect(existsSync(join(t.taskDir, "sub", "build"))).toBe(false);
    expect(svc.records).toHaveLength(1);
  });

  it("the approver sees the real working directory", async () => {
    const asked: PromptRequest[] = [];
    const svc = createApprovalGate({
      policy: "interactive",
      taskId: "t",
      prompt: async (req) => {
        asked.push(req);
        return "deny";
      },
    });
    const t = task(svc.gate);
    mkdirSync(join(t.root, "elsewhere", "data"), { recursive: true });
    await call("terminal", { workdir: "../elsewhere", command: "rm -rf data" }, t);
    expect(asked.map((a) => a.cwd)).toEqual([join(t.root, "elsewhere")]);
    expect(existsSync(join(t.root, "elsewhere", "data"))).toBe(true);
    // Without a workdir the approver still gets the absolute task folder, not undefined.
    await call("terminal", { command: "rm -rf /tmp/hermes-bypass-test-never-exists" }, t);
    expect(asked[1]!.cwd).toBe(t.taskDir);
  });
});

describe("file tools: writes to system and credential paths go through the gate", () => {
  let t: LocalTaskFixture;
  let home: string;
  beforeEach(() => {
    t = task();
    home = join(t.root, "home", "dev user");
  });

  function withGate(gate: ApprovalGate): LocalTaskFixture {
    const g = task(gate);
    home = join(g.root, "home", "dev user");
    return g;
  }

  it("asks before write_file to /etc, /boot, /usr, ~/.ssh and shell rc files", async () => {
    const { gate, seen } = denyAll();
    const g = withGate(gate);
    const targets = [
      "/etc/hermes-bypass-test",
      "/boot/hermes-bypass-test",
      "/usr/local/bin/hermes-bypass-test",
      join(home, ".ssh", "authorized_keys"),
      join(home, ".bashrc"),
    ];
    for (const path of targets) {
      const r = await call("write_file", { path, content: "x" }, g);
      expect(r.error).toMatch(/^BLOCKED/);
      expect(existsSync(path)).toBe(false);
    }
    expect(seen.map((s) => s.command)).toEqual(targets.map((p) => `write_file > '${p}'`));
    expect(seen.every((s) => s.cwd === g.taskDir)).toBe(true);
  });

  it("resolves relative paths against the workdir before judging them", async () => {
    const { gate, seen } = denyAll();
    const g = withGate(gate);
    const r = await call(
      "write_file",
      { path: "../../../../../../../../../../../../etc/hermes-bypass-test", content: "x" },
      g,
    );
    expect(r.error).toMatch(/^BLOCKED/);
    expect(seen).toEqual([{ command: "write_file > '/etc/hermes-bypass-test'", cwd: g.taskDir }]);
  });

  it("a real deny gate refuses a write to ~/.ssh and leaves nothing behind", async () => {
    const svc = createApprovalGate({ policy: "deny", taskId: "t" });
    const g = withGate(svc.gate);
    const key = join(home, ".ssh", "authorized_keys");
    const r = await call("write_file", { path: key, content: "ssh-ed25519 AAAA attacker" }, g);
    expect(r.error).toMatch(/^BLOCKED/);
    expect(existsSync(key)).toBe(false);
    expect(svc.records.map((x) => x.pattern)).toEqual(["ssh_config_write"]);
  });

  it("a denied patch leaves the file unchanged", async () => {
    const svc = createApprovalGate({ policy: "deny", taskId: "t" });
    const g = withGate(svc.gate);
    const rc = join(home, ".bashrc");
    mkdirSync(home, { recursive: true });
    writeFileSync(rc, "export PATH=/usr/bin\n");
    const r = await call("patch", { path: rc, old_string: "/usr/bin", new_string: "/tmp/evil:/usr/bin" }, g);
    expect(r.error).toMatch(/^BLOCKED/);
    expect(readFileSync(rc, "utf8")).toBe("export PATH=/usr/bin\n");
    expect(svc.records.map((x) => [x.pattern, x.command])).toEqual([["shell_rc_write", `patch > '${rc}'`]]);
  });

  it("an approved write or patch happens and is recorded", async () => {
    const asked: string[] = [];
    const svc = createApprovalGate({
      policy: "interactive",
      taskId: "t",
      prompt: async (req) => {
        asked.push(req.command);
        return "once";
      },
    });
    const g = withGate(svc.gate);
    const cfg = join(home, ".ssh", "config");
    expect(await call("write_file", { path: cfg, content: "Host a\n" }, g)).toEqual({
      bytes_written: 7,
      dirs_created: true,
    });
    expect(readFileSync(cfg, "utf8")).toBe("Host a\n");
    expect(await call("patch", { path: cfg, old_string: "Host a", new_string: "Host b" }, g)).toMatchObject({
      success: true,
    });
    expect(readFileSync(cfg, "utf8")).toBe("Host b\n");
    expect(asked).toEqual([`write_file > '${cfg}'`, `patch > '${cfg}'`]);
    expect(svc.records.map((x) => x.decision)).toEqual(["approve", "approve"]);
  });

  it("normal writes are neither blocked nor recorded, even under policy deny", async () => {
    const svc = createApprovalGate({ policy: "deny", taskId: "t" });
    const g = withGate(svc.gate);
    expect(await call("write_file", { path: "src/app.ts", content: "a\n" }, g)).toEqual({
      bytes_written: 2,
      dirs_created: true,
    });
    expect(await call("patch", { path: "src/app.ts", old_string: "a", new_string: "b" }, g)).toMatchObject({
      success: true,
    });
    expect(await call("write_file", { path: join(g.root, "scratch", "notes.md"), content: "n" }, g)).toEqual({
      bytes_written: 1,
      dirs_created: true,
    });
    expect(readFileSync(join(g.taskDir, "src", "app.ts"), "utf8")).toBe("b\n");
    expect(svc.records).toEqual([]);
  });

  it("without an approval service a sensitive write is denied (fail-closed), a normal one goes through", async () => {
    const key = join(home, ".ssh", "known_hosts");
    const denied = await call("write_file", { path: key, content: "h" }, t);
    expect(denied).toMatchObject({ status: "blocked" });
    expect(denied.error).toMatch(/^BLOCKED: .*no approval service is configured/);
    expect(existsSync(key)).toBe(false);
    expect(await call("write_file", { path: "notes.md", content: "n" }, t)).toEqual({
      bytes_written: 1,
      dirs_created: false,
    });
    expect(readFileSync(join(t.taskDir, "notes.md"), "utf8")).toBe("n");
  });
});

describe("decoded content piped into a shell", () => {
  it.each([
    "base64 -d payload.b64 | sh",
    "echo cm0gLXJmIC8K | base64 --decode | bash",
    "xxd -r -p payload.hex | sh",
    "openssl enc -d -aes-256-cbc -in blob | sh",
    "cat blob | openssl base64 -d | sudo bash",
    'bash -c "$(echo cm0= | base64 -d)"',
  ])("flags %s", (command) => {
    expect(detectDangerousCommand(command).patternKey).toBe("decoded_code_exec");
  });

  it.each([
    "echo aGk= | base64 -d",
    "base64 -d x.b64 | tar xz",
    "xxd -r -p a.hex > a.bin",
    "base64 -d x | python3 parse.py",
    "base64 -d s.b64 | bash -c 'cat > s.bin'",
  ])("does not flag %s", (command) => {
    expect(detectDangerousCommand(command)).toEqual({ dangerous: false });
  });
});
