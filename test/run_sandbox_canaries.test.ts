/**
 * What a local sandbox can see, end to end through the built CLI with a scripted agent (issue 23, item 1): a task
 * searches every file name and every file's text it can reach for canaries placed in the dataset's `expected`, a
 * `verify_files` file, another task's workspace, the output dir, a harness home outside /home (with a 0600
 * `~/.ssh/id_rsa` and `~/.aws/credentials`), the checkout the run starts from, and /srv, /opt, /mnt, /media and
 * /data; none is found, as root and as a uid-1000 harness. Also: `--sandbox-ro` shows a folder read-only (recorded
 * in run.yaml), and one that holds the dataset or the output dir stops the run (exit 2).
 */
import { execa } from "execa";
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLI, ROOT, assertBuilt, cleanEnv, runCliInProcess } from "./helpers/cli.js";
import { startFakeOpenAI, text, toolCalls, type FakeOpenAI } from "./helpers/fake_openai.js";
import { readJsonl } from "./helpers/jsonl.js";

const TOKEN = `HBCANARY${randomBytes(4).toString("hex")}`;
const canary = (where: string) => `${TOKEN}-${where}`;

/** Files changed from a minute before this file loaded on: every canary is written after that. */
const SINCE = Math.floor(Date.now() / 1000) - 60;
const PRUNE = `\\( -path /proc -o -path /sys -o -path /dev \\) -prune -o`;

/**
 * File names anywhere it can see (/proc, /sys, /dev aside) and the text of every file changed since SINCE (a
 * canary is new, and a bind mount or copy of its file is as new), one line per token found. The task writes a
 * control canary into its own folder first, which the text search must find: a search that reads nothing fails.
 * (Reading every file's text instead, /usr's 6 GB included, took the suite ~50 s of CPU.)
 */
const SEARCH =
  `echo ${TOKEN}-control > control.txt; sleep 2; ls -a /; echo ---; ` +
  `find / ${PRUNE} -name '*${TOKEN}*' -print 2>/dev/null | sed 's/^/NAME /'; ` +
  `find / ${PRUNE} -type f -newermt @${SINCE} -print0 2>/dev/null | xargs -0 -r grep -Ioah '${TOKEN}-[a-z-]*' 2>/dev/null | sort -u | sed 's/^/FOUND /'; echo searched`;

let base: string;
let server: FakeOpenAI;
const madeSystemDirs: string[] = [];
const systemCanaries: string[] = [];

beforeAll(async () => {
  mkdirSync(join(ROOT, "runs"), { recursive: true });
  // Inside the checkout: a folder the old sandbox showed read-only.
  base = mkdtempSync(join(ROOT, "runs", "canary-test-"));
  chmodSync(base, 0o755);
  // Canaries in system folders a task must not see (made as root, removed afterwards).
  if (process.getuid?.() === 0) {
    for (const dir of ["/srv", "/opt", "/mnt", "/media", "/data"]) {
      if (!existsSync(dir)) {
        mkdirSync(dir);
        madeSystemDirs.push(dir);
      }
      const file = join(dir, `${TOKEN}-file`);
      writeFileSync(file, canary(`sys${dir.replace("/", "")}`));
      systemCanaries.push(file);
    }
  }
  server = await startFakeOpenAI((req) => {
    const prompt: string = req.body.messages.find((m: any) => m.role === "user").content;
    const turn = req.body.messages.filter((m: any) => m.role === "assistant").length;
    if (prompt.includes("task:writer")) {
      return turn === 0
        ? toolCalls([{ name: "terminal", arguments: { command: `echo ${canary("workspace")} > mine.txt; sleep 6` } }])
        : text("done");
    }
    if (prompt.includes("task:search"))
      return turn === 0
        ? toolCalls([{ name: "terminal", arguments: { command: SEARCH, timeout: 170 } }])
        : text("done");
    if (prompt.includes("task:ro"))
      return turn === 0
        ? toolCalls([
            {
              name: "terminal",
              arguments: {
                command: `cat ${join(base, "toolchain", "tool.txt")}; touch ${join(base, "toolchain", "x")}; echo rc=$?`,
              },
            },
          ])
        : text("done");
    return text("done");
  });
});

afterAll(async () => {
  await server?.close();
  for (const f of systemCanaries) rmSync(f, { force: true });
  for (const d of madeSystemDirs) rmSync(d, { recursive: true, force: true });
  rmSync(base, { recursive: true, force: true });
});

/** A run folder, dataset, home and output dir for one harness user; `uid` owns them. */
function setUp(name: string, uid: number) {
  const dir = join(base, name);
  const home = join(dir, "harness-home");
  const out = join(dir, "out");
  mkdirSync(join(home, ".ssh"), { recursive: true });
  mkdirSync(join(home, ".aws"), { recursive: true });
  writeFileSync(join(home, ".ssh", "id_rsa"), `-----BEGIN OPENSSH PRIVATE KEY-----\n${canary("sshkey")}\n`, {
    mode: 0o600,
  });
  writeFileSync(join(home, ".aws", "credentials"), `[default]\naws_secret_access_key = ${canary("aws")}\n`, {
    mode: 0o600,
  });
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, "notes.txt"), canary("outdir"));
  mkdirSync(join(dir, "hidden-tests"));
  writeFileSync(join(dir, "hidden-tests", "test_secret.py"), `assert answer == "${canary("verifyfiles")}"\n`);
  writeFileSync(join(dir, "checkout-file.txt"), canary("checkout"));
  const rows = [
    { id: "search", prompt: "task:search", expected: canary("expected"), toolsets: ["terminal"] },
    { id: "writer", prompt: "task:writer", verify: "true", verify_files: "hidden-tests", toolsets: ["terminal"] },
  ];
  const dataset = join(dir, "d.jsonl");
  writeFileSync(dataset, rows.map((r) => JSON.stringify(r)).join("\n") + "\n");
  const chownAll = (p: string) => {
    chownSync(p, uid, uid);
    if (statSync(p).isDirectory()) for (const e of readdirSync(p)) chownAll(join(p, e));
  };
  if (process.getuid?.() === 0) chownAll(dir);
  return { dir, home, out, dataset };
}

