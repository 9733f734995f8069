/**
 * `--rl-capture` end to end: real runs of the built CLI against a local vLLM-like server that tokenises with
 * a real tokenizer (test/helpers/token_server.ts). The captured ids are the server's, a template that drops
 * earlier reasoning splits branches exactly there, retried and discarded calls are absent and counted,
 * group advantages sum to zero, and every trainer format validates against its schema.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startFakeOpenAI, type FakeOpenAI, type RecordedRequest } from "./helpers/fake_openai.js";
import { tokenizingHandler, type ScriptedTurn, type ServedCall } from "./helpers/token_server.js";
import { NO_SCHEDULER, runCliInProcess, tempDir } from "./helpers/cli.js";
import { readJsonl } from "./helpers/jsonl.js";
import { RlLineSchema, type RlLine } from "../src/core/rl_record.js";
import {
  PrimeTrainingSampleSchema,
  SkyGeneratorOutputSchema,
  VfGenerateOutputsSchema,
} from "../src/formats/rl/schemas.js";

/** The task a request belongs to; undefined for the preflight's one tiny request. */
const taskOf = (req: RecordedRequest) =>
  /task:(\S+)/.exec(req.body.messages.find((m: { role: string }) => m.role === "user").content)?.[1];
const echo = (text: string) => ({ name: "terminal", arguments: { command: `echo ${text}` } });

/** Each task's answers in call order (a call the loop discards still takes its place). */
const SCRIPTS: Record<string, (n: number) => ScriptedTurn> = {
  // Turn 0 a tool call, then the answer; the group's two epochs answer 42 (right) and 41 (wrong).
  flat: (n) => (n % 2 === 0 ? { toolCalls: [echo("a")] } : { content: n === 1 ? "42" : "41" }),
  // Reasoning on the first answer only: the next prompt drops it, so a new branch starts at turn 1.
  reason: (n) =>
    [{ reasoning: "I should look first.", toolCalls: [echo("b")] }, { toolCalls: [echo("c")] }, { content: "42" }][
      n % 3
    ]!,
  // An empty answer (asked again), unparseable arguments (asked again), then a good call and the answer.
  discard: (n) =>
    [
      { content: "" },
      { toolCalls: [{ name: "terminal", arguments: "@@@ not json" }] },
      { toolCalls: [echo("d")] },
      { content: "42" },
    ][n]!,
};

function scripted(): {
  handler: ReturnType<typeof tokenizingHandler>["handler"];
  served: ServedCall[];
  byTask: Map<string, ServedCall[]>;
} {
  const calls = new Map<string, number>();
  const byTask = new Map<string, ServedCall[]>();
  const { handler, served } = tokenizingHandler((req) => {
    const id = taskOf(req);
    if (id === undefined) return { content: "OK" };
    const n = calls.get(id) ?? 0;
    calls.set(id, n + 1);
    return SCRIPTS[id]!(n);
  });
  return {
    served,
    byTask,
    handler: async (req) => {
      const reply = await handler(req);
      const id = taskOf(req);
      if (id !== undefined) byTask.set(id, [...(byTask.get(id) ?? []), served.at(-1)!]);
      return reply;
    },
  };
}

async function runWith(
  server: FakeOpenAI,
  ids: string[],
  extra: string[],
): Promise<{ dir: string; runDir: string; stdout: string; stderr: string; exitCode: number | undefined }> {
  const dir = tempDir("hb-rl-");
  const dataset = join(dir, "tasks.jsonl");
  writeFileSync(
    dataset,
    ids
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
      dataset,
      "--model",
      "m",
      "--base-url",
      server.baseURL,
      "--output-dir",
      join(dir, "runs"),
      "--run-name",
      "r",
      "--progress",
      "none",
      "--concurrency",
      "1",
      "--max-retries",
      "0",
      "--temperature",
      "0.7",
      ...extra,
    ],
    { env: NO_SCHEDULER },
  );
  return { dir, runDir: join(dir, "runs", "r"), stdout: r.stdout, stderr: r.stderr, exitCode: r.exitCode };
}

