/**
 * The option table of `hermes-batch run` (src/config/run_options.ts): every flag reaches its config key, every
 * config key is accepted in a file, `--help` lists exactly the flags that parse, bad values are one line naming
 * the flag (or the file and line).
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import YAML from "yaml";
import { describe, expect, it } from "vitest";
import { command, configFromArgv, flagsToConfig } from "../src/commands/run.js";
import { resolveRunConfig } from "../src/config/run_config.js";
import { runArgOptions } from "../src/config/run_flags.js";
import { RUN_OPTIONS, RunConfigSchema, flagOf, type OptionDef } from "../src/config/run_options.js";
import { UserError } from "../src/core/errors.js";
import { tempDir } from "./helpers/cli.js";

const OPTIONS = RUN_OPTIONS as readonly OptionDef[];

/** A valid, non-default value for each key, as a flag's text and as the config value it must become. */
const SAMPLES: Record<string, [string | true, unknown]> = {
  model: ["m1", "m1"],
  base_url: ["http://127.0.0.1:9/v1", "http://127.0.0.1:9/v1"],
  api_key: ["k-1", "k-1"],
  max_tokens: ["77", 77],
  temperature: ["0.5", 0.5],
  reasoning_effort: ["high", "high"],
  stream: [true, true],
  preserve_reasoning: [true, true],
  max_connections: ["3", 3],
  request_timeout: ["2.5", 2.5],
  max_retries: ["0", 0],
  stop_after_failures: ["3", 3],
  no_preflight: [true, true],
  run_name: ["r.1", "r.1"],
  output_dir: ["out", "out"],
  distribution: ["other", "other"],
  distribution_file: ["d.yaml", "d.yaml"],
  toolsets: ["terminal, file", ["terminal", "file"]],
  seed: ["-4", -4],
  max_samples: ["5", 5],
  rl_capture: ["best-effort", "best-effort"],
  rl_tokenizer: ["Qwen/Qwen3-8B", "Qwen/Qwen3-8B"],
  offset: ["2", 2],
  max_turns: ["4", 4],
  task_timeout: ["60", 60],
  system_prompt: ["S", "S"],
  ephemeral_system_prompt: ["E", "E"],
  prefill_messages_file: ["p.json", "p.json"],
  mcp_config: ["mcp.json", "mcp.json"],
  mcp_approval: ["all", "all"],
  max_consecutive_tool_errors: ["2", 2],
  require_reasoning: [true, true],
  on_bad_row: ["skip", "skip"],
  workers: ["3", 3],
  concurrency: ["5", 5],
  env: ["docker", "docker"],
  image: ["img:1", "img:1"],
  network: ["bridge", "bridge"],
  memory_mb: ["512", 512],
  cpus: ["1.5", 1.5],
  pids_limit: ["64", 64],
  read_only_root: [true, true],
  pull: [true, true],
  max_sandboxes: ["2", 2],
  prewarm: ["1", 1],
  allow_network: ["host,bridge", ["host", "bridge"]],
  keep_workspaces: [true, true],
  pass_env: ["DB_HOST,LC_X", ["DB_HOST", "LC_X"]],
  sandbox_ro: ["/opt/a,/srv/b", ["/opt/a", "/srv/b"]],
  require_limits: [true, true],
  disk: ["512m", "512m"],
  verify_timeout: ["9", 9],
  harbor: ["tasks/", "tasks/"],
  allow_build: [true, true],
  harbor_network: ["agent-none", "agent-none"],
  timeout_multiplier: ["2.5", 2.5],
  harbor_pass_threshold: ["0.5", 0.5],
  verify_isolated: [true, true],
  approval: ["deny", "deny"],
  approval_model: ["am", "am"],
  approval_base_url: ["http://127.0.0.1:8/v1", "http://127.0.0.1:8/v1"],
  approval_api_key: ["ak", "ak"],
  judge_model: ["jm", "jm"],
  judge_base_url: ["http://127.0.0.1:7/v1", "http://127.0.0.1:7/v1"],
  judge_api_key: ["jk", "jk"],
  group_by: ["metadata.level,metadata.topic", ["metadata.level", "metadata.topic"]],
  epochs: ["3", 3],
  fail_under: ["80", 80],
  baseline: ["runs/old", "runs/old"],
  max_drop: ["2.5", 2.5],
  significant_only: [true, true],
  allow_different_dataset: [true, true],
  max_unscored: ["10%", "10%"],
  price_input: ["3", 3],
  price_output: ["15", 15],
  resume: [true, true],
  retry_failed: [true, true],
  retry_internal: [true, true],
  retry_unscored: [true, true],
  allow_config_change: [true, true],
  only: ["a,b", ["a", "b"]],
  dry_run: [true, true],
  progress: ["log", "log"],
  headers: ["X-Route: a, b", { "X-Route": "a, b" }],
  approval_headers: ["X-Team: safety", { "X-Team": "safety" }],
  judge_headers: ["X-Team: eval", { "X-Team": "eval" }],
  approval_timeout: ["12.5", 12.5],
  providers_allowed: ["p1,p2", ["p1", "p2"]],
  providers_ignored: ["p3", ["p3"]],
  providers_order: ["p2,p1", ["p2", "p1"]],
  provider_sort: ["price", "price"],
  batch_size: ["4", 4],
};

