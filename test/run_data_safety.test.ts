/** Bad input loses nothing: task folder names, run names, and resumes of a changed experiment. */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve, sep } from "node:path";
import YAML from "yaml";
import { describe, expect, it } from "vitest";
import { gzipSync } from "node:zlib";
import { readDataset } from "../src/run/dataset.js";
import { taskDirName } from "../src/run/task.js";
import { execa } from "execa";
import { CLI, type CliResult, ROOT, cleanEnv, runCli, runCliInProcess, tempDir } from "./helpers/cli.js";
import { readJsonl } from "./helpers/jsonl.js";
import { waitUntil } from "./helpers/wait.js";

let dots: Promise<{ dataset: string; out: string; r: CliResult }> | undefined;
/** Run `dots` of two rows whose ids are '..' and '.' (made once: one test reads it, another continues it). */
function dotsRun(): Promise<{ dataset: string; out: string; r: CliResult }> {
  return (dots ??= (async () => {
    const dir = tempDir();
    const dataset = join(dir, "d.jsonl");
    writeFileSync(
      dataset,
      [
        { id: "..", prompt: "Use the shell to compute 1 + 1." },
        { id: ".", prompt: "Use the shell to compute 2 + 2." },
      ]
        .map((r) => JSON.stringify({ ...r, toolsets: ["terminal"] }))
        .join("\n") + "\n",
    );
    const out = join(dir, "runs");
    const args = [
      "run",
      dataset,
      "--model",
      "scripted",
      "--output-dir",
      out,
      "--run-name",
      "dots",
      "--progress",
      "none",
    ];
    return { dataset, out, r: await runCliInProcess(args) };
  })());
}

describe("task folder names", () => {
  it("are never empty, '.', '..' or outside their parent, for every id the reader accepts", () => {
    const ids = [
      ".",
      "..",
      "...",
      "....",
      "/",
      "../x",
      "a/../../b",
      "..\\\\..",
      "~",
      "-",
      "a b",
      "ü",
      "\u0000",
      "x".repeat(500),
      "0",
      "-1",
      "CON",
      ". .",
      "./.",
    ];
    const parent = resolve("/runs/r/workspaces");
    const names = new Set<string>();
    for (const id of ids) {
      const name = taskDirName(id);
      expect(name, id).not.toMatch(/^\.*$/);
      expect(name, id).not.toContain("/");
      expect(name, id).not.toContain("\\");
      const full = resolve(parent, name);
      expect(full.startsWith(parent + sep), id).toBe(true);
      names.add(name);
    }
    expect(names.size).toBe(ids.length);
    expect(taskDirName("plain-id_1.2")).toBe("plain-id_1.2");
  });

  it("a dataset whose ids are '..' and '.' runs both tasks and keeps the run folder", async () => {
    const { out, r } = await dotsRun();
    expect(r.exitCode).toBe(0);
    expect(
      readJsonl(join(out, "dots", "trajectories.jsonl"))
        .map((l) => l.task_id)
        .sort(),
    ).toEqual([".", ".."]);
    expect(existsSync(join(out, "dots", "statistics.json"))).toBe(true);
  });
});

