/**
 * What a run or a row may ask of a local sandbox, checked before any sandbox exists (by the main thread too,
 * which so does not load the sandbox's own modules).
 */
import { posix } from "node:path";
import { SANDBOX_WORKDIR } from "./bwrap.js";

/** The run's network choice for a local sandbox: "host" shares the host's network, anything else has none. */
export function sandboxNetwork(
  runNetwork: string | undefined,
  rowNetwork: string | undefined,
): { hostNetwork: boolean } {
  const run = runNetwork ?? "none";
  if (run !== "none" && run !== "host") {
    throw new Error(`--network ${run}: a local sandbox has either no network (none, the default) or the host's (host)`);
  }
  const row = rowNetwork ?? run;
  if (row !== "none" && row !== run) {
    throw new Error(
      `network '${row}' is not allowed for this run: the local sandbox has ${run === "host" ? "the host's network" : "no network"} (--network ${run})`,
    );
  }
  return { hostNetwork: row === "host" };
}

/** A row's `cwd` inside the sandbox: relative to /workspace, or absolute under it; anything else is refused. */
export function sandboxWorkdir(cwd: string | undefined): string {
  if (!cwd) return SANDBOX_WORKDIR;
  const dir = posix.resolve(SANDBOX_WORKDIR, cwd);
  if (dir !== SANDBOX_WORKDIR && !dir.startsWith(`${SANDBOX_WORKDIR}/`)) {
    throw new Error(
      `cwd '${cwd}' is outside the task folder: in the local sandbox a row's cwd is relative to ${SANDBOX_WORKDIR} or under it`,
    );
  }
  return dir;
}
