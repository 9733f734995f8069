#!/usr/bin/env node
/**
 * The floor for a Node client: a keep-alive `node:http` agent loop with an in-process `todo` tool, one JSON line
 * per task. No validation, no retries, no records beyond the messages: what any harness must at least do.
 *   node raw.mjs --base-url URL --tasks N --concurrency C --out FILE
 */
import { request, Agent } from "node:http";
import { openSync, writeSync } from "node:fs";
import { parseArgs } from "node:util";
import { TODO_PARAMETERS, contenderArgs } from "./common.mjs";

const { baseUrl, tasks, concurrency, out } = contenderArgs(parseArgs);
const url = new URL(`${baseUrl.replace(/\/$/, "")}/chat/completions`);
const agent = new Agent({ keepAlive: true, maxSockets: Infinity });
const tools = [
  { type: "function", function: { name: "todo", description: "Keep a todo list.", parameters: TODO_PARAMETERS } },
];

function post(body) {
  return new Promise((resolve, reject) => {
    const data = Buffer.from(JSON.stringify(body));
    const req = request(
      url,
      {
        method: "POST",
        agent,
        headers: { "content-type": "application/json", "content-length": data.length, authorization: "Bearer k" },
      },
      (res) => {
        const chunks = [];
        res.on("data", (c) => chunks.push(c));
        res.on("end", () => {
          try {
            resolve(JSON.parse(Buffer.concat(chunks).toString("utf8")));
          } catch (err) {
            reject(err);
          }
        });
      },
    );
    req.on("error", reject);
    req.end(data);
  });
}

async function task(i) {
  const messages = [{ role: "user", content: `benchmark task ${i}` }];
  for (let turn = 0; turn < 20; turn++) {
    const message = (await post({ model: "bench", messages, tools })).choices[0].message;
    messages.push(message);
    if (!message.tool_calls?.length) break;
    for (const call of message.tool_calls) {
      const args = JSON.parse(call.function.arguments);
      messages.push({ role: "tool", tool_call_id: call.id, content: JSON.stringify({ todos: args.todos ?? [] }) });
    }
  }
  return messages;
}

const fd = openSync(out, "w");
let next = 0;
await Promise.all(
  Array.from({ length: concurrency }, async () => {
    while (next < tasks) {
      const i = next++;
      writeSync(fd, `${JSON.stringify({ id: i, messages: await task(i) })}\n`);
    }
  }),
);
agent.destroy();
