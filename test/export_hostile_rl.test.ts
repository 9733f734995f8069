/**
 * RL exports (`--rl-capture`, then `export --format rl|prime|…`) of a run whose results changed after they were
 * captured: results the run set aside (superseded.jsonl) must not reach a trainer through rl.jsonl, whose lines
 * stay where they were written.
 */
import { cpSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NO_SCHEDULER, runCliInProcess, tempDir } from "./helpers/cli.js";
import { startFakeOpenAI, type FakeOpenAI, type RecordedRequest } from "./helpers/fake_openai.js";
import { readJsonl } from "./helpers/jsonl.js";
import { tokenizingHandler } from "./helpers/token_server.js";

const taskOf = (req: RecordedRequest) =>
  /task:(\S+)/.exec(req.body.messages.find((m: { role: string }) => m.role === "user").content)?.[1];

describe("rl.jsonl lines of results the run set aside", () => {
  let server: FakeOpenAI;
  let dir: string;
  let runDir: string;
  let answers = 0;

  const run = (tasks: string[], extra: string[]) => {
    writeFileSync(
      join(dir, "tasks.jsonl"),
      tasks
        .map((id) =>
          JSON.stringify({
            id,
            prompt: `task:${id} Answer with the number.`,
            expected: { value: "42", match: "exact" },
          }),
        )
        .join("\n") + "\n",
    );
    return runCliInProcess(
      [
        "run",
        join(dir, "tasks.jsonl"),
        ...["--model", "m", "--base-url", server.baseURL, "--output-dir", join(dir, "runs"), "--run-name", "r"],
        ...["--progress", "none", "--concurrency", "1", "--max-retries", "0", "--toolsets", "terminal"],
        ...["--rl-capture", "--rl-tokenizer", "cl100k_base", ...extra],
      ],
      { env: NO_SCHEDULER },
    );
  };

  beforeAll(async () => {
    const { handler } = tokenizingHandler((req) => {
      if (taskOf(req) === undefined) return { content: "OK" };
      // Rewards that vary inside every group: 42, 41, 42, 41, …
      return { content: answers++ % 2 === 0 ? "42" : "41" };
    });
    server = await startFakeOpenAI(handler);
    dir = tempDir("hb-rl-aside-");
    runDir = join(dir, "runs", "r");
    const first = await run(["keep", "gone"], ["--epochs", "2"]);
    expect(first.exitCode, first.stderr).toBe(0);
    // The dataset loses a task and the run an epoch: the run moves those results to superseded.jsonl.
    const second = await run(["keep"], ["--resume", "--epochs", "1", "--allow-config-change"]);
    expect(second.exitCode, second.stderr).toBe(0);
    expect(readJsonl(join(runDir, "superseded.jsonl"), { mustExist: true })).toHaveLength(3);
    expect(readJsonl(join(runDir, "trajectories.jsonl"), { mustExist: true })).toHaveLength(1);
  }, 60_000);
  afterAll(async () => {
    await server?.close();
  });

  for (const format of ["rl", "prime", "skyrl-steps"]) {
    it(`--format ${format} holds only the results still in the run, and says what it left out`, async () => {
      const out = join(dir, `out.${format}`);
      const r = await runCliInProcess(["export", runDir, "--format", format, "--out", out]);
      expect(r.exitCode, r.stderr).toBe(0);
      expect(r.stderr).toMatch(/3 without a result in the run/);
      if (format === "rl") {
        const lines = readJsonl(out, { mustExist: true });
        expect(lines.map((l) => [l.task_id, l.epoch])).toEqual([["keep", 0]]);
        // Its group is itself alone now, not the set-aside epoch too.
        expect(lines[0].group.size).toBe(1);
      } else if (format === "prime") {
        expect(readJsonl(out, { mustExist: true })).toHaveLength(1);
      } else {
        const doc = readJsonl(out, { mustExist: true })[0];
        expect(doc.trajectory_ids).toEqual([{ instance_id: "keep", repetition_id: 0 }]);
      }
    });
  }
});

describe("--format verifiers of a model answer cut inside an emoji", () => {
  it("writes every message string as valid UTF-16 (U+FFFD for the lone half)", async () => {
    const { handler } = tokenizingHandler((req) =>
      taskOf(req) === undefined ? { content: "OK" } : { content: "forty-two \uD83D" },
    );
    const server = await startFakeOpenAI(handler);
    try {
      const dir = tempDir("hb-rl-surrogate-");
      writeFileSync(
        join(dir, "tasks.jsonl"),
        `${JSON.stringify({ id: "s", prompt: "task:s Answer.", expected: "42" })}\n`,
      );
      const r = await runCliInProcess(
        [
          "run",
          join(dir, "tasks.jsonl"),
          ...["--model", "m", "--base-url", server.baseURL, "--output-dir", join(dir, "runs"), "--run-name", "r"],
          ...["--progress", "none", "--max-retries", "0", "--toolsets", "terminal"],
          ...["--rl-capture", "--rl-tokenizer", "cl100k_base"],
        ],
        { env: NO_SCHEDULER },
      );
      expect(r.exitCode, r.stderr).toBe(0);
      const out = join(dir, "v.json");
      const e = await runCliInProcess(["export", join(dir, "runs", "r"), "--format", "verifiers", "--out", out]);
      expect(e.exitCode, e.stderr).toBe(0);
      const text = readFileSync(out, "utf8");
      const doc = JSON.parse(text);
      const answer = doc.outputs[0].completion.at(-1).content;
      expect(answer).toBe("forty-two \uFFFD");
      expect(text).not.toMatch(/\\ud83d/i);
    } finally {
      await server.close();
    }
  });
});

