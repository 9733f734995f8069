/**
 * A run behind a gateway, through the built CLI against the local test server (127.0.0.1): extra headers and
 * their redaction, error bodies of any shape in failed.jsonl and events.log, retry events and counts, token
 * details, the no-usage warning, in-stream rate limits, deterministic 4xx left by --resume, credentials in
 * base URLs, OpenRouter's default reasoning and provider routing, the approver's deadline and ambiguous answers.
 */
import { afterEach, describe, expect, it } from "vitest";
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import YAML from "yaml";
import {
  completion,
  startFakeOpenAI,
  text,
  toolCalls,
  type FakeOpenAI,
  type RecordedRequest,
  type Reply,
} from "./helpers/fake_openai.js";
import { runCliInProcess, tempDir } from "./helpers/cli.js";
import { parseJsonl, readJsonl } from "./helpers/jsonl.js";

const servers: FakeOpenAI[] = [];
afterEach(async () => {
  while (servers.length) await servers.pop()!.close();
});

async function serve(handler: (req: RecordedRequest) => Reply | Promise<Reply>): Promise<FakeOpenAI> {
  const s = await startFakeOpenAI(handler);
  servers.push(s);
  return s;
}

/** Every file under a folder, with its text. */
function allFiles(dir: string): { path: string; text: string }[] {
  const out: { path: string; text: string }[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...allFiles(p));
    else out.push({ path: p, text: readFileSync(p, "utf8") });
  }
  return out;
}

const promptOf = (req: RecordedRequest): string =>
  req.body?.messages?.find((m: any) => m.role === "user")?.content ?? "";
const isApprover = (req: RecordedRequest) => req.body?.response_format !== undefined;

function dataset(dir: string, ids: string[]): string {
  const path = join(dir, "d.jsonl");
  writeFileSync(path, ids.map((id) => JSON.stringify({ id, prompt: `task ${id}` })).join("\n") + "\n");
  return path;
}

function run(
  dir: string,
  data: string,
  server: FakeOpenAI | string,
  extra: string[] = [],
  env: Record<string, string> = {},
) {
  const base = typeof server === "string" ? server : server.baseURL;
  return runCliInProcess(
    [
      "run",
      data,
      "--model",
      "gw-model",
      "--base-url",
      base,
      "--toolsets",
      "terminal",
      "--output-dir",
      join(dir, "runs"),
      "--run-name",
      "r",
      "--progress",
      "none",
      "--max-retries",
      "3",
      ...extra,
    ],
    { env },
  );
}

