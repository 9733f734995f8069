/**
 * Runs one task inside a worker: environment, approval gate, agent loop, verify step, cleanup,
 * and the serialised output line. Never throws: every failure becomes a classified outcome.
 */
import { join } from "node:path";
import { taskFoldersDir } from "./task_folders.js";
import { readdir, readFile } from "node:fs/promises";
import type { RunConfig } from "../config/run_config.js";
import { registry, type Logger, type ToolContext } from "../../tools/registry.js";
import { TaskEnvironment } from "../../tools/environments/manager.js";
import {
  EnvironmentLostError,
  type Environment,
  type EnvironmentOptions,
  type EnvironmentSpec,
  type ExecResult,
} from "../../tools/environments/base.js";
import type { SandboxGates } from "../../tools/environments/index.js";
import type { ApprovalGateOptions } from "../../tools/approval/gate.js";
import { lazyApprovalGate, type LazyApprovalService } from "../../tools/lazy_approval.js";
import type { RunModels, TaskModels } from "../scheduler/run_models.js";
import type { ModelEvent } from "../scheduler/scheduler.js";
import { getToolDefinitions } from "../../tools/model_tools.js";
import { createToolPipeline } from "../../tools/pipeline.js";
import { isMcpTool, McpTaskSessions, mcpServersMetadata, mcpToolsetName } from "../../tools/mcp/mcp_tools.js";
import type { McpServerCatalog } from "../../tools/mcp/types.js";
import { runAgentLoop, AgentLoopAborted, type AgentLoopResult } from "../agent/loop.js";
import { loopUntilLimit } from "../agent/loop_limit.js";
import { emptyUsage, ModelError, type ChatMessage, type ChatModel, type Usage } from "../core/chat.js";
import { toHermesConversations } from "../formats/hermes.js";
import { conversationsJson, JsonText, recordJson, toolsJson } from "../formats/trajectory_line.js";
import { wellFormed } from "../formats/well_formed.js";
import {
  countToolCalls,
  offeredToolsets,
  reasoningStats,
  statsToolNames,
  toolStatsJson,
  unknownToolsCalled,
} from "../report/tool_stats.js";
import { diskOption, specKey, type TaskOutcomeMessage, type TaskSpec } from "./task_spec.js";
import type { ScorerOutput } from "../score/scorers.js";
import { combineScores } from "../score/summary.js";
import { scoringCriteria } from "../score/criteria.js";
import { linkedAbort, type LinkedAbort } from "../core/abort.js";
import { DONE_OUTCOMES, type LimitReason, type Outcome } from "../core/outcomes.js";
import type { DropReason, ModelCallRecord, TrajectoryEntry, VerifyResult } from "../core/records.js";
import { ProcessNotices } from "../../tools/process_notices.js";
import { TokenLedger } from "../agent/token_ledger.js";
import { isoTime } from "../agent/iso_time.js";
import { buildRlLine } from "./rl_line.js";
import { taskDirName } from "../core/task_dir_name.js";
import type { HarborPlan } from "../harbor/task_hooks.js";
// Loaded only for a Harbor task: it brings node:child_process (and net, dgram) into the worker thread.
const harborPhases = () => import("../harbor/phases.js");
import type { HarborVerdict } from "../score/harbor_reward.js";

export { taskDirName };

export const DEFAULT_SYSTEM_PROMPT =
  "You are a capable assistant that completes tasks by calling the provided tools. " +
  "Work step by step, check your results, and when you are done reply with a final answer and no tool call.";

export interface TaskRunnerDeps {
  config: RunConfig;
  runDir: string;
  /** The run's models; each task gets them wrapped by the scheduler, their events reported with its result. */
  models: RunModels;
  prefill?: ChatMessage[];
  logger: Logger;
  /** Pattern keys from the user config's command_allowlist. */
  allowlist: string[];
  /** Worker threads in the pool (per-thread limits are run-wide limits divided by this). */
  workers: number;
  /** The run's sandbox gates, shared by every worker thread (absent: per-process ones from the config). */
  sandboxGates?: SandboxGates;
  /** The run's MCP servers with their tools (--mcp-config). */
  mcp?: McpServerCatalog[];
}

/** A batch run never writes the user's config: "always" is an interactive-only answer. */
const keepAllowlistUnwritten = async (): Promise<void> => {};

/** The approver model comes from the run's scheduler; without one, smart approval denies (fail-closed). */
export function approvalOptions(
  config: RunConfig,
  spec: TaskSpec,
  allowlist: string[],
  approver?: ChatModel,
): ApprovalGateOptions {
  return {
    policy: config.approval,
    taskId: spec.id,
    userTask: spec.prompt,
    allowlist,
    persistAllowlist: keepAllowlistUnwritten,
    smart: approver ? { model: approver, timeoutMs: config.approval_timeout * 1000 } : undefined,
  };
}

export class EnvironmentSetupError extends Error {
  override name = "EnvironmentSetupError";
}

/** The task's deadline passed before its agent could work (a slow sandbox start): a timeout, not a graded limit. */
class DeadlineBeforeAgentError extends Error {
  override name = "DeadlineBeforeAgentError";
}

