/**
 * Conformance of atif.jsonl with Harbor's own ATIF models (not with our zod schema): one real run of the built CLI
 * (two epochs, --rl-capture against a vLLM-like tokenising server, a task answered wrong, a task with reasoning,
 * an answer cut by the length limit, an MCP image result) and every line checked against
 * - test/fixtures/conformance/atif_v1_7.schema.json, the structural JSON Schema of Harbor's pydantic models
 *   (`src/harbor/models/trajectories/*.py`, laude-institute/harbor at 2922220bf78bf22e2ff3b30147cbbe15ad02c7c9:
 *   `extra = "forbid"` everywhere, required fields, types, the enum values), and
 * - the rules of those models' validators, written out below (trajectory.py `validate_step_ids`,
 *   `validate_tool_call_references`; step.py `validate_timestamp`, `validate_agent_only_fields`,
 *   `validate_llm_call_count_zero_fields`; content.py `validate_content_type`).
 * With HARBOR_SRC set to a Harbor checkout's `src` (and pydantic importable by python3), every line also goes through
 * Harbor's own `harbor.utils.trajectory_validator.TrajectoryValidator`.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Ajv } from "ajv";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NO_SCHEDULER, ROOT, runCliInProcess, tempDir } from "./helpers/cli.js";
import { startFakeOpenAI, type FakeOpenAI, type RecordedRequest } from "./helpers/fake_openai.js";
import { readJsonl } from "./helpers/jsonl.js";
import { tokenizingHandler, type ScriptedTurn } from "./helpers/token_server.js";

const SCHEMA = JSON.parse(
  readFileSync(join(ROOT, "test", "fixtures", "conformance", "atif_v1_7.schema.json"), "utf8"),
) as Record<string, unknown>;
const EVERYTHING = join(ROOT, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js");

const taskOf = (req: RecordedRequest) =>
  /task:(\S+)/.exec(req.body.messages.find((m: { role: string }) => m.role === "user").content)?.[1];
const echo = (text: string) => ({ name: "terminal", arguments: { command: `echo ${text}` } });

/** Per task, the answer to its n-th call (n counts both epochs). */
const SCRIPTS: Record<string, (n: number) => ScriptedTurn> = {
  // Right in epoch 0, wrong in epoch 1 (a failed task).
  flat: (n) => (n % 2 === 0 ? { toolCalls: [echo("a")] } : { content: n === 1 ? "42" : "41" }),
  reason: (n) => (n % 2 === 0 ? { reasoning: "Look first.", toolCalls: [echo("b")] } : { content: "42" }),
  cut: (n) => (n % 2 === 0 ? { content: "4", finishReason: "length" } : { content: "2" }),
  image: (n) =>
    n % 2 === 0 ? { toolCalls: [{ name: "mcp_every_get_tiny_image", arguments: {} }] } : { content: "42" },
};

/** The rules of Harbor's model validators, as they read; each problem as `path: message`. */
function validatorProblems(doc: any): string[] {
  const out: string[] = [];
  doc.steps.forEach((step: any, i: number) => {
    if (step.step_id !== i + 1) out.push(`steps.${i}.step_id: expected ${i + 1}`);
    if (
      step.timestamp != null &&
      !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(step.timestamp)
    )
      out.push(`steps.${i}.timestamp: not ISO 8601 as datetime.fromisoformat reads it`);
    if (step.source !== "agent")
      for (const f of ["model_name", "reasoning_effort", "reasoning_content", "tool_calls", "metrics"])
        if (step[f] != null) out.push(`steps.${i}.${f}: agent-only`);
    if (step.source === "agent" && step.llm_call_count === 0)
      for (const f of ["metrics", "reasoning_content"])
        if (step[f] != null) out.push(`steps.${i}.${f}: absent when llm_call_count is 0`);
    const ids = new Set((step.tool_calls ?? []).map((c: any) => c.tool_call_id));
    for (const r of step.observation?.results ?? [])
      if (r.source_call_id != null && !ids.has(r.source_call_id))
        out.push(`steps.${i}: source_call_id ${r.source_call_id} names no tool call of the step`);
    const parts = [
      ...(Array.isArray(step.message) ? step.message : []),
      ...(step.observation?.results ?? []).flatMap((r: any) => (Array.isArray(r.content) ? r.content : [])),
    ];
    for (const p of parts)
      if ((p.type === "text") !== (p.text != null) || (p.type === "image") !== (p.source != null))
        out.push(`steps.${i}: content part of type ${p.type} with the wrong fields`);
    const m = step.metrics;
    if (m?.completion_token_ids && m.logprobs && m.logprobs.length !== m.completion_token_ids.length)
      out.push(`steps.${i}.metrics.logprobs: not aligned with completion_token_ids`);
  });
  return out;
}

