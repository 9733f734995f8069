/**
 * Data: what exhaust.ts counts as endless or too many.
 */
/** Exhaustion knowledge (exhaust.ts reads it). */
export const EXHAUST = {
  /** Sizes as `30G`, `4MiB`, `512k`, and what their units are worth in bytes. */
  size: /^(\d+(?:\.\d+)?)([KMGTPE]i?B?|[kmgtpe])?$/,
  units: { k: 2 ** 10, m: 2 ** 20, g: 2 ** 30, t: 2 ** 40, p: 2 ** 50, e: 2 ** 60 } as Record<string, number>,
  /** Sources that never end. */
  endlessFiles: /^\/dev\/(zero|u?random|full)$/,
  /** Programs that print forever on their own. */
  endlessPrograms: new Set(["yes"]),
  /** find's arguments that print every file of the machine (`find / -type f -exec cat {} +`): as good as endless. */
  wholeFilesystem: /^\/\s(.*\s)?-exec(dir)?\s+(cat|strings|xxd|od|hexdump|base64)\s/,
  /** Programs that name an endless source without reading it forever (they stop at a count, or only look at it). */
  boundedReaders: new Set(["head", "dd", "ls", "stat", "file", "test", "[", "echo", "printf", "mknod", "chmod"]),
  /** Programs that hold all their input before writing (memory grows with endless input). */
  buffering: new Set([
    "sort",
    "tac",
    "shuf",
    "tail",
    "xargs",
    "python",
    "python3",
    "awk",
    "gawk",
    "sed",
    "perl",
    "ruby",
    "node",
    "jq",
    "rev",
    "uniq",
  ]),
  /** Programs that stop endless input (a pipeline through them is bounded). */
  limiters: new Set(["head", "dd", "timeout", "pv", "read"]),
  /** Programs a loop body runs that leave something behind each time (files, processes, containers). */
  creators: new Set([
    "touch",
    "mkdir",
    "cp",
    "mktemp",
    "tempfile",
    "dd",
    "fallocate",
    "docker",
    "podman",
    "nerdctl",
    "kubectl",
    "tmux",
    "screen",
    "nohup",
    "setsid",
    "truncate",
    "ln",
    "git",
    "curl",
    "wget",
    "nc",
    "ssh",
  ]),
  /** Programs that end or pace a loop. */
  pacers: new Set(["sleep", "break", "exit", "return", "read", "wait", "timeout", "inotifywait"]),
  /** Load generators: programs whose job is to flood a service. */
  loadTools: new Set([
    "wrk",
    "wrk2",
    "siege",
    "bombardier",
    "oha",
    "vegeta",
    "hey",
    "ab",
    "k6",
    "locust",
    "artillery",
    "h2load",
    "slowhttptest",
    "goldeneye",
    "hping3",
    "ping",
    "t50",
    "mz",
  ]),
  /** Flooding options, and the programs that take them (ping and hping3 load a host only so). */
  floodOptions: /^(--flood|-f|--faster)$/,
  flooders: new Set(["ping", "hping3", "t50"]),
  floodOnly: new Set(["ping", "hping3"]),
  /** Container engines whose `run`/`create` in a loop leaves a container behind each time. */
  containerEngines: new Set(["docker", "podman", "nerdctl", "kubectl"]),
  /** Options giving the size head, fallocate and truncate read or allocate. */
  sizeOptions: ["-c", "--bytes", "-l", "--length", "-s", "--size"],
  /** Sizes at or above these are huge. */
  hugeFile: 64 * 2 ** 30,
  hugeRead: 4 * 2 ** 30,
  /** Loops that run this many times or more, by what their body does. */
  manyBackground: 500,
  manyContainers: 1000,
  manyFiles: 100_000,
  /** Parallel fan-out above this many at once (xargs -P, parallel -j). */
  manyParallel: 100,
};
