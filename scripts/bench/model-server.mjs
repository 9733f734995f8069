#!/usr/bin/env node
/**
 * A deterministic OpenAI-compatible chat-completions server for benchmarks, on 127.0.0.1 only.
 *
 * Every request is answered after exactly --latency-ms. The answer depends only on the number of
 * assistant messages already in the request: fewer than --turns → one cheap tool call, else a final
 * answer. So every task costs exactly turns + 1 model calls. The tool is `terminal` (command `echo x`)
 * when the request offers it, else `todo`.
 *
 * It runs as its own process so that its CPU is not counted as harness CPU. It is deliberately cheap:
 * the request body is scanned as bytes, never parsed as JSON.
 *
 * Protocol with the parent: prints one line `{"port": N}` on stdout when listening. `GET /stats` returns
 * counters and its own CPU use. It exits by itself after --timeout-s, when its parent dies, or on
 * `POST /shutdown`, SIGTERM or SIGINT.
 *
 * --log FILE: on exit, writes one JSON array per request, `[epoch ms at arrival, task, assistant messages]`, where
 * task is the number after "Benchmark task " in the request (scripts/bench/task-gaps.mjs reads it).
 *
 *   node scripts/bench/model-server.mjs --latency-ms 200 --turns 2 [--port 0] [--timeout-s 600] [--log FILE]
 */
import { writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { parseArgs } from "node:util";
import { procCpu } from "./proc_cpu.mjs";

const { values } = parseArgs({
  options: {
    "latency-ms": { type: "string", default: "200" },
    turns: { type: "string", default: "2" },
    port: { type: "string", default: "0" },
    "timeout-s": { type: "string", default: "600" },
    log: { type: "string" },
  },
});

function intOption(name, min) {
  const n = Number(values[name]);
  if (!Number.isInteger(n) || n < min) {
    process.stderr.write(`bench-model-server: --${name} must be an integer >= ${min}, got ${values[name]}\n`);
    process.exit(2);
  }
  return n;
}

const latencyMs = intOption("latency-ms", 0);
const turns = intOption("turns", 0);
const port = intOption("port", 0);
const timeoutS = intOption("timeout-s", 1);

const ASSISTANT = Buffer.from('"role":"assistant"');
const TASK_MARK = Buffer.from("Benchmark task ");
/** --log: one entry per request, kept in memory until exit. */
const requestLog = values.log ? [] : undefined;
const TERMINAL_TOOL = Buffer.from('"name":"terminal"');
const started = performance.now();
const cpuAtStart = process.cpuUsage();

const stats = {
  requests: 0,
  inFlight: 0,
  maxInFlight: 0,
  /** Requests with no assistant message yet: a task's first model call. */
  tasksStarted: 0,
  /** Final answers sent. */
  tasksFinished: 0,
  toolCallReplies: 0,
  /** ms since this server started. */
  firstRequestAt: null,
  /** CPU (user + system, all threads) of the watched client process when its first request arrived, ms. */
  clientCpuAtFirstRequestMs: null,
  lastFinalAt: null,
  badRequests: 0,
  /** TCP connections accepted: about the concurrency when the client keeps connections alive. */
  connections: 0,
  bytesIn: 0,
  bytesOut: 0,
};

function countOccurrences(buf, needle) {
  let n = 0;
  for (let i = buf.indexOf(needle); i >= 0; i = buf.indexOf(needle, i + needle.length)) n++;
  return n;
}

let seq = 0;
function completionBody(assistantCount, useTerminal) {
  const id = ++seq;
  let message;
  let finish;
  if (assistantCount < turns) {
    const args = useTerminal
      ? { command: "echo x" }
      : { todos: [{ id: String(assistantCount + 1), content: "benchmark step", status: "in_progress" }] };
    message = {
      role: "assistant",
      content: null,
      tool_calls: [
        {
          id: `call_${id}`,
          type: "function",
          function: { name: useTerminal ? "terminal" : "todo", arguments: JSON.stringify(args) },
        },
      ],
    };
    finish = "tool_calls";
  } else {
    message = { role: "assistant", content: "Done: the benchmark task is complete." };
    finish = "stop";
  }
  return JSON.stringify({
    id: `chatcmpl-${id}`,
    object: "chat.completion",
    created: 0,
    model: "bench",
    choices: [{ index: 0, message, finish_reason: finish }],
    usage: { prompt_tokens: 100, completion_tokens: 10, total_tokens: 110 },
  });
}

function statsBody() {
  const cpu = process.cpuUsage(cpuAtStart);
  return JSON.stringify({
    ...stats,
    epochStarted: performance.timeOrigin + started,
    now: performance.now() - started,
    cpuMs: (cpu.user + cpu.system) / 1000,
    latencyMs,
    turns,
  });
}

let watchedPid = 0;
const server = createServer((req, res) => {
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => {
    if (req.method === "GET" && req.url === "/stats") {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(statsBody());
      return;
    }
    if (req.method === "POST" && req.url?.startsWith("/watch?pid=")) {
      watchedPid = Number(req.url.slice("/watch?pid=".length));
      res.writeHead(204);
      res.end();
      return;
    }
    if (req.method === "POST" && req.url === "/shutdown") {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(statsBody(), () => shutdown(0));
      return;
    }
    if (req.method !== "POST" || !req.url?.endsWith("/chat/completions")) {
      stats.badRequests++;
      res.writeHead(404, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: `no route ${req.method} ${req.url}` } }));
      return;
    }
    const body = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
    stats.bytesIn += body.length;
    const assistantCount = countOccurrences(body, ASSISTANT);
    const useTerminal = body.indexOf(TERMINAL_TOOL) >= 0;
    const now = performance.now() - started;
    if (requestLog) {
      const at = body.indexOf(TASK_MARK);
      const task =
        at < 0 ? -1 : Number.parseInt(body.toString("latin1", at + TASK_MARK.length, at + TASK_MARK.length + 12), 10);
      requestLog.push(`[${(performance.timeOrigin + performance.now()).toFixed(3)},${task},${assistantCount}]`);
    }
    stats.requests++;
    if (stats.firstRequestAt === null) {
      stats.firstRequestAt = now;
      const cpu = watchedPid ? procCpu(watchedPid) : undefined;
      stats.clientCpuAtFirstRequestMs = cpu ? cpu.selfMs : null;
    }
    if (assistantCount === 0) stats.tasksStarted++;
    stats.inFlight++;
    if (stats.inFlight > stats.maxInFlight) stats.maxInFlight = stats.inFlight;
    setTimeout(() => {
      stats.inFlight--;
      const final = assistantCount >= turns;
      if (final) {
        stats.tasksFinished++;
        stats.lastFinalAt = performance.now() - started;
      } else {
        stats.toolCallReplies++;
      }
      const reply = completionBody(assistantCount, useTerminal);
      stats.bytesOut += reply.length;
      res.writeHead(200, { "content-type": "application/json" });
      res.end(reply);
    }, latencyMs);
  });
});
server.on("connection", () => stats.connections++);
server.keepAliveTimeout = 30_000;
server.maxRequestsPerSocket = 0;

function shutdown(code) {
  if (requestLog) writeFileSync(values.log, `${requestLog.join("\n")}\n`);
  requestLog?.splice(0);
  clearInterval(parentWatch);
  clearTimeout(deadline);
  server.close();
  server.closeAllConnections?.();
  setTimeout(() => process.exit(code), 50).unref();
}

const deadline = setTimeout(() => {
  process.stderr.write(`bench-model-server: timeout after ${timeoutS} s, exiting\n`);
  shutdown(0);
}, timeoutS * 1000);

// The parent died without telling us: do not outlive it.
const parentPid = process.ppid;
const parentWatch = setInterval(() => {
  try {
    process.kill(parentPid, 0);
  } catch {
    shutdown(0);
  }
}, 1000);

process.on("SIGTERM", () => shutdown(0));
process.on("SIGINT", () => shutdown(0));

server.listen(port, "127.0.0.1", () => {
  process.stdout.write(`${JSON.stringify({ port: server.address().port })}\n`);
});