describe("headers on every model request", () => {
  it("sends --header (with ${VAR} from the environment) to the agent and a same-host approver, --approval-header to the approver only; values never written", async () => {
    const secret = "gw-secret-VALUE-7781";
    const s = await serve((req) => {
      if (isApprover(req)) return text(JSON.stringify({ decision: "deny", reason: "no" }));
      const turn = req.body.messages.filter((m: any) => m.role === "assistant").length;
      // A hostile model echoes the gateway key it was never given: redaction still removes it.
      return turn === 0
        ? toolCalls([{ name: "terminal", arguments: { command: "rm -rf /tmp/hb-gateway-victim-none" } }])
        : completion({ content: `done; the key was ${secret}` });
    });
    const dir = tempDir();
    const r = await run(
      dir,
      dataset(dir, ["a"]),
      s,
      [
        "--api-key",
        "k-main-000000",
        "--header",
        "X-Gateway-Key: ${GW_KEY}",
        "--header",
        "X-Route: alpha, beta",
        "--approval-header",
        "X-Team: safety",
      ],
      {
        GW_KEY: secret,
      },
    );
    expect(r.exitCode, r.stderr).toBe(0);
    const agentReqs = s.requests.filter((q) => !isApprover(q));
    const approverReqs = s.requests.filter(isApprover);
    expect(agentReqs.length).toBe(2);
    expect(approverReqs.length).toBe(1);
    for (const q of [...agentReqs, ...approverReqs]) {
      expect(q.headers["x-gateway-key"]).toBe(secret);
      expect(q.headers["x-route"]).toBe("alpha, beta");
      expect(q.headers.authorization).toBe("Bearer k-main-000000");
    }
    for (const q of agentReqs) expect(q.headers["x-team"]).toBeUndefined();
    expect(approverReqs[0]!.headers["x-team"]).toBe("safety");

    const runDir = join(dir, "runs", "r");
    const runYaml = YAML.parse(readFileSync(join(runDir, "run.yaml"), "utf8"));
    expect(runYaml.headers).toEqual({ "X-Gateway-Key": "${GW_KEY}", "X-Route": "<redacted>" });
    expect(runYaml.approval_headers).toEqual({ "X-Team": "<redacted>" });
    for (const f of allFiles(runDir)) expect(f.text, f.path).not.toContain(secret);
    expect(r.stdout + r.stderr).not.toContain(secret);
    expect(readJsonl(join(runDir, "trajectories.jsonl"))[0].final_response).toBe("done; the key was <redacted>");
  });

  it("a header naming an unset variable, or without 'Name:', stops before anything runs (exit 2, one line)", async () => {
    const dir = tempDir();
    const data = dataset(dir, ["a"]);
    const missing = await run(dir, data, "http://127.0.0.1:9/v1", [
      "--header",
      "Authorization: Bearer ${HB_TEST_UNSET_VAR}",
    ]);
    expect(missing.exitCode).toBe(2);
    expect(missing.stderr.trim().split("\n")).toHaveLength(1);
    expect(missing.stderr).toContain("--header 'Authorization': environment variable HB_TEST_UNSET_VAR is not set");
    const bad = await run(dir, data, "http://127.0.0.1:9/v1", ["--header", "Bearer sk-not-echoed-123"]);
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toContain("--header must be 'Name: value'");
    expect(bad.stderr).not.toContain("sk-not-echoed-123");
    const multiline = await run(dir, data, "http://127.0.0.1:9/v1", ["--header", "X-Key: ${HB_TEST_MULTILINE}"], {
      HB_TEST_MULTILINE: "line1\nline2-secret",
    });
    expect(multiline.exitCode).toBe(2);
    expect(multiline.stderr).toContain("--header 'X-Key': the value read from the environment must be one line");
    expect(multiline.stderr).not.toContain("line2-secret");
    const file = join(dir, "run.yaml");
    writeFileSync(file, "headers:\n  X-Key: ${HB_TEST_UNSET_VAR}\n");
    const fromFile = await runCliInProcess([
      "run",
      data,
      "--config",
      file,
      "--model",
      "m",
      "--base-url",
      "http://127.0.0.1:9/v1",
      "--output-dir",
      join(dir, "runs"),
    ]);
    expect(fromFile.exitCode).toBe(2);
    expect(fromFile.stderr).toContain(`${file}: headers 'X-Key': environment variable HB_TEST_UNSET_VAR is not set`);
    expect(existsSync(join(dir, "runs"))).toBe(false);
  });
});