describe("run names", () => {
  it.each(["..", "."])("--run-name %s is refused with one line, exit 2", async (name) => {
    const dir = tempDir();
    const dataset = join(dir, "d.jsonl");
    writeFileSync(dataset, JSON.stringify({ prompt: "p" }) + "\n");
    const r = await runCliInProcess([
      "run",
      dataset,
      "--model",
      "scripted",
      "--output-dir",
      join(dir, "runs"),
      "--run-name",
      name,
      "--progress",
      "none",
    ]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(r.stderr).toContain("--run-name");
    expect(existsSync(join(dir, "trajectories.jsonl"))).toBe(false);
  });
});

describe("resuming a changed experiment", () => {
  it("stops with exit 3 naming the change; --allow-config-change goes on and records it", async () => {
    const dir = tempDir();
    const dataset = join(dir, "d.jsonl");
    const out = join(dir, "runs");
    writeFileSync(
      dataset,
      JSON.stringify({ id: "a", prompt: "Use the shell to compute 1 + 1.", toolsets: ["terminal"] }) + "\n",
    );
    const base = ["run", dataset, "--output-dir", out, "--run-name", "exp", "--progress", "none"];
    expect((await runCliInProcess([...base, "--model", "scripted"])).exitCode).toBe(0);
    writeFileSync(
      dataset,
      [
        JSON.stringify({ id: "a", prompt: "Use the shell to compute 1 + 1.", toolsets: ["terminal"] }),
        JSON.stringify({ id: "b", prompt: "changed", toolsets: ["terminal"] }),
      ].join("\n") + "\n",
    );
    const refused = await runCliInProcess([...base, "--model", "scripted", "--resume"]);
    expect(refused.exitCode).toBe(3);
    expect(refused.stderr).toContain(
      "was started with a different configuration (the dataset or a referenced file changed)",
    );
    expect(readJsonl(join(out, "exp", "trajectories.jsonl"))).toHaveLength(1);
    const model = await runCliInProcess([...base, "--model", "scripted:1", "--resume"]);
    expect(model.exitCode).toBe(3);
    expect(model.stderr).toContain("model");
    const allowed = await runCliInProcess([...base, "--model", "scripted", "--resume", "--allow-config-change"]);
    expect(allowed.exitCode).toBe(0);
    expect(readJsonl(join(out, "exp", "trajectories.jsonl")).map((l) => l.task_id)).toEqual(["a", "b"]);
    const runYaml = YAML.parse(readFileSync(join(out, "exp", "run.yaml"), "utf8"));
    expect(runYaml.allowed_config_changes).toHaveLength(1);
    expect(readFileSync(join(out, "exp", "events.log"), "utf8")).toContain(
      "resumed with a changed configuration (--allow-config-change)",
    );
  });
});

describe("no-ops and bad output locations are errors, not a quiet exit 0", () => {
  const dataset = () => {
    const dir = tempDir();
    const file = join(dir, "d.jsonl");
    writeFileSync(
      file,
      [
        JSON.stringify({ id: "a", prompt: "p", toolsets: ["terminal"] }),
        JSON.stringify({ id: "b", prompt: "q", toolsets: ["terminal"] }),
      ].join("\n") + "\n",
    );
    return { dir, file };
  };
  // (--resume of a run that does not exist starts it: test/run_stdin.test.ts)
  it.each([["--retry-failed"], ["--only", "a"]])("%s on a run that does not exist", async (...flag) => {
    const { dir, file } = dataset();
    const r = await runCliInProcess([
      "run",
      file,
      "--model",
      "scripted",
      "--output-dir",
      join(dir, "runs"),
      "--progress",
      "none",
      ...flag,
    ]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain("has no results to continue");
  });

  it("--only naming unknown ids, --offset past the end, an output dir that is a file or under /proc", async () => {
    const { dir, file } = dataset();
    // --only continues a run: the run of the two dotted ids serves.
    const dotted = await dotsRun();
    expect(dotted.r.exitCode).toBe(0);
    const only = await runCliInProcess([
      ...["run", dotted.dataset, "--model", "scripted", "--output-dir", dotted.out, "--run-name", "dots"],
      ...["--progress", "none", "--only", "..,zzz"],
    ]);
    expect(only.exitCode).toBe(2);
    expect(only.stderr).toContain("--only names task id(s) not in the dataset: zzz");
    const offset = await runCliInProcess([
      "run",
      file,
      "--model",
      "scripted",
      "--output-dir",
      join(dir, "o2"),
      "--progress",
      "none",
      "--offset",
      "5",
    ]);
    expect(offset.exitCode).toBe(2);
    expect(offset.stderr).toContain("--offset 5 is past the end of the dataset (2 valid row(s))");
    writeFileSync(join(dir, "afile"), "x");
    const isFile = await runCliInProcess([
      "run",
      file,
      "--model",
      "scripted",
      "--output-dir",
      join(dir, "afile"),
      "--progress",
      "none",
    ]);
    expect(isFile.exitCode).toBe(2);
    expect(isFile.stderr).toContain("is a file, not a folder");
    const proc = await runCliInProcess(
      ["run", file, "--model", "scripted", "--output-dir", "/proc/self/nothing", "--progress", "none"],
      { timeoutMs: 30_000 },
    );
    expect(proc.exitCode).toBe(2);
    expect(proc.stderr).toContain("inside a kernel file system");
  });
});

describe("dataset files", () => {
  const read = async (bytes: Buffer, name = "d.jsonl") => {
    const file = join(tempDir(), name);
    writeFileSync(file, bytes);
    const out: any[] = [];
    for await (const item of readDataset(file)) out.push(item);
    return { file, out };
  };

  it("skips a UTF-8 BOM, reads CRLF lines, names the line of invalid UTF-8", async () => {
    const good = Buffer.from(`\uFEFF${JSON.stringify({ id: "a", prompt: "p" })}\r\n`);
    const bad = Buffer.concat([Buffer.from('{"id": "b", "prompt": "caf'), Buffer.from([0xe9]), Buffer.from('"}\n')]);
    const { file, out } = await read(
      Buffer.concat([good, bad, Buffer.from(JSON.stringify({ id: "c", prompt: "q" }) + "\n")]),
    );
    expect(out[0]).toMatchObject({ ok: true, value: { id: "a", line: 1 } });
    expect(out[1]).toEqual({
      ok: false,
      bad: { file, line: 2, reason: "invalid UTF-8 (the file must be UTF-8 text)" },
    });
    expect(out[2]).toMatchObject({ ok: true, value: { id: "c", line: 3 } });
  });

  it("reads .gz transparently and reports damaged gzip data as a bad row", async () => {
    const text = [1, 2, 3].map((i) => JSON.stringify({ id: `t${i}`, prompt: `p${i}` })).join("\n") + "\n";
    const { out } = await read(gzipSync(text), "d.jsonl.gz");
    expect(out.map((o) => o.value.id)).toEqual(["t1", "t2", "t3"]);
    const cut = gzipSync(text).subarray(0, 20);
    const damaged = await read(cut, "cut.jsonl.gz");
    expect(damaged.out.at(-1)).toMatchObject({ ok: false, bad: { reason: "the gzip data is damaged or cut off" } });
  });

  it("a binary file is one line saying what it is, exit 2, not pages of control characters", async () => {
    const file = join(tempDir(), "paper.jsonl");
    writeFileSync(file, Buffer.concat([Buffer.from("%PDF-1.7\n"), Buffer.alloc(2000, 1)]));
    const r = await runCliInProcess([
      "run",
      file,
      "--model",
      "scripted",
      "--output-dir",
      join(tempDir(), "runs"),
      "--progress",
      "none",
    ]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr.trim().split("\n").at(-1)).toBe(
      `hermes-batch run: dataset ${file}: this is a PDF document, not a JSONL text file`,
    );
    expect(r.stderr).not.toMatch(/[\x00-\x08\x0e-\x1f]/);
    await expect(read(Buffer.concat([Buffer.from("{}"), Buffer.alloc(10, 0)]), "blob.jsonl")).rejects.toThrow(
      "this is binary data (it has NUL bytes)",
    );
  });
});

describe("sample -n large", () => {
  it("streams 300,000 draws without a stack overflow; --json is bounded", async () => {
    const r = await runCli(["sample", "-n", "300000"]);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toContain("task_299999");
    expect(r.stdout).toMatch(/\/300000 {2}\(/);
    const json = await runCli(["sample", "-n", "2000000", "--json"]);
    expect(json.exitCode).toBe(2);
    expect(json.stderr).toContain("with --json is more than 1000000 draws");
  });
});

describe("the end-of-run line", () => {
  it("names each outcome: a max_turns task is not called completed; --fail-under gates on the completion rate", async () => {
    const dir = tempDir();
    const file = join(dir, "d.jsonl");
    writeFileSync(
      file,
      [
        {
          id: "long",
          prompt:
            "Write a Python script fib.py that prints the first 10 Fibonacci numbers, run it, and report the output.",
          toolsets: ["terminal", "file"],
        },
        { id: "short", prompt: "What is 1 + 1?", toolsets: ["todo"] },
      ]
        .map((r) => JSON.stringify(r))
        .join("\n") + "\n",
    );
    // --max-turns 2: the short task answers on its first call (completed); an answer on the last allowed call would not be (Hermes' rule).
    const r = await runCliInProcess([
      "run",
      file,
      "--model",
      "scripted",
      "--max-turns",
      "2",
      "--output-dir",
      join(dir, "runs"),
      "--progress",
      "none",
      "--fail-under",
      "75",
    ]);
    expect(r.stdout).toContain("run 'd': 1 completed, 1 max_turns, 0 failed, 0 dropped this time (2 done in total)");
    expect(r.stdout).toContain("completion rate 50.0 % is under --fail-under 75 %");
    expect(r.exitCode).toBe(1);
  });
});

describe("a row that would offer no tool", () => {
  it("is a bad row naming each tool and why it is unavailable, before any model call", async () => {
    const dir = tempDir();
    const file = join(dir, "d.jsonl");
    writeFileSync(file, JSON.stringify({ id: "w", prompt: "search the web", toolsets: ["web"] }) + "\n");
    const r = await runCliInProcess([
      "run",
      file,
      "--model",
      "scripted",
      "--output-dir",
      join(dir, "runs"),
      "--progress",
      "none",
    ]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain(
      `${file}:1: 'toolsets' web offer no tool here: web_extract: needs FIRECRAWL_API_KEY; web_search: needs FIRECRAWL_API_KEY`,
    );
    expect(existsSync(join(dir, "runs", "d", "trajectories.jsonl"))).toBe(false);
  });
});

describe("the resume hint", () => {
  it("never prints a key, and names a command that works after the README's install", async () => {
    const dir = tempDir();
    const file = join(dir, "d.jsonl");
    writeFileSync(
      file,
      Array.from({ length: 6 }, (_, i) =>
        JSON.stringify({ id: `t${i}`, prompt: "Use the shell to compute 1 + 1.", toolsets: ["terminal"] }),
      ).join("\n") + "\n",
    );
    const child = execa(
      "node",
      [
        CLI,
        "run",
        file,
        "--model",
        "scripted:400",
        "--api-key",
        "sk-very-secret-123456",
        "--judge-api-key=jk-secret-999999",
        "--output-dir",
        join(dir, "runs"),
        "--workers",
        "1",
        "--concurrency",
        "1",
        "--progress",
        "log",
      ],
      // No SIGKILL 5 s after the Ctrl-C (execa's default): the drain may take longer on a loaded machine.
      { cwd: ROOT, env: cleanEnv(), extendEnv: false, reject: false, forceKillAfterDelay: false },
    );
    const trajectories = join(dir, "runs", "d", "trajectories.jsonl");
    // A first finished task means the run is past start-up and its Ctrl-C handler is in place.
    const started = await waitUntil(
      () => existsSync(trajectories) && readFileSync(trajectories, "utf8").length > 0,
      60_000,
      20,
    );
    expect(started, "a first task finished before Ctrl-C").toBe(true);
    child.kill("SIGINT");
    const r = await child;
    expect(r.exitCode).toBe(130);
    expect(r.stdout + r.stderr).not.toContain("sk-very-secret-123456");
    expect(r.stdout + r.stderr).not.toContain("jk-secret-999999");
    expect(r.stdout).toMatch(
      /Resume with: \S+ \S+cli\.js run .* --api-key KEY --judge-api-key=KEY .*--resume \(put your key back in place of KEY\)/,
    );
  });
});

describe("an endpoint that cannot work", () => {
  it("stops the run after the first N tasks fail with the same model error, exit 1, with the error and a resume command", async () => {
    const { startFakeOpenAI, httpError } = await import("./helpers/fake_openai.js");
    const server = await startFakeOpenAI(() => httpError(401, "invalid api key"));
    try {
      const dir = tempDir();
      const file = join(dir, "d.jsonl");
      writeFileSync(
        file,
        Array.from({ length: 30 }, (_, i) =>
          JSON.stringify({ id: `t${i}`, prompt: `task ${i}`, toolsets: ["terminal"] }),
        ).join("\n") + "\n",
      );
      const r = await runCliInProcess([
        "run",
        file,
        "--model",
        "m",
        "--base-url",
        server.baseURL,
        "--api-key",
        "bad-key-0000",
        "--output-dir",
        join(dir, "runs"),
        "--progress",
        "none",
        "--concurrency",
        "2",
        "--workers",
        "1",
        "--stop-after-failures",
        "3",
      ]);
      expect(r.exitCode).toBe(1);
      expect(r.stdout).toContain("stopped early: the first 3 tasks all failed with the same model error");
      expect(r.stdout).toContain("invalid api key");
      // A 401 does not change by asking again: --resume alone leaves those tasks, --retry-failed beside it reruns them.
      expect(r.stdout).toMatch(
        /the \d+ task\(s\) that failed with a 4xx.*: \S+ \S+cli\.js run .* --resume --retry-failed/,
      );
      const failed = readJsonl(join(dir, "runs", "d", "failed.jsonl"));
      expect(failed.length).toBeGreaterThanOrEqual(3);
      expect(failed.length).toBeLessThanOrEqual(5);
    } finally {
      await server.close();
    }
  });
});

describe("the preflight before the first task", () => {
  const dataset = (dir: string) => {
    const file = join(dir, "d.jsonl");
    writeFileSync(
      file,
      Array.from({ length: 3 }, (_, i) =>
        JSON.stringify({ id: `t${i}`, prompt: `task ${i}`, toolsets: ["terminal"] }),
      ).join("\n") + "\n",
    );
    return file;
  };
  const run = (file: string, dir: string, extra: string[]) =>
    runCliInProcess([
      "run",
      file,
      "--model",
      "m-1",
      "--output-dir",
      join(dir, "runs"),
      "--progress",
      "none",
      "--workers",
      "1",
      ...extra,
    ]);

  it("stops with exit 2 when nobody listens, when the key is refused, or when the model is not listed; no task file is written", async () => {
    const { startFakeOpenAI, httpError, text: textReply } = await import("./helpers/fake_openai.js");
    const dir = tempDir();
    const file = dataset(dir);
    const { createServer } = await import("node:net");
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, "127.0.0.1", r));
    const closedPort = (probe.address() as { port: number }).port;
    await new Promise((r) => probe.close(r));
    const refused = await run(file, dir, ["--base-url", `http://127.0.0.1:${closedPort}/v1`, "--api-key", "k"]);
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr).toContain(
      `cannot reach the model endpoint http://127.0.0.1:${closedPort}/v1: ECONNREFUSED (--no-preflight skips this check)`,
    );

    const badKey = await startFakeOpenAI(() => textReply("never asked"), {
      models: () => httpError(401, "invalid api key"),
    });
    const unknownModel = await startFakeOpenAI(() => textReply("never asked"), {
      models: () => ({ kind: "json", body: { object: "list", data: [{ id: "m-2" }, { id: "other" }] } }),
    });
    try {
      const r401 = await run(file, dir, ["--base-url", badKey.baseURL, "--api-key", "sk-wrong-0000"]);
      expect(r401.exitCode).toBe(2);
      expect(r401.stderr).toContain("refused the key (HTTP 401)");
      expect(r401.stderr).toContain("invalid api key");
      expect(r401.stderr).not.toContain("sk-wrong-0000");
      expect(badKey.requests).toHaveLength(0);
      const r404 = await run(file, dir, ["--base-url", unknownModel.baseURL, "--api-key", "k"]);
      expect(r404.exitCode).toBe(2);
      expect(r404.stderr).toContain("does not list model 'm-1' (2 listed, e.g. m-2, other)");
      expect(existsSync(join(dir, "runs", "d", "trajectories.jsonl"))).toBe(false);
      // --no-preflight goes on to the tasks (which then fail or succeed on their own).
      const skipped = await run(file, dir, ["--base-url", unknownModel.baseURL, "--api-key", "k", "--no-preflight"]);
      expect(skipped.exitCode).toBe(0);
      expect(unknownModel.requests.length).toBeGreaterThan(0);
    } finally {
      await badKey.close();
      await unknownModel.close();
    }
  });

  it("a remote endpoint without any key is refused before anything is sent", async () => {
    const dir = tempDir();
    const r = await run(dataset(dir), dir, ["--base-url", "https://api.example.com/v1"]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain("no API key for the model endpoint https://api.example.com/v1: pass --api-key");
  });
});

describe("what libraries print", () => {
  it("an unparsable stream chunk fails its task with one line, in failed.jsonl and events.log, not on the terminal", async () => {
    const { startFakeOpenAI } = await import("./helpers/fake_openai.js");
    const server = await startFakeOpenAI(() => ({
      kind: "raw",
      status: 200,
      headers: { "content-type": "text/event-stream" },
      text: "data: {not json at all\n\ndata: [DONE]\n\n",
    }));
    try {
      const dir = tempDir();
      const file = join(dir, "d.jsonl");
      writeFileSync(file, JSON.stringify({ id: "s", prompt: "hello", toolsets: ["terminal"] }) + "\n");
      const r = await runCliInProcess([
        "run",
        file,
        "--model",
        "m",
        "--base-url",
        server.baseURL,
        "--api-key",
        "k",
        "--stream",
        "--max-retries",
        "0",
        "--output-dir",
        join(dir, "runs"),
        "--progress",
        "none",
      ]);
      expect(r.exitCode).toBe(1);
      expect(r.stderr + r.stdout).not.toContain("{not json at all");
      const events = readFileSync(join(dir, "runs", "d", "events.log"), "utf8");
      expect(events).toMatch(/task s: model_error: .*unparsable response: /);
      const failed = readJsonl(join(dir, "runs", "d", "failed.jsonl"));
      expect(failed).toHaveLength(1);
      expect(String(failed[0]!.error)).toMatch(/unparsable response: /);
      expect(String(failed[0]!.error)).not.toContain("\n");
    } finally {
      await server.close();
    }
  });
});

describe("answers that are not what they claim", () => {
  it("a 200 HTML page is reported as an HTML page with its title; usage values that are not counts are ignored with one warning", async () => {
    const { startFakeOpenAI, completion } = await import("./helpers/fake_openai.js");
    const html = await startFakeOpenAI(() => ({
      kind: "raw",
      status: 200,
      headers: { "content-type": "text/html" },
      text: "<!DOCTYPE html><html><head><title>Sign in - Corp SSO</title></head><body>…</body></html>",
    }));
    const odd = await startFakeOpenAI(() => {
      const reply = completion({ content: "done" }) as { kind: "json"; body: { usage: unknown } };
      reply.body.usage = { prompt_tokens: -5, completion_tokens: "7", total_tokens: 12 };
      return reply;
    });
    try {
      const dir = tempDir();
      const file = join(dir, "d.jsonl");
      writeFileSync(
        file,
        [0, 1].map((i) => JSON.stringify({ id: `t${i}`, prompt: "hello", toolsets: ["terminal"] })).join("\n") + "\n",
      );
      const common = [
        "--model",
        "m",
        "--api-key",
        "k",
        "--max-retries",
        "0",
        "--output-dir",
        join(dir, "runs"),
        "--progress",
        "none",
        "--workers",
        "1",
      ];
      const r1 = await runCliInProcess(["run", file, "--base-url", html.baseURL, "--run-name", "html", ...common]);
      expect(r1.exitCode).toBe(1);
      expect(r1.stdout).toContain(
        'the endpoint answered with an HTML page ("Sign in - Corp SSO"), not a chat completion',
      );
      expect(r1.stdout).not.toContain("empty choices");
      const r2 = await runCliInProcess(["run", file, "--base-url", odd.baseURL, "--run-name", "odd", ...common]);
      expect(r2.exitCode).toBe(0);
      expect(
        r2.stderr.match(
          /sends usage values that are not token counts \(prompt_tokens=-5, completion_tokens="7"; agent calls\): they are ignored/g,
        ),
      ).toHaveLength(1);
      const stats = JSON.parse(readFileSync(join(dir, "runs", "odd", "statistics.json"), "utf8"));
      expect(stats.token_usage.agent.prompt_tokens).toBe(0);
      expect(stats.token_usage.agent.completion_tokens).toBe(0);
    } finally {
      await html.close();
      await odd.close();
    }
  });
});

describe("a row cwd the sandbox can never have", () => {
  it("is a bad row naming its line before anything runs (local sandbox: relative to /workspace or under it)", async () => {
    const dir = tempDir();
    const file = join(dir, "d.jsonl");
    writeFileSync(
      file,
      [
        JSON.stringify({ id: "a", prompt: "x", cwd: "/etc" }),
        JSON.stringify({ id: "b", prompt: "y", cwd: "sub/dir" }),
      ].join("\n") + "\n",
    );
    const r = await runCliInProcess([
      "run",
      file,
      "--model",
      "scripted",
      "--toolsets",
      "terminal",
      "--output-dir",
      join(dir, "runs"),
      "--progress",
      "none",
    ]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain(`${file}:1: 'cwd' is outside the task folder`);
    expect(r.stderr).not.toContain(`${file}:2:`);
    expect(existsSync(join(dir, "runs", "d", "trajectories.jsonl"))).toBe(false);
  });

  /** Runs `rows` with --on-bad-row skip (and `extra` flags); the row with id `outside` names a cwd outside /workspace. */
  async function skipRun(rows: object[], extra: string[] = []) {
    const dir = tempDir();
    const file = join(dir, "d.jsonl");
    writeFileSync(file, `${rows.map((r) => JSON.stringify(r)).join("\n")}\n`);
    const runDir = join(dir, "runs", "d");
    const r = await runCliInProcess([
      "run",
      file,
      ...["--model", "scripted", "--toolsets", "terminal", "--on-bad-row", "skip", ...extra],
      ...["--output-dir", join(dir, "runs"), "--progress", "none"],
    ]);
    expect(r.exitCode).toBe(0);
    expect(readJsonl(join(runDir, "trajectories.jsonl")).map((l) => l.task_id)).toEqual(["good"]);
    expect(readFileSync(join(runDir, "failed.jsonl"), "utf8")).toBe("");
    return { r, file, events: readFileSync(join(runDir, "events.log"), "utf8") };
  }
  const good = { id: "good", prompt: "say hi" };
  const outside = { id: "outside", prompt: "say hi", cwd: "/etc" };

  it("with --on-bad-row skip, a row the environment refuses is skipped and said so, never run", async () => {
    const { r, file, events } = await skipRun([good, outside]);
    expect(events).toContain(`skipped bad row: ${file}:2: 'cwd' is outside the task folder`);
    expect(r.stdout + r.stderr).toContain("skipped 1 bad row(s)");
  });

  it("the same when the dataset is too big to keep and is read a second time to dispatch", async () => {
    // Over the 4 MB of rows a run keeps from its first pass (src/run/dataset.ts); --offset 1 leaves the big row out.
    const big = { id: "big", prompt: "say hi", metadata: { pad: "x".repeat(5 * 1024 * 1024) } };
    const { file, events } = await skipRun([big, good, outside], ["--offset", "1"]);
    expect(events).toContain(`skipped bad row: ${file}:3: 'cwd' is outside the task folder`);
  });
});
