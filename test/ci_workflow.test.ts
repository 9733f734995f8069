/**
 * The example GitHub Actions workflow, run end to end: each `run:` step of examples/github-actions-eval.yml is
 * executed in order by bash as the Actions runner would (`if:` conditions, `continue-on-error`, step outcomes,
 * $GITHUB_STEP_SUMMARY), with `npx hermes-batch` the built CLI and the model a local scripted server: a good
 * model on main makes the baseline, a deliberately regressed model fails the gate, an infrastructure failure
 * still gets its JUnit and Markdown written.
 */
import { execa } from "execa";
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import YAML from "yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLI, ROOT, cleanEnv, runCliInProcess, tempDir } from "./helpers/cli.js";
import { httpError, startFakeOpenAI, text, type FakeOpenAI } from "./helpers/fake_openai.js";

interface Step {
  id?: string;
  name?: string;
  uses?: string;
  run?: string;
  if?: string;
  env?: Record<string, string>;
  "continue-on-error"?: boolean;
}

interface StepResult {
  name: string;
  ran: boolean;
  outcome?: "success" | "failure";
  output?: string;
}

interface JobResult {
  succeeded: boolean;
  steps: StepResult[];
  summary: string;
}

const workflow = YAML.parse(readFileSync(join(ROOT, "examples", "github-actions-eval.yml"), "utf8")) as {
  jobs: { eval: { env: Record<string, string>; steps: Step[] } };
};

/** The subset of the Actions expression language the workflow uses; anything else fails the test. */
function evaluate(
  expr: string,
  ctx: { failed: boolean; outcomes: Record<string, string>; ref: string; workspace: string },
): boolean {
  return expr.split("&&").every((raw) => {
    const atom = raw.trim();
    if (atom === "always()") return true;
    if (atom === "success()") return !ctx.failed;
    if (atom === "failure()") return ctx.failed;
    let m = /^hashFiles\('([^']+)'\) (==|!=) ''$/.exec(atom);
    if (m) return existsSync(join(ctx.workspace, m[1]!)) === (m[2] === "!=");
    m = /^steps\.([\w-]+)\.outcome (==|!=) '(\w+)'$/.exec(atom);
    if (m) return (ctx.outcomes[m[1]!] === m[3]) === (m[2] === "==");
    m = /^github\.ref (==|!=) '([^']+)'$/.exec(atom);
    if (m) return (ctx.ref === m[2]) === (m[1] === "==");
    throw new Error(`the test's runner does not know the expression '${atom}'`);
  });
}

async function runJob(
  workspace: string,
  shims: string,
  opts: { ref: string; env: Record<string, string> },
): Promise<JobResult> {
  const job = workflow.jobs.eval;
  // A fresh checkout each time: only the cached baseline survives from one job to the next.
  for (const f of ["runs/current", "junit.xml", "comment.md", "compare.json"])
    rmSync(join(workspace, f), { recursive: true, force: true });
  const summaryFile = join(workspace, `step-summary-${Date.now()}.md`);
  writeFileSync(summaryFile, "");
  const ctx = { failed: false, outcomes: {} as Record<string, string>, ref: opts.ref, workspace };
  const steps: StepResult[] = [];
  for (const step of job.steps) {
    const name = step.name ?? step.uses ?? step.run!.slice(0, 40);
    if (!evaluate(step.if ?? "success()", ctx)) {
      steps.push({ name, ran: false });
      continue;
    }
    if (step.uses) {
      // checkout, setup-node, cache and artifact actions: the workspace is already laid out by the test.
      steps.push({ name, ran: true, outcome: "success" });
      continue;
    }
    const script = step
      .run!.replace(/\$\{\{\s*secrets\.\w+\s*\}\}/g, "")
      .replace(/\$\{\{\s*github\.run_id\s*\}\}/g, "1");
    const env = cleanEnv({
      ...job.env,
      ...opts.env,
      ...(step.env ?? {}),
      GITHUB_STEP_SUMMARY: summaryFile,
      GITHUB_REF: opts.ref,
      PATH: `${shims}:${process.env.PATH}`,
    });
    for (const [k, v] of Object.entries(env)) env[k] = String(v).replace(/\$\{\{\s*secrets\.\w+\s*\}\}/g, "");
    const r = await execa("bash", ["--noprofile", "--norc", "-eo", "pipefail", "-c", script], {
      cwd: workspace,
      env,
      extendEnv: false,
      reject: false,
      all: true,
      timeout: 120_000,
    });
    const outcome = r.exitCode === 0 ? "success" : "failure";
    if (step.id) ctx.outcomes[step.id] = outcome;
    if (outcome === "failure" && !step["continue-on-error"]) ctx.failed = true;
    steps.push({ name, ran: true, outcome, output: r.all });
  }
  return { succeeded: !ctx.failed, steps, summary: readFileSync(summaryFile, "utf8") };
}

const step = (job: JobResult, name: RegExp) => job.steps.find((s) => name.test(s.name))!;

const ROWS = Array.from({ length: 8 }, (_, i) => ({ id: `sum-${i}`, a: 10 + i, b: 3 * i }));