function cli(args: string[], home: string, uid: number) {
  assertBuilt();
  const env = cleanEnv({ HOME: home });
  if (uid === (process.getuid?.() ?? uid)) {
    return execa(process.execPath, [CLI, ...args], {
      cwd: ROOT,
      env,
      extendEnv: false,
      reject: false,
      timeout: 240_000,
    });
  }
  return execa("setpriv", [`--reuid=${uid}`, `--regid=${uid}`, "--clear-groups", process.execPath, CLI, ...args], {
    cwd: ROOT,
    env,
    extendEnv: false,
    reject: false,
    timeout: 240_000,
  });
}

/** `hermes-batch ARGS` as this test's own user, with HOME `home`, in the test process (no other user to become). */
function cliInProcess(args: string[], home: string) {
  return runCliInProcess(args, { cwd: ROOT, env: { HOME: home }, timeoutMs: 240_000 });
}

const harnesses = process.getuid?.() === 0 ? [0, 1000] : [process.getuid!()];

describe("a local sandbox sees only what a task needs", () => {
  for (const uid of harnesses) {
    it(`no canary is found anywhere the task can look (harness uid ${uid})`, { timeout: 300_000 }, async () => {
      const { home, out, dataset } = setUp(`uid-${uid}`, uid);
      const r = await cli(
        [
          "run",
          dataset,
          "--model",
          "agent",
          "--base-url",
          server.baseURL,
          "--api-key",
          "k",
          "--approval",
          "allow",
          "--env",
          "local",
          "--output-dir",
          out,
          "--run-name",
          "c",
          "--progress",
          "none",
          "--concurrency",
          "2",
          "--keep-workspaces",
        ],
        home,
        uid,
      );
      expect(r.stderr).not.toMatch(/internal error/);
      const lines = readJsonl(join(out, "c", "trajectories.jsonl"));
      const search = lines.find((l) => l.task_id === "search");
      expect(search, `${r.stdout}\n${r.stderr}`).toBeDefined();
      const output: string = search.messages
        .filter((m: any) => m.role === "tool")
        .map((m: any) => JSON.parse(m.content).output ?? m.content)
        .join("\n");
      expect(output).toContain("searched");
      // The writer's canary was on disk in its task folder while the search ran.
      expect(
        readFileSync(
          join(
            out,
            ".workspaces",
            "c",
            readdirSync(join(out, ".workspaces", "c")).find((d) => d.startsWith("writer"))!,
            "mine.txt",
          ),
          "utf8",
        ),
      ).toContain(canary("workspace"));
      expect(output).toContain(`FOUND ${TOKEN}-control`);
      const found = output.match(new RegExp(`(FOUND|NAME) .*${TOKEN}.*`, "g")) ?? [];
      expect(found.filter((f) => f !== `FOUND ${TOKEN}-control`)).toEqual([]);
      // Only the allow-listed entries at the top of its tree.
      const top = output
        .slice(0, output.indexOf("---"))
        .split(/\s+/)
        .filter((n) => n && n !== "." && n !== "..");
      for (const name of top)
        expect([
          "bin",
          "dev",
          "etc",
          "home",
          "lib",
          "lib32",
          "lib64",
          "libx32",
          "proc",
          "run",
          "sbin",
          "tmp",
          "usr",
          "var",
          "workspace",
        ]).toContain(name);
    });
  }

  it("--sandbox-ro shows a folder read-only and is recorded in run.yaml; one holding the dataset or output dir is refused (exit 2)", {
    timeout: 300_000,
  }, async () => {
    const uid = process.getuid?.() ?? 0;
    const { dir, home, out } = setUp("ro", uid);
    mkdirSync(join(base, "toolchain"), { recursive: true });
    writeFileSync(join(base, "toolchain", "tool.txt"), "tool-here");
    chmodSync(join(base, "toolchain"), 0o755);
    const dataset = join(dir, "ro.jsonl");
    writeFileSync(dataset, JSON.stringify({ id: "ro", prompt: "task:ro", toolsets: ["terminal"] }) + "\n");
    const common = [
      "--model",
      "agent",
      "--base-url",
      server.baseURL,
      "--api-key",
      "k",
      "--approval",
      "allow",
      "--env",
      "local",
      "--output-dir",
      out,
      "--progress",
      "none",
    ];
    const r = await cliInProcess(
      ["run", dataset, ...common, "--run-name", "ro", "--sandbox-ro", join(base, "toolchain")],
      home,
    );
    expect(r.exitCode, r.stderr).toBe(0);
    const [line] = readJsonl(join(out, "ro", "trajectories.jsonl"));
    const output = JSON.stringify(line.messages.filter((m: any) => m.role === "tool"));
    expect(output).toContain("tool-here");
    expect(output).toMatch(/Read-only file system/);
    expect(output).toContain("rc=1");
    expect(readFileSync(join(out, "ro", "run.yaml"), "utf8")).toContain(join(base, "toolchain"));

    for (const bad of [dir, out, base, "/"]) {
      const refused = await cliInProcess(["run", dataset, ...common, "--run-name", "bad", "--sandbox-ro", bad], home);
      expect(refused.exitCode, bad).toBe(2);
      expect(refused.stderr).toMatch(/--sandbox-ro .*(holds|lies inside)/);
    }
  });
});