describe("failures behind a gateway", () => {
  it("error bodies of any shape reach failed.jsonl and events.log; deterministic 4xx are left by --resume and rerun by --retry-failed", async () => {
    const replies: Record<string, Reply> = {
      "t-text": {
        kind: "raw",
        status: 400,
        headers: { "content-type": "text/plain" },
        text: "route gw-model: no upstream configured",
      },
      "t-html": {
        kind: "raw",
        status: 403,
        headers: { "content-type": "text/html" },
        text: "<html><head><title>403 Forbidden</title></head><body><h1>403 Forbidden</h1><p>policy blocks this tenant</p></body></html>",
      },
      "t-detail": { kind: "raw", status: 422, text: JSON.stringify({ detail: "messages: field required" }) },
      "t-empty": { kind: "raw", status: 404, text: "" },
      "t-payment": { kind: "raw", status: 402, text: JSON.stringify({ message: "out of credits" }) },
    };
    let healthy = false;
    const s = await serve((req) => (healthy ? text("fine now") : replies[/task (\S+)/.exec(promptOf(req))![1]!]!));
    const dir = tempDir();
    const data = dataset(dir, Object.keys(replies));
    const first = await run(dir, data, s, ["--stop-after-failures", "0"]);
    expect(first.exitCode, first.stderr).toBe(1);
    const runDir = join(dir, "runs", "r");
    const failed = Object.fromEntries(readJsonl(join(runDir, "failed.jsonl")).map((f) => [f.task_id, f]));
    expect(failed["t-text"].error).toContain("model endpoint returned 400: route gw-model: no upstream configured");
    expect(failed["t-html"].error).toContain("403: 403 Forbidden policy blocks this tenant");
    expect(failed["t-detail"].error).toContain("422: messages: field required");
    expect(failed["t-empty"].error).toContain("404: (empty body)");
    expect(failed["t-payment"].error).toContain("402: out of credits");
    for (const f of Object.values(failed)) expect(f.error).not.toContain("status code (no body)");
    for (const id of ["t-text", "t-html", "t-detail", "t-empty"]) expect(failed[id].retryable, id).toBe(false);
    expect(failed["t-payment"].retryable).toBeUndefined();
    const events = readFileSync(join(runDir, "events.log"), "utf8");
    expect(events).toContain(
      "task t-html: model_error: ModelError: model endpoint returned 403: 403 Forbidden policy blocks this tenant",
    );
    expect(events).toContain("route gw-model: no upstream configured");

    healthy = true;
    const before = s.requests.length;
    const resumed = await run(dir, data, s, ["--stop-after-failures", "0", "--resume"]);
    expect(resumed.stderr).toContain("4 task(s) failed with an answer that repeating will not change");
    expect(s.requests.slice(before).map(promptOf)).toEqual(["task t-payment"]);
    expect(resumed.exitCode).toBe(1);

    const retried = await run(dir, data, s, ["--stop-after-failures", "0", "--retry-failed"]);
    expect(retried.exitCode, retried.stderr).toBe(0);
    expect(
      readJsonl(join(runDir, "trajectories.jsonl"))
        .map((t) => t.task_id)
        .sort(),
    ).toEqual(Object.keys(replies).sort());
  });

  it("each retry is an event with its status and wait, counted per task and in statistics.json; an in-stream rate limit is a 429", async () => {
    const seen = new Map<string, number>();
    const chunk = (delta: Record<string, unknown>) => ({
      id: "c",
      object: "chat.completion.chunk",
      created: 1,
      model: "m",
      choices: [{ index: 0, delta, finish_reason: null }],
    });
    const s = await serve((req) => {
      const id = /task (\S+)/.exec(promptOf(req))![1]!;
      const n = seen.get(id) ?? 0;
      seen.set(id, n + 1);
      if (id === "flaky" && n < 2)
        return {
          kind: "raw",
          status: 503,
          headers: { "retry-after-ms": "5" },
          text: "<html><title>503 Service Unavailable</title></html>",
        };
      if (id === "in-stream" && n === 0)
        return {
          kind: "sse",
          chunks: [
            chunk({ role: "assistant", content: "par" }),
            { error: { code: 429, message: "Rate limit exceeded upstream" } },
          ],
          done: false,
        };
      return text("ok");
    });
    const dir = tempDir();
    const r = await run(dir, dataset(dir, ["flaky", "in-stream", "calm"]), s, ["--stream", "--concurrency", "1"]);
    expect(r.exitCode, r.stderr).toBe(0);
    const runDir = join(dir, "runs", "r");
    const events = readFileSync(join(runDir, "events.log"), "utf8");
    expect(events).toMatch(
      /task flaky: model retry 1\/3 \(agent, http:\/\/127\.0\.0\.1:\d+\/v1#gw-model, status 503\) in 5 ms: 503: 503 Service Unavailable/,
    );
    expect(events).toMatch(/task flaky: model retry 2\/3 \(.*status 503\) in 5 ms/);
    expect(events).toMatch(
      /task in-stream: model retry 1\/3 \(.*status 429\) in \d+ ms: 429 rate limited \(in stream\): Rate limit exceeded upstream/,
    );
    const byId = Object.fromEntries(readJsonl(join(runDir, "trajectories.jsonl")).map((t) => [t.task_id, t]));
    expect(byId.flaky.model_retries).toBe(2);
    expect(byId["in-stream"].model_retries).toBe(1);
    expect(byId.calm.model_retries).toBeUndefined();
    const stats = JSON.parse(readFileSync(join(runDir, "statistics.json"), "utf8"));
    expect(stats.model_retries).toEqual({ total: 3, tasks: 2 });
    expect(stats.model_calls).toMatchObject({ retries: 3, rate_limited: 1 });
  });
});

describe("token usage", () => {
  it("cached and reasoning tokens are summed per task and run", async () => {
    const s = await serve((req) => {
      const turn = req.body.messages.filter((m: any) => m.role === "assistant").length;
      const usage = {
        prompt_tokens: 100,
        completion_tokens: 20,
        prompt_tokens_details: { cached_tokens: 60 + turn },
        completion_tokens_details: { reasoning_tokens: 7 },
      };
      return turn === 0
        ? completion({ toolCalls: [{ name: "terminal", arguments: { command: "echo hi" } }], usage })
        : completion({ content: "done", usage });
    });
    const dir = tempDir();
    const r = await run(dir, dataset(dir, ["a", "b"]), s);
    expect(r.exitCode, r.stderr).toBe(0);
    const runDir = join(dir, "runs", "r");
    for (const t of readJsonl(join(runDir, "trajectories.jsonl"))) {
      expect(t.usage).toEqual({
        prompt_tokens: 200,
        completion_tokens: 40,
        total_tokens: 240,
        prompt_tokens_details: { cached_tokens: 121 },
        completion_tokens_details: { reasoning_tokens: 14 },
      });
    }
    const stats = JSON.parse(readFileSync(join(runDir, "statistics.json"), "utf8"));
    expect(stats.token_usage.agent).toEqual({
      prompt_tokens: 400,
      completion_tokens: 80,
      total_tokens: 480,
      prompt_tokens_details: { cached_tokens: 242 },
      completion_tokens_details: { reasoning_tokens: 28 },
    });
    expect(r.stdout + r.stderr).not.toContain("sends no token usage");
  });

  it("an endpoint that sends no usage gets one warning on the console and in events.log", async () => {
    const s = await serve(() => completion({ content: "done", usage: null }));
    const dir = tempDir();
    const r = await run(dir, dataset(dir, ["a", "b", "c"]), s, ["--stream"]);
    expect(r.exitCode, r.stderr).toBe(0);
    const console = r.stdout + r.stderr;
    expect(console.match(/sends no token usage/g)).toHaveLength(1);
    expect(console).toMatch(/warning: http:\/\/127\.0\.0\.1:\d+\/v1#gw-model sends no token usage \(agent calls\)/);
    expect(readFileSync(join(dir, "runs", "r", "events.log"), "utf8")).toContain("sends no token usage");
  });
});

describe("credentials in base URLs", () => {
  it("are sent as Basic auth and appear in no output file, console line or resume hint, whatever their length", async () => {
    const s = await serve((req) => ({
      kind: "raw",
      status: 401,
      headers: { "content-type": "text/plain" },
      // A hostile gateway echoes the URL it was called with, credentials included.
      text: `bad credentials for http://alice:pw@127.0.0.1/v1 (${req.headers.authorization})`,
    }));
    const dir = tempDir();
    const url = s.baseURL.replace("http://", "http://alice:pw@");
    const r = await run(
      dir,
      dataset(dir, ["a", "b", "c"]),
      url,
      [
        "--stop-after-failures",
        "3",
        "--concurrency",
        "1",
        "--api-key",
        "sk-never-shown-42",
        "--header",
        "X-Tenant-Key: literal-tenant-secret-9",
        "--header=X-Ref: ${GW_REF}",
      ],
      { GW_REF: "ref-value-from-env-1" },
    );
    expect(r.exitCode).toBe(1);
    const basic = `Basic ${Buffer.from("alice:pw").toString("base64")}`;
    expect(s.requests[0]!.headers.authorization).toBe(basic);
    const console = r.stdout + r.stderr;
    expect(console).toContain("stopped early");
    expect(console).toMatch(/--base-url http:\/\/USER:PASSWORD@127\.0\.0\.1:\d+\/v1 /);
    expect(console).toContain("--api-key KEY");
    expect(console).toContain("--header 'X-Tenant-Key: VALUE'");
    expect(console).toContain("'--header=X-Ref: ${GW_REF}'");
    expect(console).toContain(
      "(put your key back in place of KEY, the header values back in place of VALUE, the URL credentials back in place of USER:PASSWORD)",
    );
    const runDir = join(dir, "runs", "r");
    const texts = [...allFiles(runDir).map((f) => f.text), console];
    for (const t of texts) {
      expect(t).not.toContain("alice:pw");
      expect(t).not.toContain("sk-never-shown-42");
      expect(t).not.toContain(Buffer.from("alice:pw").toString("base64"));
      expect(t).not.toContain("literal-tenant-secret-9");
      expect(t).not.toContain("ref-value-from-env-1");
    }
    expect(YAML.parse(readFileSync(join(runDir, "run.yaml"), "utf8")).base_url).toMatch(
      /^http:\/\/<redacted>@127\.0\.0\.1:\d+\/v1$/,
    );
    expect(readJsonl(join(runDir, "failed.jsonl"))[0].error).toContain(
      "bad credentials for http://<redacted>@127.0.0.1/v1",
    );
  });
});

describe("OpenRouter request options", () => {
  it("an OpenRouter URL gets Hermes' default reasoning request and the provider routing; another endpoint neither reasoning nor routing unless asked", async () => {
    const s = await serve(() => text("ok"));
    const dir = tempDir();
    const data = dataset(dir, ["a"]);
    const openrouter = `${s.url}/openrouter/api/v1`;
    const r = await run(dir, data, openrouter, [
      "--providers-allowed",
      "p1,p2",
      "--providers-ignored",
      "p3",
      "--providers-order",
      "p2,p1",
      "--provider-sort",
      "throughput",
    ]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(s.requests[0]!.path).toBe("/openrouter/api/v1/chat/completions");
    expect(s.requests[0]!.body.reasoning).toEqual({ enabled: true, effort: "medium" });
    expect(s.requests[0]!.body.provider).toEqual({
      only: ["p1", "p2"],
      ignore: ["p3"],
      order: ["p2", "p1"],
      sort: "throughput",
    });

    const off = await runCliInProcess([
      "run",
      data,
      "--model",
      "m",
      "--base-url",
      openrouter,
      "--toolsets",
      "terminal",
      "--output-dir",
      join(dir, "runs"),
      "--run-name",
      "off",
      "--progress",
      "none",
      "--reasoning-effort",
      "none",
    ]);
    expect(off.exitCode, off.stderr).toBe(0);
    expect(s.requests[1]!.body.reasoning).toEqual({ effort: "none" });
    expect(s.requests[1]!.body.provider).toBeUndefined();

    const plain = await runCliInProcess([
      "run",
      data,
      "--model",
      "m",
      "--base-url",
      s.baseURL,
      "--toolsets",
      "terminal",
      "--output-dir",
      join(dir, "runs"),
      "--run-name",
      "plain",
      "--progress",
      "none",
    ]);
    expect(plain.exitCode, plain.stderr).toBe(0);
    expect(s.requests[2]!.body.reasoning).toBeUndefined();
    expect(s.requests[2]!.body.reasoning_effort).toBeUndefined();
  });
});

describe("the approver", () => {
  /** An agent that tries to delete `victim` once, then answers; the approver as given. */
  async function approvalRun(approver: (req: RecordedRequest) => Reply, extra: string[]) {
    const dir = tempDir();
    const victim = join(dir, "victim");
    mkdirSync(victim);
    writeFileSync(join(victim, "precious.txt"), "keep me");
    const s = await serve((req) => {
      if (isApprover(req)) return approver(req);
      const turn = req.body.messages.filter((m: any) => m.role === "assistant").length;
      return turn === 0
        ? toolCalls([{ name: "terminal", arguments: { command: `rm -rf ${victim}` } }])
        : completion({ content: "finished" });
    });
    const r = await run(dir, dataset(dir, ["a"]), s, ["--approval-model", "judge-model", ...extra]);
    return { r, victim, runDir: join(dir, "runs", "r"), server: s };
  }

  it("--approval-timeout bounds the decision: a silent approver denies, and the end of the run reports the failure", async () => {
    const { r, victim, runDir } = await approvalRun(() => ({ kind: "hang" }), ["--approval-timeout", "1"]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(existsSync(join(victim, "precious.txt"))).toBe(true);
    const [t] = readJsonl(join(runDir, "trajectories.jsonl"));
    expect(t.approvals).toHaveLength(1);
    expect(t.approvals[0]).toMatchObject({
      decision: "deny",
      error: true,
      reason: "approver error: timed out after 1000 ms",
    });
    expect(r.stdout).toContain(
      "approver failures: 1 (each command denied, fail-closed); first: task a: approver error: timed out after 1000 ms",
    );
    expect(YAML.parse(readFileSync(join(runDir, "run.yaml"), "utf8")).approval_timeout).toBe(1);
  });

  it("an answer with a duplicate key is invalid and denies, though JSON.parse would have read 'approve'", async () => {
    const { r, victim, runDir } = await approvalRun(
      () => text('{"decision": "deny", "reason": "looks bad", "decision": "approve"}'),
      [],
    );
    expect(r.exitCode, r.stderr).toBe(0);
    expect(existsSync(join(victim, "precious.txt"))).toBe(true);
    const [t] = readJsonl(join(runDir, "trajectories.jsonl"));
    expect(t.approvals[0]).toMatchObject({ decision: "deny", error: true });
    expect(t.approvals[0].reason).toContain('duplicate key "decision"');
    expect(r.stdout).toMatch(/approver failures: 1 .*duplicate key "decision"/);
  });

  it("keys that differ only in case or spaces conflict too", async () => {
    const { victim, runDir } = await approvalRun(
      () => text('{"Decision": "deny", "decision": "approve", "reason": "ok"}'),
      [],
    );
    expect(existsSync(join(victim, "precious.txt"))).toBe(true);
    expect(readJsonl(join(runDir, "trajectories.jsonl"))[0].approvals[0].reason).toContain(
      'conflicting keys "Decision" and "decision"',
    );
  });
});

describe("approval check --file", () => {
  it("skips blank and # lines", async () => {
    const dir = tempDir();
    const file = join(dir, "cmds.txt");
    writeFileSync(file, "# a comment\n\n   \nrm -rf /\n  # indented comment\nls -la\n");
    const r = await runCliInProcess(["approval", "check", "--file", file]);
    expect(r.exitCode).toBe(0);
    expect(parseJsonl(r.stdout).map((l) => l.command)).toEqual(["rm -rf /", "ls -la"]);
  });
});