function classifyError(err: unknown, signal: AbortSignal, timedOut: boolean): Outcome {
  if (timedOut || err instanceof DeadlineBeforeAgentError) return "timeout";
  if (signal.aborted) return "cancelled";
  if (err instanceof EnvironmentSetupError) return "environment_error";
  if (err instanceof ModelError) return "model_error";
  // Anything else is an exception of our own code: a bug, not rerun by --resume unless asked.
  return "internal_error";
}

function errorText(err: unknown): string {
  if (err instanceof AgentLoopAborted) return errorText(err.cause);
  if (err instanceof Error) return `${err.name === "Error" ? "" : err.name + ": "}${err.message}`;
  return String(err);
}

/**
 * The sandbox limit a lost sandbox's reason names (every backend starts it with `memory_limit:`, `pids_limit:` or
 * `disk_limit:`), if any.
 */
export function limitReason(lost: string): LimitReason | undefined {
  return /^(memory_limit|pids_limit|disk_limit):/.exec(lost)?.[1] as LimitReason | undefined;
}

/** Beyond a graded row's verify timeout: the verify files put in place, the judge's call. */
const GRADING_MARGIN_SEC = 300;

/** One task's state while it runs: what prepareTask set up, and what each later phase found. */
interface TaskRun {
  spec: TaskSpec;
  deps: TaskRunnerDeps;
  cancel: AbortSignal;
  started: number;
  harbor?: HarborPlan;
  harborProblem?: string;
  /** Cancel, the task's deadline, and a lost sandbox all abort its signal. */
  taskAbort: LinkedAbort;
  signal: AbortSignal;
  /**
   * A scored row's --task-timeout, for its set-up, agent loop and tool calls: when it passes the agent stops and the
   * task is graded (`time_limit`); the task's own deadline is later by the grading's time. A Harbor task's, without
   * a deadline (its agent phase has its own): a limit of the sandbox aborts it. Undefined for other rows (the task's
   * deadline ends the task).
   */
  agentAbort?: LinkedAbort;
  /**
   * A scored row's (or a Harbor task's) agent hit a limit of its sandbox (memory, process count, disk quota): its agent stopped there and
   * the task is graded (`resource_limit`), as at its time limit, rather than lost (unscored, out of the pass rate,
   * which an agent could choose for its own failing task with `bytearray(3<<30)` or a fork bomb).
   */
  limitHit?: { reason: LimitReason; message: string };
  /** The first failure of the sandbox (lost, could not start) or of an MCP server start, if any. */
  envFailure?: unknown;
  envSpec: EnvironmentSpec;
  taskEnv: TaskEnvironment;
  environmentEvents: { at: number; message: string }[];
  modelEvents: ModelEvent[];
  models: TaskModels;
  approval: LazyApprovalService;
  pipeline: ReturnType<typeof createToolPipeline>;
  ctx: ToolContext;
  /** The run's servers and the row's own; a row's server wins over the run's of its name. */
  mcpCatalogs: McpServerCatalog[];
  mcpSessions?: McpTaskSessions;
  tools: Awaited<ReturnType<typeof getToolDefinitions>>;
  loop?: AgentLoopResult;
  outcome: Outcome;
  error?: string;
  verify?: VerifyResult;
  stack?: string;
  scored?: ScorerOutput[];
  deterministic: boolean;
  tokenLedger?: TokenLedger;
  harborVerdict?: HarborVerdict;
}

export async function runTask(spec: TaskSpec, deps: TaskRunnerDeps, cancel: AbortSignal): Promise<TaskOutcomeMessage> {
  // Only a Harbor row loads the Harbor modules (and their YAML and TOML parsers): not every worker's start-up.
  const harborHooks = spec.extra?.harbor === undefined ? undefined : await import("../harbor/task_hooks.js");
  const t = prepareTask(spec, deps, cancel, harborHooks);
  try {
    await setUpToolsAndSandbox(t);
    const loop = await runAgent(t);
    await verifyAndScore(t, loop);
  } catch (err) {
    recordFailure(t, err);
  } finally {
    await cleanUpTask(t);
  }
  return outcomeMessage(t, trajectoryEntry(t));
}

/**
 * A task's environment spec whose folder path is made on first use: only a task whose environment is created
 * needs it, and it takes a few path resolutions. A class, its getter on the prototype: an object literal with a
 * getter of its own is kept in dictionary mode, several times the size, for the whole task.
 */
class TaskEnvSpec implements EnvironmentSpec {
  // Declared here, in one order, so that every task's spec has the same shape; set from `fields`.
  runName!: string;
  taskId!: string;
  image?: string;
  cwd?: string;
  network?: string;
  taskTimeoutSec?: number;
  signal?: AbortSignal;
  reportLost?: (reason: string) => void;
  onEvent?: (message: string) => void;
  /** Every attempt starts in an empty folder: an earlier attempt's kept one holds its verify's hidden files. */
  readonly freshTaskDir = true;
  private folder: string | undefined;