describe("an rl.jsonl line whose per-token arrays disagree (hand-edited, torn, another writer)", () => {
  let server: FakeOpenAI;
  let runDir: string;
  beforeAll(async () => {
    const { handler } = tokenizingHandler((req) => (taskOf(req) === undefined ? { content: "OK" } : { content: "42" }));
    server = await startFakeOpenAI(handler);
    const dir = tempDir("hb-rl-misaligned-");
    writeFileSync(
      join(dir, "tasks.jsonl"),
      ["a", "b"].map((id) => JSON.stringify({ id, prompt: `task:${id} Answer.`, expected: "42" })).join("\n") + "\n",
    );
    const r = await runCliInProcess(
      [
        "run",
        join(dir, "tasks.jsonl"),
        ...["--model", "m", "--base-url", server.baseURL, "--output-dir", join(dir, "runs"), "--run-name", "r"],
        ...["--progress", "none", "--concurrency", "1", "--max-retries", "0", "--toolsets", "terminal"],
        ...["--rl-capture", "--rl-tokenizer", "cl100k_base"],
      ],
      { env: NO_SCHEDULER },
    );
    expect(r.exitCode, r.stderr).toBe(0);
    runDir = join(dir, "runs", "r");
    const lines = readJsonl(join(runDir, "rl.jsonl"), { mustExist: true });
    expect(lines.map((l) => l.train)).toEqual(["full", "full"]);
    lines[1].branches[0].logprobs.pop(); // one logprob short of its tokens
    writeFileSync(join(runDir, "rl.jsonl"), lines.map((l) => `${JSON.stringify(l)}\n`).join(""));
  }, 60_000);
  afterAll(async () => {
    await server?.close();
  });

  it("--format skyrl-steps (rows from the turns): a turn one logprob short is reported too", async () => {
    const copy = join(tempDir("hb-rl-turns-"), "r");
    cpSync(runDir, copy, { recursive: true });
    const lines = readJsonl(join(copy, "rl.jsonl"), { mustExist: true });
    lines[0].turns[0].logprobs.pop();
    writeFileSync(join(copy, "rl.jsonl"), lines.map((l) => `${JSON.stringify(l)}\n`).join(""));
    const r = await runCliInProcess(["export", copy, "--format", "skyrl-steps", "--out", join(copy, "s.json")]);
    expect(r.stderr).toMatch(/rl\.jsonl:1: skipped bad line: turns\.0: \d+ logprobs for \d+ completion ids/);
    expect(r.stderr).toMatch(/rl\.jsonl:2: skipped bad line: branches\.0/);
    expect(r.exitCode).toBe(1); // nothing left to write
  });

  it("--format skyrl-steps: a line with branches but a turn without ids is reported, not an internal error", async () => {
    const copy = join(tempDir("hb-rl-noids-"), "r");
    cpSync(runDir, copy, { recursive: true });
    const lines = readJsonl(join(copy, "rl.jsonl"), { mustExist: true });
    lines[0].turns[0].completion_token_ids = null;
    writeFileSync(join(copy, "rl.jsonl"), lines.map((l) => `${JSON.stringify(l)}\n`).join(""));
    const r = await runCliInProcess(["export", copy, "--format", "skyrl-steps", "--out", join(copy, "s.json")]);
    expect(r.stderr).not.toMatch(/internal error/);
    expect(r.stderr).toMatch(/rl\.jsonl:1: skipped bad line: turns\.0: no token ids, though the line has branches/);
  });

  it("--format prime: a branch that lists a turn twice is reported, not an internal error", async () => {
    const copy = join(tempDir("hb-rl-twice-"), "r");
    cpSync(runDir, copy, { recursive: true });
    const lines = readJsonl(join(copy, "rl.jsonl"), { mustExist: true });
    lines[0].branches[0].turns = [0, 0];
    writeFileSync(join(copy, "rl.jsonl"), lines.map((l) => `${JSON.stringify(l)}\n`).join(""));
    const r = await runCliInProcess(["export", copy, "--format", "prime", "--out", join(copy, "p.jsonl")]);
    expect(r.stderr).not.toMatch(/internal error/);
    expect(r.stderr).toMatch(/rl\.jsonl:1: skipped bad line: branches\.0: turns \[0,0\] not in increasing order/);
  });

  for (const format of ["rl", "prime", "skyrl"]) {
    it(`--format ${format}: the line is reported as file:line and left out, the others written aligned`, async () => {
      const out = join(runDir, `out.${format}`);
      const r = await runCliInProcess(["export", runDir, "--format", format, "--out", out]);
      expect(r.exitCode, r.stderr).toBe(0);
      expect(r.stderr).not.toMatch(/internal error/);
      expect(r.stderr).toMatch(/rl\.jsonl:2: skipped bad line: branches\.0: \d+ logprobs for \d+ token ids/);
      const written = readJsonl(out, { mustExist: true });
      if (format === "rl") {
        expect(written.map((l) => l.task_id)).toEqual(["a"]);
        for (const b of written[0].branches) expect(b.logprobs).toHaveLength(b.token_ids.length);
      } else if (format === "prime") expect(written).toHaveLength(1);
      else expect(written[0].trajectory_ids).toEqual([{ instance_id: "a", repetition_id: 0 }]);
    });
  }
});

