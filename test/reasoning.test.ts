/** Reasoning capture (src/models/reasoning.ts) with the original Hermes agent's rules, in process and through
 * the OpenAI-compatible client against the local test server (streaming and not). */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { extractReasoning, stripReasoningBlocks } from "../src/models/reasoning.js";
import { openaiProvider } from "../src/models/openai_compatible.js";
import { startFakeOpenAI, type FakeOpenAI, type Reply } from "./helpers/fake_openai.js";

describe("extractReasoning: sources and precedence", () => {
  it("takes reasoning, then reasoning_content, then reasoning_details, whitespace kept as received", () => {
    const r = extractReasoning({
      reasoning_content: "\n\nsecond\n",
      reasoning: "  first  ",
      reasoning_details: [
        { type: "reasoning.summary", summary: "third" },
        { type: "reasoning.text", text: "fourth", summary: "" },
        "not a dict",
      ],
      content: "<think>inline is ignored when a field exists</think>Answer",
    });
    // withoutDetails: what the original's streaming path records (it never reads reasoning_details).
    expect(r).toEqual({
      reasoning: "  first  \n\n\n\nsecond\n\n\nthird\n\nfourth",
      content: "Answer",
      withoutDetails: "  first  \n\n\n\nsecond\n",
    });
  });

  it("skips a piece equal to an earlier one, and takes each detail's first set key (summary, thinking, content, text)", () => {
    expect(
      extractReasoning({
        reasoning: "same",
        reasoning_content: "same",
        reasoning_details: [{ thinking: "t", text: "x" }, { content: "same" }],
      }).reasoning,
    ).toBe("same\n\nt");
  });

  it("says what the reasoning is without reasoning_details only when those added something", () => {
    // Only in reasoning_details: kept as the reasoning; without them there is none.
    expect(extractReasoning({ content: "A", reasoning_details: [{ type: "reasoning.text", text: "d" }] })).toEqual({
      content: "A",
      reasoning: "d",
      withoutDetails: "",
    });
    // Details repeating a field add nothing: no withoutDetails.
    expect(extractReasoning({ content: "A", reasoning: "r", reasoning_details: [{ text: "r" }] })).toEqual({
      content: "A",
      reasoning: "r",
    });
    expect(extractReasoning({ content: "A", reasoning_details: [] })).toEqual({ content: "A", reasoning: undefined });
    // Without the details the content's think block is the reasoning (the original's fallback); with them it is cut.
    expect(extractReasoning({ content: "<think>inline</think>A", reasoning_details: [{ summary: "s" }] })).toEqual({
      content: "A",
      reasoning: "s",
      withoutDetails: "inline",
    });
  });

  it("reads the tags think, thinking, thought, reasoning, REASONING_SCRATCHPAD (any case) only when no field exists", () => {
    const content =
      "<REASONING_SCRATCHPAD> pad </REASONING_SCRATCHPAD><Thinking>\n b \n</Thinking>A<think>a</think>B<reasoning>d</reasoning><thought>c</thought>";
    expect(extractReasoning({ content })).toEqual({ reasoning: "a\n\nb\n\nc\n\nd\n\npad", content: "AB" });
  });

  it("strips the assistant content always, and gives null when nothing is left", () => {
    expect(extractReasoning({ content: "\n  Answer.  \n" })).toEqual({ content: "Answer.", reasoning: undefined });
    expect(extractReasoning({ content: "<think>only thought</think>  \n" })).toEqual({
      content: null,
      reasoning: "only thought",
    });
    expect(extractReasoning({ content: "", reasoning: "r" })).toEqual({ content: null, reasoning: "r" });
  });

  it("an unterminated block opening a line is cut from the content (kept as reasoning when no field exists)", () => {
    expect(extractReasoning({ content: "Visible\n<thinking>cut mid" })).toEqual({
      content: "Visible",
      reasoning: "cut mid",
    });
    expect(extractReasoning({ content: "Visible\n<thinking>cut mid", reasoning: "field" })).toEqual({
      content: "Visible",
      reasoning: "field",
    });
    // Prose that mentions a tag mid-line is not a block.
    expect(stripReasoningBlocks("use the <think> tag")).toBe("use the tag");
  });
});

describe("reasoning through the client, against the local server", () => {
  let server: FakeOpenAI;
  let reply: Reply;
  beforeAll(async () => {
    server = await startFakeOpenAI(() => reply);
  });
  afterAll(() => server.close());

  function sse(chunks: unknown[]): Reply {
    return {
      kind: "raw",
      status: 200,
      headers: { "content-type": "text/event-stream" },
      text: chunks.map((c) => `data: ${JSON.stringify(c)}\n\n`).join("") + "data: [DONE]\n\n",
    };
  }
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({
    id: "c",
    object: "chat.completion.chunk",
    choices: [{ index: 0, delta, finish_reason: finish }],
  });

  for (const stream of [false, true]) {
    it(`keeps field whitespace, prefers the reasoning field, ignores inline tags then (stream: ${stream})`, async () => {
      const message = {
        role: "assistant",
        content: "<think>ignored</think>\n The answer. ",
        reasoning: "\nfirst\n",
        reasoning_content: "\nfirst\n",
      };
      reply = stream
        ? sse([
            chunk({ role: "assistant", reasoning: "\nfirst\n" }),
            chunk({ content: "<think>ignored</think>\n The" }),
            chunk({ content: " answer. " }, "stop"),
          ])
        : {
            kind: "json",
            body: {
              id: "x",
              object: "chat.completion",
              choices: [{ index: 0, message, finish_reason: "stop" }],
              usage: { prompt_tokens: 1, completion_tokens: 1 },
            },
          };
      const model = openaiProvider.create({ model: "m", baseURL: server.baseURL, apiKey: "k", stream });
      const r = await model.complete({ messages: [{ role: "user", content: "q" }] });
      expect(r.message.content).toBe("The answer.");
      expect(r.message.reasoning).toBe("\nfirst\n");
      expect(r.message.reasoning_without_details).toBeUndefined();
    });

    it(`marks reasoning sent only in reasoning_details, keeping it (stream: ${stream})`, async () => {
      const details = [{ type: "reasoning.text", text: "only here", index: 0 }];
      const message = { role: "assistant", content: "Done.", reasoning_details: details };
      reply = stream
        ? sse([
            chunk({ role: "assistant", reasoning_details: [{ type: "reasoning.text", text: "only ", index: 0 }] }),
            chunk({ reasoning_details: [{ text: "here", index: 0 }] }),
            chunk({ content: "Done." }, "stop"),
          ])
        : {
            kind: "json",
            body: {
              id: "x",
              object: "chat.completion",
              choices: [{ index: 0, message, finish_reason: "stop" }],
              usage: { prompt_tokens: 1, completion_tokens: 1 },
            },
          };
      const model = openaiProvider.create({ model: "m", baseURL: server.baseURL, apiKey: "k", stream });
      const r = await model.complete({ messages: [{ role: "user", content: "q" }] });
      expect(r.message).toEqual({
        role: "assistant",
        content: "Done.",
        reasoning: "only here",
        reasoning_without_details: "",
      });
    });
  }
});
