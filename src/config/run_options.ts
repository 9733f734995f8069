/**
 * Every option of `hermes-batch run`, written once: config key, value kind, validation and default (the
 * zod schema), help text and section. From this table come `run --help`, the argv parsing, the config-file
 * keys and RunConfigSchema. The flag of a key is `--` + the key with `-` for `_` (`max_turns` ⇔ `--max-turns`).
 */
import { availableParallelism } from "node:os";
import * as z from "zod";
import { environmentNames } from "../../tools/environments/index.js";
import { HeadersSchema } from "./headers.js";

/** How a flag's text becomes a config value (before the schema validates it). */
export type OptionKind = "string" | "int" | "number" | "boolean" | "list" | "headers";

export const SECTIONS = [
  "Model",
  "Tasks",
  "Parallelism",
  "Environments",
  "Harbor tasks",
  "Dangerous commands",
  "Scoring",
  "Resuming and reruns",
  "Sharding (see docs/sharding.md)",
  "Output",
] as const;
export type Section = (typeof SECTIONS)[number];

export interface OptionDef<K extends string = string, S extends z.ZodType = z.ZodType> {
  key: K;
  kind: OptionKind;
  /** Validation and default of the config value. */
  schema: S;
  /** Where `--help` lists the flag; undefined = a config-file key without a flag. */
  section?: Section;
  /** The value's name in `--help` (`N`, `SEC`, `a|b`); none for booleans. */
  arg?: string;
  /** One or more lines ("\n"); the default is appended unless `defaultHelp` is null. */
  help: string;
  /** The default as `--help` shows it, when the schema's value says it badly; null = show none. */
  defaultHelp?: string | null;
  /** The flag without `--`, when it is not the key with `-` for `_` (`headers` ⇔ `--header`, repeated). */
  flag?: string;
}

function option<const K extends string, S extends z.ZodType>(def: OptionDef<K, S>): OptionDef<K, S> {
  return def;
}

const positiveInt = z.number().int().min(1);

const DEFAULT_CONCURRENCY = 32;
/** Agent loops one worker thread carries before another pays for itself (measured: docs/benchmarks.md). */
const LOOPS_PER_WORKER = 256;

/**
 * The default --workers: one thread per LOOPS_PER_WORKER loops, at most one fewer than the cores (the main
 * thread, the GC threads and the tools' processes need a core too), at least 1. On 2 cores a second worker gave
 * no more throughput at 256 loops and cost 11 % more CPU and 42 MB more memory.
 */
export function defaultWorkers(concurrency: number, cores = availableParallelism()): number {
  return Math.max(1, Math.min(cores - 1, Math.ceil(concurrency / LOOPS_PER_WORKER)));
}
/** Node timers take at most 2^31 - 1 ms; a larger value silently becomes 1 ms, so it is refused here. */
const seconds = z.number().positive().max(2_147_483);

export const OUTCOME_POLICIES = ["skip", "fail"] as const;
export const APPROVAL_POLICIES = ["smart", "deny", "allow", "interactive"] as const;
/** The environment backends of the registry (tools/environments/index.ts), so a new backend needs no second list. */
export const ENVIRONMENTS = environmentNames();
export const REASONING_EFFORTS = ["none", "minimal", "low", "medium", "high", "xhigh"] as const;
export const PROGRESS_MODES = ["auto", "bar", "log", "none"] as const;
export const RL_CAPTURE_MODES = ["strict", "best-effort"] as const;
export const PROVIDER_SORTS = ["price", "throughput", "latency"] as const;

/**
 * --fail-under: a percent, `50` or `50%` (flag text or config value). A number in (0, 1) without `%` is
 * almost surely a fraction meant as a percent: refused, naming the percent (`0.5` → "did you mean 50 %?").
 */
