#!/usr/bin/env node
/**
 * The streaming counterpart of server.mjs: each task's first call gets an event stream with one oddity (tool-call
 * arguments split across chunks, two calls interleaved by index, `: comments` and CRLF, `data:` without a space, no
 * [DONE], an error event, a multi-byte character split across chunks, a stream cut mid-way). Prints its port;
 * --dataset prints the matching rows. Run with `--stream`:
 *   node scripts/bench/hostile/stream-server.mjs > port.txt & node scripts/bench/hostile/stream-server.mjs --dataset > s.jsonl
 *   node dist/src/cli.js run s.jsonl --model m --base-url http://127.0.0.1:$(cat port.txt)/v1 --api-key k \
 *        --toolsets todo --stream --request-timeout 3 --progress none
 */
import { createServer } from "node:http";

const CASES = "split_args two_calls_interleaved comments_crlf nospace nodone error_event byte_split cut plain".split(
  " ",
);
if (process.argv.includes("--dataset")) {
  for (const c of CASES) console.log(JSON.stringify({ id: c, prompt: `${c} please` }));
  process.exit(0);
}
const chunk = (delta, finish = null, extra = {}) =>
  `data: ${JSON.stringify({ id: "s", object: "chat.completion.chunk", choices: [{ index: 0, delta, finish_reason: finish }], ...extra })}`;
const usage = { prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 };
const seen = new Map();
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
    const kind = prompt.split(" ")[0];
    const n = (seen.get(prompt) ?? 0) + 1;
    seen.set(prompt, n);
    res.writeHead(200, { "content-type": "text/event-stream" });
    const final = [
      chunk({ role: "assistant", content: "final" }),
      chunk({}, "stop"),
      `data: ${JSON.stringify({ id: "s", choices: [], usage })}`,
      "data: [DONE]",
    ];
    let events;
    if (turn > 0) events = final;
    else
      switch (kind) {
        case "split_args":
          events = [
            chunk({
              role: "assistant",
              tool_calls: [{ index: 0, id: "c1", type: "function", function: { name: "todo", arguments: "" } }],
            }),
            chunk({ tool_calls: [{ index: 0, function: { arguments: '{"to' } }] }),
            chunk({ tool_calls: [{ index: 0, function: { arguments: 'dos": []}' } }] }),
            chunk({}, "tool_calls"),
            `data: ${JSON.stringify({ id: "s", choices: [], usage })}`,
            "data: [DONE]",
          ];
          break;
        case "two_calls_interleaved":
          events = [
            chunk({
              role: "assistant",
              tool_calls: [
                { index: 0, id: "a", type: "function", function: { name: "todo", arguments: '{"todos":' } },
                { index: 1, id: "b", type: "function", function: { name: "todo", arguments: '{"todos":' } },
              ],
            }),
            chunk({
              tool_calls: [
                { index: 1, function: { arguments: "[]}" } },
                { index: 0, function: { arguments: "[]}" } },
              ],
            }),
            chunk({}, "tool_calls", { usage }),
            "data: [DONE]",
          ];
          break;
        case "comments_crlf":
          res.write(": ping\r\n\r\n");
          events = [
            chunk({ role: "assistant", content: "hel" }),
            ": keepalive",
            chunk({ content: "lo" }),
            chunk({}, "stop", { usage }),
            "data: [DONE]",
          ];
          res.end(events.join("\r\n\r\n") + "\r\n\r\n");
          return;
        case "nospace":
          events = [
            chunk({ role: "assistant", content: "x" }).replace("data: ", "data:"),
            chunk({}, "stop", { usage }).replace("data: ", "data:"),
            "data:[DONE]",
          ];
          break;
        case "nodone":
          events = [chunk({ role: "assistant", content: "no done" }), chunk({}, "stop", { usage })];
          break;
        case "error_event":
          if (n === 1) {
            events = [
              chunk({ role: "assistant", content: "par" }),
              `data: ${JSON.stringify({ error: { message: "overloaded", code: 529 } })}`,
            ];
            break;
          }
          events = final;
          break;
        case "byte_split": {
          const t =
            [chunk({ role: "assistant", content: "héllo 😀" }), chunk({}, "stop", { usage }), "data: [DONE]"].join(
              "\n\n",
            ) + "\n\n";
          const buf = Buffer.from(t);
          let i = 0;
          const iv = setInterval(() => {
            if (i >= buf.length) {
              clearInterval(iv);
              res.end();
              return;
            }
            res.write(buf.subarray(i, i + 3));
            i += 3;
          }, 1);
          return;
        }
        case "cut":
          if (n === 1) {
            res.write(chunk({ role: "assistant", content: "partial" }) + "\n\n");
            setTimeout(() => req.socket.destroy(), 30);
            return;
          }
          events = final;
          break;
        default:
          events = final;
      }
    res.end(events.join("\n\n") + "\n\n");
  });
});
server.listen(0, "127.0.0.1", () => console.log(server.address().port));
