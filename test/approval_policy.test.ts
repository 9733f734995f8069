import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { approvalPolicies } from "../tools/approval/policy.js";
import {
  appendToAllowlist,
  createApprovalGate,
  loadUserAllowlist,
  summarizeApprovals,
  userConfigPath,
  type PromptChoice,
  type PromptFn,
  type PromptRequest,
} from "../tools/approval/gate.js";
import type { ApprovalRecord } from "../tools/registry.js";
import { UserError } from "../src/core/errors.js";

const info = { cwd: "/work/task", backend: "local" };

let configDir: string;
let savedEnv: string | undefined;
beforeEach(() => {
  savedEnv = process.env.HERMES_BATCH_CONFIG_DIR;
  configDir = mkdtempSync(join(tmpdir(), "approval-policy-"));
  process.env.HERMES_BATCH_CONFIG_DIR = configDir;
});
afterEach(() => {
  if (savedEnv === undefined) delete process.env.HERMES_BATCH_CONFIG_DIR;
  else process.env.HERMES_BATCH_CONFIG_DIR = savedEnv;
  rmSync(configDir, { recursive: true, force: true });
});

/** A prompt that answers from a script and remembers what it was asked. */
function scriptedPrompt(...answers: PromptChoice[]) {
  const asked: PromptRequest[] = [];
  const fn: PromptFn = async (req) => {
    asked.push(req);
    const a = answers.shift();
    if (!a) throw new Error("prompt asked more often than the test expected");
    return a;
  };
  return { fn, asked };
}

describe("policies deny and allow", () => {
  it("deny blocks dangerous commands with a Hermes-like message and lets harmless ones through unrecorded", async () => {
    const seen: ApprovalRecord[] = [];
    const svc = createApprovalGate({ policy: "deny", taskId: "t1", onRecord: (r) => seen.push(r) });
    expect(await svc.gate("ls -la", info)).toEqual({ allowed: true });
    const res = await svc.gate("rm -rf /tmp/data", info);
    expect(res.allowed).toBe(false);
    expect(res.message).toMatch(
      /^BLOCKED: .*recursive delete.*approval policy is 'deny'\. Do NOT retry this command; find a safer way\.$/,
    );
    expect(res.record).toMatchObject({
      command: "rm -rf /tmp/data",
      pattern: "recursive_delete",
      decision: "deny",
      by: "policy",
    });
    expect(res.record!.latency_ms).toBeGreaterThanOrEqual(0);
    expect(svc.records).toEqual([res.record]);
    expect(seen).toEqual([res.record]);
  });

  it("allow approves and still records the decision", async () => {
    const svc = createApprovalGate({ policy: "allow", taskId: "t1" });
    const res = await svc.gate("git push --force", info);
    expect(res.allowed).toBe(true);
    expect(res.record).toMatchObject({ decision: "approve", by: "policy", pattern: "git_force_push" });
  });

  it("the allowlist approves only when every matched pattern is allowlisted", async () => {
    const svc = createApprovalGate({ policy: "deny", taskId: "t1", allowlist: ["git_reset_hard"] });
    expect((await svc.gate("git -C /srv/app reset --hard HEAD~1", info)).record).toMatchObject({
      decision: "approve",
      by: "allowlist",
    });
    const both = await svc.gate("git -C /srv/app reset --hard && rm -rf /tmp/x", info);
    expect(both.allowed).toBe(false);
    expect(both.record!.pattern).toBe("recursive_delete");
    expect(both.record!.description).toContain("git reset --hard");
  });
});

