/** `hermes-batch run DATASET`: the main job. */
import { resolveRunConfig, type RunConfig } from "../config/run_config.js";
import { UserError } from "../core/errors.js";
import { parseCommandArgs, parseIntFlag, parseNumberFlag, splitList } from "./args.js";
import type { Command } from "./types.js";

const help = `Usage: hermes-batch run DATASET.jsonl [options]

Runs an agent loop for every row of a JSONL dataset ({"prompt": …, "id"?, "image"?, "cwd"?, "toolsets"?,
"verify"?, "metadata"?}), each in its own environment, and writes <output-dir>/<run-name>/:
trajectories.jsonl, failed.jsonl, dropped.jsonl, statistics.json, summary.csv, run.yaml, checkpoint.json.

Model
  --model M                 model name at the endpoint; "scripted" is a built-in DEMO model that needs no
                            network or key (scripted:<ms> adds a simulated latency per call)
  --base-url URL            OpenAI-compatible endpoint (default https://openrouter.ai/api/v1)
  --api-key K               default: $OPENROUTER_API_KEY for OpenRouter, else $OPENAI_API_KEY (never written)
  --max-tokens N  --temperature T  --reasoning-effort none|minimal|low|medium|high|xhigh
  --stream                  use streaming responses
  --max-connections N       requests in flight to the endpoint (default: --concurrency), split between the
                            workers (each gets N/workers, rounded up); each worker halves its share on 429
  --request-timeout SEC     per model request (default 600)   --max-retries N (default 6)

Tasks
  --config FILE             YAML run file with any of these options in snake_case; flags win
  --run-name NAME           default: the dataset's file name without extension
  --output-dir DIR          default: runs
  --distribution D          toolset distribution (default "default"; see: hermes-batch distributions)
  --distribution-file F     extra distributions from YAML
  --toolsets a,b            fixed toolsets instead of a distribution
  --seed S                  seed of the toolset draws (default 0); same seed → same draws
  --max-samples N  --offset N
  --max-turns T             model calls per task (default 10)
  --task-timeout SEC        wall clock per task (default 1800)
  --system-prompt TEXT      saved in the trajectory
  --ephemeral-system-prompt TEXT   used in the run, never saved
  --prefill-messages-file F JSON array of {role, content} sent after the system prompt, never saved
  --max-consecutive-tool-errors N  malformed tool-call turns in a row before a task ends as partial (default 3)
  --require-reasoning       drop trajectories without any reasoning (counted in statistics)
  --on-bad-row fail|skip    default fail: the whole file is checked before anything runs

Parallelism
  --workers W               worker threads (default: the number of cores)
  --concurrency C           agent loops in flight across all workers (default 32)

Environments
  --env local|docker|singularity   where terminal and file tools run (default local)
  --image IMAGE             default image (a row's "image" wins)
  --network NAME            container network (default none)
  --memory-mb N  --cpus N  --pids-limit N  --read-only-root  --pull
  --max-sandboxes N         live containers, split between the workers (N/workers each, rounded up)
  --prewarm N               keep N containers of the default image started ahead of tasks (docker; split
                            between the workers, counted in --max-sandboxes; default 0 = off)
  --keep-workspaces         keep local task folders under <run>/workspaces/
  --verify-timeout SEC      for a row's "verify" command (default 300)

Dangerous commands
  --approval smart|deny|allow|interactive   default smart: an auxiliary model approves or denies, fail-closed
  --approval-model M  --approval-base-url URL  --approval-api-key K

Resuming and reruns
  --resume                  continue a run: tasks already in trajectories.jsonl are skipped, failed ones rerun
                            (but not internal_error ones: those are bugs of hermes-batch, see --retry-internal)
  --retry-failed            rerun only the tasks that failed (model, environment, timeout, cancelled)
  --retry-internal          rerun the tasks that ended in internal_error too (alone: only those)
  --only ID,ID              rerun these tasks (earlier results move to superseded.jsonl)
  --dry-run                 validate the config and dataset, print the plan, run nothing

Sharding (see docs/sharding.md)
  --shard i/N               run shard i (0-based) of N into <output-dir>/<run-name>/shards/<i>-of-<N>/; default:
                            detected from a Slurm job array or a Kubernetes Indexed Job; "none" turns that off
  --shard-count N           the shard count when the scheduler does not give it (Kubernetes), also
                            $HERMES_BATCH_SHARD_COUNT; then merge with: hermes-batch merge <output-dir>/<run-name>

Output
  --progress auto|bar|log|none     default auto: a bar on a terminal, a line per 5 % elsewhere

Exit codes: 0 all done, 1 some tasks failed, 2 bad input or config, 130 interrupted.
Ctrl-C once finishes the tasks in flight; twice aborts them. Then resume with --resume.
`;

