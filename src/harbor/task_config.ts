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
  os: z.enum(["linux", "windows"]).default("linux"),
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
      user: z.string().min(1).optional(),
      network_mode: z.string().optional(),
      allowed_hosts: z.array(z.string()).default([]),
    })
    .prefault({}),
  verifier: z
    .object({
      timeout_sec: num.positive().default(600),
      env: envTable,
      user: z.string().min(1).optional(),
      environment_mode: z.enum(["shared", "separate"]).default("shared"),
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
  /** "public" or "none". */
  network: z.enum(["public", "none"]),
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

/** "2G", "512Mi", "1.5Gi", "2048" (bytes) → MiB. */
export function quantityToMb(q: string): number | undefined {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([KMGT]i?)?\s*$/i.exec(q);
  if (!m) return undefined;
  const unit = (m[2] ?? "").toUpperCase();
  const pow = { "": 0, K: 1, M: 2, G: 3, T: 4 }[unit.replace("I", "")]!;
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

function networkOf(env: TaskToml["environment"]): "public" | "none" {
  const mode = env.network_mode ?? (env.allow_internet === false ? "no-network" : "public");
  if (mode === "public") return "public";
  if (mode === "no-network" || mode === "none") return "none";
  if (mode === "allowlist" || env.allowed_hosts.length)
    throw new TaskTomlError('allow-list networking (network_mode = "allowlist") is not supported yet');
  throw new TaskTomlError(`unknown network_mode '${mode}'`);
}

/** Why hermes-batch cannot run this task (independent of the run's flags), or undefined. */
function refuse(t: TaskToml): void {
  if (t.environment.os === "windows") throw new TaskTomlError('Windows tasks (os = "windows") are not supported');
  if (t.steps?.length) throw new TaskTomlError("multi-step tasks ([[steps]]) are not supported yet");
  if (t.environment.tpu !== undefined) throw new TaskTomlError("TPU environments are not supported");
  if (t.verifier.environment_mode === "separate")
    throw new TaskTomlError('a separate verifier environment (environment_mode = "separate") is not supported yet');
  if (t.agent.allowed_hosts.length || t.verifier.allowed_hosts.length)
    throw new TaskTomlError("allow-list networking (allowed_hosts) is not supported yet");
}

/** The normalised task; `digest` and `task_dir` from the caller (they are about the folder, not the TOML). */
export function normaliseTask(t: TaskToml, taskDir: string, digest: string): HarborTask {
  const schema = schemaOf(t);
  refuse(t);
  const e = t.environment;
  const memory = e.memory_mb ?? (e.memory !== undefined ? quantityToMb(e.memory) : undefined);
  if (e.memory !== undefined && memory === undefined)
    throw new TaskTomlError(`'environment.memory': '${e.memory}' is not a size such as 2G`);
  const storage = e.storage_mb ?? (e.storage !== undefined ? quantityToMb(e.storage) : undefined);
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
    network: networkOf(e),
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