/** Every kept turn is a call the server served, ids and logprobs unchanged; the rest are the discarded ones. */
function expectServedIds(line: RlLine, served: ServedCall[]): void {
  for (const t of line.turns) {
    const match = served.find(
      (s) =>
        JSON.stringify(s.prompt_token_ids) === JSON.stringify(t.prompt_token_ids) &&
        JSON.stringify(s.token_ids) === JSON.stringify(t.completion_token_ids),
    );
    expect(match, `turn ${t.call} of ${line.task_id} is a served call`).toBeDefined();
    expect(t.logprobs).toEqual(match!.logprobs);
  }
}

describe("--rl-capture", () => {
  let server: FakeOpenAI;
  let state: ReturnType<typeof scripted>;
  beforeAll(async () => {
    state = scripted();
    server = await startFakeOpenAI(state.handler);
  });
  afterAll(async () => server.close());

  it("captures the engine's ids, splits branches where reasoning is dropped, and exports every trainer format", async () => {
    const run = await runWith(
      server,
      ["flat", "reason"],
      ["--rl-capture", "--rl-tokenizer", "cl100k_base", "--epochs", "2"],
    );
    expect(run.stderr).not.toMatch(/internal error|Error:/);
    expect(run.exitCode).toBe(0);
    expect(readFileSync(join(run.runDir, "run.yaml"), "utf8")).toMatch(/rl_tokenizer: cl100k_base/);
    const agentRequests = server.requests.filter((r) =>
      r.body.messages.some((m: { content: string }) => /task:/.test(m.content ?? "")),
    );
    for (const r of agentRequests)
      expect(r.body).toMatchObject({ logprobs: true, top_logprobs: 0, return_token_ids: true, temperature: 0.7 });

    const lines = readJsonl(join(run.runDir, "rl.jsonl")).map((l) => RlLineSchema().parse(l));
    expect(lines.map((l) => `${l.task_id}#${l.epoch}`).sort()).toEqual(["flat#0", "flat#1", "reason#0", "reason#1"]);
    for (const l of lines) {
      expectServedIds(l, state.served);
      expect(l).toMatchObject({
        tokens: "engine",
        problems: [],
        discarded_calls: 0,
        tokenizer: "cl100k_base",
        train: "full",
      });
      expect(l.turns.every((t) => t.temperature === 0.7)).toBe(true);
      for (const b of l.branches) {
        expect(b.loss_mask.length).toBe(b.token_ids.length);
        expect(b.logprobs.length).toBe(b.token_ids.length);
        // The mask is 1 on exactly the completion tokens of its turns.
        expect(b.loss_mask.filter((m) => m === 1).length).toBe(
          b.turns.reduce((a, ti) => a + l.turns[ti]!.completion_token_ids!.length, 0),
        );
        expect(b.logprobs.every((lp, i) => (b.loss_mask[i] === 0 ? lp === 0 : lp < 0))).toBe(true);
      }
    }
    const flat = lines.filter((l) => l.task_id === "flat");
    for (const l of flat) expect(l.branches.map((b) => b.turns)).toEqual([[0, 1]]);
    for (const l of lines.filter((l) => l.task_id === "reason")) {
      expect(l.turns).toHaveLength(3);
      expect(l.branches.map((b) => b.turns)).toEqual([[0], [1, 2]]);
      // The second branch starts with the second prompt, which is the first prompt plus the answer without reasoning.
      expect(l.branches[1]!.prompt_length).toBe(l.turns[1]!.prompt_token_ids!.length);
    }
    expect(flat.map((l) => l.reward).sort()).toEqual([0, 1]);

    const exp = async (format: string, extra: string[] = []) => {
      const r = await runCliInProcess(["export", run.runDir, "--format", format, ...extra]);
      expect(r.stderr).not.toMatch(/does not match/);
      expect(r.exitCode).toBe(0);
      return join(run.runDir, `export.${format}.${format === "rl" || format === "prime" ? "jsonl" : "json"}`);
    };
    const exported = readJsonl(await exp("rl")).map((l) => RlLineSchema().parse(l));
    const byGroup = new Map<string, RlLine[]>();
    for (const l of exported) byGroup.set(l.group_id, [...(byGroup.get(l.group_id) ?? []), l]);
    for (const members of byGroup.values())
      expect(Math.abs(members.reduce((a, l) => a + l.advantage!, 0))).toBeLessThan(1e-9);
    const flatAdv = exported.filter((l) => l.task_id === "flat").map((l) => [l.reward, l.advantage]);
    expect(flatAdv.find(([r]) => r === 1)![1]).toBeCloseTo(1, 5); // (1 - 0.5) / (0.5 + 1e-6)
    expect(exported.find((l) => l.task_id === "reason")!.group).toMatchObject({
      size: 2,
      scored: 2,
      zero_variance: true,
    });

    const prime = readJsonl(await exp("prime")).map((s) => PrimeTrainingSampleSchema.parse(s));
    expect(prime).toHaveLength(2 + 2 * 2); // flat: one branch per epoch; reason: two per epoch
    const sky = SkyGeneratorOutputSchema.parse(JSON.parse(readFileSync(await exp("skyrl"), "utf8")));
    expect(sky.trajectory_ids).toHaveLength(2); // only the flat task is one sequence
    const steps = SkyGeneratorOutputSchema.parse(JSON.parse(readFileSync(await exp("skyrl-steps"), "utf8")));
    expect(steps.is_last_step!.filter(Boolean)).toHaveLength(4);
    expect(steps.response_ids).toHaveLength(2 * 2 + 2 * 3);
    const vf = VfGenerateOutputsSchema.parse(JSON.parse(readFileSync(await exp("verifiers"), "utf8")));
    expect(vf.outputs).toHaveLength(4);
    expect(
      vf.outputs.every((o) =>
        o.trajectory.every((s) => s.tokens!.completion_ids.length === s.tokens!.completion_logprobs.length),
      ),
    ).toBe(true);
  });

  it("streaming: the same ids from id deltas; retried and discarded calls are left out and counted", async () => {
    const run = await runWith(server, ["discard"], ["--rl-capture", "strict", "--stream"]);
    expect(run.exitCode).toBe(0);
    const [line] = readJsonl(join(run.runDir, "rl.jsonl")).map((l) => RlLineSchema().parse(l));
    const served = state.byTask.get("discard")!;
    expect(served).toHaveLength(4);
    expect(line!.discarded_calls).toBe(2);
    expect(line!.turns.map((t) => t.call)).toEqual([2, 3]);
    expect(line!.turns.map((t) => t.completion_token_ids)).toEqual([served[2]!.token_ids, served[3]!.token_ids]);
    expect(line!.turns.map((t) => t.prompt_token_ids)).toEqual([
      served[2]!.prompt_token_ids,
      served[3]!.prompt_token_ids,
    ]);
    expect(line!.turns.map((t) => t.logprobs)).toEqual([served[2]!.logprobs, served[3]!.logprobs]);
    expect(line!.branches.map((b) => b.turns)).toEqual([[0, 1]]);
    // atif.jsonl's agent steps of the kept calls carry the same ids and logprobs, and so does export --format atif.
    const withIds = (doc: any) =>
      doc.steps.filter((st: any) => st.metrics?.prompt_token_ids).map((st: any) => st.metrics);
    const expected = [2, 3].map((i) => ({
      prompt_token_ids: served[i]!.prompt_token_ids,
      completion_token_ids: served[i]!.token_ids,
      logprobs: served[i]!.logprobs,
    }));
    const [doc] = readJsonl(join(run.runDir, "atif.jsonl"));
    expect(withIds(doc)).toEqual(expected.map((e) => expect.objectContaining(e)));
    const out = join(run.runDir, "export.atif.jsonl");
    const exported = await runCliInProcess(["export", run.runDir, "--format", "atif", "--out", out]);
    expect(exported.exitCode, exported.stderr).toBe(0);
    expect(withIds(readJsonl(out)[0])).toEqual(withIds(doc));
  });
});