const options = {
  config: { type: "string" },
  "run-name": { type: "string" },
  "output-dir": { type: "string" },
  model: { type: "string" },
  "base-url": { type: "string" },
  "api-key": { type: "string" },
  distribution: { type: "string" },
  "distribution-file": { type: "string" },
  toolsets: { type: "string" },
  seed: { type: "string" },
  workers: { type: "string" },
  concurrency: { type: "string" },
  "max-connections": { type: "string" },
  "max-turns": { type: "string" },
  "task-timeout": { type: "string" },
  "request-timeout": { type: "string" },
  "max-retries": { type: "string" },
  "max-samples": { type: "string" },
  offset: { type: "string" },
  resume: { type: "boolean" },
  "retry-failed": { type: "boolean" },
  "retry-internal": { type: "boolean" },
  only: { type: "string" },
  "dry-run": { type: "boolean" },
  "on-bad-row": { type: "string" },
  env: { type: "string" },
  image: { type: "string" },
  network: { type: "string" },
  "memory-mb": { type: "string" },
  cpus: { type: "string" },
  "pids-limit": { type: "string" },
  "read-only-root": { type: "boolean" },
  pull: { type: "boolean" },
  "max-sandboxes": { type: "string" },
  prewarm: { type: "string" },
  "max-tokens": { type: "string" },
  temperature: { type: "string" },
  "reasoning-effort": { type: "string" },
  stream: { type: "boolean" },
  "system-prompt": { type: "string" },
  "ephemeral-system-prompt": { type: "string" },
  "prefill-messages-file": { type: "string" },
  "max-consecutive-tool-errors": { type: "string" },
  "require-reasoning": { type: "boolean" },
  approval: { type: "string" },
  "approval-model": { type: "string" },
  "approval-base-url": { type: "string" },
  "approval-api-key": { type: "string" },
  "verify-timeout": { type: "string" },
  "keep-workspaces": { type: "boolean" },
  progress: { type: "string" },
  shard: { type: "string" },
  "shard-count": { type: "string" },
} as const;

export function flagsToConfig(argv: string[]): { flags: Record<string, unknown>; configPath?: string; shard?: string; shardCount?: string } {
  const { values: v, positionals } = parseCommandArgs(argv, options);
  if (positionals.length > 1) throw new UserError(`one dataset at a time, got ${positionals.length}: ${positionals.join(" ")}`);
  const flags: Record<string, unknown> = {
    dataset: positionals[0],
    run_name: v["run-name"],
    output_dir: v["output-dir"],
    model: v.model,
    base_url: v["base-url"],
    api_key: v["api-key"],
    distribution: v.distribution,
    distribution_file: v["distribution-file"],
    toolsets: splitList(v.toolsets),
    seed: parseIntFlag(v.seed, "--seed", Number.MIN_SAFE_INTEGER),
    workers: parseIntFlag(v.workers, "--workers", 1),
    concurrency: parseIntFlag(v.concurrency, "--concurrency", 1),
    max_connections: parseIntFlag(v["max-connections"], "--max-connections", 1),
    max_turns: parseIntFlag(v["max-turns"], "--max-turns", 1),
    task_timeout: parseNumberFlag(v["task-timeout"], "--task-timeout", 0.001),
    request_timeout: parseNumberFlag(v["request-timeout"], "--request-timeout", 0.001),
    max_retries: parseIntFlag(v["max-retries"], "--max-retries", 0),
    max_samples: parseIntFlag(v["max-samples"], "--max-samples", 1),
    offset: parseIntFlag(v.offset, "--offset", 0),
    resume: v.resume,
    retry_failed: v["retry-failed"],
    retry_internal: v["retry-internal"],
    only: splitList(v.only),
    dry_run: v["dry-run"],
    on_bad_row: v["on-bad-row"],
    env: v.env,
    image: v.image,
    network: v.network,
    memory_mb: parseIntFlag(v["memory-mb"], "--memory-mb", 1),
    cpus: parseNumberFlag(v.cpus, "--cpus", 0.01),
    pids_limit: parseIntFlag(v["pids-limit"], "--pids-limit", 1),
    read_only_root: v["read-only-root"],
    pull: v.pull,
    max_sandboxes: parseIntFlag(v["max-sandboxes"], "--max-sandboxes", 1),
    prewarm: parseIntFlag(v.prewarm, "--prewarm", 0),
    max_tokens: parseIntFlag(v["max-tokens"], "--max-tokens", 1),
    temperature: parseNumberFlag(v.temperature, "--temperature", 0),
    reasoning_effort: v["reasoning-effort"],
    stream: v.stream,
    system_prompt: v["system-prompt"],
    ephemeral_system_prompt: v["ephemeral-system-prompt"],
    prefill_messages_file: v["prefill-messages-file"],
    max_consecutive_tool_errors: parseIntFlag(v["max-consecutive-tool-errors"], "--max-consecutive-tool-errors", 1),
    require_reasoning: v["require-reasoning"],
    approval: v.approval,
    approval_model: v["approval-model"],
    approval_base_url: v["approval-base-url"],
    approval_api_key: v["approval-api-key"],
    verify_timeout: parseNumberFlag(v["verify-timeout"], "--verify-timeout", 0.001),
    keep_workspaces: v["keep-workspaces"],
    progress: v.progress,
  };
  return { flags, configPath: v.config, shard: v.shard, shardCount: v["shard-count"] };
}

export function configFromArgv(argv: string[]): RunConfig {
  const { flags, configPath } = flagsToConfig(argv);
  if (!flags.dataset && !configPath) throw new UserError("missing DATASET (see --help)");
  const config = resolveRunConfig(flags, configPath);
  if (!config.model) throw new UserError("--model is required (use --model scripted for the built-in demo model)");
  if (config.approval === "interactive") {
    throw new UserError("--approval interactive is for single sessions; a batch run has nobody to ask. Use smart (default), deny or allow");
  }
  return config;
}

export const command: Command = {
  summary: "run an agent over every row of a JSONL dataset (the main job)",
  help,
  async run(argv) {
    const config = configFromArgv(argv);
    const { shard, shardCount } = flagsToConfig(argv);
    const { resolveShard } = await import("../shard/assign.js");
    const resolved = resolveShard({ shard, shardCount, env: process.env });
    const { runBatch } = await import("../run/runner.js");
    return runBatch(config, { shard: resolved });
  },
};