const FILE_ONLY: Record<string, unknown> = {
  extra_body: { top_k: 3 },
  tool_concurrency: 2,
  plugins: ["hb-plugin"],
  dataset: "d.jsonl",
};

function configError(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(UserError);
    return (err as Error).message;
  }
  throw new Error("no error");
}

describe("run options table", () => {
  it("every flag reaches its config key with the value of its kind", () => {
    const flagged = OPTIONS.filter((o) => flagOf(o.key));
    expect(Object.keys(SAMPLES).sort()).toEqual(flagged.map((o) => o.key).sort());
    // --harbor PATH stands in for the DATASET argument (both at once is refused).
    const argv: string[] = [];
    for (const [key, [text]] of Object.entries(SAMPLES))
      argv.push(...(text === true ? [flagOf(key)!] : [`${flagOf(key)!}=${text}`]));
    const { flags } = flagsToConfig(argv);
    const config = resolveRunConfig(flags);
    for (const [key, [, value]] of Object.entries(SAMPLES))
      expect(config[key as keyof typeof config], key).toEqual(value);
    expect(config.dataset).toBe("tasks/");
  });

  it("a list flag may be repeated as well as comma-separated", () => {
    const { flags } = flagsToConfig(["d.jsonl", "--group-by", "metadata.a", "--group-by", "metadata.b,metadata.c"]);
    expect(resolveRunConfig(flags).group_by).toEqual(["metadata.a", "metadata.b", "metadata.c"]);
    expect(configError(() => resolveRunConfig(flagsToConfig(["d.jsonl", "--group-by", "level"]).flags))).toContain(
      "must be metadata.KEY",
    );
  });

  it("every config key, with or without a flag, is accepted in a config file", () => {
    const file = join(tempDir(), "run.yaml");
    const values = { ...Object.fromEntries(Object.entries(SAMPLES).map(([k, [, v]]) => [k, v])), ...FILE_ONLY };
    expect(Object.keys(values).sort()).toEqual(Object.keys(RunConfigSchema.shape).sort());
    writeFileSync(file, YAML.stringify(values));
    expect(resolveRunConfig({}, file)).toMatchObject(values);
  });

  it("--help lists every flag and config-file key, and names no flag that does not parse", () => {
    const accepted = new Set(Object.keys(runArgOptions()).map((f) => `--${f}`));
    const mentioned = new Set(command.help.match(/--[a-z][a-z-]*/g));
    for (const flag of accepted) expect(command.help, flag).toMatch(new RegExp(`^  ${flag}\\b`, "m"));
    for (const flag of mentioned)
      expect(accepted.has(flag) || flag === "--help", `${flag} is in --help but does not parse`).toBe(true);
    for (const key of Object.keys(FILE_ONLY).filter((k) => k !== "dataset"))
      expect(command.help).toMatch(new RegExp(`^  ${key}\\b`, "m"));
  });

  it("--help shows each default the schema applies", () => {
    const defaults = RunConfigSchema.parse({ dataset: "d" });
    expect(command.help).toMatch(new RegExp(`--max-turns T .*\\(default: ${defaults.max_turns}\\)`));
    expect(command.help).toMatch(new RegExp(`--request-timeout SEC .*\\(default: ${defaults.request_timeout}\\)`));
    expect(command.help).toMatch(/--env local\|docker\|singularity\|host\n\s+.*\(default: local\)/);
    expect(command.help).toMatch(/tool_concurrency .*\(default: 8\)/);
  });

  it("a bad value is one line naming the flag", () => {
    const run = (...argv: string[]) => configError(() => resolveRunConfig(flagsToConfig(["d.jsonl", ...argv]).flags));
    expect(run("--workers", "0")).toBe("--workers must be at least 1, got 0");
    expect(run("--seed", "x")).toBe("--seed must be a whole number, got 'x'");
    expect(run("--task-timeout", "0")).toBe("--task-timeout must be greater than 0, got 0");
    expect(run("--temperature", "abc")).toBe("--temperature must be a number, got 'abc'");
    // Decimal points only: Number() also reads hex, binary, octal and exponents, and a CI gate must not move on a typo.
    for (const odd of ["0x10", "0b11", "0o7", "1e1", "1_0"])
      expect(run("--max-drop", odd)).toBe(`--max-drop must be a number, got '${odd}'`);
    expect(resolveRunConfig(flagsToConfig(["d.jsonl", "--max-drop", "2.5"]).flags).max_drop).toBe(2.5);
    expect(resolveRunConfig(flagsToConfig(["d.jsonl", "--temperature", ".7"]).flags).temperature).toBe(0.7);
    expect(run("--temperature", "3")).toBe("--temperature must be at most 2, got 3");
    expect(run("--env", "podman")).toBe("--env must be one of local|docker|singularity|host, got 'podman'");
    expect(run("--base-url", "nope")).toBe("--base-url must be a URL, got 'nope'");
    expect(run("--run-name", "a b")).toBe("--run-name use letters, digits, '.', '_' and '-' only, got 'a b'");
    expect(run("--max-turns")).toMatch(/^Option '--max-turns <value>' argument missing \(see --help\)$/);
    expect(run("--no-such-flag")).toMatch(/^Unknown option '--no-such-flag' \(see --help\)$/);
    // A negative number is the flag's value, checked by the option itself; other dash values stay ambiguous.
    expect(resolveRunConfig(flagsToConfig(["d.jsonl", "--seed", "-4"]).flags).seed).toBe(-4);
    expect(run("--task-timeout", "-3")).toBe("--task-timeout must be greater than 0, got -3");
    expect(run("--workers", "-2")).toBe("--workers must be at least 1, got -2");
    expect(run("--run-name", "-x")).toBe(
      "Option '--run-name' argument is ambiguous: write a value that starts with '-' as --run-name=-… (see --help)",
    );
    expect(resolveRunConfig(flagsToConfig(["d.jsonl", "--seed=-4"]).flags).seed).toBe(-4);
    for (const msg of [run("--workers", "0"), run("--no-such-flag")]) expect(msg).not.toContain("\n");
  });

  it("a bad value in the file names the file, the line and the key", () => {
    const file = join(tempDir(), "run.yaml");
    writeFileSync(file, "dataset: d.jsonl\n\nworkers: none\ntool_concurrency: 0\nmax_turn: 3\n");
    const msg = configError(() => resolveRunConfig({}, file));
    expect(msg).toContain(`${file}:3: 'workers' must be a number, got 'none'`);
    expect(msg).toContain(`${file}:4: 'tool_concurrency' must be at least 1, got 0`);
    expect(msg).toContain(`${file}:5: unknown key(s) 'max_turn'`);
    expect(msg).not.toContain("\n");
  });
});