describe("interactive policy (injected prompt)", () => {
  it("once approves this time only", async () => {
    const p = scriptedPrompt("once", "once");
    const svc = createApprovalGate({ policy: "interactive", taskId: "t1", prompt: p.fn });
    expect((await svc.gate("git -C /srv/repo clean -fdx", info)).record).toMatchObject({
      decision: "approve",
      by: "user",
      reason: "approved once",
    });
    expect((await svc.gate("git -C /srv/repo clean -fdx", info)).allowed).toBe(true);
    expect(p.asked).toHaveLength(2);
    expect(p.asked[0]).toMatchObject({
      command: "git -C /srv/repo clean -fdx",
      patternKey: "git_clean_force",
      backend: "local",
      cwd: "/work/task",
      timeoutMs: 60_000,
    });
  });

  it("session approves the pattern for the rest of this task only", async () => {
    const p = scriptedPrompt("session", "deny");
    const svc = createApprovalGate({ policy: "interactive", taskId: "t1", prompt: p.fn });
    expect((await svc.gate("git -C /srv/app reset --hard", info)).allowed).toBe(true);
    const again = await svc.gate("git -C /srv/app reset --hard origin/main", info);
    expect(again.record).toMatchObject({ decision: "approve", by: "session" });
    expect(p.asked).toHaveLength(1);
    // Another pattern still asks.
    expect((await svc.gate("git push -f", info)).allowed).toBe(false);
    expect(p.asked).toHaveLength(2);
    // Another task (another gate) does not inherit the session approval.
    const q = scriptedPrompt("deny");
    const other = createApprovalGate({ policy: "interactive", taskId: "t2", prompt: q.fn });
    expect((await other.gate("git -C /srv/app reset --hard", info)).allowed).toBe(false);
    expect(q.asked).toHaveLength(1);
  });

  it("always persists the pattern key to command_allowlist in the user config", async () => {
    writeFileSync(join(configDir, "config.yaml"), "# mine\nmodel: some-model\n");
    const p = scriptedPrompt("always");
    const svc = createApprovalGate({ policy: "interactive", taskId: "t1", prompt: p.fn });
    const res = await svc.gate("crontab -r", info);
    expect(res.record).toMatchObject({
      decision: "approve",
      by: "user",
      reason: "approved always (saved to command_allowlist)",
    });
    expect(userConfigPath()).toBe(join(configDir, "config.yaml"));
    const text = readFileSync(userConfigPath(), "utf8");
    expect(text).toContain("# mine");
    expect(text).toContain("model: some-model");
    expect(await loadUserAllowlist()).toEqual(["crontab_remove"]);
    // The same task approves it from then on without asking …
    expect((await svc.gate("crontab -u x -r", info)).allowed).toBe(true);
    expect(p.asked).toHaveLength(1);
    // … and so does a later task that loads the allowlist, even under policy deny.
    const later = createApprovalGate({ policy: "deny", taskId: "t2", allowlist: await loadUserAllowlist() });
    expect((await later.gate("crontab -r", info)).record).toMatchObject({ decision: "approve", by: "allowlist" });
  });

  it("always still approves when saving fails, and says so", async () => {
    const p = scriptedPrompt("always");
    const svc = createApprovalGate({
      policy: "interactive",
      taskId: "t1",
      prompt: p.fn,
      persistAllowlist: async () => {
        throw new Error("disk full");
      },
    });
    const res = await svc.gate("killall node", info);
    expect(res.allowed).toBe(true);
    expect(res.record!.reason).toContain("could not save to command_allowlist: killall: disk full");
  });

  it("deny blocks with the user's refusal", async () => {
    const p = scriptedPrompt("deny");
    const svc = createApprovalGate({ policy: "interactive", taskId: "t1", prompt: p.fn });
    const res = await svc.gate("systemctl stop nginx", info);
    expect(res.allowed).toBe(false);
    expect(res.message).toMatch(/^BLOCKED: the user denied .*Do NOT retry/);
    expect(res.record).toMatchObject({ decision: "deny", by: "user", pattern: "stop_service" });
  });

  it("no answer before the timeout (default 60 s) denies and aborts the prompt", async () => {
    let aborted = false;
    const svc = createApprovalGate({
      policy: "interactive",
      taskId: "t1",
      prompt: (req) =>
        new Promise<PromptChoice>(() => {
          req.signal.addEventListener("abort", () => (aborted = true));
        }),
    });
    await approvalPolicies.load("interactive"); // loaded before the clock is faked
    vi.useFakeTimers();
    try {
      let settled = false;
      const pending = svc.gate("reboot", info).finally(() => (settled = true));
      await vi.advanceTimersByTimeAsync(59_999);
      expect(settled).toBe(false);
      await vi.advanceTimersByTimeAsync(1);
      const res = await pending;
      expect(res.allowed).toBe(false);
      expect(res.record).toMatchObject({ decision: "deny", by: "user", reason: "no answer within 60 s" });
      expect(aborted).toBe(true);
    } finally {
      vi.useRealTimers();
    }
  });

  it("a failing prompt denies; the default prompt denies without a terminal", async () => {
    const failing = createApprovalGate({
      policy: "interactive",
      taskId: "t1",
      prompt: async () => {
        throw new Error("boom");
      },
    });
    expect((await failing.gate("reboot", info)).record).toMatchObject({
      decision: "deny",
      reason: "prompt failed: boom",
    });
    if (!process.stdin.isTTY) {
      const tty = createApprovalGate({ policy: "interactive", taskId: "t1" });
      const res = await tty.gate("reboot", info);
      expect(res.allowed).toBe(false);
      expect(res.record!.reason).toContain("no terminal");
    }
  });

  it("asks one question at a time when commands arrive together", async () => {
    let open = 0;
    let maxOpen = 0;
    const svc = createApprovalGate({
      policy: "interactive",
      taskId: "t1",
      prompt: async () => {
        open++;
        maxOpen = Math.max(maxOpen, open);
        await new Promise((r) => setTimeout(r, 30));
        open--;
        return "once";
      },
    });
    const results = await Promise.all([
      svc.gate("reboot", info),
      svc.gate("killall x", info),
      svc.gate("crontab -r", info),
    ]);
    expect(results.every((r) => r.allowed)).toBe(true);
    expect(maxOpen).toBe(1);
  });
});

