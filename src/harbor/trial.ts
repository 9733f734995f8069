/**
 * The phases of a Harbor trial inside the task's sandbox, around our own agent loop (src/run/task.ts):
 * setup (/logs folders, healthcheck, the agent offline with --harbor-network agent-none), the oracle
 * (solution/solve.sh instead of a model), the verifier (Harbor's contract) and the copy of its logs.
 */
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { sleep } from "../core/abort.js";
import type { Environment, ExecResult } from "../../tools/environments/base.js";
import { readRewardFiles, type HarborVerdict } from "../score/harbor_reward.js";
import { resolveEnvTable } from "./env_template.js";
import { agentNetwork, verifierNetwork, type HarborTask } from "./task_config.js";

const ROOT = "0:0";
/** Per copied log file and per task, so a runaway log does not fill the run folder. */
export const LOG_FILE_CAP = 1_000_000;
const LOG_TOTAL_CAP = 5_000_000;

export interface HarborRunSettings {
  passEnv: readonly string[];
  timeoutMultiplier: number;
  network: "task" | "agent-none";
  /** The sandbox's network for a public task: the engine's bridge, or the user-defined network --network names; "none" otherwise. */
  taskNetwork: string;
  passThreshold: number;
}

function need(env: Environment): Required<Pick<Environment, "execAs">> & Environment {
  if (!env.execAs)
    throw new Error(`Harbor tasks need --env docker (the ${env.kind} environment cannot run commands as another user)`);
  return env as Required<Pick<Environment, "execAs">> & Environment;
}

/** `command` as root; `path` reaches it as $HB_PATH (never spliced into the command). */
async function asRoot(
  env: Environment,
  command: string,
  opts: { stdin?: string; timeoutMs?: number; path?: string } = {},
): Promise<ExecResult> {
  const { path, ...rest } = opts;
  return need(env).execAs(command, {
    user: ROOT,
    maxOutputChars: 20_000_000,
    ...rest,
    ...(path !== undefined ? { env: { HB_PATH: path } } : {}),
  });
}

/** Runs the healthcheck as Harbor does: after start_period, up to retries + 1 tries, interval apart. */
async function healthcheck(env: Environment, task: HarborTask, signal?: AbortSignal): Promise<void> {
  const h = task.healthcheck!;
  if (h.start_period_sec > 0) await sleep(h.start_period_sec * 1000, signal);
  let last = "";
  for (let attempt = 0; attempt <= h.retries; attempt++) {
    if (attempt > 0) await sleep(h.interval_sec * 1000, signal);
    const r = await need(env).execAs(h.command, { timeoutMs: h.timeout_sec * 1000, signal, maxOutputChars: 2000 });
    if (r.exitCode === 0 && !r.timedOut) return;
    last = r.timedOut
      ? `timed out after ${h.timeout_sec} s`
      : `exit ${r.exitCode}: ${(r.stderr || r.stdout).trim().slice(-200)}`;
  }
  throw new Error(`healthcheck failed ${h.retries + 1} time(s): ${last}`);
}

/**
 * Connects or disconnects the sandbox's network for a phase that wants `want` (Harbor's per-phase policy,
 * `trial/network_policy.py`); a sandbox made without a network has none to give. The state is kept on the
 * environment object, which lives for the task.
 */
const connectedState = new WeakMap<Environment, boolean>();
async function networkFor(env: Environment, settings: HarborRunSettings, want: "public" | "none"): Promise<void> {
  if (settings.taskNetwork === "none") return;
  const connected = connectedState.get(env) ?? true;
  const on = want === "public";
  if (on === connected) return;
  await env.setNetwork!(settings.taskNetwork, on);
  connectedState.set(env, on);
}

/** The agent phase's network: its own, or none with --harbor-network agent-none. */
const agentPhaseNetwork = (task: HarborTask, settings: HarborRunSettings) =>
  settings.network === "agent-none" ? "none" : agentNetwork(task);

