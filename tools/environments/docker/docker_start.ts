import { networkModeFor } from "./docker_network.js";
import { randomBytes } from "node:crypto";
import { posix } from "node:path";
import type Docker from "dockerode";
import {
  LABEL_OWNER,
  LABEL_ROLE,
  LABEL_RUN,
  LABEL_TASK,
  dockerClient,
  dockerErrorMessage,
  removeContainerById,
  type ImageInfo,
} from "./docker_client.js";
import { withEngineRetry } from "./docker_retry.js";
import { DiskQuota, parseSize } from "../disk_quota.js";
import { resolveRunUser } from "./docker_user.js";
import { capabilitiesFor, workdirQuota, type DockerOptions } from "./docker_options.js";
import { liveContainers, shutdown } from "./docker_live.js";
import { DockerEnvironment } from "./docker_environment.js";
import { sandboxOwner, type SandboxGates, type SandboxPermit } from "../sandbox_gates.js";
function sanitizeName(s: string, max: number): string {
  return (
    s
      .replace(/[^a-zA-Z0-9_.-]+/g, "-")
      .replace(/^[^a-zA-Z0-9]+/, "")
      .slice(0, max) || "x"
  );
}

export interface SandboxPlan {
  imageName: string;
  image: ImageInfo;
  opts: DockerOptions;
  runName: string;
  /** Label and name part; empty for a warm sandbox (no task yet). */
  taskId: string;
  role: "task" | "warm";
  cwd?: string;
  network?: string;
  lifetimeSec: number;
  /** Gives up waiting for the start turn (a task's creation; warm starts have none). */
  signal?: AbortSignal;
  /** The task's EnvironmentSpec.onEvent (retried starts). */
  onEvent?: (message: string) => void;
  /**
   * The task folder's own file system to bind at the workdir, instead of a new one: a sandbox whose container is of
   * no more use goes on in a new one over the same files (DockerEnvironment's renew). Its owner removes it.
   */
  quota?: DiskQuota;
  /**
   * Started from a snapshot of a task's container (--verify-isolated): the keep-alive is the image's `sh` waiting on
   * its stdin (kept open: `OpenStdin`), the shell the verify runs through, which the agent was found not to have
   * changed; not `sleep` found on PATH, which may be a root agent's own and would run beside the verify, past the
   * kill passes (they spare the keep-alive). Such a container has no deadman: the harness (or `gc`) removes it.
   */
  snapshot?: boolean;
}