  constructor(
    fields: Omit<EnvironmentSpec, "hostTaskDir">,
    private readonly folderOf: () => string,
  ) {
    Object.assign(this, fields);
  }

  get hostTaskDir(): string {
    return (this.folder ??= this.folderOf());
  }
}

/** Prepare: the task's abort signal, its sandbox (created on first use), models, approval gate and tool context. */
function prepareTask(
  spec: TaskSpec,
  deps: TaskRunnerDeps,
  cancel: AbortSignal,
  harborHooks: typeof import("../harbor/task_hooks.js") | undefined,
): TaskRun {
  const { config } = deps;
  const started = Date.now();
  let harbor: HarborPlan | undefined;
  let harborProblem: string | undefined;
  try {
    harbor = harborHooks?.harborPlan(spec.extra, config);
  } catch (err) {
    harborProblem = errorText(err);
  }
  // A scored row whose agent reaches --task-timeout is graded all the same (`time_limit`), as Harbor grades a
  // trial at its agent's time limit and inspect_ai a sample at its limits: a task the agent never finishes is a
  // failed task, not one left out of the pass rate. Its grading (verify, judge) runs past that deadline.
  const gradedAtLimit =
    harbor === undefined &&
    harborProblem === undefined &&
    (spec.expected !== undefined || spec.rubric !== undefined || spec.verify !== undefined);
  const gradingSec = gradedAtLimit ? (spec.verify ? config.verify_timeout : 0) + GRADING_MARGIN_SEC : 0;
  const taskTimeoutSec = (harbor?.taskTimeoutSec ?? config.task_timeout) + gradingSec;
  // Cancel, the task's deadline, and a lost sandbox (which ends the task at once, environment_error, rather than
  // letting the model talk to a corpse) all abort the task's signal.
  const taskAbort = linkedAbort([cancel], taskTimeoutSec * 1000);
  const signal = taskAbort.signal;
  // A Harbor task is graded by its verifier whatever its agent did: its agent phase (with the task's own time limit,
  // phases.ts) runs under this signal too, so that a limit of its sandbox stops the agent and not the task.
  const agentAbort = gradedAtLimit
    ? linkedAbort([signal], config.task_timeout * 1000)
    : harbor
      ? linkedAbort([signal])
      : undefined;
  const environmentEvents: { at: number; message: string }[] = [];
  const envSpec = new TaskEnvSpec(
    {
      runName: config.run_name!,
      taskId: specKey(spec),
      image: spec.image ?? config.image,
      cwd: harbor?.task.workdir ?? spec.cwd,
      network: harbor?.network ?? spec.network ?? config.network,
      taskTimeoutSec,
      signal,
      reportLost: (reason: string) => {
        // A scored row's agent at a limit of its sandbox: its agent stops, its task goes on to be graded.
        const limit = limitReason(reason);
        if (limit && t.agentAbort && !t.envFailure && !t.limitHit && !t.agentAbort.signal.aborted) {
          t.limitHit = { reason: limit, message: reason };
          t.agentAbort.abort(new EnvironmentLostError(reason));
          return;
        }
        t.envFailure ??= new EnvironmentLostError(reason);
        taskAbort.abort(t.envFailure);
      },
      onEvent: (message: string) => void environmentEvents.push({ at: Date.now(), message }),
    },
    () => join(taskFoldersDir(config.output_dir, deps.runDir), taskDirName(specKey(spec))),
  );
  const taskEnv = new TaskEnvironment(
    config.env,
    envSpec,
    taskEnvOptions(spec, deps, harbor && harborHooks ? harborHooks.harborEnvOptions(harbor) : {}),
  );

  const modelEvents: ModelEvent[] = [];
  const models = deps.models.forTask((e) => modelEvents.push(e));
  // Every policy goes through the gate, so even `allow` leaves a record of each flagged command.
  const approval = lazyApprovalGate(approvalOptions(config, spec, deps.allowlist, models.approver));
  const pipeline = createToolPipeline({ approval, mcpApproval: config.mcp_approval });

  const ctx = toolContext(spec, deps, taskEnv, agentAbort?.signal ?? signal, (err) => {
    t.envFailure ??= err;
  });
  const t: TaskRun = {
    spec,
    deps,
    cancel,
    started,
    harbor,
    harborProblem,
    taskAbort,
    signal,
    envSpec,
    taskEnv,
    environmentEvents,
    modelEvents,
    models,
    approval,
    pipeline,
    ctx,
    mcpCatalogs: deps.mcp ?? [],
    tools: [],
    outcome: "completed",
    ...(agentAbort ? { agentAbort } : {}),
    deterministic: false,
    ...(config.rl_capture ? { tokenLedger: new TokenLedger() } : {}),
  };
  return t;
}