/** Before the agent: /logs/{agent,verifier,artifacts}, the healthcheck (on the baseline network), then the agent's network. */
export async function prepareHarborSandbox(
  env: Environment,
  task: HarborTask,
  settings: HarborRunSettings,
  signal?: AbortSignal,
): Promise<void> {
  const setUp = async () => {
    const r = await asRoot(
      env,
      "rm -rf /tests && mkdir -p /logs/agent /logs/verifier /logs/artifacts && chmod 777 /logs/agent /logs/verifier /logs/artifacts",
    );
    if (r.exitCode !== 0) throw new Error(`could not make /logs in the sandbox: ${r.stderr.trim().slice(-200)}`);
  };
  await setUp();
  // A sandbox that starts a new container of the task's image (Docker, once a root agent ended the last one, and
  // the agent goes on in it) does it there too: no /tests of the image's in the agent's reach.
  (env as { whenRenewed?: (step: () => Promise<void>) => void }).whenRenewed?.(setUp);
  await networkFor(env, settings, task.network);
  if (task.healthcheck) await healthcheck(env, task, signal);
  await networkFor(env, settings, agentPhaseNetwork(task, settings));
}

/** Files under a host folder, relative, sorted. */
function hostFiles(root: string, rel = ""): string[] {
  return readdirSync(join(root, rel), { withFileTypes: true }).flatMap((e) => {
    const p = rel ? `${rel}/${e.name}` : e.name;
    return e.isDirectory() ? hostFiles(root, p) : e.isFile() ? [p] : [];
  });
}

/** Copies a host folder into the sandbox as root (each file through base64 on stdin), executables kept executable. */
async function upload(env: Environment, hostDir: string, target: string): Promise<void> {
  const clear = await asRoot(env, 'rm -rf "$HB_PATH" && mkdir -p "$HB_PATH"', { path: target });
  if (clear.exitCode !== 0) throw new Error(`could not make ${target}: ${clear.stderr.trim().slice(-200)}`);
  for (const rel of hostFiles(hostDir).sort()) {
    const full = join(hostDir, rel);
    const mode = statSync(full).mode & 0o111 || rel.endsWith(".sh") ? "755" : "644";
    const dest = `${target}/${rel}`;
    const r = await asRoot(
      env,
      `mkdir -p "$(dirname "$HB_PATH")" && base64 -d > "$HB_PATH" && chmod ${mode} "$HB_PATH"`,
      { path: dest, stdin: readFileSync(full).toString("base64") },
    );
    if (r.exitCode !== 0) throw new Error(`could not upload ${rel} to ${target}: ${r.stderr.trim().slice(-200)}`);
  }
}

/** `--model oracle`: solution/ uploaded to /solution and solve.sh run as the agent's user, within the agent's time limit. */
export async function runOracle(
  env: Environment,
  task: HarborTask,
  settings: HarborRunSettings,
  timeoutMs: number | undefined,
  signal?: AbortSignal,
): Promise<ExecResult> {
  await upload(env, join(task.task_dir, "solution"), "/solution");
  const r = await need(env).execAs("bash /solution/solve.sh > /logs/agent/oracle.txt 2>&1", {
    env: resolveEnvTable({ ...task.env, ...task.solution_env }, settings.passEnv),
    timeoutMs,
    signal,
  });
  await asRoot(env, "rm -rf /solution");
  return r;
}

async function readIfPresent(env: Environment, path: string): Promise<string | undefined> {
  const r = await asRoot(env, 'if [ -f "$HB_PATH" ]; then cat "$HB_PATH"; else exit 3; fi', { path });
  return r.exitCode === 3 ? undefined : r.stdout;
}

