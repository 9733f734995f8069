#!/usr/bin/env node
/**
 * Cost of --rl-capture on the client: CPU per model call and memory per agent loop, with and without the
 * capture. A local server (a child process on 127.0.0.1, so its CPU is not counted) answers like vLLM:
 * with capture, `prompt_token_ids`, `token_ids` and `logprobs` in the body; without, the same answer without
 * them. Each loop makes TURNS calls whose prompt grows by PROMPT_STEP ids; with capture, every answer goes
 * through the token ledger and the loop ends with its rl.jsonl line built and serialised, as a task does.
 * Runs on the sources (loaded through tsx: the bundled build exports only the CLI), so no build is needed.
 * Usage: node --expose-gc scripts/bench/rl-capture.mjs [loops=64] [turns=10]
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { register } from "tsx/esm/api";

const LOOPS = Number(process.argv[2] ?? 64);
const TURNS = Number(process.argv[3] ?? 10);
const PROMPT_START = 2000;
const PROMPT_STEP = 400;
const COMPLETION = 200;

register();
const src = (p) => new URL(`../../src/${p}`, import.meta.url).href;
const { openaiProvider } = await import(src("models/openai_compatible.ts"));
const { TokenLedger } = await import(src("agent/token_ledger.ts"));
const { buildRlLine } = await import(src("run/rl_line.ts"));

const serverCode = `
const http = require("node:http");
const cache = new Map();
function body(turn, ids) {
  const key = turn + ":" + ids;
  if (cache.has(key)) return cache.get(key);
  const p = ${PROMPT_START} + ${PROMPT_STEP} * turn;
  const prompt = Array.from({ length: p }, (_, i) => (i * 7919) % 150000);
  const completion = Array.from({ length: ${COMPLETION} }, (_, i) => (i * 104729 + turn) % 150000);
  const choice = { index: 0, message: { role: "assistant", content: "x".repeat(${COMPLETION * 4}) }, finish_reason: "stop" };
  if (ids) { choice.token_ids = completion; choice.logprobs = { content: completion.map((id) => ({ token: "token_id:" + id, logprob: -((id % 97) + 1) / 100, bytes: [], top_logprobs: [] })) }; }
  const b = JSON.stringify({ id: "c", object: "chat.completion", created: 0, model: "m", choices: [choice], usage: { prompt_tokens: p, completion_tokens: ${COMPLETION}, total_tokens: p + ${COMPLETION} }, ...(ids ? { prompt_token_ids: prompt } : {}) });
  cache.set(key, b);
  return b;
}
http.createServer((req, res) => {
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => {
    const r = JSON.parse(Buffer.concat(chunks));
    const turn = r.messages.filter((m) => m.role === "assistant").length;
    const out = body(turn, r.return_token_ids === true);
    res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(out) });
    res.end(out);
  });
}).listen(0, "127.0.0.1", function () { process.stdout.write(String(this.address().port) + "\\n"); });
`;
const server = spawn(process.execPath, ["-e", serverCode], { stdio: ["ignore", "pipe", "inherit"] });
const [portLine] = await once(server.stdout, "data");
const baseURL = `http://127.0.0.1:${String(portLine).trim()}/v1`;

/** mode: "off" (no capture), "parse" (ids requested and read, no ledger or line), "full" (what a task does). */
async function oneLoop(model, mode) {
  const ledger = mode === "full" ? new TokenLedger() : undefined;
  const messages = [
    { role: "system", content: "s".repeat(2000) },
    { role: "user", content: "task" },
  ];
  for (let t = 0; t < TURNS; t++) {
    const r = await model.complete({ messages: messages.slice() });
    ledger?.sent(r);
    const msg = { role: "assistant", content: r.message.content };
    ledger?.link(msg, r);
    messages.push(msg, { role: "user", content: "go on" });
  }
  const loop = { messages, end: "final_answer" };
  const line = ledger
    ? JSON.stringify(
        buildRlLine({
          taskId: "t",
          epoch: 0,
          config: { model: "m", dataset: "d.jsonl" },
          loop,
          ledger,
          outcome: "completed",
          error: undefined,
          score: { passed: true, value: 1, scorers: [] },
        }),
      )
    : "";
  return { loop, ledger, line };
}

async function measure(mode) {
  const model = openaiProvider.create({ model: "m", baseURL, rlCapture: mode !== "off", maxSockets: 16 });
  await Promise.all(Array.from({ length: 8 }, () => oneLoop(model, mode))); // warm-up
  globalThis.gc?.();
  const heap0 = process.memoryUsage().heapUsed;
  const cpu0 = process.cpuUsage();
  // All loops at once, their results held until the end (a worker holds a task's loop until its line is built).
  const results = await Promise.all(Array.from({ length: LOOPS }, () => oneLoop(model, mode)));
  const cpu = process.cpuUsage(cpu0);
  globalThis.gc?.();
  const heapPerLoop = (process.memoryUsage().heapUsed - heap0) / LOOPS;
  const lineBytes = results[0].line.length;
  return {
    cpuPerCallUs: (cpu.user + cpu.system) / (LOOPS * TURNS),
    heapPerLoopKiB: heapPerLoop / 1024,
    lineKiB: lineBytes / 1024,
    held: results.length,
  };
}

const MODES = { off: "without capture       ", parse: "ids read, no rl line  ", full: "--rl-capture (as a task)" };
const rows = [];
for (let rep = 0; rep < 3; rep++) for (const mode of Object.keys(MODES)) rows.push({ mode, ...(await measure(mode)) });
server.kill();
for (const [mode, label] of Object.entries(MODES)) {
  const mine = rows.filter((r) => r.mode === mode);
  const med = (k) => mine.map((r) => r[k]).sort((a, b) => a - b)[1];
  console.log(
    `${label}: ${med("cpuPerCallUs").toFixed(0)} µs CPU per call, ${med("heapPerLoopKiB").toFixed(0)} KiB heap per loop held` +
      (mode === "full" ? `, rl.jsonl line ${med("lineKiB").toFixed(0)} KiB` : "") +
      ` (median of 3; ${LOOPS} loops × ${TURNS} turns, prompt ${PROMPT_START}+${PROMPT_STEP}·turn ids, ${COMPLETION} completion ids)`,
  );
}
if (!globalThis.gc) console.log("(run with node --expose-gc for steadier heap figures)");
