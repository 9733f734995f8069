/**
 * Replays test/fixtures/hermes_file_tools.json through our file tools: every case is a file system state
 * and one or more calls, with the text the original Hermes tools returned for them (see the fixture's
 * `source`). Results must match key for key, in order, with the same values; files must end the same.
 */
import {
  appendFileSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { dirname, join, relative } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import "../tools/file_tools.js";
import { createToolPipeline } from "../tools/pipeline.js";
import { localTask, type LocalTaskFixture } from "./helpers/local_ctx.js";

type FileState = Record<string, string | { base64: string } | null>;
interface Case {
  name: string;
  files: FileState;
  /** `_append` is no tool call: an edit made outside the tools (the text appended, the file's time set to 1800000000). */
  steps: { tool: string; args: Record<string, unknown>; result?: string }[];
  files_after: FileState;
}
const fixture = JSON.parse(readFileSync(join(import.meta.dirname, "fixtures/hermes_file_tools.json"), "utf8")) as {
  source: string;
  cases: Case[];
};

function bytes(content: string | { base64: string }): Buffer {
  return typeof content === "string" ? Buffer.from(content, "utf8") : Buffer.from(content.base64, "base64");
}

/** The same text for the same JSON value with the same key order; other text as it is. */
function normalized(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text));
  } catch {
    return text;
  }
}

function filesUnder(root: string, dir = root): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of readdirSync(dir)) {
    const full = join(dir, name);
    if (statSync(full).isDirectory()) Object.assign(out, filesUnder(root, full));
    // Compiled Python (from the syntax check) holds times and paths: only its presence is compared.
    else out[relative(root, full)] = full.includes("__pycache__") ? "" : readFileSync(full).toString("base64");
  }
  return out;
}

// One sandbox for every case (a sandbox start costs more than a case): each case empties its folder and gets
// a fresh ToolContext, where the file tools keep what they remember between calls.
let task: LocalTaskFixture;
beforeAll(async () => {
  task = localTask();
  mkdirSync(task.taskDir, { recursive: true });
  await task.env();
});
afterAll(async () => {
  await task.dispose();
});

describe("file tools replay the original's results", () => {
  it("has cases for every file tool", () => {
    expect(fixture.cases.length).toBeGreaterThan(50);
    expect(new Set(fixture.cases.flatMap((c) => c.steps.map((s) => s.tool).filter((t) => t !== "_append")))).toEqual(
      new Set(["read_file", "write_file", "patch", "search_files"]),
    );
  });

  for (const c of fixture.cases) {
    it(c.name, async () => {
      for (const name of readdirSync(task.taskDir)) rmSync(join(task.taskDir, name), { recursive: true, force: true });
      const ctx = { ...task.ctx };
      Object.entries(c.files).forEach(([path, content], i) => {
        const full = join(task.taskDir, path);
        if (content === null) {
          mkdirSync(full, { recursive: true });
          return;
        }
        mkdirSync(dirname(full), { recursive: true });
        writeFileSync(full, bytes(content));
        // The generator gave the files distinct times in this order (file search lists newest first).
        const t = 1_700_000_000 + 10 * i;
        utimesSync(full, t, t);
      });
      const pipeline = createToolPipeline();
      for (const step of c.steps) {
        if (step.tool === "_append") {
          const full = join(task.taskDir, String(step.args.path));
          appendFileSync(full, String(step.args.text));
          utimesSync(full, 1_800_000_000, 1_800_000_000);
          continue;
        }
        const text = await pipeline.call(step.tool, step.args, ctx);
        // `{DIR}`: the task's folder, which the original's stale-write warnings name.
        const expected = step.result!.replaceAll("{DIR}", task.taskDir);
        expect(normalized(text), `${step.tool} ${JSON.stringify(step.args)}`).toBe(normalized(expected));
      }
      const expected = Object.fromEntries(
        Object.entries(c.files_after).map(([p, v]) => [
          p,
          p.includes("__pycache__") ? "" : bytes(v!).toString("base64"),
        ]),
      );
      expect(filesUnder(task.taskDir)).toEqual(expected);
    });
  }
});