/** Harbor's verifier: agent processes ended, tests/ at /tests, test.sh as [verifier].user, the reward files read. */
export async function runHarborVerifier(
  env: Environment,
  task: HarborTask,
  settings: HarborRunSettings,
  signal?: AbortSignal,
): Promise<HarborVerdict> {
  const base = { threshold: settings.passThreshold };
  if (env.stopProcesses) await env.stopProcesses();
  await networkFor(env, settings, verifierNetwork(task));
  // A new folder, not the agent's: /logs/verifier is writable by every user, and the root verifier would write
  // through what an agent of another uid left there (test-stdout.txt a link to reward.json or /tests/test.sh, a
  // folder at reward.txt). Moved aside first (/logs is root's), since root may lack the capabilities to remove a
  // tree the agent made read-only. /logs itself is made when missing: a container stopped at its memory limit
  // leaves the verifier a new sandbox of the task's image (DockerEnvironment).
  const renew = await asRoot(
    env,
    'old=/logs/.verifier-agent-$$; rm -rf "$old"; if [ -e /logs/verifier ] || [ -L /logs/verifier ]; then mv /logs/verifier "$old" || exit 1; fi; mkdir -p /logs && mkdir -m 777 /logs/verifier || exit 1; rm -rf "$old" 2>/dev/null; exit 0',
  );
  if (renew.exitCode !== 0)
    throw new Error(`could not make /logs/verifier anew: ${(renew.stderr || renew.stdout).trim().slice(-200)}`);
  renewedLogs.add(env);
  await upload(env, join(task.task_dir, "tests"), "/tests");
  const timeoutSec = task.verifier.timeout_sec * settings.timeoutMultiplier;
  const r = await need(env).execAs("(/tests/test.sh) > /logs/verifier/test-stdout.txt 2>&1", {
    user: task.verifier.user ?? ROOT,
    env: resolveEnvTable({ ...task.env, ...task.verifier.env }, settings.passEnv),
    timeoutMs: timeoutSec * 1000,
    signal,
  });
  const tail = (await readIfPresent(env, "/logs/verifier/test-stdout.txt"))?.slice(-2000);
  const withTail = { ...base, ...(tail ? { output_tail: tail } : {}) };
  if (r.timedOut)
    return { ...withTail, reward: null, reason: `the verifier timed out after ${timeoutSec} s`, timed_out: true };
  const json = await readIfPresent(env, "/logs/verifier/reward.json");
  const txt = json === undefined ? await readIfPresent(env, "/logs/verifier/reward.txt") : undefined;
  return { ...withTail, ...readRewardFiles(json, txt) };
}

/** The sandboxes whose /logs/verifier the harness made anew after the agent's processes ended. */
const renewedLogs = new WeakSet<Environment>();

/**
 * /logs/verifier/* and /logs/agent/* into `dest` (each file capped at LOG_FILE_CAP bytes, LOG_TOTAL_CAP in all): only
 * regular files, no link followed. /logs/agent, which the agent wrote, is read as the agent's user, so whatever it
 * swapped in leads only to what that user could read anyway; /logs/verifier as root once it was made anew for the
 * verifier, else (the agent's processes may not have ended) as the agent's user too.
 */
export async function copyHarborLogs(env: Environment, dest: string): Promise<void> {
  let total = 0;
  for (const folder of ["verifier", "agent"]) {
    const user = folder === "verifier" && renewedLogs.has(env) ? ROOT : undefined;
    const as = (command: string, path?: string) =>
      need(env).execAs(command, {
        ...(user ? { user } : {}),
        maxOutputChars: 20_000_000,
        ...(path !== undefined ? { env: { HB_PATH: path } } : {}),
      });
    const list = await as(`cd /logs && find ${folder} -type f 2>/dev/null | head -n 200`);
    for (const rel of list.stdout.split("\n").filter(Boolean)) {
      if (total >= LOG_TOTAL_CAP) break;
      const out = join(dest, rel);
      if (relative(dest, out).startsWith("..")) continue;
      const r = await as(
        `[ -f "$HB_PATH" ] && [ ! -L "$HB_PATH" ] || exit 3; head -c ${LOG_FILE_CAP} "$HB_PATH" | base64`,
        `/logs/${rel}`,
      );
      if (r.exitCode !== 0) continue;
      const data = Buffer.from(r.stdout.replace(/\s+/g, ""), "base64");
      total += data.length;
      mkdirSync(dirname(out), { recursive: true });
      writeFileSync(out, data);
    }
  }
}
