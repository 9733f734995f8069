/**
 * A run's own files hold only well-formed text: a lone UTF-16 surrogate (a server's `\ud83d` escape, a model
 * answer cut inside an emoji) cannot be written as UTF-8, and Python's readers (tokenizers, Arrow behind Hugging
 * Face `datasets`) refuse a file that carries one as a `\udXXX` escape. It is written as U+FFFD instead.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeOpenAI, startFakeOpenAI, taskTurn, text, toolCalls } from "./helpers/fake_openai.js";
import { runCliInProcess, tempDir } from "./helpers/cli.js";

const LONE = "\ud83d";

function everyString(value: unknown, out: string[] = []): string[] {
  if (typeof value === "string") out.push(value);
  else if (Array.isArray(value)) for (const v of value) everyString(v, out);
  else if (value && typeof value === "object")
    for (const [k, v] of Object.entries(value)) {
      out.push(k);
      everyString(v, out);
    }
  return out;
}

describe("lone surrogates from the model", () => {
  let server: FakeOpenAI;
  beforeAll(async () => {
    server = await startFakeOpenAI((req) => {
      const { turn } = taskTurn(req);
      if (turn === 0)
        return toolCalls([
          { name: "todo", arguments: { todos: [{ id: "1", content: `cut ${LONE}`, status: "pending" }] } },
        ]);
      return text(`answer cut inside an emoji ${LONE}`);
    });
  });
  afterAll(() => server.close());

  it("are written as U+FFFD in trajectories.jsonl and atif.jsonl; a pair stays whole", async () => {
    const dir = tempDir();
    const dataset = join(dir, "d.jsonl");
    writeFileSync(dataset, `${JSON.stringify({ id: "a", prompt: "task:a keep 😀 whole" })}\n`);
    const r = await runCliInProcess([
      "run",
      dataset,
      "--model",
      "m",
      "--base-url",
      server.baseURL,
      "--api-key",
      "k",
      "--toolsets",
      "todo",
      "--output-dir",
      dir,
      "--run-name",
      "t",
      "--progress",
      "none",
    ]);
    expect(r.exitCode, r.stderr).toBe(0);
    for (const file of ["trajectories.jsonl", "atif.jsonl"]) {
      const lines = readFileSync(join(dir, "t", file), "utf8")
        .trim()
        .split("\n");
      expect(lines, file).toHaveLength(1);
      const strings = everyString(JSON.parse(lines[0]!));
      expect(
        strings.filter((s) => !s.isWellFormed()),
        file,
      ).toEqual([]);
      expect(
        strings.some((s) => s.includes("😀")),
        file,
      ).toBe(true);
    }
    const entry = JSON.parse(readFileSync(join(dir, "t", "trajectories.jsonl"), "utf8"));
    expect(entry.final_response).toBe("answer cut inside an emoji \ufffd");
  });
});