const failUnderPercent = z
  .unknown()
  .transform((v, ctx) => {
    const text = typeof v === "number" ? String(v) : typeof v === "string" ? v.trim() : JSON.stringify(v);
    const m = /^(\d+(?:\.\d*)?|\.\d+)\s*(%?)$/.exec(text);
    const n = m ? Number(m[1]) : Number.NaN;
    if (!(n >= 0 && n <= 100)) {
      ctx.addIssue({ code: "custom", message: `must be a percent from 0 to 100 (50 or 50%), got '${text}'` });
      return z.NEVER;
    }
    if (n > 0 && n < 1 && !m![2]) {
      const pct = Number((n * 100).toPrecision(12));
      ctx.addIssue({
        code: "custom",
        message: `takes a percent: ${text} would mean ${text} %; did you mean ${pct} %? (write ${pct} or ${pct}%)`,
      });
      return z.NEVER;
    }
    return n;
  })
  .optional();

/** The config keys (with their flags, when they have one), in `--help` order within each section. */
export const RUN_OPTIONS = [
  option({
    key: "dataset",
    kind: "string",
    schema: z.string().min(1),
    help: "the JSONL dataset (the positional DATASET argument; - for stdin)",
  }),
  // Model
  option({
    key: "model",
    kind: "string",
    section: "Model",
    arg: "M",
    schema: z.string().min(1).optional(),
    help: 'model name at the endpoint; "scripted" is a built-in DEMO model that needs no\nnetwork or key (scripted:<ms> adds a simulated latency per call); "oracle" runs each\nHarbor task\'s solution/solve.sh instead of a model (--harbor)',
  }),
  option({
    key: "base_url",
    kind: "string",
    section: "Model",
    arg: "URL",
    schema: z.string().url().optional(),
    help: "OpenAI-compatible endpoint",
    defaultHelp: "https://openrouter.ai/api/v1",
  }),
  option({
    key: "api_key",
    kind: "string",
    section: "Model",
    arg: "K",
    schema: z.string().optional(),
    help: "the endpoint's key (never written)",
    defaultHelp: "$OPENROUTER_API_KEY for OpenRouter, else $OPENAI_API_KEY",
  }),
  option({
    key: "max_tokens",
    kind: "int",
    section: "Model",
    arg: "N",
    schema: positiveInt.optional(),
    help: "completion tokens per model call",
    defaultHelp: "the endpoint's",
  }),
  option({
    key: "temperature",
    kind: "number",
    section: "Model",
    arg: "T",
    schema: z.number().min(0).max(2).optional(),
    help: "sampling temperature, 0 to 2",
    defaultHelp: "the endpoint's",
  }),
  option({
    key: "reasoning_effort",
    kind: "string",
    section: "Model",
    arg: REASONING_EFFORTS.join("|"),
    schema: z.enum(REASONING_EFFORTS).optional(),
    help: "for reasoning models",
  }),
  option({
    key: "stream",
    kind: "boolean",
    section: "Model",
    schema: z.boolean().default(false),
    help: "use streaming responses",
  }),
  option({
    key: "preserve_reasoning",
    kind: "boolean",
    section: "Model",
    schema: z.boolean().default(false),
    help: "send each assistant turn's reasoning back to the endpoint as reasoning_content (thinking modes that require it); an answer of reasoning alone is then continued, as Hermes does",
  }),
  option({
    key: "max_connections",
    kind: "int",
    section: "Model",
    arg: "N",
    schema: positiveInt.optional(),
    help: "requests in flight to each endpoint for the whole run, across all workers;\na 429 halves it for every worker, successes raise it back",
    defaultHelp: "--concurrency",
  }),
  option({
    key: "request_timeout",
    kind: "number",
    section: "Model",
    arg: "SEC",
    schema: seconds.default(600),
    help: "per model request",
  }),
  option({
    key: "stop_after_failures",
    kind: "int",
    section: "Model",
    arg: "N",
    schema: z.number().int().min(0).default(5),
    help: "stop taking tasks when N results in a row (the first N, or N after answers that\nworked: the endpoint died) all fail with the same model error; 0 = never",
  }),
  option({
    key: "no_preflight",
    kind: "boolean",
    section: "Model",
    schema: z.boolean().default(false),
    help: "skip the check before the first task (GET /models: the endpoint answers,\nthe key is accepted, the model is listed)",
  }),
  option({
    key: "max_retries",
    kind: "int",
    section: "Model",
    arg: "N",
    schema: z.number().int().min(0).default(6),
    help: "retries of a model request (429, 5xx, network errors)",
  }),
  option({
    key: "extra_body",
    kind: "string",
    schema: z.record(z.string(), z.unknown()).optional(),
    help: "extra fields for every model request body (a mapping)",
  }),
  // Tasks
  option({
    key: "run_name",
    kind: "string",
    section: "Tasks",
    arg: "NAME",
    schema: z
      .string()
      .regex(/^[A-Za-z0-9._-]+$/, "use letters, digits, '.', '_' and '-' only")
      .refine((name) => !/^\.+$/.test(name), "must not be '.' or '..' (it would put the run outside --output-dir)")
      .optional(),
    help: "the run folder's name",
    defaultHelp: "the dataset's file name without extension",
  }),
  option({
    key: "output_dir",
    kind: "string",
    section: "Tasks",
    arg: "DIR",
    schema: z.string().min(1).default("runs"),
    help: "where run folders go",
  }),
  option({
    key: "distribution",
    kind: "string",
    section: "Tasks",
    arg: "D",
    schema: z.string().min(1).default("default"),
    help: "toolset distribution (see: hermes-batch distributions)",
    defaultHelp: '"default"',
  }),
  option({
    key: "distribution_file",
    kind: "string",
    section: "Tasks",
    arg: "F",
    schema: z.string().min(1).optional(),
    help: "extra distributions from YAML",
  }),
  option({
    key: "toolsets",
    kind: "list",
    section: "Tasks",
    arg: "a,b",
    schema: z.array(z.string()).optional(),
    help: "fixed toolsets instead of a distribution",
  }),
  option({
    key: "seed",
    kind: "int",
    section: "Tasks",
    arg: "S",
    schema: z.number().int().default(0),
    help: "seed of the toolset draws; same seed → same draws",
  }),
  option({
    key: "max_samples",
    kind: "int",
    section: "Tasks",
    arg: "N",
    schema: positiveInt.optional(),
    help: "run at most the next N rows that parse (after --offset; a refused row counts)",
  }),
  option({
    key: "offset",
    kind: "int",
    section: "Tasks",
    arg: "N",
    schema: z.number().int().min(0).default(0),
    help: "skip the first N rows that parse",
  }),
  option({
    key: "epochs",
    kind: "int",
    section: "Scoring",
    arg: "K",
    schema: positiveInt.default(1),
    help: 'run every task K times (lines carry "epoch" 0..K-1 when K > 1); pass@k in\nstatistics.json for every k <= K; resume works per task and epoch',
  }),
  option({
    key: "max_turns",
    kind: "int",
    section: "Tasks",
    arg: "T",
    schema: positiveInt.default(10),
    help: "model calls per task",
  }),
  option({
    key: "task_timeout",
    kind: "number",
    section: "Tasks",
    arg: "SEC",
    schema: seconds.default(1800),
    help: "wall clock per task; a scored row's agent stops there and the task is graded (time_limit)",
  }),
  option({
    key: "system_prompt",
    kind: "string",
    section: "Tasks",
    arg: "TEXT",
    schema: z.string().optional(),
    help: "saved in the trajectory",
    defaultHelp: "a short tool-use instruction",
  }),
  option({
    key: "ephemeral_system_prompt",
    kind: "string",
    section: "Tasks",
    arg: "TEXT",
    schema: z.string().optional(),
    help: "used in the run, never saved",
  }),
  option({
    key: "prefill_messages_file",
    kind: "string",
    section: "Tasks",
    arg: "F",
    schema: z.string().min(1).optional(),
    help: "JSON array of {role, content} sent after the system prompt, never saved",
  }),
  option({
    key: "max_consecutive_tool_errors",
    kind: "int",
    section: "Tasks",
    arg: "N",
    schema: positiveInt.default(3),
    help: "malformed tool-call turns in a row before a task ends as partial",
  }),
  option({
    key: "tool_concurrency",
    kind: "int",
    schema: positiveInt.default(8),
    help: "tool calls of one model turn run at once",
  }),
  option({
    key: "require_reasoning",
    kind: "boolean",
    section: "Tasks",
    schema: z.boolean().default(false),
    help: "drop trajectories without any reasoning (counted in statistics)",
  }),
  option({
    key: "on_bad_row",
    kind: "string",
    section: "Tasks",
    arg: OUTCOME_POLICIES.join("|"),
    schema: z.enum(OUTCOME_POLICIES).default("fail"),
    help: "fail: the whole file is checked before anything runs;\nskip: bad rows are left out",
  }),
  option({
    key: "plugins",
    kind: "list",
    schema: z.array(z.string()).default([]),
    help: "npm packages of extra tools, loaded in every worker",
  }),
  option({
    key: "mcp_config",
    kind: "string",
    section: "Tasks",
    arg: "FILE",
    schema: z.string().min(1).optional(),
    help: 'MCP servers whose tools the model gets (toolset mcp-<server>): JSON {"mcpServers": …} as\ndesktop clients write it, or Hermes\' YAML mcp_servers (README: MCP servers)',
  }),
  option({
    key: "mcp_approval",
    kind: "string",
    section: "Tasks",
    arg: "none|host|all",
    schema: z.enum(["none", "host", "all"]).default("host"),
    help: "which MCP tool calls the approval gate judges (as data, like a flagged command): host:\nthose of servers outside the task's sandbox (where: host, URLs); all; none",
  }),
  // Parallelism
  option({
    key: "workers",
    kind: "int",
    section: "Parallelism",
    arg: "W",
    schema: positiveInt.default(defaultWorkers(DEFAULT_CONCURRENCY)),
    help: "worker threads (each runs many agent loops at once)",
    defaultHelp: `one per ${LOOPS_PER_WORKER} loops of --concurrency, at most one fewer than the cores, at least 1`,
  }),
  option({
    key: "concurrency",
    kind: "int",
    section: "Parallelism",
    arg: "C",
    schema: positiveInt.default(DEFAULT_CONCURRENCY),
    help: "agent loops in flight across all workers",
  }),
  // Environments
  option({
    key: "env",
    kind: "string",
    section: "Environments",
    arg: ENVIRONMENTS.join("|"),
    schema: z.enum(ENVIRONMENTS).default("local"),
    help: "where terminal and file tools run",
  }),
  option({
    key: "image",
    kind: "string",
    section: "Environments",
    arg: "IMAGE",
    schema: z.string().min(1).optional(),
    help: 'default image (a row\'s "image" wins)',
    defaultHelp: "hermes-batch-test:bookworm, built\nlocally by scripts/build-test-image.sh",
  }),
  option({
    key: "network",
    kind: "string",
    section: "Environments",
    arg: "NAME",
    schema: z.string().min(1).optional(),
    help: "container network; --env local: none or host",
    defaultHelp: "none",
  }),
  option({
    key: "allow_network",
    kind: "list",
    section: "Environments",
    arg: "NAME",
    schema: z.array(z.string().min(1)).default([]),
    help: 'let --network or a row\'s "network" use NAME even though it reaches past an isolated\nnetwork: host, bridge, container:ID (container:* for any); repeatable',
    defaultHelp: null,
  }),
  option({
    key: "memory_mb",
    kind: "int",
    section: "Environments",
    arg: "N",
    schema: positiveInt.optional(),
    help: "memory limit (MiB, swap included) of a container or local sandbox",
    defaultHelp: "2048",
  }),
  option({
    key: "cpus",
    kind: "number",
    section: "Environments",
    arg: "N",
    schema: z.number().positive().optional(),
    help: "CPU limit of a container or local sandbox",
    defaultHelp: "1",
  }),
  option({
    key: "pids_limit",
    kind: "int",
    section: "Environments",
    arg: "N",
    schema: positiveInt.optional(),
    help: "process limit of a container or local sandbox",
    defaultHelp: "512",
  }),
  option({
    key: "disk",
    kind: "string",
    section: "Environments",
    arg: "SIZE",
    schema: z
      .string()
      .regex(/^(none|\d+(\.\d+)?\s*([kKmMgGtT]i?[bB]?)?)$/, "must be a size such as 10g or 512m, or none")
      .default("10g"),
    help: "disk quota of each task folder: a file system of that size of its own (sparse), local\nand Docker, root only; none for no quota",
    defaultHelp: "10g",
  }),
  option({
    key: "require_limits",
    kind: "boolean",
    section: "Environments",
    schema: z.boolean().default(false),
    help: "stop (exit 2) when the environment cannot enforce every limit here (memory, CPU,\nprocesses, disk) instead of saying which are not enforced",
  }),
  option({
    key: "read_only_root",
    kind: "boolean",
    section: "Environments",
    schema: z.boolean().default(false),
    help: "mount the container's root file system read-only",
  }),
  option({
    key: "pull",
    kind: "boolean",
    section: "Environments",
    schema: z.boolean().default(false),
    help: "pull images that are missing",
  }),
  option({
    key: "max_sandboxes",
    kind: "int",
    section: "Environments",
    arg: "N",
    schema: positiveInt.optional(),
    help: "live containers or instances of the whole run,\nacross all workers (warm ones included)",
    defaultHelp: "no limit",
  }),
  option({
    key: "prewarm",
    kind: "int",
    section: "Environments",
    arg: "N",
    schema: z.number().int().min(0).optional(),
    help: "keep N containers of the default image started ahead of tasks (docker; run-wide,\ncounted in --max-sandboxes, never ahead of a waiting task)",
    defaultHelp: "0 = off",
  }),
  option({
    key: "keep_workspaces",
    kind: "boolean",
    section: "Environments",
    schema: z.boolean().default(false),
    help: "keep the task folders (under <output-dir>/.workspaces/<run>/)",
  }),
  option({
    key: "verify_isolated",
    kind: "boolean",
    section: "Environments",
    schema: z.boolean().default(false),
    help: "run a row's \"verify\" in a fresh sandbox made from a snapshot of the task's, without any\nprocess of the agent (docker)",
  }),
  option({
    key: "pass_env",
    kind: "list",
    section: "Environments",
    arg: "NAME",
    schema: z.array(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "must be an environment variable name")).default([]),
    help: "also pass this variable of your environment to tasks (repeatable); tasks get only PATH,\nLANG, LANGUAGE, LC_*, TERM, TZ, USER, LOGNAME, COLUMNS, LINES otherwise",
    defaultHelp: null,
  }),
  option({
    key: "sandbox_ro",
    kind: "list",
    section: "Environments",
    arg: "PATH",
    schema: z.array(z.string().min(1)).default([]),
    help: "also show this host folder to local sandboxes, read-only, at the same path (a toolchain\noutside /usr; repeatable; never one that holds the dataset, the output dir or your home)",
    defaultHelp: null,
  }),
  option({
    key: "verify_timeout",
    kind: "number",
    section: "Environments",
    arg: "SEC",
    schema: seconds.default(300),
    help: 'for a row\'s "verify" command',
  }),
  // Harbor tasks (src/harbor/)
  option({
    key: "harbor",
    kind: "string",
    section: "Harbor tasks",
    arg: "PATH",
    schema: z.string().min(1).optional(),
    help: "run Harbor task folders (task.toml, instruction.md, environment/, tests/) instead of a\nJSONL dataset: one task folder or a folder of them (--env docker)",
    defaultHelp: null,
  }),
  option({
    key: "allow_build",
    kind: "boolean",
    section: "Harbor tasks",
    schema: z.boolean().default(false),
    help: "build a task's environment/Dockerfile (it runs the task author's code on this host);\nwithout it only tasks naming a docker_image run",
  }),
  option({
    key: "harbor_network",
    kind: "string",
    section: "Harbor tasks",
    arg: "task|agent-none",
    schema: z.enum(["task", "agent-none"]).default("task"),
    help: "task: the task's network_mode in both phases; agent-none: the agent stays offline and\nonly the verifier gets the task's network (scores then differ from the leaderboard's)",
  }),
  option({
    key: "timeout_multiplier",
    kind: "number",
    section: "Harbor tasks",
    arg: "X",
    schema: z.number().positive().max(1000).default(1),
    help: "multiplies a task's [agent] and [verifier] timeout_sec",
  }),
  option({
    key: "harbor_pass_threshold",
    kind: "number",
    section: "Harbor tasks",
    arg: "R",
    schema: z.number().finite().default(1),
    help: "a task passes when its reward is at least R",
  }),
  // Dangerous commands
  option({
    key: "approval",
    kind: "string",
    section: "Dangerous commands",
    arg: APPROVAL_POLICIES.join("|"),
    schema: z.enum(APPROVAL_POLICIES).default("smart"),
    help: "smart: an auxiliary model approves or denies, fail-closed; interactive is\nfor single sessions and refused by a batch run",
  }),
  option({
    key: "approval_model",
    kind: "string",
    section: "Dangerous commands",
    arg: "M",
    schema: z.string().min(1).optional(),
    help: "the approver's model",
    defaultHelp: "--model",
  }),
  option({
    key: "approval_base_url",
    kind: "string",
    section: "Dangerous commands",
    arg: "URL",
    schema: z.string().url().optional(),
    help: "the approver's endpoint",
    defaultHelp: "--base-url",
  }),
  option({
    key: "approval_api_key",
    kind: "string",
    section: "Dangerous commands",
    arg: "K",
    schema: z.string().optional(),
    help: "the approver's key",
    defaultHelp: "--api-key when the approver is on the run's host",
  }),
  // Scoring
  option({
    key: "judge_model",
    kind: "string",
    section: "Scoring",
    arg: "M",
    schema: z.string().min(1).optional(),
    help: 'the model that grades rows with a "rubric"',
    defaultHelp: "--model",
  }),
  option({
    key: "judge_base_url",
    kind: "string",
    section: "Scoring",
    arg: "URL",
    schema: z.string().url().optional(),
    help: "the judge's endpoint",
    defaultHelp: "--base-url",
  }),
  option({
    key: "judge_api_key",
    kind: "string",
    section: "Scoring",
    arg: "K",
    schema: z.string().optional(),
    help: "the judge's key",
    defaultHelp: "--api-key when the judge is on the run's host",
  }),
  option({
    key: "baseline",
    kind: "string",
    section: "Scoring",
    arg: "RUN_DIR",
    schema: z.string().min(1).optional(),
    help: "after the run, compare it with this run folder (see `hermes-batch compare`):\nexit 1 on a regression, 3 when not comparable",
  }),
  option({
    key: "max_drop",
    kind: "number",
    section: "Scoring",
    arg: "P",
    schema: z.number().min(0).max(100).optional(),
    help: "with --baseline: a pass-rate drop of more than P points is a regression, instead of the\ndefault gate (a significant drop, or a task that passed every baseline epoch failing every epoch)",
  }),
  option({
    key: "significant_only",
    kind: "boolean",
    section: "Scoring",
    schema: z.boolean().default(false),
    help: "with --max-drop: only a drop that is also significant (one-sided p < 0.05)",
  }),
  option({
    key: "allow_different_dataset",
    kind: "boolean",
    section: "Scoring",
    schema: z.boolean().default(false),
    help: "with --baseline: compare even where a paired task's prompt or grading criteria changed\n(an answer key fixed since the baseline ran; or grade the baseline again: hermes-batch score)",
  }),
  option({
    key: "max_unscored",
    kind: "string",
    section: "Scoring",
    arg: "N|P%",
    schema: z
      .string()
      .regex(/^\s*(\d+|\d+(\.\d+)?\s*%)\s*$/, "must be a whole number of tasks or a percentage such as 10%")
      .refine((v) => !v.includes("%") || parseFloat(v) <= 100, "a percentage is at most 100%")
      .optional(),
    help: "with --baseline: not comparable (exit 3) when more than N tasks (or P %) are unscored or missing;\nwith --fail-under: not met (exit 1) when more than N (or P %) of the results whose row names a\nscorer were left undecided by it",
    defaultHelp: "10%",
  }),
  option({
    key: "price_input",
    kind: "number",
    section: "Scoring",
    arg: "USD",
    schema: z.number().nonnegative().optional(),
    help: "price per million input tokens: cost per task, per run and per passed task",
  }),
  option({
    key: "price_output",
    kind: "number",
    section: "Scoring",
    arg: "USD",
    schema: z.number().nonnegative().optional(),
    help: "price per million output tokens",
  }),
  option({
    key: "fail_under",
    kind: "string",
    section: "Scoring",
    arg: "PCT",
    schema: failUnderPercent,
    help: "exit 1 when the pass rate (scored rows) or else the completion rate is under PCT\npercent, 0 to 100: 50 or 50% (a fraction such as 0.5 is refused: it would mean 0.5 %)",
  }),
  option({
    key: "group_by",
    kind: "list",
    section: "Scoring",
    arg: "metadata.KEY,…",
    schema: z.array(z.string().regex(/^metadata\.[^.\s]+$/, "must be metadata.KEY")).default([]),
    help: "pass rates in statistics.json also by these row metadata keys (always by toolsets)",
    defaultHelp: null,
  }),
  // Resuming and reruns
  option({
    key: "allow_config_change",
    kind: "boolean",
    section: "Resuming and reruns",
    schema: z.boolean().default(false),
    help: "with --resume: go on although the dataset, model or settings changed since the run\nstarted (recorded in run.yaml and events.log); without it such a resume stops with exit 3",
  }),
  option({
    key: "resume",
    kind: "boolean",
    section: "Resuming and reruns",
    schema: z.boolean().default(false),
    help: "continue a run: tasks already in trajectories.jsonl are skipped, failed ones rerun\n(but not internal_error ones: those are bugs of hermes-batch, see --retry-internal);\na run folder with no results yet is started fresh (one line says so)",
  }),
  option({
    key: "retry_failed",
    kind: "boolean",
    section: "Resuming and reruns",
    schema: z.boolean().default(false),
    help: "rerun only the tasks that failed (model, environment, timeout, cancelled); with --resume,\nthose (4xx answers included, which --resume alone leaves) and every task not yet run",
  }),
  option({
    key: "retry_internal",
    kind: "boolean",
    section: "Resuming and reruns",
    schema: z.boolean().default(false),
    help: "rerun the tasks that ended in internal_error too (alone: only those)",
  }),
  option({
    key: "retry_unscored",
    kind: "boolean",
    section: "Resuming and reruns",
    schema: z.boolean().default(false),
    help: "rerun the tasks whose score is null (unscored: the judge failed, verify could not\nrun) too (alone: only those); their earlier lines move to superseded.jsonl",
  }),
  option({
    key: "only",
    kind: "list",
    section: "Resuming and reruns",
    arg: "ID,ID",
    schema: z.array(z.string()).optional(),
    help: "rerun these tasks (earlier results move to superseded.jsonl)",
  }),
  option({
    key: "dry_run",
    kind: "boolean",
    section: "Resuming and reruns",
    schema: z.boolean().default(false),
    help: "validate the config and dataset, print the plan, run nothing",
  }),
  // Output
  option({
    key: "rl_capture",
    kind: "string",
    section: "Output",
    arg: "[strict|best-effort]",
    schema: z.enum(RL_CAPTURE_MODES).optional(),
    help: "RL rollouts: agent calls ask for the engine's token ids and logprobs (vLLM's\nreturn_token_ids), kept per task and epoch in rl.jsonl; strict (the flag alone)\nstops (exit 2) when the endpoint returns none, best-effort goes on (tokens: null)",
  }),
  option({
    key: "rl_tokenizer",
    kind: "string",
    section: "Output",
    arg: "NAME",
    schema: z.string().min(1).optional(),
    help: "the endpoint's tokenizer and chat template (e.g. Qwen/Qwen3-8B), recorded in\nrl.jsonl and run.yaml",
  }),
  option({
    key: "progress",
    kind: "string",
    section: "Output",
    arg: PROGRESS_MODES.join("|"),
    schema: z.enum(PROGRESS_MODES).default("auto"),
    help: "auto: a bar on a terminal, a line per 5 % elsewhere",
  }),
  // Model requests behind gateways, OpenRouter routing, the approver's deadline
  option({
    key: "headers",
    flag: "header",
    kind: "headers",
    section: "Model",
    arg: "'NAME: VALUE'",
    schema: HeadersSchema,
    help:
      "an HTTP header on every request to the model endpoint (repeatable; config: headers:\n" +
      "{Name: value}); ${VAR} in a value is read from the environment at start. Also sent to\n" +
      "the approver and judge when they are on the same host. Values are never written",
    defaultHelp: null,
  }),
  option({
    key: "providers_allowed",
    kind: "list",
    section: "Model",
    arg: "a,b",
    schema: z.array(z.string()).optional(),
    help: "OpenRouter provider routing: only these providers (sent as provider.only)",
  }),
  option({
    key: "providers_ignored",
    kind: "list",
    section: "Model",
    arg: "a,b",
    schema: z.array(z.string()).optional(),
    help: "OpenRouter provider routing: never these (provider.ignore)",
  }),
  option({
    key: "providers_order",
    kind: "list",
    section: "Model",
    arg: "a,b",
    schema: z.array(z.string()).optional(),
    help: "OpenRouter provider routing: try in this order (provider.order)",
  }),
  option({
    key: "provider_sort",
    kind: "string",
    section: "Model",
    arg: PROVIDER_SORTS.join("|"),
    schema: z.enum(PROVIDER_SORTS).optional(),
    help: "OpenRouter provider routing: prefer by (provider.sort)",
  }),
  option({
    key: "approval_timeout",
    kind: "number",
    section: "Dangerous commands",
    arg: "SEC",
    schema: seconds.default(30),
    help: "the approver's whole decision, retries included; past it the command is denied",
  }),
  option({
    key: "approval_headers",
    flag: "approval-header",
    kind: "headers",
    section: "Dangerous commands",
    arg: "'NAME: VALUE'",
    schema: HeadersSchema,
    help: "an HTTP header on the approver's requests (repeatable; over --header's of the same name)",
    defaultHelp: null,
  }),
  option({
    key: "judge_headers",
    flag: "judge-header",
    kind: "headers",
    section: "Scoring",
    arg: "'NAME: VALUE'",
    schema: HeadersSchema,
    help: "an HTTP header on the judge's requests (repeatable; over --header's of the same name)",
    defaultHelp: null,
  }),
  option({
    key: "batch_size",
    kind: "int",
    section: "Output",
    arg: "N",
    schema: positiveInt.default(10),
    help: "prompts per Hermes batch: metadata.batch_num = prompt_index / N, and\ncheckpoint.json's batch_stats and statistics.json's total_batches (tasks run in any order)",
  }),
] as const;

