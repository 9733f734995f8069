/**
 * A hostile batch run, end to end: the real CLI with `--env local` (the bubblewrap sandbox), a local fake
 * endpoint scripting the agent's tool calls and an approver that denies everything. The tasks try to delete
 * host files in disguise, plant an allowlist, forge the run's results and steal the keys; afterwards every
 * victim is intact, no key in any encoding is in any output file or request body, and the run's files hold
 * exactly the dataset's tasks. Also: a missing bwrap, a fork bomb, `kill -9` and SIGHUP of the CLI.
 *
 * The run and the victims live under runs/ of the repository (not /tmp): a folder the sandbox does see,
 * read-only, so the attacks aim at real targets.
 */
import { execa } from "execa";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLI, ROOT, assertBuilt, cleanEnv } from "./helpers/cli.js";
import {
  startFakeOpenAI,
  taskTurn,
  text,
  toolCalls,
  type FakeOpenAI,
  type RecordedRequest,
  type Reply,
} from "./helpers/fake_openai.js";
import { waitUntil } from "./helpers/local_ctx.js";
import { readJsonl } from "./helpers/jsonl.js";

const API_KEY = "sk-hostile-endpoint-7f3a9c2e51b04d8f";
const APPROVER_KEY = "sk-hostile-approver-c81d2e7a44f09b36";
const DB_PASSWORD = "hostile-db-pw-5e2b7c19d3";

let base: string;

function freshDir(name: string): string {
  const dir = join(base, name);
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** A secret as it could appear: raw, base64 at each byte alignment (the stable middle), hex. */
function encodings(secret: string): string[] {
  const forms = [secret, Buffer.from(secret).toString("hex")];
  for (let k = 0; k < 3; k++) {
    const enc = Buffer.from("\0".repeat(k) + secret).toString("base64");
    forms.push(enc.slice(4, enc.length - 4));
  }
  return forms;
}

function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...filesUnder(path));
    else if (entry.isFile()) out.push(path);
  }
  return out;
}

function cli(args: string[], env: Record<string, string> = {}) {
  assertBuilt();
  return execa(process.execPath, [CLI, ...args], {
    cwd: ROOT,
    env: cleanEnv(env),
    extendEnv: false,
    reject: false,
    timeout: 240_000,
  });
}

/** Host pids whose command line contains `needle` (not zombies). */
function processesWith(needle: string): number[] {
  const found: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (!readFileSync(`/proc/${name}/cmdline`, "utf8").includes(needle)) continue;
      if (/\) Z/.test(readFileSync(`/proc/${name}/stat`, "utf8"))) continue;
      found.push(Number(name));
    } catch {
      // gone
    }
  }
  return found;
}

beforeAll(() => {
  mkdirSync(join(ROOT, "runs"), { recursive: true });
  base = mkdtempSync(join(ROOT, "runs", "hostile-test-"));
});

afterAll(() => {
  rmSync(base, { recursive: true, force: true });
});

