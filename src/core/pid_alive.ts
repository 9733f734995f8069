import { existsSync, readFileSync } from "node:fs";

/**
 * Whether a process with this pid exists (EPERM: it exists, owned by someone else) and has not ended. A process
 * that ended but was never reaped (a zombie: its parent does not wait, as a container's shell run as pid 1 often
 * does not) holds no files and runs nothing, so it counts as gone.
 */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EPERM") return false;
  }
  return !ended(pid);
}

/** Whether /proc shows the process as ended: a zombie, or gone since kill(pid, 0) answered. */
function ended(pid: number): boolean {
  try {
    // /proc/PID/stat: "pid (comm) S …"; comm may hold spaces and parentheses, so the state follows the last ")".
    const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
    const state = stat[stat.lastIndexOf(")") + 2];
    return state === "Z" || state === "X";
  } catch (err) {
    // Gone now, unless there is no /proc at all (not Linux): then kill's answer stands.
    return (err as NodeJS.ErrnoException).code === "ENOENT" && existsSync("/proc/self/stat");
  }
}
