/**
 * Inputs people try (issue 22, part 6): a dataset from stdin (`run -`, `/dev/stdin`, a FIFO, process
 * substitution), read exactly once, with bad rows named `<stdin>:LINE` and a resume identity from its content;
 * and `--resume` of a run folder that does not exist yet, which starts it and says so.
 */
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Readable } from "node:stream";
import { gzipSync } from "node:zlib";
import { execa } from "execa";
import YAML from "yaml";
import { beforeAll, describe, expect, it } from "vitest";
import { openDatasetSource, readDataset } from "../src/run/dataset.js";
import { CLI, assertBuilt, cleanEnv, runCliInProcess, tempDir } from "./helpers/cli.js";
import { readJsonl } from "./helpers/jsonl.js";

/** Six valid rows, toolsets fixed so the scripted model needs nothing from the host. */
const ROWS = Array.from({ length: 6 }, (_, i) =>
  JSON.stringify({ id: `t${i}`, prompt: `say hello ${i}`, toolsets: ["terminal"], expected: `${i}` }),
);
const DATA = ROWS.join("\n") + "\n";
const sha256 = (text: string | Buffer) => createHash("sha256").update(text).digest("hex");

/** The built CLI with `input` on its stdin (a pipe), in `cwd`. */
function runWithStdin(args: string[], input: string | Buffer, cwd: string) {
  assertBuilt();
  return execa("node", [CLI, ...args], {
    cwd,
    env: cleanEnv(),
    extendEnv: false,
    reject: false,
    input,
    timeout: 120_000,
  });
}

const common = (out: string) => ["--model", "scripted", "--output-dir", out, "--progress", "none", "--workers", "1"];

