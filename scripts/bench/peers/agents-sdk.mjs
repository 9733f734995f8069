#!/usr/bin/env node
/**
 * The OpenAI Agents SDK for JS (`@openai/agents` and `openai`, installed in --peers-dir), on the chat-completions
 * API with tracing off: an Agent with a `todo` tool, up to 20 turns, one JSON line of the run's history per task.
 */
import { openSync, writeSync } from "node:fs";
import { parseArgs } from "node:util";
import { TODO_PARAMETERS, contenderArgs, importPeer, pool } from "./common.mjs";

const { baseUrl, tasks, concurrency, out, peersDir } = contenderArgs(parseArgs);
const { Agent, run, tool, setDefaultOpenAIClient, setOpenAIAPI, setTracingDisabled } = await importPeer(
  peersDir,
  "@openai/agents",
);
const { default: OpenAI } = await importPeer(peersDir, "openai");
setDefaultOpenAIClient(new OpenAI({ baseURL: baseUrl, apiKey: "k", maxRetries: 0 }));
setOpenAIAPI("chat_completions");
setTracingDisabled(true);
const todo = tool({
  name: "todo",
  description: "Keep a todo list.",
  parameters: { ...TODO_PARAMETERS, additionalProperties: true },
  strict: false,
  execute: async (input) => JSON.stringify({ todos: input.todos ?? [] }),
});
const agent = new Agent({ name: "bench", instructions: "Complete the task.", tools: [todo], model: "bench" });

const fd = openSync(out, "w");
await pool(
  tasks,
  concurrency,
  async (i) => ({ id: i, messages: (await run(agent, `benchmark task ${i}`, { maxTurns: 20 })).history }),
  (line) => writeSync(fd, line),
);
