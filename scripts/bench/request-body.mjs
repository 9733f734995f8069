#!/usr/bin/env node
/**
 * CPU per request of building the chat-completions body: JSON.stringify(buildRequestBody(...)) against
 * serializeRequestBody (cached message and tool JSON), over whole conversations of 2 and 20 tool turns
 * (request k sends the first 2 + 2k messages, as the agent loop does). The module is loaded from the sources (tsx).
 * Usage: node scripts/bench/request-body.mjs
 */
import { tsImport } from "tsx/esm/api";
const { serializeRequestBody, buildRequestBody } = await tsImport(
  "../../src/models/openai_compatible.ts",
  import.meta.url,
);
const opts = { model: "bench", baseURL: "http://127.0.0.1:1/v1" };
const tools = [
  {
    type: "function",
    function: {
      name: "todo",
      description: "d".repeat(800),
      parameters: { type: "object", properties: { todos: { type: "array" } } },
    },
  },
];
function history(turns) {
  const m = [
    { role: "system", content: "x".repeat(300) },
    { role: "user", content: "Benchmark task: make a plan and finish." },
  ];
  for (let i = 0; i < turns; i++) {
    m.push({
      role: "assistant",
      content: null,
      tool_calls: [
        {
          id: "c" + i,
          type: "function",
          function: { name: "todo", arguments: '{"todos":[{"id":"1","content":"step","status":"pending"}]}' },
        },
      ],
    });
    m.push({
      role: "tool",
      tool_call_id: "c" + i,
      name: "todo",
      content: '{"todos":[{"id":"1","content":"step","status":"pending"}],"summary":{"total":1}}',
    });
  }
  return m;
}
for (const turns of [2, 20]) {
  // A conversation: request k sends the first 2 + 2k messages, as the loop does.
  const full = history(turns);
  const run = (f) => {
    const t0 = process.hrtime.bigint();
    for (let rep = 0; rep < 300; rep++) {
      const h = history(turns);
      for (let k = 0; k <= turns; k++) f({ messages: h.slice(0, 2 + 2 * k), tools });
    }
    return Number(process.hrtime.bigint() - t0) / 1e6 / (300 * (turns + 1));
  };
  for (let w = 0; w < 2; w++) {
    run((r) => JSON.stringify(buildRequestBody(opts, r)));
    run((r) => serializeRequestBody(opts, r));
  }
  const a = run((r) => JSON.stringify(buildRequestBody(opts, r)));
  const b = run((r) => serializeRequestBody(opts, r));
  console.log(
    `${turns} turns: JSON.stringify(buildRequestBody) ${(a * 1000).toFixed(1)} µs/request, serializeRequestBody ${(b * 1000).toFixed(1)} µs/request (history build included in both)`,
  );
}