/** What every tool call of the task sees; a sandbox that cannot be had is noted as the task's failure. */
function toolContext(
  spec: TaskSpec,
  deps: TaskRunnerDeps,
  taskEnv: TaskEnvironment,
  signal: AbortSignal,
  noteEnvFailure: (err: unknown) => void,
): ToolContext {
  return {
    taskId: spec.id,
    envKind: deps.config.env,
    getEnv: async () => {
      try {
        return await taskEnv.get();
      } catch (err) {
        noteEnvFailure(err);
        throw err;
      }
    },
    signal,
    logger: deps.logger,
    userTask: spec.prompt,
    notices: new ProcessNotices(),
  };
}

/** The sandbox's limits and options for this task (the row's limits over the run's). */
function taskEnvOptions(
  spec: TaskSpec,
  deps: TaskRunnerDeps,
  harborOptions: Partial<EnvironmentOptions>,
): EnvironmentOptions {
  const { config } = deps;
  return {
    image: config.image,
    network: config.network,
    memoryMb: spec.limits?.memory_mb ?? config.memory_mb,
    cpus: spec.limits?.cpus ?? config.cpus,
    pidsLimit: spec.limits?.pids_limit ?? config.pids_limit,
    readOnlyRoot: config.read_only_root,
    pull: config.pull,
    // Run-wide: the gates hold --max-sandboxes, --prewarm and the start rate across all worker threads.
    gates: deps.sandboxGates,
    maxSandboxes: config.max_sandboxes,
    prewarm: config.prewarm,
    removeTaskDirOnCleanup: !config.keep_workspaces,
    passEnv: config.pass_env,
    sandboxRo: config.sandbox_ro,
    disk: diskOption(spec.limits?.disk ?? config.disk),
    ...harborOptions,
  };
}

/**
 * Prepare, continued: the task's MCP servers (each started on the first call of one of its tools), the tool
 * definitions offered to the model, and the sandbox checked before the first turn when a tool or verify needs it.
 */
async function setUpToolsAndSandbox(t: TaskRun): Promise<void> {
  const { spec, deps, ctx, signal } = t;
  const { config } = deps;
  if (t.harborProblem) throw new EnvironmentSetupError(t.harborProblem);
  // A Harbor task's sandbox comes first: its image (built first when it comes from a Dockerfile) is where its own
  // MCP servers run, and the environment reads its spec on creation.
  if (t.harbor) await setUpHarborSandbox(t.harbor, t, signal);
  const ownMcpToolsets = await setUpMcp(t);
  // A Harbor task's own servers are offered whatever toolsets were drawn, as Harbor's agents register them.
  const enabledToolsets = t.harbor ? [...new Set([...spec.toolsets, ...ownMcpToolsets])] : spec.toolsets;
  t.tools = withoutOtherMcpTools(await getToolDefinitions({ enabledToolsets }), t.mcpCatalogs);
  const needsEnv =
    t.tools.some((tool) => registry.get(tool.function.name)?.needsEnvironment) || spec.verify !== undefined;
  if (needsEnv && !t.harbor) {
    try {
      await t.taskEnv.preflight();
    } catch (err) {
      throw new EnvironmentSetupError(errorText(err));
    }
  }
}

async function setUpHarborSandbox(harbor: HarborPlan, t: TaskRun, signal: AbortSignal): Promise<void> {
  try {
    const { harborImage, harborPrepare } = await harborPhases();
    t.envSpec.image = await harborImage(harbor, signal);
    await t.taskEnv.preflight();
    await harborPrepare(harbor, await t.taskEnv.get(), signal);
  } catch (err) {
    throw new EnvironmentSetupError(errorText(err));
  }
}

/** The task's MCP servers: the run's and the row's own (a row's wins over the run's of its name); its own toolsets. */
async function setUpMcp(t: TaskRun): Promise<string[]> {
  const { spec, deps, ctx } = t;
  const { config } = deps;
  let own: McpServerCatalog[] = [];
  if (spec.extra?.mcp_servers !== undefined) {
    try {
      // Loaded only by rows that have servers (it brings the config parsing along).
      const { taskRowMcp } = await import("./mcp_setup.js");
      own = await taskRowMcp(spec.extra.mcp_servers, {
        getEnv: ctx.getEnv,
        passEnv: config.pass_env,
        signal: t.taskAbort.signal,
      });
      t.mcpCatalogs = [...t.mcpCatalogs.filter((c) => !own.some((o) => o.config.name === c.config.name)), ...own];
    } catch (err) {
      throw new EnvironmentSetupError(errorText(err));
    }
  }
  if (t.mcpCatalogs.length) {
    t.mcpSessions = new McpTaskSessions(t.mcpCatalogs, {
      getEnv: ctx.getEnv,
      passEnv: config.pass_env,
      onEvent: (message) => void t.environmentEvents.push({ at: Date.now(), message }),
      onStartFailure: (reason) => {
        t.envFailure ??= new EnvironmentSetupError(reason);
        t.taskAbort.abort(t.envFailure);
      },
    });
    ctx.mcp = t.mcpSessions;
  }
  return own.map((c) => mcpToolsetName(c.config.name));
}

