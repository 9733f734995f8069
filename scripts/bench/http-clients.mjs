#!/usr/bin/env node
/**
 * CPU per chat-completion request of candidate transports for model calls, against
 * scripts/bench/model-server.mjs (a separate process on 127.0.0.1, 20 ms latency), 128 requests in flight,
 * interleaved rounds in one run (the machine is shared: compare ratios, not absolute figures):
 *  - node:http      a keep-alive Agent, body read and JSON-parsed (the floor a Node client can reach),
 *  - undici.request undici's Pool/request (when the `undici` package is importable, or --undici <its folder>),
 *  - fetch          Node's global fetch (undici's fetch, bundled in Node),
 *  - openai SDK     `chat.completions.create` with the SDK's own default fetch, retries off,
 *  - model client   this checkout's src/models/openai_compatible.ts (bundled with esbuild), `complete()` of a
 *                   parsed ChatResponse,
 *  - model client (before)  the same from another build (--before <bundle>; make one with --write-bundle <file>).
 * With --stream, every candidate that can asks for `stream: true` against a small SSE server instead
 * (3 content chunks, a finish chunk, usage and [DONE]), and reads the events.
 *
 *   node scripts/bench/http-clients.mjs [--requests 6000] [--rounds 2] [--stream] [--only a,b]
 *     [--before /tmp/client.mjs] [--write-bundle /tmp/client.mjs] [--undici /path/to/node_modules/undici]
 */
import http from "node:http";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { createInterface } from "node:readline";
import { parseArgs } from "node:util";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = join(HERE, "..", "..");
const { values } = parseArgs({
  options: {
    requests: { type: "string", default: "6000" },
    rounds: { type: "string", default: "2" },
    stream: { type: "boolean", default: false },
    only: { type: "string" },
    before: { type: "string" },
    "write-bundle": { type: "string" },
    undici: { type: "string" },
    help: { type: "boolean", default: false },
  },
});
if (values.help) {
  process.stdout.write(
    "usage: node scripts/bench/http-clients.mjs [--requests N] [--rounds N] [--stream] [--only names]\n" +
      "       [--before <bundle>] [--write-bundle <file>] [--undici <dir>]\n",
  );
  process.exit(0);
}
const N = Number(values.requests);
const ROUNDS = Number(values.rounds);
const INFLIGHT = 128;
const STREAM = values.stream;

/** The model client of this checkout as one ES module (esbuild is a dev dependency). */
async function bundleClient(outfile) {
  const { build } = await import("esbuild");
  await build({
    absWorkingDir: ROOT,
    entryPoints: [join(ROOT, "src", "models", "openai_compatible.ts")],
    outfile,
    bundle: true,
    format: "esm",
    platform: "node",
    target: "node20",
    logLevel: "error",
  });
}

if (values["write-bundle"]) {
  await bundleClient(values["write-bundle"]);
  process.stdout.write(`wrote ${values["write-bundle"]}\n`);
  process.exit(0);
}

/** An SSE chat-completions server in its own process (its CPU is not counted), 20 ms before the first event. */
const SSE_SERVER = `
const http = require("node:http");
const chunk = (o) => "data: " + JSON.stringify(o) + "\\n\\n";
const base = { id: "c", object: "chat.completion.chunk", created: 1, model: "m" };
const events = [
  chunk({ ...base, choices: [{ index: 0, delta: { role: "assistant", content: "Hello" }, finish_reason: null }] }),
  chunk({ ...base, choices: [{ index: 0, delta: { content: " there," }, finish_reason: null }] }),
  chunk({ ...base, choices: [{ index: 0, delta: { content: " friend." }, finish_reason: null }] }),
  chunk({ ...base, choices: [{ index: 0, delta: {}, finish_reason: "stop" }] }),
  chunk({ ...base, choices: [], usage: { prompt_tokens: 10, completion_tokens: 3, total_tokens: 13 } }),
  "data: [DONE]\\n\\n",
].join("");
const srv = http.createServer((req, res) => {
  req.resume();
  req.on("end", () => setTimeout(() => {
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.end(events);
  }, 20));
});
srv.keepAliveTimeout = 120000;
srv.listen(0, "127.0.0.1", () => console.log(JSON.stringify({ port: srv.address().port })));
setTimeout(() => process.exit(0), 300000).unref();
process.stdin.on("end", () => process.exit(0)).resume();
`;

const server = STREAM
  ? spawn(process.execPath, ["-e", SSE_SERVER], { stdio: ["pipe", "pipe", "inherit"] })
  : spawn(
      process.execPath,
      [join(HERE, "model-server.mjs"), "--latency-ms", "20", "--turns", "0", "--timeout-s", "300"],
      { stdio: ["ignore", "pipe", "inherit"] },
    );