/** Flags of `run` that are not config keys: how this invocation is set up. */
export const INVOCATION_FLAGS = [
  {
    flag: "config",
    arg: "FILE",
    section: "Tasks",
    help: "YAML run file with any of these options in snake_case; flags win",
  },
  {
    flag: "shard",
    arg: "i/N",
    section: "Sharding (see docs/sharding.md)",
    help: 'run shard i (0-based) of N into <output-dir>/<run-name>/shards/<i>-of-<N>/; default:\ndetected from a Slurm job array or a Kubernetes Indexed Job; "none" turns that off',
  },
  {
    flag: "shard-count",
    arg: "N",
    section: "Sharding (see docs/sharding.md)",
    help: "the shard count when the scheduler does not give it (Kubernetes), also\n$HERMES_BATCH_SHARD_COUNT; then merge with: hermes-batch merge <output-dir>/<run-name>",
  },
] as const satisfies readonly { flag: string; arg: string; section: Section; help: string }[];

type RunOption = (typeof RUN_OPTIONS)[number];
type ConfigShape = { [O in RunOption as O["key"]]: O["schema"] };

export const RunConfigSchema = z
  .object(Object.fromEntries(RUN_OPTIONS.map((o) => [o.key, o.schema])) as ConfigShape)
  .strict();

/** The flag of a config key, or undefined for keys only a config file can set. */
export function flagOf(key: string): string | undefined {
  const o = RUN_OPTIONS.find((x) => x.key === key) as OptionDef | undefined;
  return o?.section ? `--${o.flag ?? key.replace(/_/g, "-")}` : undefined;
}
