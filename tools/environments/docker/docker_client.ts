/**
 * The Docker engine connection (dockerode over the socket, never the docker CLI), the labels every
 * hermes-batch container carries, image checks and label-based removal (used by cleanup and `gc`).
 */
import Docker from "dockerode";

export const LABEL_RUN = "hermes-batch.run";
export const LABEL_TASK = "hermes-batch.task";
/**
 * Marks the kind of container: "task" (an agent sandbox), "warm" (started ahead by the warm pool; it keeps
 * this label after a task takes it, labels being immutable) or "probe" (short-lived image inspection).
 */
export const LABEL_ROLE = "hermes-batch.role";
/** The process and worker thread that started a sandbox ("pid-threadId"), to remove what a dead thread left. */
export const LABEL_OWNER = "hermes-batch.owner";

let client: Docker | undefined;

/** One client per process. DOCKER_HOST is honoured; otherwise /var/run/docker.sock. */
export function dockerClient(): Docker {
  client ??= process.env.DOCKER_HOST ? new Docker() : new Docker({ socketPath: "/var/run/docker.sock" });
  return client;
}

export function statusCodeOf(err: unknown): number | undefined {
  const code = (err as { statusCode?: unknown } | null)?.statusCode;
  return typeof code === "number" ? code : undefined;
}

/** The engine's own message (dockerode puts the JSON body in `json`), else the error text. */
export function dockerErrorMessage(err: unknown): string {
  const json = (err as { json?: unknown } | null)?.json;
  if (json && typeof json === "object" && typeof (json as { message?: unknown }).message === "string") {
    return (json as { message: string }).message;
  }
  if (Buffer.isBuffer(json)) return json.toString("utf8").trim();
  return err instanceof Error ? err.message : String(err);
}

export class DockerUnavailableError extends Error {
  constructor(reason: string) {
    super(`Docker engine not reachable: ${reason}. Start it (scripts/start-dockerd.sh) or use --env local`);
    this.name = "DockerUnavailableError";
  }
}

export class DockerImageNotFoundError extends Error {
  constructor(readonly image: string) {
    super(
      `image ${image} not found locally; build it (scripts/build-test-image.sh builds the test images) or pass --pull`,
    );
    this.name = "DockerImageNotFoundError";
  }
}

/** For `hermes-batch tools` and the runner's preflight: can we talk to the engine? */
export async function dockerAvailability(timeoutMs = 5000): Promise<{ available: boolean; reason?: string }> {
  const signal = AbortSignal.timeout(timeoutMs);
  try {
    await Promise.race([
      dockerClient().ping(),
      new Promise((_, reject) =>
        signal.addEventListener("abort", () => reject(new Error(`no answer within ${timeoutMs} ms`))),
      ),
    ]);
    return { available: true };
  } catch (err) {
    return { available: false, reason: `Docker engine not reachable (${dockerErrorMessage(err)})` };
  }
}

export interface ImageInfo {
  id: string;
  /** The image's own USER, if it declares one. */
  user: string;
  workingDir: string;
}

const imageCache = new Map<string, Promise<ImageInfo>>();

async function inspectImage(image: string): Promise<ImageInfo | undefined> {
  try {
    const info = await dockerClient().getImage(image).inspect();
    return { id: info.Id, user: info.Config?.User ?? "", workingDir: info.Config?.WorkingDir ?? "" };
  } catch (err) {
    if (statusCodeOf(err) === 404) return undefined;
    throw new DockerUnavailableError(dockerErrorMessage(err));
  }
}

async function pullImage(image: string): Promise<void> {
  const docker = dockerClient();
  const stream = await docker.pull(image);
  await new Promise<void>((resolve, reject) => {
    docker.modem.followProgress(stream, (err: Error | null) => (err ? reject(err) : resolve()));
  });
}

/**
 * Checks that the image exists locally; pulls it only when `pull` is set. Throws DockerImageNotFoundError
 * (fast, before any task spends tokens) otherwise. Results are cached per process; a miss is not cached.
 */
export function ensureDockerImage(image: string, opts: { pull?: boolean } = {}): Promise<ImageInfo> {
  const cached = imageCache.get(image);
  if (cached) return cached;
  const pending = (async () => {
    let info = await inspectImage(image);
    if (!info && opts.pull) {
      try {
        await pullImage(image);
      } catch (err) {
        throw new Error(`pulling image ${image} failed: ${dockerErrorMessage(err)}`);
      }
      info = await inspectImage(image);
    }
    if (!info) throw new DockerImageNotFoundError(image);
    return info;
  })();
  imageCache.set(image, pending);
  pending.catch(() => imageCache.delete(image));
  return pending;
}

export interface LabelledContainer {
  id: string;
  name: string;
  run: string;
  task: string;
  role: string;
  state: string;
}

/** Containers carrying hermes-batch labels (all runs, or one run). */
export async function listLabelledContainers(
  filter: { run?: string; task?: string; role?: string; owner?: string } = {},
): Promise<LabelledContainer[]> {
  const label = filter.run !== undefined ? [`${LABEL_RUN}=${filter.run}`] : [LABEL_RUN];
  if (filter.task !== undefined) label.push(`${LABEL_TASK}=${filter.task}`);
  if (filter.role !== undefined) label.push(`${LABEL_ROLE}=${filter.role}`);
  if (filter.owner !== undefined) label.push(`${LABEL_OWNER}=${filter.owner}`);
  const list = await dockerClient().listContainers({ all: true, filters: { label } });
  return list.map((c) => ({
    id: c.Id,
    name: (c.Names?.[0] ?? "").replace(/^\//, ""),
    run: c.Labels?.[LABEL_RUN] ?? "",
    task: c.Labels?.[LABEL_TASK] ?? "",
    role: c.Labels?.[LABEL_ROLE] ?? "",
    state: c.State,
  }));
}

/** Force-removes a container and its anonymous volumes; a container already gone counts as removed. */
export async function removeContainerById(id: string): Promise<void> {
  try {
    await dockerClient().getContainer(id).remove({ force: true, v: true });
  } catch (err) {
    const code = statusCodeOf(err);
    // 404: gone; 409: removal already in progress (AutoRemove racing us).
    if (code === 404 || code === 409) return;
    throw err;
  }
}

/** Removes every labelled container (of one run, or of all runs). Returns what was (or would be) removed. */
export async function removeContainersByLabel(
  filter: { run?: string; task?: string; role?: string; owner?: string; dryRun?: boolean } = {},
): Promise<{ removed: LabelledContainer[]; failed: { container: LabelledContainer; error: string }[] }> {
  const found = await listLabelledContainers({
    run: filter.run,
    task: filter.task,
    role: filter.role,
    owner: filter.owner,
  });
  if (filter.dryRun) return { removed: found, failed: [] };
  const removed: LabelledContainer[] = [];
  const failed: { container: LabelledContainer; error: string }[] = [];
  await Promise.all(
    found.map(async (c) => {
      try {
        await removeContainerById(c.id);
        removed.push(c);
      } catch (err) {
        failed.push({ container: c, error: dockerErrorMessage(err) });
      }
    }),
  );
  return { removed, failed };
}

/** The user-defined networks among `names` the engine does not know. */
export async function missingNetworks(names: readonly string[]): Promise<string[]> {
  const missing: string[] = [];
  for (const name of new Set(names)) {
    try {
      await dockerClient().getNetwork(name).inspect();
    } catch (err) {
      if (statusCodeOf(err) === 404) missing.push(name);
      else throw err;
    }
  }
  return missing;
}
