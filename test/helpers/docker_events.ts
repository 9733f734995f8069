/**
 * The containers of one run, counted from the engine's event stream (create and destroy) instead of listing them
 * over and over: every container is seen, however briefly it lived, and the engine does no work between events.
 */
import { LABEL_ROLE, LABEL_RUN, dockerClient } from "../../tools/environments/docker/docker_client.js";

export interface LiveContainers {
  /** Most containers of the run alive at once so far (image probes left out). */
  readonly peak: number;
  /** Creations and removals seen so far (image probes left out). */
  readonly created: number;
  readonly destroyed: number;
  /** Ends the watch. */
  stop(): void;
}

/** Starts watching `run`'s containers; events from a second before the call on are replayed, so none is missed. */
export async function watchLiveContainers(run: string): Promise<LiveContainers> {
  const stream = (await dockerClient().getEvents({
    since: Math.floor(Date.now() / 1000) - 1,
    filters: { type: ["container"], event: ["create", "destroy"], label: [`${LABEL_RUN}=${run}`] },
  })) as NodeJS.ReadableStream & { destroy(): void };
  const live = new Set<string>();
  const state = { peak: 0, created: 0, destroyed: 0 };
  let rest = "";
  stream.on("data", (chunk: Buffer) => {
    const lines = (rest + chunk.toString("utf8")).split("\n");
    rest = lines.pop()!;
    for (const line of lines) {
      if (!line.trim()) continue;
      const e = JSON.parse(line) as { Action: string; id: string; Actor: { Attributes: Record<string, string> } };
      if (e.Actor.Attributes[LABEL_ROLE] === "probe") continue;
      if (e.Action === "create") {
        state.created++;
        live.add(e.id);
        state.peak = Math.max(state.peak, live.size);
      } else if (e.Action === "destroy") {
        state.destroyed++;
        live.delete(e.id);
      }
    }
  });
  stream.on("error", () => undefined);
  return {
    get peak() {
      return state.peak;
    },
    get created() {
      return state.created;
    },
    get destroyed() {
      return state.destroyed;
    },
    stop: () => stream.destroy(),
  };
}
