#!/usr/bin/env node
/**
 * A model server on 127.0.0.1 that answers each task's first call with one pathology, named by the first word of
 * its prompt (empty choices, an HTML page, truncated JSON, 429/500/400/401, a reset, a body cut mid-way, no or bad
 * usage, gzip, invalid UTF-8, 300 tool calls, a 30 MB answer, …); every later call gets a plain answer. Prints its
 * port. With the datasets this prints (--dataset), the run shows how the harness ends each case:
 *   node scripts/bench/hostile/server.mjs > port.txt & node scripts/bench/hostile/server.mjs --dataset > d.jsonl
 *   node dist/src/cli.js run d.jsonl --model m --base-url http://127.0.0.1:$(cat port.txt)/v1 --api-key k \
 *        --toolsets todo --request-timeout 3 --progress none
 * Not part of the suite (the retries and the slow case take about 50 s); docs/benchmarks.md lists what it showed.
 */
import { createServer } from "node:http";
import { gzipSync } from "node:zlib";

const CASES =
  "empty_choices html badjson args_object args_badjson unknown_tool null_content gzip r429 r500 r400 r401 reset midbody nousage length huge nonutf8 neg_usage tool_calls_empty many_calls sse_when_not_asked slow ok".split(
    " ",
  );
if (process.argv.includes("--dataset")) {
  for (const c of CASES) console.log(JSON.stringify({ id: c, prompt: `${c} please` }));
  process.exit(0);
}
const seen = new Map();
const ok = (message, extra = {}) =>
  JSON.stringify({
    id: "x",
    object: "chat.completion",
    created: 1,
    model: "m",
    choices: [{ index: 0, message, finish_reason: message.tool_calls ? "tool_calls" : "stop" }],
    usage: { prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 },
    ...extra,
  });
const tc = (name, args) => ({
  role: "assistant",
  content: null,
  tool_calls: [{ id: "c1", type: "function", function: { name, arguments: args } }],
});
const server = createServer((req, res) => {
  let b = "";
  req.on("data", (d) => (b += d));
  req.on("end", () => {
    if (req.url.endsWith("/models")) {
      res.end(JSON.stringify({ data: [{ id: "m" }] }));
      return;
    }
    const body = JSON.parse(b);
    const prompt = body.messages.find((m) => m.role === "user").content;
    const turn = body.messages.filter((m) => m.role === "assistant").length;
    const n = (seen.get(prompt) ?? 0) + 1;
    seen.set(prompt, n);
    const kind = prompt.split(" ")[0];
    const send = (status, text, headers = {}) => {
      res.writeHead(status, { "content-type": "application/json", ...headers });
      res.end(text);
    };
    if (turn > 0) return send(200, ok({ role: "assistant", content: "final answer" }));
    switch (kind) {
      case "empty_choices":
        return send(
          200,
          JSON.stringify({ id: "x", choices: [], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } }),
        );
      case "html":
        return send(200, "<html>gateway</html>", { "content-type": "text/html" });
      case "badjson":
        return send(200, '{"choices": [');
      case "args_object":
        return send(
          200,
          ok({
            role: "assistant",
            content: null,
            tool_calls: [{ id: "c1", type: "function", function: { name: "todo", arguments: { todos: [] } } }],
          }),
        );
      case "args_badjson":
        return send(200, ok(tc("todo", "{not json")));
      case "unknown_tool":
        return send(200, ok(tc("rm_rf_everything", "{}")));
      case "null_content":
        return send(200, ok({ role: "assistant", content: null }));
      case "gzip": {
        res.writeHead(200, { "content-type": "application/json", "content-encoding": "gzip" });
        res.end(gzipSync(ok({ role: "assistant", content: "zipped hi" })));
        return;
      }
      case "r429":
        if (n === 1) return send(429, '{"error":{"message":"slow down"}}', { "retry-after": "1" });
        return send(200, ok({ role: "assistant", content: "after 429" }));
      case "r500":
        if (n <= 2) return send(500, '{"error":{"message":"boom"}}');
        return send(200, ok({ role: "assistant", content: "after 500" }));
      case "r400":
        return send(400, '{"error":{"message":"context length exceeded","code":"context_length_exceeded"}}');
      case "r401":
        return send(401, '{"error":{"message":"bad key"}}');
      case "reset":
        if (n === 1) {
          req.socket.destroy();
          return;
        }
        return send(200, ok({ role: "assistant", content: "after reset" }));
      case "midbody":
        if (n === 1) {
          res.writeHead(200, { "content-type": "application/json", "content-length": "500" });
          res.write('{"choices":[{"mess');
          setTimeout(() => req.socket.destroy(), 50);
          return;
        }
        return send(200, ok({ role: "assistant", content: "after midbody" }));
      case "nousage":
        return send(
          200,
          JSON.stringify({
            id: "x",
            choices: [{ index: 0, message: { role: "assistant", content: "no usage" }, finish_reason: "stop" }],
          }),
        );
      case "length":
        return send(
          200,
          JSON.stringify({
            id: "x",
            choices: [{ index: 0, message: { role: "assistant", content: "trunc" }, finish_reason: "length" }],
            usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
          }),
        );
      case "huge":
        return send(200, ok({ role: "assistant", content: "A".repeat(30 * 1024 * 1024) }));
      case "nonutf8": {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(
          Buffer.concat([
            Buffer.from('{"choices":[{"index":0,"message":{"role":"assistant","content":"bad '),
            Buffer.from([0xff, 0xfe]),
            Buffer.from(
              '"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}',
            ),
          ]),
        );
        return;
      }
      case "neg_usage":
        return send(
          200,
          JSON.stringify({
            id: "x",
            choices: [{ index: 0, message: { role: "assistant", content: "neg" }, finish_reason: "stop" }],
            usage: { prompt_tokens: -5, completion_tokens: "many", total_tokens: null },
          }),
        );
      case "tool_calls_empty":
        return send(200, ok({ role: "assistant", content: "", tool_calls: [] }));
      case "many_calls":
        return send(
          200,
          ok({
            role: "assistant",
            content: null,
            tool_calls: Array.from({ length: 300 }, (_, i) => ({
              id: "c" + i,
              type: "function",
              function: { name: "todo", arguments: '{"todos":[]}' },
            })),
          }),
        );
      case "sse_when_not_asked": {
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.end('data: {"choices":[{"delta":{"content":"hi"}}]}\n\ndata: [DONE]\n\n');
        return;
      }
      case "slow":
        setTimeout(() => send(200, ok({ role: "assistant", content: "slow" })), 4000);
        return;
      default:
        return send(200, ok({ role: "assistant", content: "default" }));
    }
  });
});
server.listen(0, "127.0.0.1", () => console.log(server.address().port));
