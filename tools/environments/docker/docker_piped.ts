/**
 * A long-lived process in a task's container with its stdin and stdout held by the harness (an MCP stdio server
 * run inside the sandbox): one Docker exec with stdin attached. Its stdout is demultiplexed from the attach
 * stream; what it writes to stderr is kept (the tail) for a start failure's message. kill() closes its stdin
 * (a stdio server ends on EOF) and the stream; whatever is left ends with the container (or stopProcesses).
 */
import { PassThrough, type Duplex } from "node:stream";
import type Docker from "dockerode";
import { demux, startExec } from "./docker_exec.js";
import type { PipedProcess, PipedSpawnOptions } from "../piped_process.js";

export async function spawnInContainer(
  container: Docker.Container,
  user: string | undefined,
  cwd: string,
  argv: string[],
  opts: PipedSpawnOptions = {},
): Promise<PipedProcess> {
  if (argv.length === 0) throw new Error("no command to start");
  const { stream } = await startExec(container, {
    cmd: argv,
    env: Object.entries(opts.env ?? {}).map(([k, v]) => `${k}=${v}`),
    user,
    workingDir: cwd,
    attachStdin: true,
  });
  const stdout = new PassThrough();
  let stderr = "";
  demux(
    stream,
    (b) => stdout.write(b),
    (b) => {
      stderr = (stderr + b.toString("utf8")).slice(-4000);
    },
  );
  let ended = false;
  const end = () => {
    if (ended) return;
    ended = true;
    stdout.end();
  };
  stream.on("end", end);
  stream.on("close", end);
  stream.on("error", end);
  let killed = false;
  const stdin = stream as Duplex;
  return {
    stdin,
    stdout,
    stderrTail: async () => stderr,
    async kill() {
      if (killed) return;
      killed = true;
      stdin.end();
      await new Promise((r) => setTimeout(r, 50));
      stream.destroy();
      end();
    },
  };
}
