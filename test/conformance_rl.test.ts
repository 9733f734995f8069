/**
 * Conformance of rl.jsonl (`hermes-batch.rl/1`, docs: /work/shared/reference section 2.4) and its trainer exports
 * with what the trainers declare, not with our own schemas: one real --rl-capture run against a vLLM-like
 * tokenising server (a tool turn, a template that drops earlier reasoning, two epochs), then
 * - every branch rebuilt from its turns: the first prompt, each completion (mask 1, the engine's logprobs), each
 *   later prompt's new tokens (tool results, template: mask 0, logprob 0), in order, nothing else;
 * - `--format prime` lines carry exactly the fields of prime-rl's `TrainingSample`
 *   (PrimeIntellect-ai/prime-rl `src/prime_rl/transports/rollouts/types.py` at
 *   559b44772e471d1538537b8805cc77f3824a5e64, a msgspec Struct: `TrainingSample(**line)` refuses any other key).
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NO_SCHEDULER, runCliInProcess, tempDir } from "./helpers/cli.js";
import { startFakeOpenAI, type FakeOpenAI, type RecordedRequest } from "./helpers/fake_openai.js";
import { readJsonl } from "./helpers/jsonl.js";
import { tokenizingHandler, type ScriptedTurn } from "./helpers/token_server.js";

/** prime-rl TrainingSample: required fields, then those with a default (None). */
const PRIME_REQUIRED = ["token_ids", "mask", "logprobs", "temperatures", "env_name"];
const PRIME_OPTIONAL = [
  "ref_logprobs",
  "mm_kwargs",
  "routed_experts",
  "mm_token_type_ids",
  "rl_weights",
  "ce_weights",
  "ref_kl_weights",
  "advantages",
];

const taskOf = (req: RecordedRequest) =>
  /task:(\S+)/.exec(req.body.messages.find((m: { role: string }) => m.role === "user").content)?.[1];
const echo = (text: string) => ({ name: "terminal", arguments: { command: `echo ${text}` } });

const SCRIPTS: Record<string, (n: number) => ScriptedTurn> = {
  flat: (n) => (n % 2 === 0 ? { toolCalls: [echo("a")] } : { content: n === 1 ? "42" : "41" }),
  reason: (n) =>
    [{ reasoning: "Look first.", toolCalls: [echo("b")] }, { toolCalls: [echo("c")] }, { content: "42" }][n % 3]!,
};

describe("rl.jsonl and its exports as trainers read them", () => {
  let server: FakeOpenAI;
  let runDir: string;
  let lines: any[];

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
    const dir = tempDir("hb-conf-rl-");
    writeFileSync(
      join(dir, "tasks.jsonl"),
      Object.keys(SCRIPTS)
        .map((id) =>
          JSON.stringify({
            id,
            prompt: `task:${id} Answer with the number.`,
            toolsets: ["terminal"],
            expected: { value: "42", match: "exact" },
          }),
        )
        .join("\n") + "\n",
    );
    const r = await runCliInProcess(
      [
        "run",
        join(dir, "tasks.jsonl"),
        ...["--model", "m", "--base-url", server.baseURL, "--output-dir", join(dir, "runs"), "--run-name", "r"],
        ...["--progress", "none", "--concurrency", "1", "--max-retries", "0", "--epochs", "2"],
        ...["--temperature", "0.7", "--rl-capture", "--rl-tokenizer", "cl100k_base"],
      ],
      { env: NO_SCHEDULER },
    );
    expect(r.exitCode, r.stderr + r.stdout).toBe(0);
    runDir = join(dir, "runs", "r");
    lines = readJsonl(join(runDir, "rl.jsonl"), { mustExist: true });
  }, 120_000);
  afterAll(async () => {
    await server?.close();
  });

  it("every branch is its turns' tokens in order, the loss mask 1 exactly on the sampled completions", () => {
    expect(lines).toHaveLength(4);
    let multi = 0;
    for (const l of lines) {
      expect(l.schema).toBe("hermes-batch.rl/1");
      expect(l.branches.length).toBeGreaterThan(0);
      if (l.branches.length > 1) multi++;
      expect(l.branches.flatMap((b: any) => b.turns)).toEqual(l.turns.map((_: unknown, i: number) => i));
      for (const b of l.branches) {
        const ids: number[] = [];
        const mask: number[] = [];
        const lps: number[] = [];
        for (const ti of b.turns) {
          const t = l.turns[ti];
          // Each prompt extends what the branch holds so far; its new part is context.
          expect(t.prompt_token_ids.slice(0, ids.length)).toEqual(ids);
          const added = t.prompt_token_ids.slice(ids.length);
          ids.push(...added, ...t.completion_token_ids);
          mask.push(...added.map(() => 0), ...t.completion_token_ids.map(() => 1));
          lps.push(...added.map(() => 0), ...t.logprobs);
          expect(t.logprobs).toHaveLength(t.completion_token_ids.length);
        }
        expect(b.token_ids).toEqual(ids);
        expect(b.loss_mask).toEqual(mask);
        expect(b.logprobs).toEqual(lps);
        expect(b.prompt_length).toBe(l.turns[b.turns[0]].prompt_token_ids.length);
      }
    }
    // The template drops earlier reasoning: the reasoning task's trajectories are not one sequence.
    expect(multi).toBe(2);
  });

  it("--format prime lines have exactly the fields of prime-rl's TrainingSample, arrays aligned", async () => {
    const out = join(runDir, "prime.jsonl");
    const r = await runCliInProcess(["export", runDir, "--format", "prime", "--out", out]);
    expect(r.exitCode, r.stderr).toBe(0);
    const samples = readJsonl(out, { mustExist: true });
    expect(samples).toHaveLength(2 + 2 * 2);
    for (const s of samples) {
      const keys = Object.keys(s);
      expect(keys.filter((k) => !PRIME_REQUIRED.includes(k) && !PRIME_OPTIONAL.includes(k))).toEqual([]);
      for (const k of PRIME_REQUIRED) expect(keys).toContain(k);
      const n = s.token_ids.length;
      for (const k of ["mask", "logprobs", "temperatures", "advantages"]) expect(s[k]).toHaveLength(n);
      expect(s.temperatures.every((t: number) => t === 0.7)).toBe(true);
      s.mask.forEach((m: boolean, i: number) => {
        if (!m) expect([s.advantages[i], s.logprobs[i]]).toEqual([0, 0]);
      });
    }
  });
});
