/**
 * `--env singularity` reads and writes a task's files from the host, through the folder it binds at the workdir.
 * Links the agent makes there must not lead those reads and writes out of it: a link to a host file would show
 * the agent that file (the dataset, a key) and let it overwrite it (a shell's rc file) with the harness user's
 * rights. End to end through the built CLI with a scripted agent and test/fixtures/fake-apptainer on PATH as
 * `apptainer`, with APPTAINER_FAKE_CONTAIN=1: its commands run in a bubblewrap sandbox that sees only /usr, /etc
 * and the bound folder, as `--contain` does.
 */
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT, runCli } from "./helpers/cli.js";
import { scriptedPerTask, startFakeOpenAI, type FakeOpenAI } from "./helpers/fake_openai.js";
import { readJsonl } from "./helpers/jsonl.js";

const SECRET = "HBSINGSECRET-4b1e";

let base: string;
let server: FakeOpenAI;

beforeAll(async () => {
  base = mkdtempSync(join(tmpdir(), "hb-sing-links-"));
  chmodSync(base, 0o755);
  mkdirSync(join(base, "bin"));
  symlinkSync(join(ROOT, "test", "fixtures", "fake-apptainer"), join(base, "bin", "apptainer"));
  mkdirSync(join(base, "host"));
  writeFileSync(join(base, "host", "secret.txt"), `${SECRET}\n`);
  writeFileSync(join(base, "host", "victim.txt"), "untouched\n");
  const host = join(base, "host");
  server = await startFakeOpenAI(
    scriptedPerTask(() => [
      {
        name: "terminal",
        arguments: {
          command:
            `ln -s ${host}/secret.txt leak; ln -s ${host}/victim.txt w; ln -s ${host} d; ` +
            `ln -s ${host}/new.txt dangling; ls -l`,
        },
      },
      { name: "read_file", arguments: { path: "leak" } },
      { name: "write_file", arguments: { path: "w", content: "PWNED\n" } },
      { name: "write_file", arguments: { path: "d/made.txt", content: "PWNED\n" } },
      { name: "write_file", arguments: { path: "dangling", content: "PWNED\n" } },
      { name: "read_file", arguments: { path: "d/secret.txt" } },
    ]),
  );
});

afterAll(async () => {
  await server?.close();
  rmSync(base, { recursive: true, force: true });
});

describe("--env singularity and the agent's links", () => {
  it("file reads and writes through a link stay inside the container", { timeout: 120_000 }, async () => {
    writeFileSync(
      join(base, "d.jsonl"),
      `${JSON.stringify({ id: "links", prompt: "task:links", toolsets: ["terminal", "file"] })}\n`,
    );
    const r = await runCli(
      [
        "run",
        join(base, "d.jsonl"),
        "--model",
        "agent",
        "--base-url",
        server.baseURL,
        "--api-key",
        "k",
        "--approval",
        "allow",
        "--env",
        "singularity",
        "--image",
        "docker://debian:bookworm",
        "--output-dir",
        join(base, "runs"),
        "--run-name",
        "links",
        "--progress",
        "none",
      ],
      {
        env: {
          PATH: `${join(base, "bin")}:${process.env.PATH}`,
          APPTAINER_FAKE_CONTAIN: "1",
          APPTAINER_FAKE_STATE: join(base, "state"),
          APPTAINER_CACHEDIR: join(base, "cache"),
        },
      },
    );
    expect(r.stderr).not.toMatch(/internal error/);
    const [line] = readJsonl(join(base, "runs", "links", "trajectories.jsonl"));
    const tools = line.messages.filter((m: any) => m.role === "tool").map((m: any) => m.content as string);
    expect(tools, r.stderr).toHaveLength(6);
    expect(tools[0]).toContain("leak ->");
    expect(JSON.stringify(tools)).not.toContain(SECRET);
    expect(readFileSync(join(base, "host", "victim.txt"), "utf8")).toBe("untouched\n");
    expect(existsSync(join(base, "host", "made.txt"))).toBe(false);
    expect(existsSync(join(base, "host", "new.txt"))).toBe(false);
  });
});
