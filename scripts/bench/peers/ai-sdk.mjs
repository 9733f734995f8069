#!/usr/bin/env node
/**
 * The Vercel AI SDK (`ai` with `@ai-sdk/openai`, installed in --peers-dir): generateText with a `todo` tool and
 * up to 20 steps, one JSON line of the response messages per task.
 */
import { openSync, writeSync } from "node:fs";
import { parseArgs } from "node:util";
import { TODO_PARAMETERS, contenderArgs, importPeer, pool } from "./common.mjs";

const { baseUrl, tasks, concurrency, out, peersDir } = contenderArgs(parseArgs);
const { generateText, tool, stepCountIs, jsonSchema } = await importPeer(peersDir, "ai");
const { createOpenAI } = await importPeer(peersDir, "@ai-sdk/openai");
const model = createOpenAI({ baseURL: baseUrl, apiKey: "k" }).chat("bench");
const tools = {
  todo: tool({
    description: "Keep a todo list.",
    inputSchema: jsonSchema(TODO_PARAMETERS),
    execute: async (args) => ({ todos: args.todos ?? [] }),
  }),
};

const fd = openSync(out, "w");
await pool(
  tasks,
  concurrency,
  async (i) => {
    const r = await generateText({
      model,
      prompt: `benchmark task ${i}`,
      tools,
      stopWhen: stepCountIs(20),
      maxRetries: 0,
    });
    return { id: i, messages: r.response.messages };
  },
  (line) => writeSync(fd, line),
);
