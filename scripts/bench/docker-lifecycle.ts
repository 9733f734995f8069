/**
 * What one Docker environment's lifecycle costs the engine (issue 27): create (`createDockerEnvironment`), the
 * first command (`echo x`), cleanup, N times in a row in one process. Reports, per environment:
 *   - the engine API calls, counted by a proxy in front of the engine (method and path, ids replaced by `{id}`);
 *     the first environment of a process separately (it pays the per-process image inspect and user probe);
 *   - the engine's CPU: dockerd and containerd (utime + stime + cutime + cstime of /proc/PID/stat, fields
 *     14-17: their own threads and the children they waited for, e.g. dockerd's re-executions `docker-tar` and
 *     `set-ipv6`); with --cgroup, a cgroup v1 cpuacct directory the engine was started in, everything in it
 *     (containerd-shim and runc too, not the containers, which the engine puts in cgroups of their own).
 * The engine's daemons are shared by everything that uses it: on a shared engine the numbers include other
 * clients' work. For clean numbers start a private engine in its own cgroup (scripts/bench/private-dockerd.sh)
 * and point DOCKER_HOST at it.
 *   npx tsx scripts/bench/docker-lifecycle.ts [--image IMAGE] [--n 20] [--cgroup DIR] [--pids PID,PID] [--user U]
 */
import { readFileSync } from "node:fs";
import { createServer, request, type IncomingMessage } from "node:http";
import { connect, type Socket } from "node:net";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execFileSync } from "node:child_process";
import { parseArgs } from "node:util";

const { values: args } = parseArgs({
  options: {
    image: { type: "string", default: "hermes-batch-test:bookworm" },
    n: { type: "string", default: "20" },
    cgroup: { type: "string" },
    pids: { type: "string" },
    user: { type: "string" },
    "settle-ms": { type: "string", default: "300" },
  },
});
const n = Number(args.n);
const settleMs = Number(args["settle-ms"]);
const upstream = (process.env.DOCKER_HOST ?? "unix:///var/run/docker.sock").replace(/^unix:\/\//, "");
if (upstream.includes("://")) throw new Error(`DOCKER_HOST must be a unix socket here, not ${upstream}`);

// --- the counting proxy -------------------------------------------------------------------------------------
const calls: string[] = [];
function shape(method: string, url: string): string {
  const path = url
    .replace(/^\/v\d+\.\d+/, "")
    .split("?")[0]!
    .replace(/\/(containers|exec|images|volumes|networks)\/(?!create$|json$)[^/]+/, "/$1/{id}");
  return `${method} ${path}`;
}
const dir = mkdtempSync(join(tmpdir(), "hb-lifecycle-"));
const socketPath = join(dir, "docker.sock");
const sockets = new Set<Socket>();
const server = createServer((req, res) => {
  calls.push(shape(req.method ?? "GET", req.url ?? "/"));
  const up = request({ socketPath: upstream, method: req.method, path: req.url, headers: req.headers }, (answer) => {
    res.writeHead(answer.statusCode ?? 502, answer.headers);
    answer.pipe(res);
  });
  up.on("error", () => res.destroy());
  req.pipe(up);
});
server.on("upgrade", (req: IncomingMessage, client: Socket, head: Buffer) => {
  calls.push(shape(req.method ?? "POST", req.url ?? "/"));
  const up = connect(upstream);
  sockets.add(up);
  const lines = [`${req.method} ${req.url} HTTP/${req.httpVersion}`];
  for (let k = 0; k < req.rawHeaders.length; k += 2) lines.push(`${req.rawHeaders[k]}: ${req.rawHeaders[k + 1]}`);
  up.write(lines.join("\r\n") + "\r\n\r\n");
  if (head.length) up.write(head);
  up.pipe(client);
  client.pipe(up);
  const end = () => {
    up.destroy();
    client.destroy();
  };
  for (const s of [up, client]) {
    s.on("error", end);
    s.on("close", end);
  }
});
server.on("connection", (s) => {
  sockets.add(s);
  s.on("close", () => sockets.delete(s));
});
await new Promise<void>((resolve) => server.listen(socketPath, resolve));
process.env.DOCKER_HOST = `unix://${socketPath}`;

// --- the engine's CPU -----------------------------------------------------------------------------------------
const TICK_MS = 1000 / Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim());
function enginePids(): number[] {
  if (args.pids) return args.pids.split(",").map(Number);
  const pg = (name: string) => {
    try {
      return execFileSync("pgrep", ["-x", name], { encoding: "utf8" }).split("\n").filter(Boolean).map(Number);
    } catch {
      return [];
    }
  };
  return [...pg("dockerd"), ...pg("containerd")];
}
const pids = enginePids();
function daemonMs(): number {
  let ms = 0;
  for (const pid of pids) {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    ms += (Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) * TICK_MS;
  }
  return ms;
}
function cgroupMs(): number | undefined {
  if (!args.cgroup) return undefined;
  return Number(readFileSync(join(args.cgroup, "cpuacct.usage"), "utf8")) / 1e6;
}
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// --- the lifecycles -------------------------------------------------------------------------------------------
const { createDockerEnvironment } = await import("../../tools/environments/docker/docker.js");
const options: Record<string, unknown> = { image: args.image };
if (args.user) options.user = args.user;
interface Sample {
  calls: string[];
  daemonMs: number;
  cgroupMs: number | undefined;
  wallMs: number;
}
const samples: Sample[] = [];
try {
  for (let i = 0; i < n; i++) {
    await sleep(settleMs);
    const from = calls.length;
    const d0 = daemonMs();
    const c0 = cgroupMs();
    const t0 = performance.now();
    const env = await createDockerEnvironment(
      { runName: `lifecycle-${process.pid}`, taskId: `t${i}`, hostTaskDir: dir, taskTimeoutSec: 600 },
      options,
    );
    const r = await env.exec("echo x");
    if (r.stdout !== "x\n" || r.exitCode !== 0) throw new Error(`unexpected result of 'echo x': ${JSON.stringify(r)}`);
    await env.cleanup();
    const wallMs = performance.now() - t0;
    await sleep(settleMs);
    const c1 = cgroupMs();
    samples.push({
      calls: calls.slice(from),
      daemonMs: daemonMs() - d0,
      cgroupMs: c0 === undefined || c1 === undefined ? undefined : c1 - c0,
      wallMs,
    });
  }
} finally {
  for (const s of sockets) s.destroy();
  server.close();
  rmSync(dir, { recursive: true, force: true });
}