describe("ATIF metrics of an engine whose logprobs do not match its completion ids", () => {
  it("atif.jsonl and --format atif carry no logprobs misaligned with completion_token_ids", async () => {
    const { handler } = tokenizingHandler(
      (req) => (taskOf(req) === undefined ? { content: "OK" } : { content: "42" }),
      {
        dropLogprob: true,
      },
    );
    const server = await startFakeOpenAI(handler);
    try {
      const dir = tempDir("hb-atif-logprobs-");
      writeFileSync(
        join(dir, "tasks.jsonl"),
        `${JSON.stringify({ id: "a", prompt: "task:a Answer.", expected: "42" })}\n`,
      );
      const r = await runCliInProcess(
        [
          "run",
          join(dir, "tasks.jsonl"),
          ...["--model", "m", "--base-url", server.baseURL, "--output-dir", join(dir, "runs"), "--run-name", "r"],
          ...["--progress", "none", "--max-retries", "0", "--toolsets", "terminal"],
          ...["--rl-capture", "best-effort", "--rl-tokenizer", "cl100k_base"],
        ],
        { env: NO_SCHEDULER },
      );
      expect(r.exitCode, r.stderr).toBe(0);
      const runDir = join(dir, "runs", "r");
      const e = await runCliInProcess(["export", runDir, "--format", "atif", "--out", join(dir, "a.jsonl")]);
      expect(e.exitCode, e.stderr).toBe(0);
      for (const file of [join(runDir, "atif.jsonl"), join(dir, "a.jsonl")]) {
        const steps = readJsonl(file, { mustExist: true }).flatMap((d) => d.steps);
        const withIds = steps.filter((s) => s.metrics?.completion_token_ids);
        expect(withIds.length, file).toBeGreaterThan(0);
        for (const s of withIds) {
          if (s.metrics.logprobs) expect(s.metrics.logprobs).toHaveLength(s.metrics.completion_token_ids.length);
          else expect(s.metrics.extra.logprobs_left_out).toMatch(/^\d+ logprobs for \d+ completion ids$/);
        }
      }
    } finally {
      await server.close();
    }
  });
});

describe("--format verifiers over a trajectories.jsonl with a hand-edited line", () => {
  it("the line is reported as file:line and its rollout left out, not an internal error", async () => {
    const { handler } = tokenizingHandler((req) => (taskOf(req) === undefined ? { content: "OK" } : { content: "42" }));
    const server = await startFakeOpenAI(handler);
    try {
      const dir = tempDir("hb-vf-bad-");
      writeFileSync(
        join(dir, "tasks.jsonl"),
        ["a", "b"].map((id) => JSON.stringify({ id, prompt: `task:${id} Answer.`, expected: "42" })).join("\n") + "\n",
      );
      const r = await runCliInProcess(
        [
          "run",
          join(dir, "tasks.jsonl"),
          ...["--model", "m", "--base-url", server.baseURL, "--output-dir", join(dir, "runs"), "--run-name", "r"],
          ...["--progress", "none", "--concurrency", "1", "--max-retries", "0", "--toolsets", "terminal"],
          ...["--rl-capture", "--rl-tokenizer", "cl100k_base"],
        ],
        { env: NO_SCHEDULER },
      );
      expect(r.exitCode, r.stderr).toBe(0);
      const runDir = join(dir, "runs", "r");
      const lines = readJsonl(join(runDir, "trajectories.jsonl"), { mustExist: true });
      lines[0].messages.at(-1).content = 5;
      writeFileSync(join(runDir, "trajectories.jsonl"), lines.map((l) => `${JSON.stringify(l)}\n`).join(""));
      const out = join(dir, "v.json");
      const e = await runCliInProcess(["export", runDir, "--format", "verifiers", "--out", out]);
      expect(e.stderr).not.toMatch(/internal error/);
      expect(e.exitCode, e.stderr).toBe(0);
      expect(e.stderr).toMatch(/trajectories\.jsonl:1: skipped bad line: messages/);
      const doc = JSON.parse(readFileSync(out, "utf8"));
      expect(doc.outputs.map((o: { info: { task_id: string } }) => o.info.task_id)).toEqual([lines[1].task_id]);
    } finally {
      await server.close();
    }
  });
});
