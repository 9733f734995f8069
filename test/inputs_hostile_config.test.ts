/**
 * Hostile settings files (`--config`, `--mcp-config`, `--prefill-messages-file`): each is one UserError line naming the
 * file (and line) or the flag, never a hang, an internal error, a Node warning, or a value silently taken.
 */
import { execFileSync, spawn } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { configFromArgv } from "../src/commands/run.js";
import { loadMcpConfig } from "../src/config/mcp_config.js";
import { readPrefillFile } from "../src/config/prefill.js";
import { UserError } from "../src/core/errors.js";
import { runCliInProcess, tempDir } from "./helpers/cli.js";

function refusal(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    if (!(err instanceof UserError)) throw err;
    expect(err.message).not.toContain("\n");
    return err.message;
  }
  throw new Error("not refused");
}

function file(name: string, content: string | Buffer): string {
  const f = join(tempDir(), name);
  writeFileSync(f, content);
  return f;
}

const withConfig =
  (path: string, ...argv: string[]) =>
  () =>
    configFromArgv(["d.jsonl", "--model", "scripted", "--config", path, ...argv]);

describe("--config files", () => {
  it("an alias that contains itself is refused, not an internal error", () => {
    const f = file("c.yaml", "extra_body: &x {a: *x}\n");
    expect(refusal(withConfig(f))).toBe(`${f}: nested more than 64 levels deep (or an alias that refers to itself)`);
  });

  it("a tag the parser does not know is refused, not read as a string with a warning", () => {
    const f = file("c.yaml", 'model: !!js/function "x"\n');
    expect(refusal(withConfig(f))).toMatch(
      new RegExp(`^${f}:1: invalid YAML: Unresolved tag: tag:yaml.org,2002:js/function`),
    );
  });

  it("an empty --config is refused, not ignored", () => {
    expect(refusal(withConfig(""))).toBe("--config: give a file name (got an empty one)");
  });

  it("a device is refused before it is read", () => {
    expect(refusal(withConfig("/dev/zero"))).toBe("--config /dev/zero: is a device, not a file");
    expect(refusal(withConfig(tempDir()))).toMatch(/^--config \S+: is a folder, not a file$/);
    expect(withConfig("/dev/null")().model).toBe("scripted");
  });

  it("names invalid UTF-8, a second document and an infinite number for what they are", () => {
    const bad = file("c.yaml", Buffer.from([0xff, 0xfe, 0x0a]));
    expect(refusal(withConfig(bad))).toBe(`--config ${bad}: invalid UTF-8 (the file must be UTF-8 text)`);
    const two = file("c.yaml", "max_turns: 3\n---\nmax_turns: 4\n");
    expect(refusal(withConfig(two))).toBe(`${two}:2: invalid YAML: a second document ('---'); the file must hold one`);
    const inf = file("c.yaml", "seed: .inf\n");
    expect(refusal(withConfig(inf))).toBe(`${inf}:1: 'seed' must be a number, got Infinity`);
  });

  it("an empty output_dir is refused, in the file and as a flag", () => {
    const f = file("c.yaml", 'output_dir: ""\n');
    expect(refusal(withConfig(f))).toBe(`${f}:1: 'output_dir' must not be empty`);
    expect(refusal(() => configFromArgv(["d.jsonl", "--model", "scripted", "--output-dir", ""]))).toBe(
      "--output-dir must not be empty",
    );
  });

  it("a bad --config through the CLI: exit 2, one line, no run folder", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, "d.jsonl"), '{"id":"a","prompt":"x"}\n');
    writeFileSync(join(dir, "c.yaml"), "extra_body: &x {a: *x}\n");
    const r = await runCliInProcess(["run", "d.jsonl", "--model", "scripted", "--env", "host", "--config", "c.yaml"], {
      cwd: dir,
    });
    expect(r.exitCode).toBe(2);
    expect(r.stderr.trim().split("\n")).toEqual([
      "hermes-batch run: c.yaml: nested more than 64 levels deep (or an alias that refers to itself)",
    ]);
    expect(existsSync(join(dir, "runs"))).toBe(false);
  });
});

describe("--mcp-config and --prefill-messages-file", () => {
  it("an MCP config with a self-referring alias or an unknown tag is one line", () => {
    const cyc = file("m.yaml", "mcp_servers:\n  fs: {command: node, sampling: &s {a: *s}}\n");
    expect(refusal(() => loadMcpConfig(cyc))).toBe(
      `${cyc}: nested more than 64 levels deep (or an alias that refers to itself)`,
    );
    const tag = file("m.yaml", "mcp_servers:\n  fs: {command: !!js/regexp /x/}\n");
    expect(refusal(() => loadMcpConfig(tag))).toMatch(new RegExp(`^${tag}:2: invalid YAML: Unresolved tag`));
    expect(refusal(() => loadMcpConfig("/dev/urandom"))).toBe("--mcp-config /dev/urandom: is a device, not a file");
  });

  it("a prefill message that names a key twice is refused", () => {
    const f = file("p.json", '[{"role":"user","content":"a","role":"system"}]');
    expect(refusal(() => readPrefillFile(f))).toBe(
      `--prefill-messages-file ${f}: duplicate key 'role' (a JSON object must name each key once)`,
    );
    expect(refusal(() => readPrefillFile("/dev/zero"))).toBe(
      "--prefill-messages-file /dev/zero: is a device, not a file",
    );
    expect(refusal(() => configFromArgv(["d.jsonl", "--model", "scripted", "--prefill-messages-file", ""]))).toBe(
      "--prefill-messages-file must not be empty",
    );
  });

  it("a FIFO still works: read once, whole", () => {
    const dir = tempDir();
    const fifo = join(dir, "c.yaml");
    execFileSync("mkfifo", [fifo]);
    // Another process writes it: the read blocks until a writer opens the FIFO.
    const writer = spawn("sh", ["-c", `printf 'max_turns: 3\\n' > '${fifo}'`], { stdio: "ignore" });
    expect(withConfig(fifo)().max_turns).toBe(3);
    writer.kill();
  });
});