describe("run -: the dataset from stdin", () => {
  /** One run of DATA from stdin (run 'stdin'), read by the first test and continued with --only by another. */
  let piped: { dir: string; out: string; r: Awaited<ReturnType<typeof runWithStdin>> };
  beforeAll(async () => {
    const dir = tempDir();
    const out = join(dir, "runs");
    piped = { dir, out, r: await runWithStdin(["run", "-", ...common(out)], DATA, dir) };
  }, 120_000);

  it("reads all six rows once (it said 'file not found'), names the run 'stdin' and records the content's hash", async () => {
    const { dir, out, r } = piped;
    expect(r.stderr).not.toContain("file not found");
    expect(r.exitCode).toBe(0);
    expect(
      readJsonl(join(out, "stdin", "trajectories.jsonl"))
        .map((l) => l.task_id)
        .sort(),
    ).toEqual(["t0", "t1", "t2", "t3", "t4", "t5"]);
    const runYaml = YAML.parse(readFileSync(join(out, "stdin", "run.yaml"), "utf8"));
    expect(runYaml.dataset).toBe("<stdin>");
    expect(runYaml.dataset_sha256).toBe(sha256(DATA));

    // --resume with the same rows piped in again: nothing left to do.
    const again = await runWithStdin(["run", "-", ...common(out), "--resume"], DATA, dir);
    expect(again.exitCode).toBe(0);
    expect(again.stdout).toContain("0 completed, 0 failed, 0 dropped this time (6 done in total)");
    // Other content is another experiment, as a changed file is: exit 3.
    const other = await runWithStdin(["run", "-", ...common(out), "--resume"], ROWS.slice(0, 3).join("\n") + "\n", dir);
    expect(other.exitCode).toBe(3);
    expect(other.stderr).toContain("the dataset or a referenced file changed");
    expect(readJsonl(join(out, "stdin", "trajectories.jsonl"))).toHaveLength(6);
  });

  it("/dev/stdin on a pipe reads all six rows (it said 'no valid rows'); a gzip stream works too", async () => {
    const dir = tempDir();
    const out = join(dir, "runs");
    const r = await runWithStdin(["run", "/dev/stdin", ...common(out), "--run-name", "devstdin"], DATA, dir);
    expect(r.stderr).not.toContain("no valid rows");
    expect(r.exitCode).toBe(0);
    expect(readJsonl(join(out, "devstdin", "trajectories.jsonl"))).toHaveLength(6);
    expect(YAML.parse(readFileSync(join(out, "devstdin", "run.yaml"), "utf8")).dataset).toBe("<stdin>");

    const gz = await runWithStdin(["run", "-", ...common(out), "--run-name", "gz"], gzipSync(DATA), dir);
    expect(gz.exitCode).toBe(0);
    expect(readJsonl(join(out, "gz", "trajectories.jsonl"))).toHaveLength(6);
  });

  it("process substitution and a named FIFO are read once, whole", async () => {
    const dir = tempDir();
    const out = join(dir, "runs");
    const file = join(dir, "data.jsonl");
    writeFileSync(file, DATA);
    const sub = await execa("bash", ["-c", `node "${CLI}" run <(cat "${file}") ${common(out).join(" ")}`], {
      cwd: dir,
      env: cleanEnv(),
      extendEnv: false,
      reject: false,
    });
    expect(sub.stderr).not.toContain("no valid rows");
    expect(sub.exitCode).toBe(0);
    expect(readJsonl(join(out, "pipe", "trajectories.jsonl"))).toHaveLength(6);
    expect(YAML.parse(readFileSync(join(out, "pipe", "run.yaml"), "utf8")).dataset_sha256).toBe(sha256(DATA));

    const fifo = join(dir, "rows.fifo");
    await execa("mkfifo", [fifo]);
    const writer = execa("bash", ["-c", `cat "${file}" > "${fifo}"`], { reject: false });
    // In process: the run reads the FIFO's path as a child would (only stdin needs a process of its own).
    const viaFifo = await runCliInProcess(["run", fifo, ...common(out)], { cwd: dir });
    await writer;
    expect(viaFifo.exitCode).toBe(0);
    expect(readJsonl(join(out, "rows", "trajectories.jsonl"))).toHaveLength(6);
  });

  it("names a bad row <stdin>:LINE and runs nothing; --dry-run and --only read the same copy", async () => {
    const dir = tempDir();
    const out = join(dir, "runs");
    const bad = [ROWS[0], ROWS[1], `{"prompt": `, ROWS[3], `{"id": "x"}`].join("\n") + "\n";
    const r = await runWithStdin(["run", "-", ...common(out)], bad, dir);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain("(and 1 more bad row below; nothing was run;");
    expect(r.stderr).toMatch(/<stdin>:3: invalid JSON/);
    expect(r.stderr).toContain("<stdin>:5: missing 'prompt'");
    expect(existsSync(join(out, "stdin", "trajectories.jsonl"))).toBe(false);

    const dry = await runWithStdin(["run", "-", ...common(out), "--dry-run"], DATA, dir);
    expect(dry.exitCode).toBe(0);
    expect(dry.stdout).toContain("tasks to run: 6");

    // --only continues the run of the six rows piped in before (run 'stdin', made once for this describe).
    expect(piped.r.exitCode).toBe(0);
    const unknown = await runWithStdin(["run", "-", ...common(piped.out), "--only", "t2,zzz"], DATA, piped.dir);
    expect([unknown.exitCode, unknown.stderr.trim().split("\n").at(-1)]).toEqual([
      2,
      "hermes-batch run: --only names task id(s) not in the dataset: zzz",
    ]);
    const only = await runWithStdin(["run", "-", ...common(piped.out), "--only", "t2"], DATA, piped.dir);
    expect(only.exitCode).toBe(0);
    expect(only.stdout).toContain("1 completed");

    // verify_files of a piped dataset are relative to the current folder (a pipe has no folder of its own).
    const vf = JSON.stringify({ id: "v", prompt: "p", toolsets: ["terminal"], verify: "true", verify_files: "tests" });
    const missing = await runWithStdin(["run", "-", ...common(out), "--dry-run"], vf + "\n", dir);
    expect(missing.exitCode).toBe(2);
    expect(missing.stderr).toContain(
      `<stdin>:1: 'verify_files' tests: no such folder beside the dataset (${join(dir, "tests")})`,
    );
    mkdirSync(join(dir, "tests"));
    expect((await runWithStdin(["run", "-", ...common(out), "--dry-run"], vf + "\n", dir)).exitCode).toBe(0);
  });

  it("an empty stdin is 'no valid rows', and the early-stop resume hint says to pipe the rows in again", async () => {
    const dir = tempDir();
    const out = join(dir, "runs");
    const empty = await runWithStdin(["run", "-", ...common(out)], "", dir);
    expect([empty.exitCode, empty.stderr.trim().split("\n").at(-1)]).toEqual([
      2,
      "hermes-batch run: dataset <stdin>: no valid rows",
    ]);

    const { startFakeOpenAI, httpError } = await import("./helpers/fake_openai.js");
    const server = await startFakeOpenAI(() => httpError(401, "invalid api key"));
    try {
      const r = await runWithStdin(
        [
          "run",
          "-",
          "--model",
          "m",
          "--base-url",
          server.baseURL,
          "--api-key",
          "bad-key-0000",
          "--no-preflight",
          "--output-dir",
          out,
          "--progress",
          "none",
          "--workers",
          "1",
          "--concurrency",
          "1",
          "--stop-after-failures",
          "2",
        ],
        DATA,
        dir,
      );
      expect(r.exitCode).toBe(1);
      expect(r.stdout).toMatch(
        /: \S+ \S+cli\.js run - .*--resume --retry-failed \(put your key back in place of KEY; pipe the same dataset into it again\)/,
      );
    } finally {
      await server.close();
    }
  });

  it("openDatasetSource: a terminal on stdin is refused instead of waiting; a folder or a missing path is one clear error", async () => {
    const tty = Object.assign(Readable.from([]), { isTTY: true });
    await expect(openDatasetSource("-", tty)).rejects.toThrow("stdin is a terminal; pipe them in (run - < data.jsonl)");
    const dir = tempDir();
    await expect(openDatasetSource(dir)).rejects.toThrow(`dataset ${dir}: is a folder, not a JSONL file`);
    await expect(openDatasetSource(join(dir, "nope.jsonl"))).rejects.toThrow("file not found");
    const piped = await openDatasetSource(
      "-",
      Readable.from([Buffer.from(DATA.slice(0, 10)), Buffer.from(DATA.slice(10))]),
    );
    const ids: string[] = [];
    for (let pass = 0; pass < 2; pass++)
      for await (const item of readDataset(piped)) if (item.ok) ids.push(item.value.id);
    expect(ids).toHaveLength(12); // read twice from the one copy
  });
});