describe("allowlist file and summaries", () => {
  it("appendToAllowlist creates the folder and file, and does not duplicate keys", async () => {
    const path = join(configDir, "nested", "config.yaml");
    expect(await loadUserAllowlist(path)).toEqual([]);
    await appendToAllowlist("shred", path);
    await appendToAllowlist("shred", path);
    await appendToAllowlist("killall", path);
    expect(await loadUserAllowlist(path)).toEqual(["shred", "killall"]);
    writeFileSync(path, "command_allowlist: yes\n");
    await expect(loadUserAllowlist(path)).rejects.toThrow(
      `${path}: command_allowlist: must be a list of pattern keys (strings)`,
    );
    await expect(loadUserAllowlist(path)).rejects.toBeInstanceOf(UserError);
    writeFileSync(path, "command_allowlist: [shred, 3]\n");
    await expect(loadUserAllowlist(path)).rejects.toThrow(
      `${path}: command_allowlist.1: must be a pattern key (a string)`,
    );
    writeFileSync(path, "a: [\n");
    await expect(loadUserAllowlist(path)).rejects.toThrow(
      new RegExp(`^${path.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}: invalid YAML: .*line`),
    );
    writeFileSync(path, "- just\n- a list\n");
    await expect(loadUserAllowlist(path)).rejects.toThrow(/the top level must be a mapping/);
  });

  it("summarizeApprovals counts approved, denied and approver errors per pattern", () => {
    const rec = (pattern: string, decision: "approve" | "deny", by: string, reason: string): ApprovalRecord => ({
      command: "x",
      pattern,
      decision,
      by,
      reason,
      latency_ms: 1,
    });
    const s = summarizeApprovals([
      rec("recursive_delete", "approve", "smart", "fine"),
      rec("recursive_delete", "deny", "smart", "approver error: HTTP 500: down"),
      rec("recursive_delete", "deny", "smart", "too risky"),
      rec("git_force_push", "deny", "policy", "approval policy is 'deny'"),
    ]);
    expect(s).toEqual({
      total: 4,
      approved: 1,
      denied: 3,
      errors: 1,
      by_pattern: {
        recursive_delete: { approved: 1, denied: 2, errors: 1 },
        git_force_push: { approved: 0, denied: 1, errors: 0 },
      },
    });
  });
});