describe("--rl-capture against endpoints that do not return ids", () => {
  it("strict stops before any task (exit 2, saying what is missing); best-effort runs with tokens: null", async () => {
    const plain = await startFakeOpenAI(() => ({
      kind: "json",
      body: {
        id: "x",
        object: "chat.completion",
        created: 0,
        model: "m",
        choices: [{ index: 0, message: { role: "assistant", content: "42" }, finish_reason: "stop" }],
        usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
      },
    }));
    try {
      const strict = await runWith(plain, ["flat"], ["--rl-capture"]);
      expect(strict.exitCode).toBe(2);
      expect(strict.stderr).toMatch(
        /--rl-capture: the model endpoint returned no prompt_token_ids, choices\[0\]\.token_ids, choices\[0\]\.logprobs\.content/,
      );
      expect(strict.stderr).not.toMatch(/\n\s+at /);
      const best = await runWith(plain, ["flat"], ["--rl-capture", "best-effort"]);
      expect(best.exitCode).toBe(0);
      expect(best.stdout + best.stderr).toMatch(/best-effort/);
      const [line] = readJsonl(join(best.runDir, "rl.jsonl")).map((l) => RlLineSchema().parse(l));
      expect(line).toMatchObject({ tokens: null, train: "excluded", train_cause: "no_token_ids", branches: [] });
    } finally {
      await plain.close();
    }
  });

  it("ids that disagree with usage, or logprobs that do not match the ids, mark the line and keep it out of training", async () => {
    for (const opts of [{ usagePromptSkew: 3 }, { dropLogprob: true }]) {
      const { handler } = tokenizingHandler(() => ({ content: "42" }), opts);
      const bad = await startFakeOpenAI(handler);
      try {
        const run = await runWith(bad, ["flat"], ["--rl-capture", "best-effort"]);
        expect(run.exitCode).toBe(0);
        const [line] = readJsonl(join(run.runDir, "rl.jsonl")).map((l) => RlLineSchema().parse(l));
        expect(line!.train).toBe("excluded");
        expect(line!.problems[0]).toMatch(
          opts.usagePromptSkew ? /prompt ids, usage says/ : /logprobs for \d+ completion ids/,
        );
        expect(readFileSync(join(run.runDir, "events.log"), "utf8")).toMatch(
          /task flat: rl\.jsonl line excluded, bad token data: turn 0: /,
        );
        const exp = await runCliInProcess(["export", run.runDir, "--format", "prime"]);
        expect(exp.exitCode).toBe(1);
        expect(exp.stderr).toMatch(/1 excluded/);
      } finally {
        await bad.close();
      }
    }
  });
});