function counted(list: string[]): string {
  const m = new Map<string, number>();
  for (const c of list) m.set(c, (m.get(c) ?? 0) + 1);
  return [...m.entries()].map(([k, v]) => `    ${String(v).padStart(3)}  ${k}`).join("\n");
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const rest = samples.slice(1);
console.log(`image ${args.image}, ${n} lifecycles (create, exec 'echo x', cleanup), engine pids ${pids.join(",")}`);
console.log(`first environment of the process: ${samples[0]!.calls.length} API calls\n${counted(samples[0]!.calls)}`);
if (rest.length) {
  const per = rest.map((s) => s.calls.length);
  console.log(
    `each later environment: ${median(per)} API calls (median; min ${Math.min(...per)}, max ${Math.max(...per)})\n${counted(rest[rest.length - 1]!.calls)}`,
  );
  const fmt = (xs: number[]) => `mean ${mean(xs).toFixed(1)} ms, median ${median(xs).toFixed(1)} ms`;
  console.log(
    `engine CPU per later environment, dockerd + containerd (+ waited children): ${fmt(rest.map((s) => s.daemonMs))}`,
  );
  const cg = rest.map((s) => s.cgroupMs).filter((x): x is number => x !== undefined);
  if (cg.length) console.log(`engine CPU per later environment, whole cgroup (+ shims, runc): ${fmt(cg)}`);
  console.log(`wall per later environment: ${fmt(rest.map((s) => s.wallMs))}`);
}
console.log(
  `first environment: dockerd + containerd ${samples[0]!.daemonMs.toFixed(0)} ms` +
    (samples[0]!.cgroupMs !== undefined ? `, whole cgroup ${samples[0]!.cgroupMs.toFixed(0)} ms` : "") +
    `, wall ${samples[0]!.wallMs.toFixed(0)} ms`,
);
