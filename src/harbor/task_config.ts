/**
 * task.toml of a Harbor task directory: parsed with smol-toml, validated with zod, and normalised to one shape
 * for the 1.0 (Terminal-Bench-era) form and schema_version 1.0–1.4. What hermes-batch cannot run yet is refused
 * here with the reason (`unsupportedReason`), so each task is accepted or refused on its own.
 */
import { parse as parseToml, TomlError } from "smol-toml";
import * as z from "zod";
import { parseRowMcpServers } from "../config/mcp_config.js";
import { errorMessage } from "../core/errors.js";

const num = z.number().finite();
/** A user name or a UID (Harbor: `str | int`), as the name docker exec takes. */
const userField = z
  .union([z.string().min(1), z.number().int().nonnegative()])
  .transform((u) => String(u))
  .optional();
const envTable = z.record(z.string(), z.string()).prefault({});

const HealthcheckSchema = z.object({
  command: z.string().min(1),
  interval_sec: num.positive().default(5),
  timeout_sec: num.positive().default(30),
  start_period_sec: num.nonnegative().default(0),
  start_interval_sec: num.positive().default(5),
  retries: z.number().int().nonnegative().default(3),
});

const EnvironmentSchema = z.object({
  docker_image: z.string().min(1).optional(),
  build_timeout_sec: num.positive().default(600),
  os: z.preprocess((v) => (typeof v === "string" ? v.toLowerCase() : v), z.enum(["linux", "windows"])).default("linux"),
  cpus: num.positive().optional(),
  memory_mb: num.positive().optional(),
  storage_mb: num.positive().optional(),
  /** The 1.0 form: Kubernetes quantities ("2G", "512Mi"). */
  memory: z.string().optional(),
  storage: z.string().optional(),
  gpus: z.number().int().nonnegative().default(0),
  gpu_types: z.array(z.string()).optional(),
  tpu: z.unknown().optional(),
  network_mode: z.string().optional(),
  allowed_hosts: z.array(z.string()).default([]),
  allow_internet: z.boolean().optional(),
  env: envTable,
  workdir: z.string().min(1).optional(),
  mcp_servers: z.array(z.record(z.string(), z.unknown())).default([]),
  healthcheck: HealthcheckSchema.optional(),
});

const TaskTomlSchema = z.object({
  version: z.string().optional(),
  schema_version: z.string().optional(),
  task: z
    .object({ name: z.string().min(1).optional() })
    .passthrough()
    .prefault({}),
  metadata: z.record(z.string(), z.unknown()).prefault({}),
  agent: z
    .object({
      timeout_sec: num.positive().optional(),
      user: userField,
      network_mode: z.string().optional(),
      allowed_hosts: z.array(z.string()).default([]),
    })
    .prefault({}),
  verifier: z
    .object({
      timeout_sec: num.positive().default(600),
      env: envTable,
      user: userField,
      environment_mode: z.enum(["shared", "separate"]).optional(),
      /** A separate verifier's own environment (same schema as [environment]); its presence implies "separate". */
      environment: z.record(z.string(), z.unknown()).optional(),
      network_mode: z.string().optional(),
      allowed_hosts: z.array(z.string()).default([]),
    })
    .passthrough()
    .prefault({}),
  solution: z.object({ env: envTable }).prefault({}),
  environment: EnvironmentSchema.prefault({}),
  steps: z.array(z.unknown()).optional(),
});

type TaskToml = z.infer<typeof TaskTomlSchema>;

/** A Harbor task as hermes-batch runs it (carried in the row's `harbor` field). */
export const HarborTaskSchema = z.object({
  task_dir: z.string().min(1),
  digest: z.string().regex(/^[0-9a-f]{64}$/),
  schema: z.string(),
  docker_image: z.string().optional(),
  build_timeout_sec: num,
  cpus: num.optional(),
  memory_mb: num.optional(),
  storage_mb: num.optional(),
  gpus: z.number().int(),
  /** The [environment] baseline: "public" or "none". */
  network: z.enum(["public", "none"]),
  /** The agent phase's network when [agent].network_mode overrides the baseline (Harbor's phase policy). */
  agent_network: z.enum(["public", "none"]).optional(),
  /** The verifier phase's network when [verifier].network_mode overrides the baseline. */
  verifier_network: z.enum(["public", "none"]).optional(),
  workdir: z.string().optional(),
  env: z.record(z.string(), z.string()),
  healthcheck: HealthcheckSchema.optional(),
  /** `[[environment.mcp_servers]]` in the list form a row's `mcp_servers` takes, Harbor's defaults applied. */
  mcp_servers: z.array(z.record(z.string(), z.unknown())).optional(),
  agent: z.object({ timeout_sec: num.optional(), user: z.string().optional() }),
  verifier: z.object({ timeout_sec: num, env: z.record(z.string(), z.string()), user: z.string().optional() }),
  solution_env: z.record(z.string(), z.string()),
});