describe("run settings that contradict each other or would do nothing", () => {
  const refuse = (argv: string[]) => configError(() => configFromArgv(["d.jsonl", "--model", "scripted", ...argv]));
  it("each is one line naming the flags, exit 2", () => {
    expect(refuse(["--toolsets", ""])).toMatch(/^--toolsets is empty: the run would offer the model no tool/);
    expect(refuse(["--toolsets", "terminal", "--distribution", "default"])).toContain(
      "--toolsets and --distribution both given",
    );
    expect(refuse(["--retry-failed", "--only", "a"])).toContain("does not combine with --only");
    expect(refuse(["--workers", "10000"])).toMatch(/^--workers 10000 is more than 4 per core/);
    expect(refuse(["--concurrency", "100000"])).toContain("--concurrency 100000 is more than 4096");
    expect(refuse(["--image", "x", "--prewarm", "2"])).toBe(
      "--prewarm, --image apply to container environments (--env docker|singularity), not --env local",
    );
    expect(refuse(["--task-timeout", "3000000"])).toContain("--task-timeout must be at most 2147483");
    expect(configFromArgv(["d.jsonl", "--model", "scripted", "--toolsets", "terminal"]).toolsets).toEqual(["terminal"]);
  });
});

describe("--rl-capture without a value", () => {
  it("means strict, and does not take the dataset as its value", async () => {
    const { withOptionalValue } = await import("../src/config/run_flags.js");
    const modes = ["strict", "best-effort"];
    expect(withOptionalValue(["--rl-capture", "data.jsonl"], "--rl-capture", modes, "strict")).toEqual([
      "--rl-capture",
      "strict",
      "data.jsonl",
    ]);
    expect(withOptionalValue(["data.jsonl", "--rl-capture"], "--rl-capture", modes, "strict")).toEqual([
      "data.jsonl",
      "--rl-capture",
      "strict",
    ]);
    expect(withOptionalValue(["--rl-capture", "best-effort", "d"], "--rl-capture", modes, "strict")).toEqual([
      "--rl-capture",
      "best-effort",
      "d",
    ]);
    expect(withOptionalValue(["--", "--rl-capture"], "--rl-capture", modes, "strict")).toEqual(["--", "--rl-capture"]);
  });
});
