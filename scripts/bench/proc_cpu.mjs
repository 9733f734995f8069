// CPU time of a process from /proc/PID/stat, for the benchmarks.
import { readFileSync } from "node:fs";

const CLK_TCK = 100; // Linux USER_HZ; fixed on every mainstream kernel

/**
 * utime + stime (every thread) and cutime + cstime (waited-for children) of a process, in ms;
 * undefined when it cannot be read (gone, or not Linux).
 */
export function procCpu(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // fields 14-17 of stat(5): utime stime cutime cstime; f[0] is field 3
    const t = (i) => (Number(f[i - 3]) * 1000) / CLK_TCK;
    return { selfMs: t(14) + t(15), childrenMs: t(16) + t(17) };
  } catch {
    return undefined;
  }
}