describe("the train verdict by cause", () => {
  it("a context-window 400 is trained on with reward 0; a time-out keeps its tokens masked", async () => {
    const calls = new Map<string, number>();
    const { handler } = tokenizingHandler(() => ({ toolCalls: [echo("x")] }));
    const server = await startFakeOpenAI(async (req) => {
      const id = taskOf(req);
      const n = calls.get(id ?? "") ?? 0;
      if (id) calls.set(id, n + 1);
      if (id && n >= 1) {
        if (id === "ctx")
          return {
            kind: "json",
            status: 400,
            body: {
              error: {
                message: "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens.",
                type: "BadRequestError",
                code: 400,
              },
            },
          };
        return { kind: "hang" };
      }
      return handler(req);
    });
    try {
      const run = await runWith(server, ["ctx", "slow"], ["--rl-capture", "--task-timeout", "3"]);
      expect(run.exitCode).toBe(1); // the context overflow failed (model_error)
      const byId = Object.fromEntries(
        readJsonl(join(run.runDir, "rl.jsonl")).map((l) => [l.task_id, RlLineSchema().parse(l)]),
      );
      expect(byId.ctx).toMatchObject({
        outcome: "context_length",
        stop_reason: "context_length",
        reward: 0,
        passed: false,
        train: "full",
        tokens: "engine",
      });
      expect(byId.ctx!.turns).toHaveLength(1);
      // A scored row's agent stopped by --task-timeout is graded (a failed task), and its tokens not trained on.
      expect(byId.slow).toMatchObject({
        outcome: "time_limit",
        stop_reason: "time_limit",
        reward: 0,
        passed: false,
        train: "masked",
        tokens: "engine",
      });
      const prime = await runCliInProcess(["export", run.runDir, "--format", "prime", "--out", "-"]);
      expect(prime.exitCode).toBe(0);
      const samples = prime.stdout
        .trim()
        .split("\n")
        .map((l) => PrimeTrainingSampleSchema.parse(JSON.parse(l)));
      expect(samples).toHaveLength(2);
      // The masked sample carries its tokens and no trainable one; the context overflow's is trainable.
      expect(samples.filter((s) => s.mask.some(Boolean))).toHaveLength(1);
    } finally {
      await server.close();
    }
  });
});