/** Creates and starts one hardened container holding the given sandbox permit (released on failure). */
export async function startSandbox(
  plan: SandboxPlan,
  permit: SandboxPermit,
  gates: SandboxGates,
): Promise<DockerEnvironment> {
  const { imageName, image, opts } = plan;
  let containerId: string | undefined;
  let retried = 0;
  let quota: DiskQuota | undefined;
  try {
    const runUser = await resolveRunUser(opts.user, imageName, image, plan.runName);
    const runAsRoot = runUser.uid === 0;
    const imageWorkdir = image.workingDir || "/work";
    const workdir = plan.cwd
      ? posix.isAbsolute(plan.cwd)
        ? posix.normalize(plan.cwd)
        : posix.join(imageWorkdir, plan.cwd)
      : imageWorkdir;

    const tmpfs: Record<string, string> = { "/tmp": `rw,nosuid,nodev,size=${opts.tmpSizeMb}m,mode=1777` };
    const mounts: Docker.MountConfig = [];
    if (opts.readOnlyRoot) {
      tmpfs["/var/tmp"] = "rw,nosuid,nodev,size=256m,mode=1777";
      tmpfs["/run"] = "rw,nosuid,nodev,size=64m,mode=755";
    }
    if (plan.quota) quota = plan.quota;
    else if (workdirQuota(opts)) quota = await DiskQuota.forContainer(parseSize(opts.disk!)!, runUser.uid, runUser.gid);
    if (opts.readOnlyRoot || quota) {
      // A volume (not a tmpfs) keeps what the image has in the workdir (the engine copies it into an empty
      // volume) and is reachable by the archive API; it is anonymous, so removing the container (AutoRemove or
      // cleanup) removes it too. With a quota it is bound to the task's own file system.
      const driver = quota
        ? {
            NoCopy: false,
            Labels: {},
            DriverConfig: { Name: "local", Options: { type: "none", o: "bind", device: quota.mountPoint } },
          }
        : undefined;
      mounts.push({ Type: "volume", Source: "", Target: workdir, ...(driver ? { VolumeOptions: driver } : {}) });
    }

    const who = plan.role === "warm" ? "warm" : sanitizeName(plan.taskId, 24);
    // One name for every attempt: a create whose answer was lost is found (and removed) by it before the next.
    const name = `hermes-${sanitizeName(plan.runName, 24)}-${who}-${randomBytes(3).toString("hex")}`;
    const container = await withEngineRetry<Docker.Container>(
      async () => {
        await gates.startTurn(plan.signal);
        if (shutdown.refusing) throw new Error("shutting down: no new docker sandboxes");
        const created = await dockerClient().createContainer({
          name,
          Image: imageName,
          ...(plan.snapshot
            ? { Entrypoint: ["sh"], Cmd: [], OpenStdin: true }
            : { Entrypoint: ["sleep"], Cmd: [String(plan.lifetimeSec)] }),
          WorkingDir: workdir,
          ...(Object.keys(opts.containerEnv).length
            ? { Env: Object.entries(opts.containerEnv).map(([k, v]) => `${k}=${v}`) }
            : {}),
          // The keep-alive runs as root when commands run as an unprivileged user, so a command such as
          // `pkill sleep` or `kill -9 -1` cannot end the sandbox; commands get the run user per exec.
          User: runAsRoot ? runUser.user : "0:0",
          Labels: {
            [LABEL_RUN]: plan.runName,
            [LABEL_TASK]: plan.taskId,
            [LABEL_ROLE]: plan.role,
            [LABEL_OWNER]: sandboxOwner(),
          },
          HostConfig: {
            Init: true,
            AutoRemove: true,
            NetworkMode: networkModeFor(plan.network),
            CapDrop: ["ALL"],
            CapAdd: capabilitiesFor(runAsRoot),
            SecurityOpt: ["no-new-privileges"],
            PidsLimit: opts.pidsLimit,
            Ulimits: [{ Name: "nofile", Soft: opts.nofile, Hard: opts.nofile }],
            Memory: opts.memoryMb * 1024 * 1024,
            MemorySwap: opts.memoryMb * 1024 * 1024,
            NanoCpus: Math.round(opts.cpus * 1e9),
            ...(opts.gpus > 0 ? { DeviceRequests: [{ Driver: "", Count: opts.gpus, Capabilities: [["gpu"]] }] } : {}),
            ReadonlyRootfs: opts.readOnlyRoot,
            Tmpfs: tmpfs,
            Mounts: mounts,
          },
        });
        containerId = created.id;
        liveContainers.set(created.id, undefined);
        // No `mkdir` of the workdir through the archive API here: the engine makes Config.WorkingDir when it creates
        // the container (as root, when the image lacks it), so that call only ever found it there (a HEAD request).
        await created.start();
        gates.engineRecovered();
        return created;
      },
      {
        signal: plan.signal,
        giveUp: () => shutdown.refusing,
        onRetry: (r) => {
          retried = r.attempt;
          const interval = gates.engineFailed();
          plan.onEvent?.(
            `sandbox start attempt ${r.attempt} of ${r.attempts} failed (${r.reason}); retrying in ${r.delayMs} ms, run-wide starts now ${interval} ms apart`,
          );
        },
        beforeRetry: async () => {
          await removeContainerById(containerId ?? name).catch(() => undefined);
          if (containerId) liveContainers.delete(containerId);
          containerId = undefined;
        },
      },
    );
    const env = new DockerEnvironment(container, workdir, runUser, Object.keys(tmpfs), opts, permit);
    env.source = { plan, gates, start: startSandbox };
    env.quota = quota;
    quota = undefined;
    liveContainers.set(container.id, env);
    if (shutdown.refusing) {
      await env.cleanup();
      throw new Error("shutting down: no new docker sandboxes");
    }
    return env;
  } catch (err) {
    // No "Created" orphans: whatever was made is removed before the error goes up.
    if (containerId) {
      await removeContainerById(containerId).catch(() => undefined);
      liveContainers.delete(containerId);
    }
    permit.release();
    if (quota !== plan.quota) await quota?.remove(false);
    if (plan.signal?.aborted) throw err;
    if (err instanceof Error && /^(image |shutting down)/.test(err.message)) throw err;
    const tries = retried > 0 ? ` after ${retried + 1} attempts` : "";
    throw new Error(`could not start docker sandbox (image ${imageName})${tries}: ${dockerErrorMessage(err)}`);
  }
}