describe("atif.jsonl against Harbor's ATIF models", () => {
  let server: FakeOpenAI;
  let dir: string;
  let docs: any[];
  let entries: any[];

  beforeAll(async () => {
    const calls = new Map<string, number>();
    const { handler } = tokenizingHandler((req) => {
      const id = taskOf(req);
      if (id === undefined) return { content: "OK" };
      const n = calls.get(id) ?? 0;
      calls.set(id, n + 1);
      return SCRIPTS[id]!(n);
    });
    server = await startFakeOpenAI(handler);
    dir = tempDir("hb-conf-atif-");
    writeFileSync(
      join(dir, "mcp.json"),
      JSON.stringify({
        mcpServers: {
          every: {
            command: process.execPath,
            args: [EVERYTHING, "stdio"],
            where: "host",
            tools: { include: ["get-tiny-image"] },
          },
        },
      }),
    );
    writeFileSync(
      join(dir, "tasks.jsonl"),
      Object.keys(SCRIPTS)
        .map((id) =>
          JSON.stringify({
            id,
            prompt: `task:${id} Answer with the number.`,
            toolsets: id === "image" ? ["mcp-every"] : ["terminal"],
            expected: { value: "42", match: "exact" },
          }),
        )
        .join("\n") + "\n",
    );
    const r = await runCliInProcess(
      [
        "run",
        join(dir, "tasks.jsonl"),
        ...["--model", "m", "--base-url", server.baseURL, "--api-key", "k"],
        ...["--output-dir", join(dir, "runs"), "--run-name", "r", "--progress", "none"],
        ...["--concurrency", "1", "--max-retries", "0", "--epochs", "2", "--env", "host"],
        ...["--rl-capture", "--mcp-config", join(dir, "mcp.json"), "--mcp-approval", "none"],
        ...["--price-input", "1", "--price-output", "2"],
      ],
      { env: { ...NO_SCHEDULER, HERMES_BATCH_CONFIG_DIR: join(dir, "config") } },
    );
    expect(r.exitCode, r.stderr + r.stdout).toBe(0);
    docs = readJsonl(join(dir, "runs", "r", "atif.jsonl"), { mustExist: true });
    entries = readJsonl(join(dir, "runs", "r", "trajectories.jsonl"), { mustExist: true });
  }, 120_000);
  afterAll(async () => {
    await server?.close();
  });

  it("covers the cases: both epochs, a wrong answer, reasoning, a cut answer, an image result, token ids", () => {
    expect(docs).toHaveLength(8);
    expect(new Set(docs.map((d) => d.trajectory_id)).size).toBe(8);
    expect(entries.find((e) => e.task_id === "flat" && e.epoch === 1).score.passed).toBe(false);
    const all = JSON.stringify(docs);
    for (const needle of ['"reasoning_content":"Look first."', '"raw_content"', '"completion_token_ids"'])
      expect(all).toContain(needle);
    expect(all).toContain('"finish_reason":"length"');
  });

  it("every line validates against the structural schema of Harbor's pydantic models", () => {
    const validate = new Ajv({ strict: false, allErrors: true }).compile(SCHEMA);
    for (const doc of docs) expect(validate(doc) ? [] : validate.errors, doc.trajectory_id).toEqual([]);
  });

  it("every line keeps the rules of Harbor's model validators", () => {
    for (const doc of docs) expect(validatorProblems(doc), doc.trajectory_id).toEqual([]);
  });

  it.runIf(process.env.HARBOR_SRC && existsSync(join(process.env.HARBOR_SRC, "harbor")))(
    "every line passes Harbor's own TrajectoryValidator (HARBOR_SRC)",
    () => {
      const file = join(dir, "docs.json");
      writeFileSync(file, JSON.stringify(docs));
      const script = [
        "import json, sys",
        "from harbor.utils.trajectory_validator import TrajectoryValidator",
        "bad = []",
        "for d in json.load(open(sys.argv[1])):",
        "    v = TrajectoryValidator()",
        "    if not v.validate(d): bad.append([d.get('trajectory_id'), v.get_errors()])",
        "print(json.dumps(bad))",
      ].join("\n");
      const out = execFileSync("python3", ["-c", script, file], {
        env: { ...process.env, PYTHONPATH: process.env.HARBOR_SRC },
        encoding: "utf8",
      });
      expect(JSON.parse(out)).toEqual([]);
    },
  );
});