// In process: nothing here is about the process (stdin, signals, its exit).
describe("--resume of a run folder that does not exist yet", () => {
  it("starts the run fresh and prints one line saying so (it was an error); --retry-failed and --only still refuse", async () => {
    const dir = tempDir();
    const file = join(dir, "d.jsonl");
    writeFileSync(file, DATA);
    const out = join(dir, "runs");
    const r = await runCliInProcess(["run", file, ...common(out), "--run-name", "requeue", "--resume"]);
    expect(r.exitCode).toBe(0);
    const notes = r.stderr.split("\n").filter((l) => l.includes("fresh"));
    expect(notes).toEqual([`note: --resume: run folder ${join(out, "requeue")} has no results yet; starting it fresh`]);
    expect(readJsonl(join(out, "requeue", "trajectories.jsonl"))).toHaveLength(6);
    // The same command again continues it, silently.
    const again = await runCliInProcess(["run", file, ...common(out), "--run-name", "requeue", "--resume"]);
    expect(again.exitCode).toBe(0);
    expect(again.stderr).not.toContain("fresh");
    expect(again.stdout).toContain("(6 done in total)");
    for (const flag of [["--retry-failed"], ["--only", "t1"]]) {
      const refused = await runCliInProcess(["run", file, ...common(out), "--run-name", "nothing", ...flag]);
      expect(refused.exitCode).toBe(2);
      expect(refused.stderr).toContain("has no results to continue");
    }
  });
});
