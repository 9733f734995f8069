#!/usr/bin/env node
/**
 * CPU per chat-completion request of the model client's two transports, against scripts/bench/model-server.mjs
 * (a separate process on 127.0.0.1, 20 ms latency), 128 requests in flight, in one run:
 *  - node:http with a keep-alive Agent (the transport of streaming and SDK requests),
 *  - src/models/http1_client.ts (plain requests over http:), from the build (npm run build first).
 * Two rounds each, interleaved. Usage: node scripts/bench/http-clients.mjs [--requests 6000]
 */
import http from "node:http";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { createInterface } from "node:readline";
import { parseArgs } from "node:util";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const HERE = dirname(fileURLToPath(import.meta.url));
const { values } = parseArgs({ options: { requests: { type: "string", default: "6000" } } });
const N = Number(values.requests);
const INFLIGHT = 128;
const { createHttp1Client } = await import(
  pathToFileURL(join(HERE, "..", "..", "dist", "src", "models", "http1_client.js")).href
);

const server = spawn(
  process.execPath,
  [join(HERE, "model-server.mjs"), "--latency-ms", "20", "--turns", "0", "--timeout-s", "300"],
  { stdio: ["ignore", "pipe", "inherit"] },
);
const [line] = await once(createInterface({ input: server.stdout }), "line");
const { port } = JSON.parse(line);
const url = new URL(`http://127.0.0.1:${port}/v1/chat/completions`);
const body = JSON.stringify({
  model: "m",
  messages: [
    { role: "system", content: "x".repeat(800) },
    { role: "user", content: "hello there ".repeat(40) },
  ],
});
const headers = {
  accept: "application/json",
  authorization: "Bearer k",
  "content-type": "application/json",
  "content-length": String(Buffer.byteLength(body)),
};

const agent = new http.Agent({ keepAlive: true, maxSockets: INFLIGHT });
const viaNodeHttp = () =>
  new Promise((resolve, reject) => {
    const req = http.request(url, { method: "POST", headers, agent }, (res) => {
      const chunks = [];
      res.on("data", (c) => chunks.push(c));
      res.on("end", () => resolve(JSON.parse(Buffer.concat(chunks).toString())));
    });
    req.on("error", reject);
    req.end(body);
  });
const light = createHttp1Client({ maxSockets: INFLIGHT });
const viaHttp1 = async () =>
  JSON.parse((await light.request(url, { method: "POST", headers: { ...headers }, body })).body.toString());

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
    `${name.padEnd(12)} ${ms.toFixed(3)} ms CPU per request, ${Math.round((N / (performance.now() - t0)) * 1000)} requests/s\n`,
  );
  return ms;
}

const results = { "node:http": [], http1: [] };
for (let round = 0; round < 2; round++) {
  results["node:http"].push(await measure("node:http", viaNodeHttp));
  results.http1.push(await measure("http1", viaHttp1));
}
const mean = (a) => a.reduce((x, y) => x + y, 0) / a.length;
process.stdout.write(`ratio http1 / node:http: ${(mean(results.http1) / mean(results["node:http"])).toFixed(2)}\n`);
light.destroy();
agent.destroy();
server.kill();
process.exit(0);