describe("examples/github-actions-eval.yml, run end to end", () => {
  let server: FakeOpenAI;
  let mode: "good" | "regressed" | "one-down" = "good";
  let workspace: string;
  let shims: string;

  beforeAll(async () => {
    server = await startFakeOpenAI((req) => {
      const prompt = String(req.body.messages.findLast((m: { role: string }) => m.role === "user").content);
      const row = ROWS.find((r) => prompt.includes(`${r.a} + ${r.b}`))!;
      const index = ROWS.indexOf(row);
      if (mode === "one-down" && index === 5) return httpError(400, "this model cannot serve this request");
      const wrong = mode === "regressed" && index % 2 === 0;
      return text(`The sum is ${wrong ? row.a + row.b + 1 : row.a + row.b}.`);
    });
    workspace = tempDir("hb-gha-");
    mkdirSync(join(workspace, "datasets"));
    const dataset = ROWS.map((r) =>
      JSON.stringify({
        id: r.id,
        prompt: `What is ${r.a} + ${r.b}? Answer with the number.`,
        toolsets: ["todo"],
        expected: { value: r.a + r.b, match: "number" },
      }),
    );
    writeFileSync(join(workspace, "datasets", "sums.jsonl"), dataset.join("\n") + "\n");
    shims = join(workspace, ".shims");
    mkdirSync(shims);
    writeFileSync(join(shims, "npx"), `#!/bin/sh\n[ "$1" = hermes-batch ] || exit 127\nshift\nexec node ${CLI} "$@"\n`);
    writeFileSync(join(shims, "npm"), "#!/bin/sh\nexit 0\n");
    chmodSync(join(shims, "npx"), 0o755);
    chmodSync(join(shims, "npm"), 0o755);
  });
  afterAll(async () => server?.close());

  const env = () => ({
    EVAL_MODEL: "candidate",
    EVAL_BASE_URL: server.baseURL,
    EVAL_DATASET: "datasets/sums.jsonl",
    OPENAI_API_KEY: "test-key",
  });

  it("main with a good model: no baseline yet, the run decides, and it becomes the baseline", async () => {
    mode = "good";
    const job = await runJob(workspace, shims, { ref: "refs/heads/main", env: env() });
    expect(step(job, /^Run the evaluation/).outcome, step(job, /^Run the evaluation/).output).toBe("success");
    expect(step(job, /^Compare/).ran).toBe(false);
    expect(job.succeeded).toBe(true);
    expect(step(job, /^Keep as baseline/).ran).toBe(true);
    expect(
      readFileSync(join(workspace, "runs", "baseline", "trajectories.jsonl"), "utf8")
        .trim()
        .split("\n"),
    ).toHaveLength(8);
  });

  it("a pull request with a deliberately regressed model fails the job on the gate, with JUnit and Markdown", async () => {
    mode = "regressed";
    const job = await runJob(workspace, shims, { ref: "refs/pull/7/merge", env: env() });
    const gate = step(job, /^Compare/);
    expect(gate.outcome, gate.output).toBe("failure");
    expect(gate.output).toContain("REGRESSION");
    expect(gate.output).toContain("gate: default gate");
    expect(gate.output).not.toContain("no regression");
    expect(job.succeeded).toBe(false);
    const junit = readFileSync(join(workspace, "junit.xml"), "utf8");
    expect(junit).toMatch(/<testsuite [^>]*tests="8" failures="4" errors="0" skipped="0"/);
    expect(job.summary).toMatch(/^## ❌ hermes-batch compare: REGRESSION/);
    expect(step(job, /^Keep as baseline/).ran).toBe(false);
  });

  it("an infrastructure failure fails the run step, yet the gate runs and writes its outputs (exit 3)", async () => {
    mode = "one-down";
    const job = await runJob(workspace, shims, { ref: "refs/pull/8/merge", env: env() });
    expect(step(job, /^Run the evaluation/).outcome).toBe("failure");
    const gate = step(job, /^Compare/);
    expect(gate.ran).toBe(true);
    expect(gate.outcome).toBe("failure");
    expect(gate.output).toContain("NOT COMPARABLE: 1 of 8 task(s) are unscored");
    expect(job.succeeded).toBe(false);
    const junit = readFileSync(join(workspace, "junit.xml"), "utf8");
    expect(junit).toMatch(/<testsuite [^>]*tests="8" failures="0" errors="1" skipped="0"/);
    expect(job.summary).toMatch(/^## ⚠️ hermes-batch compare: NOT COMPARABLE/);
  });

  it("a pull request with the good model again passes", async () => {
    mode = "good";
    const job = await runJob(workspace, shims, { ref: "refs/pull/9/merge", env: env() });
    expect(step(job, /^Compare/).outcome, step(job, /^Compare/).output).toBe("success");
    expect(job.succeeded).toBe(true);
    expect(job.summary).toMatch(/^## ✅ hermes-batch compare: no regression/);
  });

  it("run --baseline gates the same way in one step: default gate, --max-drop, and exit 3 over failures", async () => {
    const base = join(workspace, "runs", "baseline");
    const run = (name: string, extra: string[] = []) =>
      runCliInProcess([
        "run",
        join(workspace, "datasets", "sums.jsonl"),
        "--model",
        "candidate",
        "--base-url",
        server.baseURL,
        "--api-key",
        "k",
        "--output-dir",
        join(workspace, "runs"),
        "--run-name",
        name,
        "--progress",
        "none",
        "--baseline",
        base,
        ...extra,
      ]);
    mode = "regressed";
    const r = await run("one-step");
    expect(r.exitCode, r.stderr).toBe(1);
    expect(r.stdout).toContain("gate: default gate");
    expect(r.stdout).not.toContain("no regression");
    const within = await run("one-step-limit", ["--max-drop", "60"]);
    expect(within.exitCode, within.stderr).toBe(0);
    expect(within.stdout.trim().split("\n").at(-1)).toBe("−50.0 pp, within --max-drop 60");
    mode = "one-down";
    const down = await run("one-step-down");
    expect(down.exitCode).toBe(3);
    expect(down.stdout).toContain(
      "NOT COMPARABLE: 1 of 8 task(s) are unscored in a run or missing from the current run (1 model_error)",
    );
    const tolerated = await run("one-step-tolerated", ["--max-unscored", "1"]);
    expect(tolerated.exitCode, tolerated.stdout).toBe(0);
  });
});
