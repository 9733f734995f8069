/**
 * Why a task's container stopped, and whether it is wedged at its memory limit, from what the engine says: its
 * inspect, its events since the sandbox was made, its memory figures. docker_environment.ts grades a task by it:
 * a stop by the memory limit or a wedge ends the agent (resource_limit) and the verify runs in a new sandbox; a
 * root agent's own stop of its keep-alive gives it a new sandbox over the task folder; any other stop loses it.
 */
import type Docker from "dockerode";
import { sleep } from "../../../src/core/abort.js";
import { dockerClient, statusCodeOf } from "./docker_client.js";

/** How often a container that may be stopping is inspected again. */
const SETTLE_POLL_MS = 100;
/** How long the engine's events of a removed container may take to be listed. */
const EVENTS_MS = 5_000;
/** An `oom` event this long (ns) before the container's end is the memory limit's kill that ended it. */
const OOM_BEFORE_DIE_NS = 5_000_000_000n;
/** How long the engine's memory figures of a container may take. */
const STATS_MS = 5_000;
/**
 * Memory (MiB) under its limit that files in a container's memory file systems (tmpfs: /tmp, /dev/shm) may leave
 * free before the container counts as wedged at that limit: no process's end gives their memory back, and every
 * new process (each exec of the harness's, the kill passes and the verify included) is killed for memory.
 */
const WEDGE_HEADROOM_MB = 16;
/** Docker's default /dev/shm size (MiB), a tmpfs whose files the container's memory holds too. */
const DEV_SHM_MB = 64;

export interface StopCause {
  cause: "memory" | "self" | "other";
  status: string;
}

/**
 * Why the container no longer runs (undefined while it runs, watched up to `settleMs`): `memory`, the kernel killed
 * its processes for its memory limit (the engine's OOMKilled, or, once the container was removed (AutoRemove), its
 * `oom` event just before its end); `self`, its own processes ended its keep-alive: the keep-alive runs as the
 * agent's uid (root: `runAsRoot`), no `kill` of the engine's stopped it (docker kill, stop, rm -f: from outside), and
 * it did not end by itself at its lifetime (exit 0); `other`, anything else. `since`: when the sandbox was made (s).
 */
export async function containerStopCause(
  container: Docker.Container,
  o: { settleMs: number; since: number; runAsRoot: boolean },
): Promise<StopCause | undefined> {
  const inspect = (): Promise<{ running: boolean; status?: string; oom?: boolean; exit?: number }> =>
    container.inspect().then(
      (i) =>
        i.State?.Running
          ? { running: true }
          : {
              running: false,
              status: `stopped (${i.State?.Status ?? "?"})`,
              oom: i.State?.OOMKilled === true,
              exit: i.State?.ExitCode,
            },
      (e: unknown) => (statusCodeOf(e) === 404 ? { running: false, status: "gone" } : { running: true }),
    );
  let state = await inspect();
  for (const end = Date.now() + o.settleMs; state.running && Date.now() < end; state = await inspect())
    await sleep(SETTLE_POLL_MS);
  if (state.running) return undefined;
  const status = state.status ?? "?";
  if (state.oom) return { cause: "memory", status };
  const events = await stopEvents(container.id, o.since);
  if (events.oom) return { cause: "memory", status };
  const exit = state.exit ?? events.exit;
  if (o.runAsRoot && !events.kill && exit !== 0) return { cause: "self", status };
  return { cause: "other", status };
}

/**
 * What the engine's events since `since` say of a container's end (nothing when it cannot tell): an `oom` kill just
 * before it, a `kill` (from outside), the exit code of its end (`die`).
 */
async function stopEvents(id: string, since: number): Promise<{ oom: boolean; kill: boolean; exit?: number }> {
  const ask = (async () => {
    const stream = await dockerClient().getEvents({
      since,
      until: Math.ceil(Date.now() / 1000),
      filters: { container: [id], event: ["oom", "kill", "die"] },
    });
    let text = "";
    for await (const chunk of stream) text += String(chunk);
    const events: { action: string; at: bigint; exit?: number }[] = [];
    for (const line of text.split("\n")) {
      try {
        const e = JSON.parse(line) as {
          Action?: string;
          status?: string;
          timeNano?: number | string;
          Actor?: { Attributes?: Record<string, string> };
        };
        const exit = e.Actor?.Attributes?.exitCode;
        events.push({
          action: e.Action ?? e.status ?? "",
          at: BigInt(e.timeNano ?? 0),
          ...(exit !== undefined && /^\d+$/.test(exit) ? { exit: Number(exit) } : {}),
        });
      } catch {
        // not a whole event
      }
    }
    const die = events.findLast((e) => e.action === "die");
    return {
      oom: events.some((e) => e.action === "oom" && (!die || e.at >= die.at - OOM_BEFORE_DIE_NS)),
      kill: events.some((e) => e.action === "kill"),
      ...(die?.exit !== undefined ? { exit: die.exit } : {}),
    };
  })().catch(() => ({ oom: false, kill: false }));
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<{ oom: boolean; kill: boolean }>(
    (resolve) => (timer = setTimeout(() => resolve({ oom: false, kill: false }), EVENTS_MS)),
  );
  try {
    return await Promise.race([ask, late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * What holds a container wedged at its memory limit, or undefined when it is not: files in its memory file systems
 * (tmpfs: /tmp, /dev/shm) within WEDGE_HEADROOM_MB of the limit, so no process can start in it. Asked only when
 * those file systems can hold that much.
 */
export async function memoryWedge(
  container: Docker.Container,
  o: { memoryMb: number; tmpSizeMb: number; readOnlyRoot?: boolean },
): Promise<string | undefined> {
  const tmpfsMb = o.tmpSizeMb + (o.readOnlyRoot ? 256 + 64 : 0) + DEV_SHM_MB;
  if (o.memoryMb > tmpfsMb + WEDGE_HEADROOM_MB) return undefined;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error("late")), STATS_MS)));
  try {
    const stats = (await Promise.race([container.stats({ stream: false, "one-shot": true }), late])) as {
      memory_stats?: { limit?: number; stats?: Record<string, number> };
    };
    const m = stats.memory_stats?.stats ?? {};
    const limit = Math.min(stats.memory_stats?.limit ?? Infinity, o.memoryMb * 2 ** 20);
    // cgroup v2 names it; v1 counts it in the cache, apart from the page cache of files (reclaimable).
    const held = m.shmem ?? (m.total_cache ?? 0) - (m.total_active_file ?? 0) - (m.total_inactive_file ?? 0);
    if (!(held > limit - WEDGE_HEADROOM_MB * 2 ** 20)) return undefined;
    return `${Math.round(held / 2 ** 20)} MiB of it held by files in its memory file systems (/tmp, /dev/shm), which no process's end gives back`;
  } catch {
    return undefined;
  } finally {
    clearTimeout(timer);
  }
}
