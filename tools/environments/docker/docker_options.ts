/** The Docker backend's options (validated with zod), the capabilities it grants, and the sandbox's lifetime. */
import type { EnvironmentOptions, EnvironmentSpec } from "../base.js";
import { DEFAULT_OUTPUT_CAP } from "../base.js";
import * as z from "zod";
import { diskQuotaUnavailable } from "../disk_quota.js";

/** Used when neither the row nor the run names an image: what scripts/build-test-image.sh builds. */
export const DEFAULT_DOCKER_IMAGE = "hermes-batch-test:bookworm";
/** Keep-alive length when the runner gives no task timeout. */
export const DEFAULT_LIFETIME_SEC = 3600;

const dockerOptionsSchema = z.object({
  image: z.string().min(1).optional(),
  network: z.string().min(1).optional(),
  memoryMb: z.number().int().positive().default(2048),
  cpus: z.number().positive().default(1),
  /** Variables set on the container, so every command sees them (a Harbor task's [environment].env). */
  containerEnv: z.record(z.string(), z.string()).default({}),
  /** GPUs handed to the container (a Harbor task's [environment].gpus); 0 = none. */
  gpus: z.number().int().nonnegative().default(0),
  pidsLimit: z.number().int().positive().default(512),
  /** Open files per process (soft = hard). nproc is left to the pids cgroup: RLIMIT_NPROC counts a uid's
   *  processes across the whole kernel, so containers sharing uid 1000 would starve each other. */
  nofile: z.number().int().positive().default(8192),
  readOnlyRoot: z.boolean().default(false),
  pull: z.boolean().default(false),
  /** "auto": the image's USER, else its first regular user (uid 1000-65533), else root. Or "root", or "uid[:gid]"/"name". */
  user: z.string().min(1).default("auto"),
  tmpSizeMb: z.number().int().positive().default(512),
  /** Size of the workdir's own file system (a volume bound to a sparse ext4 image); none when undefined. */
  disk: z.string().min(1).optional(),
  /** Seconds the keep-alive outlives the task timeout. */
  deadmanMarginSec: z.number().int().nonnegative().default(120),
  persistentShell: z.boolean().default(true),
  maxOutputChars: z.number().int().positive().default(DEFAULT_OUTPUT_CAP),
});

export type DockerOptions = z.infer<typeof dockerOptionsSchema>;

export function parseDockerOptions(options: EnvironmentOptions): DockerOptions {
  const picked = Object.fromEntries(
    Object.keys(dockerOptionsSchema.shape)
      .filter((k) => options[k] !== undefined && options[k] !== null)
      .map((k) => [k, options[k]]),
  );
  const parsed = dockerOptionsSchema.safeParse(picked);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ");
    throw new Error(`invalid docker options: ${issues}`);
  }
  return parsed.data;
}

/**
 * Capabilities on top of CapDrop ALL. Root gets only what ordinary package and file work needs:
 * CHOWN/FOWNER/DAC_OVERRIDE (pip, tar, files owned by other users) and SETUID/SETGID (apt drops to its _apt user);
 * no NET_*, SYS_*, MKNOD, KILL beyond its own uid. With an unprivileged run user, KILL only: held by root alone in
 * that container (the keep-alive and the harness's own execs as 0:0), so the kill passes before the verify
 * (`stopProcesses`) end the run user's processes as root, which a process of that uid cannot kill (a left
 * `while :; do kill -9 -1; done` kills any pass of its own uid: the verify would not run). The run user itself has
 * no effective capabilities (a non-root exec starts with none, Docker sets no ambient ones), and no-new-privileges
 * keeps setuid and file-capability binaries from raising them.
 */
export function capabilitiesFor(runAsRoot: boolean): string[] {
  return runAsRoot ? ["CHOWN", "DAC_OVERRIDE", "FOWNER", "SETUID", "SETGID"] : ["KILL"];
}

/** The workdir gets a file system of its own: a size was asked for, and this harness can make one. */
export function workdirQuota(opts: DockerOptions): boolean {
  return opts.disk !== undefined && diskQuotaUnavailable() === undefined;
}

export function lifetimeSec(spec: EnvironmentSpec, margin: number): number {
  const base = spec.taskTimeoutSec && spec.taskTimeoutSec > 0 ? spec.taskTimeoutSec : DEFAULT_LIFETIME_SEC;
  return Math.ceil(base + margin);
}

export function imageFor(spec: EnvironmentSpec, opts: DockerOptions): string {
  return spec.image ?? opts.image ?? DEFAULT_DOCKER_IMAGE;
}