/** Run the agent: the loop (inside a Harbor trial's agent phase for Harbor tasks), and its outcome. */
async function runAgent(t: TaskRun): Promise<AgentLoopResult> {
  const { spec, deps, ctx, pipeline, tokenLedger } = t;
  const { config } = deps;
  const executeTool = (name: string, args: Record<string, unknown>, c: ToolContext) => pipeline.call(name, args, c);
  const agentLoop = (loopSignal: AbortSignal) =>
    runAgentLoop({
      model: t.models.agent,
      prompt: spec.prompt,
      tools: t.tools,
      systemPrompt: config.system_prompt ?? DEFAULT_SYSTEM_PROMPT,
      ephemeralSystemPrompt: config.ephemeral_system_prompt,
      prefill: deps.prefill,
      maxTurns: config.max_turns,
      maxConsecutiveToolErrors: config.max_consecutive_tool_errors,
      toolConcurrency: config.tool_concurrency,
      executeTool,
      ctx,
      signal: loopSignal,
      // The continued answer's reasoning only reaches the model when reasoning is sent back.
      continueReasoningOnly: config.preserve_reasoning,
      ...(tokenLedger ? { tokenLedger } : {}),
    });
  let timeLimited = false;
  let loop: AgentLoopResult;
  if (t.harbor) {
    const { harborAgentPhase } = await harborPhases();
    try {
      ({ loop, timeLimited } = await harborAgentPhase(
        t.harbor,
        spec,
        t.taskEnv,
        agentLoop,
        t.agentAbort?.signal ?? t.signal,
      ));
    } catch (err) {
      loop = stoppedAtLimit(t, err);
    }
  } else if (t.agentAbort) {
    if (t.agentAbort.timedOut) throw new DeadlineBeforeAgentError("the task's time ran out before its agent started");
    try {
      ({ loop, timeLimited } = await loopUntilLimit(t.agentAbort, agentLoop, t.signal));
    } catch (err) {
      loop = stoppedAtLimit(t, err);
    }
    // Its sandbox still starting at the deadline: the time went to the infrastructure, not to the agent.
    if (timeLimited && t.taskEnv.starting) {
      t.loop = loop;
      throw new DeadlineBeforeAgentError("the task's time ran out while its sandbox was starting");
    }
  } else loop = await agentLoop(t.signal);
  t.loop = loop;
  t.outcome = t.limitHit
    ? "resource_limit"
    : timeLimited
      ? "time_limit"
      : loop.completed
        ? "completed"
        : loop.partial
          ? "partial"
          : "max_turns";
  if (t.limitHit) t.error = t.limitHit.message;
  // Before verify and scoring: the task's MCP servers are the agent's processes too.
  await t.mcpSessions?.close();
  return loop;
}

/**
 * What the agent did before a limit of its sandbox stopped its loop (`limitHit`), to be graded; anything else that
 * stopped it (cancel, the task's deadline, a sandbox lost otherwise) is thrown again.
 */
function stoppedAtLimit(t: TaskRun, err: unknown): AgentLoopResult {
  if (!(err instanceof AgentLoopAborted && t.limitHit && !t.signal.aborted)) throw err;
  return err.partialResult;
}

/** Score: the verify command (or a Harbor verifier), then the scorers, for a task that ended as done. */
async function verifyAndScore(t: TaskRun, loop: AgentLoopResult): Promise<void> {
  const { spec, deps, signal } = t;
  const { config } = deps;
  if (t.envFailure) {
    t.outcome = "environment_error";
    t.error = `environment failed: ${errorText(t.envFailure)}`;
  } else if (t.harbor) {
    const { harborVerifierPhase } = await harborPhases();
    t.harborVerdict = await harborVerifierPhase(
      t.harbor,
      t.taskEnv,
      join(deps.runDir, "harbor", taskDirName(specKey(spec))),
      signal,
    );
  } else if (spec.verify) {
    t.verify = await runVerify(
      spec,
      t.taskEnv,
      { timeoutSec: config.verify_timeout, isolated: config.verify_isolated },
      signal,
    );
  }
  if (
    DONE_OUTCOMES.has(t.outcome) &&
    (spec.expected !== undefined || spec.rubric !== undefined || t.verify || t.harborVerdict)
  ) {
    // Loaded only by runs that score (its schemas and matchers are not needed otherwise).
    const { scoreTask } = await import("../score/scorers.js");
    t.scored = await scoreTask({
      prompt: spec.prompt,
      finalResponse: loop.finalResponse,
      expected: spec.expected,
      rubric: spec.rubric,
      verify: t.verify,
      ...(t.harborVerdict ? { harbor: t.harborVerdict } : {}),
      judge: t.models.judge,
      signal,
    });
  }
}

/** A phase threw: the task's outcome class and error text (a lost sandbox wins over what it caused). */
function recordFailure(t: TaskRun, err: unknown): void {
  const { config } = t.deps;
  if (err instanceof AgentLoopAborted) t.loop = err.partialResult;
  t.outcome =
    t.envFailure && !t.cancel.aborted && !t.taskAbort.timedOut
      ? "environment_error"
      : classifyError(err instanceof AgentLoopAborted ? err.cause : err, t.signal, t.taskAbort.timedOut);
  t.error =
    t.outcome === "timeout"
      ? `task timed out after ${config.task_timeout} s`
      : t.outcome === "cancelled"
        ? "cancelled (run interrupted)"
        : errorText(t.envFailure ?? err);
  const cause = err instanceof AgentLoopAborted ? err.cause : err;
  t.deterministic = t.outcome === "model_error" && cause instanceof ModelError && cause.deterministic;
  if (t.outcome === "internal_error") {
    t.stack = cause instanceof Error ? cause.stack : undefined;
  }
}