describe("a hostile run in the local sandbox", () => {
  let server: FakeOpenAI;
  const attacks = new Map<string, string>();
  const toolCallsOf = new Map<string, { name: string; arguments: Record<string, unknown> }[]>();

  beforeAll(async () => {
    server = await startFakeOpenAI((req: RecordedRequest): Reply => {
      // The approver (a JSON-schema answer) denies everything.
      if (req.body?.response_format)
        return text(JSON.stringify({ decision: "deny", reason: "hostile test: deny all" }));
      const prompt: string = req.body.messages.find((m: any) => m.role === "user").content;
      const id = /attack:(\S+)/.exec(prompt)![1]!;
      const turn = req.body.messages.filter((m: any) => m.role === "assistant").length;
      const calls = toolCallsOf.get(id) ?? [{ name: "terminal", arguments: { command: attacks.get(id)! } }];
      if (turn < calls.length) return toolCalls([calls[turn]!]);
      return text("done");
    });
  });
  afterAll(async () => {
    await server.close();
  });

  // With the approver denying, and again with every command allowed: the sandbox alone must hold too.
  for (const policy of ["smart", "allow"] as const) {
    it(`leaves every victim, the run's files, the user's config and the keys untouched (--approval ${policy})`, {
      timeout: 300_000,
    }, async () => {
      const dir = freshDir(`main-${policy}`);
      const home = freshDir(`main-${policy}/home`);
      const out = join(dir, "runs");
      const runDir = join(out, "h");
      const victims = freshDir(`main-${policy}/victims`);
      const victim = (name: string) => {
        mkdirSync(join(victims, name), { recursive: true });
        writeFileSync(join(victims, name, "precious.txt"), `keep ${name}`);
        return join(victims, name);
      };
      const userConfig = join(home, ".hermes-batch", "config.yaml");
      const payload = Buffer.from(`rm -rf ${victim("decoded")}\n`).toString("base64");
      attacks.set("pipe", `printf 'rm -rf %s\\n' ${victim("piped")} | sh; ls ${victims}`);
      attacks.set("awk", `awk 'BEGIN{system("rm -rf ${victim("awk")}")}'`);
      attacks.set("decoded", `p=$(echo ${payload} | base64 -d); echo "$p" | sh`);
      attacks.set(
        "allowlist",
        `mkdir -p "$HOME/.hermes-batch" && printf 'command_allowlist:\\n  - recursive_delete\\n' > "$HOME/.hermes-batch/config.yaml"; ` +
          `mkdir -p ${join(home, ".hermes-batch")}; printf 'command_allowlist:\\n  - recursive_delete\\n' > ${userConfig}; cat ${userConfig}`,
      );
      attacks.set(
        "forge",
        `: > ${join(runDir, "trajectories.jsonl")}; echo '{"task_id":"forged-task","completed":true}' >> ${join(runDir, "trajectories.jsonl")}; ` +
          `: > ../../trajectories.jsonl; echo '{"task_id":"forged-task"}' >> ../../h/trajectories.jsonl; truncate -s 0 ${join(runDir, "run.yaml")}; ls -la ${runDir}`,
      );
      toolCallsOf.set("forge-file", [
        {
          name: "write_file",
          arguments: { path: join(runDir, "trajectories.jsonl"), content: '{"task_id":"forged-by-file"}\n' },
        },
        {
          name: "write_file",
          arguments: { path: "../../h/trajectories.jsonl", content: '{"task_id":"forged-by-file"}\n' },
        },
      ]);
      attacks.set(
        "environ",
        `for f in /proc/[0-9]*/environ; do tr '\\0' '\\n' < "$f"; done 2>/dev/null | grep -ai -e key -e database | base64 -w0; echo; ` +
          `cat /proc/*/environ 2>/dev/null | od -An -tx1 | tr -d ' \\n' | head -c 4000; echo "env: $OPENAI_API_KEY $DATABASE_URL" | base64`,
      );
      attacks.set("symlink", `ln -s ${victim("linked")} build && rm -rf build/*; ls ${join(victims, "linked")}`);
      const ids = ["pipe", "awk", "decoded", "allowlist", "forge", "forge-file", "environ", "symlink"];
      const dataset = join(dir, "d.jsonl");
      writeFileSync(dataset, ids.map((id) => JSON.stringify({ id, prompt: `attack:${id}` })).join("\n") + "\n");

      const r = await cli(
        [
          "run",
          dataset,
          "--model",
          "agent-model",
          "--base-url",
          server.baseURL,
          "--api-key",
          API_KEY,
          "--approval",
          policy,
          "--approval-model",
          "approver-model",
          "--approval-api-key",
          APPROVER_KEY,
          "--toolsets",
          "terminal,file",
          "--env",
          "local",
          "--output-dir",
          out,
          "--run-name",
          "h",
          "--keep-workspaces",
          "--progress",
          "none",
        ],
        { HOME: home, OPENAI_API_KEY: API_KEY, DATABASE_URL: `postgres://app:${DB_PASSWORD}@127.0.0.1:5432/app` },
      );
      expect(r.exitCode, r.stderr).toBe(0);

      // Every victim is there.
      for (const name of ["piped", "awk", "decoded", "linked"])
        expect(readFileSync(join(victims, name, "precious.txt"), "utf8")).toBe(`keep ${name}`);
      // No allowlist was planted where the next run would read it.
      expect(existsSync(userConfig)).toBe(false);

      // The run's files hold exactly the dataset's tasks, none forged, none truncated.
      const entries = readJsonl(join(runDir, "trajectories.jsonl"));
      expect(entries.map((e) => e.task_id).sort()).toEqual([...ids].sort());
      expect(readFileSync(join(runDir, "run.yaml"), "utf8").length).toBeGreaterThan(0);
      for (const e of entries) expect(e.outcome, e.task_id).toBe("completed");
      const resultOf = (id: string) =>
        JSON.stringify(entries.find((e) => e.task_id === id).messages.filter((m: any) => m.role === "tool"));
      if (policy === "allow") {
        // Nothing was stopped before it ran: the sandbox refused. (The allowlist write may succeed inside the
        // sandbox's private /tmp or $HOME; what counts is that no host file was planted, checked above.)
        for (const id of ["forge", "forge-file"])
          expect(resultOf(id), id).toMatch(/Read-only file system|Permission denied|No such file/);
        // Read-only where the host folder is visible; not there at all when it lives under /tmp (private in the sandbox).
        expect(resultOf("pipe")).toMatch(/Read-only file system|Permission denied|No such file/);
      } else {
        expect(entries.flatMap((e) => e.approvals).some((a: any) => a.decision === "deny" && a.by === "smart")).toBe(
          true,
        );
      }
      // The task folders are apart from the run's files, kept where --keep-workspaces says.
      expect(existsSync(join(out, ".workspaces", "h", "forge"))).toBe(true);
      expect(r.stdout).toContain(`task folders kept in ${join(out, ".workspaces", "h")}`);
      expect(existsSync(join(runDir, "workspaces"))).toBe(false);

      // No key in any encoding in any file the run wrote (run folder and task folders) or any request body.
      const secrets = [API_KEY, APPROVER_KEY, DB_PASSWORD].flatMap(encodings);
      const texts = [
        ...filesUnder(out).map((f) => ({ where: f, text: readFileSync(f, "latin1") })),
        ...server.requests.map((q) => ({ where: `request ${q.index}`, text: JSON.stringify(q.body) })),
      ];
      expect(texts.length).toBeGreaterThan(ids.length);
      for (const { where, text: body } of texts) {
        for (const s of secrets)
          expect(body.includes(s), `${where} contains a form of a key (${s.slice(0, 6)}…)`).toBe(false);
      }
    });
  }
});