const [line] = await once(createInterface({ input: server.stdout }), "line");
const { port } = JSON.parse(line);
const baseURL = `http://127.0.0.1:${port}/v1`;
const url = new URL(`${baseURL}/chat/completions`);
const messages = [
  { role: "system", content: "x".repeat(800) },
  { role: "user", content: "hello there ".repeat(40) },
];
const bodyObject = STREAM
  ? { model: "m", messages, stream: true, stream_options: { include_usage: true } }
  : { model: "m", messages };
const body = JSON.stringify(bodyObject);
const headers = {
  accept: "application/json",
  authorization: "Bearer k",
  "content-type": "application/json",
  "content-length": String(Buffer.byteLength(body)),
};

/** The parsed events of an SSE body (what every streaming candidate must at least do). */
function sseEvents(text) {
  const out = [];
  for (const block of text.split("\n\n")) {
    const data = block.startsWith("data: ") ? block.slice(6) : "";
    if (data && data !== "[DONE]") out.push(JSON.parse(data));
  }
  return out;
}
const parseBody = (text) => (STREAM ? sseEvents(text) : JSON.parse(text));

const candidates = {};

const agent = new http.Agent({ keepAlive: true, maxSockets: INFLIGHT });
candidates["node:http"] = () =>
  new Promise((resolve, reject) => {
    const req = http.request(url, { method: "POST", headers, agent }, (res) => {
      const chunks = [];
      res.on("data", (c) => chunks.push(c));
      res.on("end", () => resolve(parseBody(Buffer.concat(chunks).toString())));
    });
    req.on("error", reject);
    req.end(body);
  });

let undici;
try {
  undici = values.undici ? await import(pathToFileURL(join(values.undici, "index.js")).href) : await import("undici");
} catch {
  process.stdout.write("(undici not importable: pass --undici <dir of the undici package> to measure it)\n");
}
let pool;
if (undici) {
  pool = new undici.Pool(url.origin, { connections: INFLIGHT, pipelining: 1 });
  candidates["undici.request"] = async () => {
    const res = await pool.request({ path: url.pathname, method: "POST", headers, body });
    return parseBody(await res.body.text());
  };
}

candidates.fetch = async () => {
  const res = await fetch(url, { method: "POST", headers, body });
  return parseBody(await res.text());
};

const { default: OpenAI } = await import("openai");
const sdk = new OpenAI({ baseURL, apiKey: "k", maxRetries: 0 });
candidates["openai SDK"] = async () => {
  const r = await sdk.chat.completions.create(bodyObject);
  if (!STREAM) return r;
  const seen = [];
  for await (const c of r) seen.push(c);
  return seen;
};

const scratch = mkdtempSync(join(tmpdir(), "http-clients-"));
const clients = [["model client", join(scratch, "client.mjs")]];
await bundleClient(clients[0][1]);
if (values.before) clients.push(["model (before)", values.before]);
const ask = { messages: [messages[0], messages[1]] };
for (const [name, file] of clients) {
  const { openaiProvider } = await import(pathToFileURL(file).href);
  const model = openaiProvider.create({ model: "m", baseURL, apiKey: "k", maxSockets: INFLIGHT, stream: STREAM });
  candidates[name] = async () => {
    const r = await model.complete(ask);
    if (!r.message.content) throw new Error(`${name}: empty answer`);
    return r;
  };
}

const only = values.only?.split(",").map((s) => s.trim());
const names = Object.keys(candidates).filter((n) => !only || only.includes(n));

async function measure(name, one) {
  let i = 0;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: INFLIGHT }, async () => {
      while (i++ < N) await one();
    }),
  );
  const cpu = process.cpuUsage(cpu0);
  const ms = (cpu.user + cpu.system) / 1000 / N;
  process.stdout.write(
    `${name.padEnd(15)} ${ms.toFixed(3)} ms CPU per request, ${Math.round((N / (performance.now() - t0)) * 1000)} requests/s\n`,
  );
  return ms;
}

process.stdout.write(
  `${STREAM ? "streaming (SSE)" : "plain JSON"}, ${N} requests x ${ROUNDS} rounds, ${INFLIGHT} in flight\n`,
);
// One warm-up pass each (JIT, connections), not counted.
const warmN = Math.min(N, 1000);
for (const name of names) {
  for (let i = 0; i < warmN; i += INFLIGHT)
    await Promise.all(Array.from({ length: Math.min(INFLIGHT, warmN - i) }, () => candidates[name]()));
}
const results = Object.fromEntries(names.map((n) => [n, []]));
for (let round = 0; round < ROUNDS; round++) {
  for (const name of names) results[name].push(await measure(name, candidates[name]));
}
const mean = (a) => a.reduce((x, y) => x + y, 0) / a.length;
const floor = mean(results["node:http"] ?? [NaN]);
process.stdout.write("\nmean CPU per request, and ratio to node:http\n");
for (const name of names) {
  const m = mean(results[name]);
  process.stdout.write(`${name.padEnd(15)} ${m.toFixed(3)} ms  ${(m / floor).toFixed(2)}x\n`);
}
agent.destroy();
await pool?.close();
rmSync(scratch, { recursive: true, force: true });
server.kill();
process.exit(0);