/** The task's MCP servers and sandbox removed, its deadline timer ended; a failed clean-up is only logged. */
async function cleanUpTask(t: TaskRun): Promise<void> {
  await t.mcpSessions?.close().catch(() => undefined);
  try {
    await t.taskEnv.cleanup();
  } catch (err) {
    t.deps.logger.warn(`task ${t.spec.id}: environment cleanup failed: ${errorText(err)}`);
  }
  t.agentAbort?.dispose();
  t.taskAbort.dispose();
}

/**
 * A trajectory entry whose biggest parts are already JSON (`recordJson` writes them as they are): the
 * conversation, the tool list and the zero-filled tool stats. Keys with an undefined value are left out of the
 * line, as `JSON.stringify` leaves them out, so every entry has the same keys in the same order (one shape).
 */
type LineEntry = Omit<TrajectoryEntry, "conversations" | "tools" | "tool_stats" | "tool_error_counts"> & {
  conversations: JsonText;
  tools: JsonText;
  tool_stats: JsonText;
  tool_error_counts: JsonText;
};

/** Record: the task's trajectory entry (what every output line of it holds). */
function trajectoryEntry(t: TaskRun): LineEntry {
  const { spec, loop, tools, approval, outcome, error, verify } = t;
  const { config } = t.deps;
  let modelRetries = 0;
  for (const e of t.modelEvents) if (e.kind === "retry") modelRetries++;
  const messages = loop?.messages ?? [];
  const usage: Usage = loop?.usage ?? emptyUsage();
  const toolStats = toolStatsJson(countToolCalls(messages), statsToolNames(registry.sortedNames()));
  const { score, judge, judge_usage } = scoreFields(t.scored);
  if (score) {
    const criteria = scoringCriteria(spec);
    if (criteria) score.criteria = criteria;
  }
  const entry: LineEntry = {
    prompt_index: spec.index,
    task_id: spec.id,
    epoch: spec.epoch,
    conversations: new JsonText(conversationsJson(toHermesConversations(messages, tools))),
    messages,
    tools: new JsonText(toolsJson(tools)),
    metadata: entryMetadata(t),
    completed: outcome === "completed",
    partial: outcome === "partial",
    outcome,
    api_calls: loop?.apiCalls ?? 0,
    toolsets_used: spec.toolsets,
    toolsets_offered: offeredToolsets(spec.toolsets, tools),
    tool_stats: new JsonText(toolStats.tool_stats),
    tool_error_counts: new JsonText(toolStats.tool_error_counts),
    usage,
    approval_usage: approval?.usage,
    approvals: approval?.records ?? [],
    model_calls: loop ? pricedCalls(config, loop.modelCalls) : undefined,
    injected_messages: loop?.injectedMessages,
    verify,
    final_response: loop?.finalResponse ?? null,
    error: error || undefined,
    duration_ms: Date.now() - t.started,
    model_retries: modelRetries || undefined,
    score,
    judge,
    judge_usage,
    cost_usd: undefined,
  };
  entry.cost_usd = taskCost(config, [entry.usage, entry.approval_usage, entry.judge_usage]);
  return entry;
}

/** The entry's `metadata`: the original's three keys, then ours (the optional ones only when they have a value). */
function entryMetadata(t: TaskRun): Record<string, unknown> {
  const { spec, tools } = t;
  const { config } = t.deps;
  const metadata: Record<string, unknown> = {
    batch_num: Math.floor(spec.index / config.batch_size),
    timestamp: isoTime(Date.now()),
    model: config.model,
    seed: config.seed,
    distribution: config.toolsets ? null : config.distribution,
    env: config.env,
    dataset_line: spec.line,
    attempt: spec.attempt,
  };
  if (spec.metadata) metadata.dataset_metadata = spec.metadata;
  if (spec.extra && Object.keys(spec.extra).length) metadata.dataset_fields = spec.extra;
  const mcpServers = mcpMetadata(t.mcpCatalogs, tools);
  if (mcpServers) metadata.mcp_servers = mcpServers;
  return metadata;
}

/**
 * The entry's line, with every lone UTF-16 surrogate in its text written as U+FFFD: JSON.stringify writes one as a
 * `\udXXX` escape, which UTF-8 cannot hold and Python's readers (tokenizers, Arrow) refuse with the whole file. A
 * server's escape or a model answer cut inside an emoji can carry one. Only a line whose text has such an escape
 * at all is looked at again.
 */