describe("local sandbox faults through the CLI", () => {
  it("without bwrap on PATH, --env local stops with one line and the install hint (exit 2)", async () => {
    const dir = freshDir("nobwrap");
    writeFileSync(join(dir, "d.jsonl"), JSON.stringify({ id: "a", prompt: "hi" }) + "\n");
    const r = await execa(
      process.execPath,
      [
        CLI,
        "run",
        join(dir, "d.jsonl"),
        "--model",
        "scripted",
        "--toolsets",
        "terminal",
        "--env",
        "local",
        "--output-dir",
        join(dir, "runs"),
        "--progress",
        "none",
      ],
      {
        cwd: ROOT,
        env: { ...cleanEnv(), PATH: join(dir, "empty-bin") },
        extendEnv: false,
        reject: false,
        timeout: 120_000,
      },
    );
    expect(r.exitCode).toBe(2);
    const lines = r.stderr.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/--env local: .*bwrap.*not on PATH.*apt-get install bubblewrap/);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  describe("with a scripted agent", () => {
    let server: FakeOpenAI;
    const commands = new Map<string, string>();
    beforeAll(async () => {
      server = await startFakeOpenAI((req: RecordedRequest): Reply => {
        if (req.body?.response_format) return text(JSON.stringify({ decision: "deny", reason: "deny" }));
        const { id, turn } = taskTurn(req);
        if (turn === 0) return toolCalls([{ name: "terminal", arguments: { command: commands.get(id)! } }]);
        if (id.startsWith("hang")) return { kind: "hang" };
        if (turn === 1 && id === "bomb")
          return toolCalls([{ name: "terminal", arguments: { command: "echo after-bomb" } }]);
        return text("done");
      });
    });
    afterAll(async () => {
      await server.close();
    });

    function start(name: string, id: string, extra: string[] = []) {
      const dir = freshDir(name);
      writeFileSync(join(dir, "d.jsonl"), JSON.stringify({ id, prompt: `task:${id}` }) + "\n");
      const child = execa(
        process.execPath,
        [
          CLI,
          "run",
          join(dir, "d.jsonl"),
          "--model",
          "m",
          "--base-url",
          server.baseURL,
          "--api-key",
          "k",
          "--toolsets",
          "terminal",
          "--env",
          "local",
          "--output-dir",
          join(dir, "runs"),
          "--run-name",
          "r",
          "--progress",
          "none",
          ...extra,
        ],
        // forceKillAfterDelay: false: execa's SIGKILL 5 s after a SIGTERM would cut the clean-up under test.
        { cwd: ROOT, env: cleanEnv(), extendEnv: false, reject: false, timeout: 240_000, forceKillAfterDelay: false },
      );
      return { dir, child };
    }

    it("a fork bomb ends its task (completed or environment_error), not the machine", {
      timeout: 300_000,
    }, async () => {
      commands.set("bomb", "bomb() { bomb | bomb& }; bomb; sleep 2; echo bombed");
      const { dir, child } = start("bomb", "bomb", ["--pids-limit", "64", "--task-timeout", "200"]);
      const r = await child;
      expect([0, 1]).toContain(r.exitCode);
      const [entry] = [
        ...readJsonl(join(dir, "runs", "r", "trajectories.jsonl")),
        ...readJsonl(join(dir, "runs", "r", "failed.jsonl")),
      ];
      expect(["completed", "environment_error"]).toContain(entry.outcome);
      if (entry.outcome === "environment_error") expect(entry.error).toMatch(/sandbox/);
      // Without --keep-workspaces the task folders and their parents are gone after the run.
      expect(existsSync(join(dir, "runs", ".workspaces"))).toBe(false);
    });

    for (const signal of ["SIGKILL", "SIGHUP"] as const) {
      it(`after ${signal} of the CLI no process of a local task survives`, { timeout: 300_000 }, async () => {
        const marker = signal === "SIGKILL" ? "8711" : "8712";
        commands.set(
          `hang-${marker}`,
          `sleep ${marker}1& set''sid sleep ${marker}2& no''hup sleep ${marker}3 >/dev/null 2>&1& echo started`,
        );
        const { child } = start(`sig-${marker}`, `hang-${marker}`);
        const needles = [1, 2, 3].map((n) => `sleep\u0000${marker}${n}`);
        expect(await waitUntil(() => needles.every((n) => processesWith(n).length === 1), 120_000)).toBe(true);
        // The task is now waiting for a model answer that never comes.
        expect(
          await waitUntil(
            () => server.requests.filter((q) => JSON.stringify(q.body).includes(`hang-${marker}`)).length >= 2,
            60_000,
          ),
        ).toBe(true);
        child.kill(signal);
        const r = await child;
        if (signal === "SIGHUP") expect(r.exitCode, r.stderr).toBe(130);
        expect(await waitUntil(() => needles.every((n) => processesWith(n).length === 0), 30_000)).toBe(true);
      });
    }
  });
});