describe("rl.jsonl across --resume and merge", () => {
  it("a resumed run adds the new epochs' lines; merge keeps each shard's lines of the results it kept", async () => {
    const { handler } = tokenizingHandler(() => ({ content: "42" }));
    const server = await startFakeOpenAI(handler);
    try {
      const first = await runWith(server, ["a", "b", "c"], ["--rl-capture", "--epochs", "1"]);
      expect(first.exitCode).toBe(0);
      const dataset = join(first.dir, "tasks.jsonl");
      const resumed = await runCliInProcess(
        [
          "run",
          dataset,
          "--model",
          "m",
          "--base-url",
          server.baseURL,
          "--output-dir",
          join(first.dir, "runs"),
          "--run-name",
          "r",
          "--progress",
          "none",
          "--rl-capture",
          "--epochs",
          "2",
          "--resume",
          "--allow-config-change",
        ],
        { env: NO_SCHEDULER },
      );
      expect(resumed.exitCode).toBe(0);
      const keys = readJsonl(join(first.runDir, "rl.jsonl")).map((l) => `${l.task_id}#${l.epoch}`);
      expect(keys.sort()).toEqual(["a#0", "a#1", "b#0", "b#1", "c#0", "c#1"]);

      const shards = join(first.dir, "sharded");
      for (const i of [0, 1]) {
        const r = await runCliInProcess(
          [
            "run",
            dataset,
            "--model",
            "m",
            "--base-url",
            server.baseURL,
            "--output-dir",
            shards,
            "--run-name",
            "s",
            "--progress",
            "none",
            "--rl-capture",
            "--shard",
            `${i}/2`,
          ],
          { env: NO_SCHEDULER },
        );
        expect(r.exitCode).toBe(0);
      }
      const merged = await runCliInProcess(["merge", join(shards, "s")], { env: NO_SCHEDULER });
      expect(merged.exitCode).toBe(0);
      const rl = readJsonl(join(shards, "s", "rl.jsonl")).map((l) => RlLineSchema().parse(l));
      expect(rl.map((l) => l.task_id).sort()).toEqual(["a", "b", "c"]);
    } finally {
      await server.close();
    }
  });
});

describe("--rl-capture asks only the agent's endpoint", () => {
  it("the approver and the judge never request token ids", async () => {
    const { runEndpoints } = await import("../src/models/factory.js");
    const { resolveRunConfig } = await import("../src/config/run_config.js");
    const config = resolveRunConfig(
      { dataset: "x.jsonl", model: "m", base_url: "http://127.0.0.1:9/v1", approval: "smart", rl_capture: "strict" },
      undefined,
      {},
    );
    const eps = runEndpoints(config);
    expect(eps.agent.options.rlCapture).toBe(true);
    expect(eps.approver!.options.rlCapture).toBeUndefined();
    expect(eps.judge!.options.rlCapture).toBeUndefined();
  });
});