function lineJson(entry: LineEntry, extra?: object): string {
  const line = recordJson(entry, extra);
  if (!line.includes("\\ud")) return line;
  const clean: Record<string, unknown> = {};
  let changed = false;
  for (const [key, value] of Object.entries(entry)) {
    const kept = value instanceof JsonText ? wellFormedText(value) : wellFormed(value);
    if (kept !== value) changed = true;
    clean[key] = kept;
  }
  return changed ? recordJson(clean, extra) : line;
}

/** A part serialised ahead (the conversation, the tool list), again without lone surrogates when it had any. */
function wellFormedText(text: JsonText): JsonText {
  if (!text.json.includes("\\ud")) return text;
  const value: unknown = JSON.parse(text.json);
  const clean = wellFormed(value);
  return clean === value ? text : new JsonText(JSON.stringify(clean));
}

/** Record, continued: the message to the main thread: the output line, its kind (failed, dropped or not), tokens. */
function outcomeMessage(t: TaskRun, entry: LineEntry): TaskOutcomeMessage {
  const { spec, loop, approval, outcome, error, envFailure, deterministic, stack } = t;
  const { config } = t.deps;
  const tokens = {
    agent: entry.usage.total_tokens,
    approver: approval?.usage.total_tokens ?? 0,
    judge: entry.judge_usage?.total_tokens ?? 0,
  };
  let msg: TaskOutcomeMessage;
  let dropReason: DropReason | undefined;
  // A sandbox that hit one of its limits says which (its lost reason starts with it).
  const limit =
    outcome === "resource_limit"
      ? t.limitHit?.reason
      : outcome === "environment_error" && envFailure instanceof Error
        ? limitReason(envFailure.message)
        : undefined;
  if (!DONE_OUTCOMES.has(outcome)) {
    const line = lineJson(entry, { retryable: deterministic ? false : undefined, reason: limit });
    msg = { taskId: spec.id, kind: "failed", outcome, line, tokens, error };
    if (stack) msg.stack = stack;
  } else {
    // Valid names are the tools this task was offered, as the original's are the tools it loaded for the task: a
    // registered tool of another toolset is as unknown to the model as one nobody registered.
    const offered = new Set(t.tools.map((tool) => tool.function.name));
    dropReason = dropReasonFor(loop, loop?.messages ?? [], offered, config.require_reasoning);
    msg = dropReason
      ? {
          taskId: spec.id,
          kind: "dropped",
          outcome,
          line: lineJson(entry, { dropped: dropReason, reason: limit }),
          tokens,
        }
      : {
          taskId: spec.id,
          kind: "trajectory",
          outcome,
          line: lineJson(entry, limit ? { reason: limit } : undefined),
          tokens,
        };
    if (dropReason) msg.error = dropReason;
  }
  addReported(msg, t);
  if (t.tokenLedger) addRlLine(msg, t, entry, dropReason);
  return msg;
}

/** What events.log reports of the task: its model and environment events, its approver failures. */
function addReported(msg: TaskOutcomeMessage, t: TaskRun): void {
  if (t.modelEvents.length) msg.modelEvents = t.modelEvents;
  if (t.environmentEvents.length) msg.environmentEvents = t.environmentEvents;
  const records = t.approval?.records;
  if (records?.length) {
    const approverErrors = records.filter((r) => r.error);
    if (approverErrors.length) msg.approverErrors = { count: approverErrors.length, first: approverErrors[0]!.reason };
  }
}

/** `--rl-capture`: the task's rl.jsonl line, and what made its token data untrustworthy. */
function addRlLine(msg: TaskOutcomeMessage, t: TaskRun, entry: LineEntry, dropped: string | undefined): void {
  const rl = buildRlLine({
    taskId: t.spec.id,
    epoch: t.spec.epoch,
    config: t.deps.config,
    loop: t.loop,
    ledger: t.tokenLedger!,
    outcome: t.outcome,
    error: t.error,
    score: entry.score,
    dropped,
  });
  msg.rlLine = JSON.stringify(rl);
  if (rl.problems.length) msg.rlProblems = rl.problems;
}

/** The definitions without the MCP tools of servers this task does not have (another row's own servers). */
function withoutOtherMcpTools<T extends { function: { name: string } }>(
  defs: readonly T[],
  catalogs: readonly McpServerCatalog[],
): readonly T[] {
  const mine = new Set(catalogs.flatMap((c) => c.tools.map((t) => t.registeredName)));
  const other = (name: string) => isMcpTool(name) && !mine.has(name);
  return defs.some((d) => other(d.function.name)) ? defs.filter((d) => !other(d.function.name)) : defs;
}

/** `mcp_servers`: the MCP servers whose tools this task was offered (name, transport, where, server info, tools). */
function mcpMetadata(
  catalogs: McpServerCatalog[] | undefined,
  tools: readonly { function: { name: string } }[],
): Record<string, unknown>[] | undefined {
  if (!catalogs?.length) return undefined;
  const offered = new Set(tools.map((t) => t.function.name));
  const used = catalogs.filter((c) => c.tools.some((t) => offered.has(t.registeredName)));
  return used.length ? mcpServersMetadata(used) : undefined;
}