export type HarborTask = z.infer<typeof HarborTaskSchema>;

/** The network of each phase: its table's override, else the [environment] baseline. */
export const agentNetwork = (t: HarborTask): "public" | "none" => t.agent_network ?? t.network;
export const verifierNetwork = (t: HarborTask): "public" | "none" => t.verifier_network ?? t.network;
/** Whether any phase (setup, agent, verifier) needs the sandbox to have a network. */
export const needsNetwork = (t: HarborTask): boolean =>
  t.network === "public" || agentNetwork(t) === "public" || verifierNetwork(t) === "public";
export type Healthcheck = z.infer<typeof HealthcheckSchema>;

export const SUPPORTED_SCHEMAS = ["1.0", "1.1", "1.2", "1.3", "1.4"];

/** A reason a task.toml is refused, with the line when the TOML itself is broken. */
export class TaskTomlError extends Error {
  constructor(
    message: string,
    readonly line?: number,
  ) {
    super(message);
  }
}

/** "2G", "512Mi", "1.5Gi" → MiB; a size without a unit is refused, as Harbor's `_parse_size_to_mb` refuses it. */
export function quantityToMb(q: string): number | undefined {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([KMGT]i?)\s*$/i.exec(q);
  if (!m) return undefined;
  const unit = (m[2] ?? "").toUpperCase();
  const pow = { K: 1, M: 2, G: 3, T: 4 }[unit.replace("I", "")]!;
  // As Harbor maps the 1.0 form ("2G" → memory_mb 2048): G and Gi alike are binary.
  const bytes = Number(m[1]) * 1024 ** pow;
  return Math.max(1, Math.round(bytes / 1024 / 1024));
}

function describe(error: z.ZodError): string {
  return error.issues.map((i) => `'${i.path.join(".") || "task.toml"}': ${i.message}`).join("; ");
}

/** Parses and validates task.toml text (throws TaskTomlError). */
export function parseTaskToml(text: string): TaskToml {
  let raw: unknown;
  try {
    raw = parseToml(text);
  } catch (err) {
    if (err instanceof TomlError) throw new TaskTomlError(`invalid TOML: ${err.message.split("\n")[0]}`, err.line);
    throw new TaskTomlError(`invalid TOML: ${String(err)}`);
  }
  const parsed = TaskTomlSchema.safeParse(raw);
  if (!parsed.success) throw new TaskTomlError(describe(parsed.error));
  return parsed.data;
}

function schemaOf(t: TaskToml): string {
  const v = t.schema_version ?? t.version ?? "1.0";
  if (!SUPPORTED_SCHEMAS.includes(v))
    throw new TaskTomlError(
      `schema version ${v} is not supported (hermes-batch reads ${SUPPORTED_SCHEMAS.join(", ")})`,
    );
  return v;
}

type Network = "public" | "none";

/** A network_mode value as a network, or a refusal naming the key. */
function modeOf(mode: string, key: string): Network {
  if (mode === "public") return "public";
  if (mode === "no-network" || mode === "none") return "none";
  if (mode === "allowlist")
    throw new TaskTomlError(`allow-list networking ('${key}' = "allowlist") is not supported yet`);
  throw new TaskTomlError(`unknown '${key}' '${mode}' (Harbor's are public, no-network, allowlist)`);
}

/**
 * The [environment] baseline (`network_mode`, else the deprecated `allow_internet`, else public) and the agent
 * and verifier phases, each its own table's `network_mode` when set, else the baseline (Harbor's
 * `trial/network_policy.py`). `allowed_hosts` is valid upstream only with "allowlist", which is refused.
 */
function networksOf(t: TaskToml): { network: Network; agent: Network; verifier: Network } {
  const e = t.environment;
  for (const [key, hosts] of [
    ["environment", e.allowed_hosts],
    ["agent", t.agent.allowed_hosts],
    ["verifier", t.verifier.allowed_hosts],
  ] as const) {
    if (hosts.length) throw new TaskTomlError(`allow-list networking ('${key}.allowed_hosts') is not supported yet`);
  }
  const network = modeOf(
    e.network_mode ?? (e.allow_internet === false ? "no-network" : "public"),
    "environment.network_mode",
  );
  const phase = (mode: string | undefined, key: string) => (mode === undefined ? network : modeOf(mode, key));
  return {
    network,
    agent: phase(t.agent.network_mode, "agent.network_mode"),
    verifier: phase(t.verifier.network_mode, "verifier.network_mode"),
  };
}