/** USD for the given usages at the run's prices per million tokens; undefined without prices. */
export function taskCost(
  config: Pick<RunConfig, "price_input" | "price_output">,
  usages: (Usage | undefined)[],
): number | undefined {
  if (config.price_input === undefined && config.price_output === undefined) return undefined;
  let usd = 0;
  for (const u of usages) {
    if (!u) continue;
    usd += (u.prompt_tokens * (config.price_input ?? 0) + u.completion_tokens * (config.price_output ?? 0)) / 1e6;
  }
  return Math.round(usd * 1e8) / 1e8;
}

/** The loop's model calls, each with the USD of its tokens when the run has prices. */
function pricedCalls(
  config: Pick<RunConfig, "price_input" | "price_output">,
  calls: ModelCallRecord[],
): ModelCallRecord[] {
  if (config.price_input === undefined && config.price_output === undefined) return calls;
  return calls.map((c) => {
    const cost = taskCost(config, [c.usage]);
    return cost === undefined ? c : { ...c, cost_usd: cost };
  });
}

/** The trajectory's score, and the judge's call with its tokens counted apart from the agent's. */
export function scoreFields(
  scored: ScorerOutput[] | undefined,
): Pick<TrajectoryEntry, "score" | "judge" | "judge_usage"> {
  if (!scored) return {};
  const judge = scored.find((s) => s.judge)?.judge;
  const results = scored.map(({ judge: _judge, ...result }) => result);
  return { score: combineScores(results), ...(judge ? { judge, judge_usage: judge.usage } : {}) };
}

function dropReasonFor(
  loop: AgentLoopResult | undefined,
  messages: ChatMessage[],
  known: Set<string>,
  requireReasoning: boolean,
): DropReason | undefined {
  // The original retries an empty answer 3 times, then discards the sample: never a completed one.
  if (loop?.end === "empty_response") return "empty_response";
  if (unknownToolsCalled(messages, known).length > 0) return "unknown_tools";
  if (requireReasoning && !reasoningStats(messages).has_any_reasoning) return "no_reasoning";
  return undefined;
}

/**
 * The verify step, out of the agent's reach: every process of the agent is ended first (the backend's
 * stopProcesses, which throws when it cannot make sure), then the row's verify_files are put in place (over
 * anything the agent wrote at those paths) and the command runs in a new process whose exit status the harness
 * reads itself (the backend's runVerify), never through the agent's persistent shell.
 */
export async function runVerify(
  spec: Pick<TaskSpec, "verify" | "verifyFiles">,
  taskEnv: TaskEnvironment,
  opts: { timeoutSec: number; isolated: boolean },
  signal: AbortSignal,
): Promise<VerifyResult> {
  const command = spec.verify!;
  let copy: Environment | undefined;
  try {
    const taskSandbox = await taskEnv.get();
    if (taskSandbox.stopProcesses) await taskSandbox.stopProcesses();
    else for (const p of await taskSandbox.listBackground()) if (p.running) await taskSandbox.killBackground(p.id);
    if (opts.isolated) {
      if (!taskSandbox.isolatedCopy)
        throw new Error(`the ${taskSandbox.kind} environment cannot make an isolated copy for --verify-isolated`);
      copy = await taskSandbox.isolatedCopy(signal);
    }
    const env = copy ?? taskSandbox;
    const files: { path: string; data: Buffer }[] = [];
    if (spec.verifyFiles) {
      for (const rel of await listFiles(spec.verifyFiles))
        files.push({
          path: `${env.workdir.replace(/\/$/, "")}/${rel}`,
          data: await readFile(join(spec.verifyFiles, rel)),
        });
    }
    let r: ExecResult;
    if (env.runVerify) {
      // A new process whose exit status the harness reads itself: no shell or marker of the agent's in between.
      r = await env.runVerify(command, { files, timeoutMs: opts.timeoutSec * 1000, signal, maxOutputChars: 10_000 });
    } else {
      for (const f of files) await env.writeFile(f.path, f.data);
      r = await env.exec(command, { timeoutMs: opts.timeoutSec * 1000, signal, maxOutputChars: 10_000 });
    }
    const output = [r.stdout, r.stderr].filter(Boolean).join("\n");
    return { command, exit_code: r.exitCode, passed: r.exitCode === 0 && !r.timedOut, output, timed_out: r.timedOut };
  } catch (err) {
    return {
      command,
      exit_code: -1,
      passed: false,
      output: `verify could not run: ${errorText(err)}`,
      timed_out: false,
    };
  } finally {
    // A copy that cannot be removed stays a leftover that `gc` finds by its run and task labels.
    await copy?.cleanup().catch(() => undefined);
  }
}

/** Files under a folder, as relative paths with `/` (symlinks and special files are not followed). */
async function listFiles(root: string, rel = ""): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(join(root, rel), { withFileTypes: true })) {
    const path = rel ? `${rel}/${entry.name}` : entry.name;
    if (entry.isDirectory()) out.push(...(await listFiles(root, path)));
    else if (entry.isFile()) out.push(path);
  }
  return out.sort();
}