/** Why hermes-batch cannot run this task (independent of the run's flags), or undefined. */
function refuse(t: TaskToml): void {
  if (t.environment.os === "windows") throw new TaskTomlError('Windows tasks (os = "windows") are not supported');
  if (t.steps?.length) throw new TaskTomlError("multi-step tasks ([[steps]]) are not supported yet");
  if (t.environment.tpu !== undefined) throw new TaskTomlError("TPU environments are not supported");
  // Harbor: a [verifier.environment] table without environment_mode means "separate"; with "shared" it is invalid.
  if (t.verifier.environment_mode === "separate" || t.verifier.environment !== undefined)
    throw new TaskTomlError(
      t.verifier.environment_mode === "shared"
        ? '[verifier].environment_mode = "shared" conflicts with a [verifier.environment] table'
        : 'a separate verifier environment (environment_mode = "separate" or a [verifier.environment] table) is not supported yet',
    );
}

/** The 1.0 form's size (`memory = "2G"`) beside the current `<key>_mb`: refused when unreadable or in conflict, as Harbor does. */
function legacySize(quantity: string | undefined, mb: number | undefined, key: string): number | undefined {
  if (quantity === undefined) return mb;
  const fromQuantity = quantityToMb(quantity);
  if (fromQuantity === undefined)
    throw new TaskTomlError(`'environment.${key}': '${quantity}' is not a size such as 2G or 512M`);
  if (mb !== undefined && mb !== fromQuantity)
    throw new TaskTomlError(
      `'environment.${key}' = '${quantity}' (${fromQuantity} MB) conflicts with 'environment.${key}_mb' = ${mb}`,
    );
  return fromQuantity;
}

/** The normalised task; `digest` and `task_dir` from the caller (they are about the folder, not the TOML). */
export function normaliseTask(t: TaskToml, taskDir: string, digest: string): HarborTask {
  const schema = schemaOf(t);
  refuse(t);
  const e = t.environment;
  const memory = legacySize(e.memory, e.memory_mb, "memory");
  const storage = legacySize(e.storage, e.storage_mb, "storage");
  const net = networksOf(t);
  return {
    task_dir: taskDir,
    digest,
    schema,
    ...(e.docker_image ? { docker_image: e.docker_image } : {}),
    build_timeout_sec: e.build_timeout_sec,
    ...(e.cpus !== undefined ? { cpus: e.cpus } : {}),
    ...(memory !== undefined ? { memory_mb: memory } : {}),
    ...(storage !== undefined ? { storage_mb: storage } : {}),
    gpus: e.gpus,
    network: net.network,
    ...(net.agent !== net.network ? { agent_network: net.agent } : {}),
    ...(net.verifier !== net.network ? { verifier_network: net.verifier } : {}),
    ...(e.workdir ? { workdir: e.workdir } : {}),
    env: e.env,
    ...(e.healthcheck ? { healthcheck: e.healthcheck } : {}),
    ...(e.mcp_servers.length ? { mcp_servers: harborMcpServers(e.mcp_servers) } : {}),
    agent: {
      ...(t.agent.timeout_sec !== undefined ? { timeout_sec: t.agent.timeout_sec } : {}),
      ...(t.agent.user ? { user: t.agent.user } : {}),
    },
    verifier: {
      timeout_sec: t.verifier.timeout_sec,
      env: t.verifier.env,
      ...(t.verifier.user ? { user: t.verifier.user } : {}),
    },
    solution_env: t.solution.env,
  };
}

/**
 * `[[environment.mcp_servers]]` as a row's `mcp_servers` list: a URL server without a transport is SSE (Harbor's
 * default, where a desktop config's default is streamable HTTP); a stdio server runs in the task's container. Its
 * shape is checked here (`${VAR}` references are resolved, and checked, when the run starts).
 */
function harborMcpServers(servers: Record<string, unknown>[]): Record<string, unknown>[] {
  const list = servers.map((s) =>
    s.url !== undefined && s.transport === undefined && s.type === undefined ? { ...s, transport: "sse" } : s,
  );
  try {
    parseRowMcpServers(list, new Proxy<NodeJS.ProcessEnv>({}, { get: () => "set" }));
  } catch (err) {
    const m = /^(\S+?): (.*)$/s.exec(errorMessage(err));
    throw new TaskTomlError(m ? `'environment.${m[1]}': ${m[2]}` : `'environment.mcp_servers': ${errorMessage(err)}`);
  }
  return list;
}

export function taskName(t: TaskToml): string | undefined {
  return t.task.name;
}

export function taskMetadata(t: TaskToml): Record<string, unknown> {
  return t.metadata;
}
