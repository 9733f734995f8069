/**
 * A hostile task against the kernel's keyrings, which no namespace separates, end to end through the built CLI
 * with a scripted agent (`--approval allow`: only the sandbox stands between the agent and the host). The harness
 * runs in a session keyring holding a secret, as a login does (pam_keyinit gives each SSH or `su -l` session one,
 * systemd each service; `keyctl add user … @s`, a Kerberos KEYRING: cache or an AFS token put secrets there).
 * Every process inherits its parent's session keyring, and a process in it possesses its keys whatever its uid or
 * user namespace: the agent's commands and the verify step (which runs the agent's code) must not read them.
 * Needs python3 on the host (to join a keyring and add a key: Node has no keyctl).
 */
import { execa } from "execa";
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLI, ROOT, assertBuilt, cleanEnv } from "./helpers/cli.js";
import { scriptedPerTask, startFakeOpenAI, type FakeOpenAI, type ToolCallSpec } from "./helpers/fake_openai.js";
import { readJsonl } from "./helpers/jsonl.js";
import { keyringFilter } from "../tools/environments/local/seccomp.js";

const PYTHON = ["/usr/bin/python3", "/usr/local/bin/python3"].find((p) => existsSync(p));
const SECRET = `sk-HOSTKEY-${randomBytes(6).toString("hex")}`;

/** Joins a new session keyring (as pam_keyinit does), puts a user key with SECRET in it, checks it reads back, then execs argv. */
const WITH_KEY = `
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
NR = {"x86_64": (248, 250), "aarch64": (217, 219)}[os.uname().machine]
keyctl = lambda *a: libc.syscall(NR[1], *[ctypes.c_long(x) if isinstance(x, int) else x for x in a])
if keyctl(1, b"hb-login") < 0: sys.exit("join_session_keyring failed: %d" % ctypes.get_errno())
secret = sys.argv[1].encode()
kid = libc.syscall(NR[0], b"user", b"hb_api_key", secret, ctypes.c_size_t(len(secret)), ctypes.c_long(-3))
buf = ctypes.create_string_buffer(256)
n = keyctl(11, kid, buf, 256)
if kid < 0 or buf.raw[:n] != secret: sys.exit("the key did not read back")
os.execvp(sys.argv[2], sys.argv[2:])
`;

/** Reads every key it can reach from its session, user and user-session keyrings (links followed), as the agent would. */
const READ_KEYS = `
import ctypes, os, struct
libc = ctypes.CDLL(None, use_errno=True)
NR = {"x86_64": 250, "aarch64": 219}[os.uname().machine]
keyctl = lambda *a: libc.syscall(NR, *[ctypes.c_long(x) if isinstance(x, int) else x for x in a])
def read(k):
    buf = ctypes.create_string_buffer(65536)
    n = keyctl(11, k, buf, 65536)
    return buf.raw[:n] if n >= 0 else None
seen, todo, found = set(), [keyctl(0, s, 0) for s in (-3, -4, -5)], []
while todo:
    k = todo.pop()
    if k <= 0 or k in seen: continue
    seen.add(k)
    data = read(k)
    if data is None: continue
    found.append(data)
    todo.extend(x for (x,) in struct.iter_unpack("i", data[: len(data) // 4 * 4]))
print("KEYS:", b"|".join(found).decode("latin1"), "errno", ctypes.get_errno())
`;

const term = (command: string): ToolCallSpec => ({ name: "terminal", arguments: { command } });

let server: FakeOpenAI;

beforeAll(async () => {
  assertBuilt();
  server = await startFakeOpenAI(
    scriptedPerTask(() => [
      // Agent code: run now, and by the verify step (as a task's solution would be).
      { name: "write_file", arguments: { path: "solution.py", content: READ_KEYS } },
      term("python3 solution.py 2>&1"),
    ]),
  );
});

afterAll(async () => {
  await server?.close();
});

async function runUnderKeyring(uid?: number): Promise<{ text: string; stderr: string; lines: any[] }> {
  const dir = mkdtempSync(join(tmpdir(), "hb-h5-keyring-"));
  chmodSync(dir, 0o755);
  writeFileSync(join(dir, "with_key.py"), WITH_KEY);
  const row = {
    id: "keys",
    prompt: "task:keys",
    verify: "python3 solution.py; exit 1",
    toolsets: ["terminal", "file"],
  };
  writeFileSync(join(dir, "d.jsonl"), `${JSON.stringify(row)}\n`);
  const args = [
    "run",
    join(dir, "d.jsonl"),
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
    join(dir, "runs"),
    "--run-name",
    "h",
    "--progress",
    "none",
  ];
  const argv = [PYTHON!, join(dir, "with_key.py"), SECRET, process.execPath, CLI, ...args];
  if (uid !== undefined) {
    const chownAll = (p: string) => {
      chownSync(p, uid, uid);
      if (statSync(p).isDirectory()) for (const e of readdirSync(p)) chownAll(join(p, e));
    };
    chownAll(dir);
    argv.unshift("setpriv", `--reuid=${uid}`, `--regid=${uid}`, "--clear-groups");
  }
  const r = await execa(argv[0]!, argv.slice(1), {
    cwd: ROOT,
    env: cleanEnv(uid !== undefined ? { HOME: dir } : {}),
    extendEnv: false,
    reject: false,
    timeout: 240_000,
  });
  expect(r.stderr).not.toMatch(/internal error|join_session_keyring failed|did not read back/);
  const lines = [
    ...readJsonl(join(dir, "runs", "h", "trajectories.jsonl")),
    ...readJsonl(join(dir, "runs", "h", "failed.jsonl")),
  ];
  let text = "";
  for (const f of readdirSync(join(dir, "runs", "h"))) text += readFileSync(join(dir, "runs", "h", f), "utf8");
  return { text, stderr: r.stderr, lines };
}

function expectNoSecret(run: { text: string; stderr: string; lines: any[] }): void {
  const line = run.lines.find((l) => l.task_id === "keys");
  expect(line, run.stderr).toBeDefined();
  // The reader ran (in the agent's command and in the verify), and found nothing of the harness's.
  const tools = JSON.stringify(line.messages.filter((m: any) => m.role === "tool"));
  expect(tools).toContain("KEYS:");
  expect(line.verify.output).toContain("KEYS:");
  const at = run.text.indexOf(SECRET);
  expect(at, `the harness's key in the run's files: …${run.text.slice(Math.max(0, at - 200), at + 40)}`).toBe(-1);
  expect(line.verify).toMatchObject({ passed: false, exit_code: 1 });
}

describe.runIf(PYTHON !== undefined && ["x64", "arm64"].includes(process.arch))("the harness's session keyring", () => {
  it("is out of reach of a task's commands and of its verify step", { timeout: 300_000 }, async () => {
    expectNoSecret(await runUnderKeyring());
  });

  it.runIf(process.getuid?.() === 0)(
    "is out of reach under a uid-1000 harness too (the sandbox's uid is the harness's own)",
    { timeout: 300_000 },
    async () => {
      expectNoSecret(await runUnderKeyring(1000));
    },
  );
});

/** Runs a classic BPF seccomp program (the few instructions keyringFilter uses) over one system call. */
function runFilter(program: Buffer, arch: number, nr: number): number {
  const data = Buffer.alloc(64);
  data.writeInt32LE(nr, 0);
  data.writeUInt32LE(arch, 4);
  let a = 0;
  for (let pc = 0; pc < program.length / 8; pc++) {
    const code = program.readUInt16LE(pc * 8);
    const jt = program.readUInt8(pc * 8 + 2);
    const jf = program.readUInt8(pc * 8 + 3);
    const k = program.readUInt32LE(pc * 8 + 4);
    if (code === 0x20) a = data.readUInt32LE(k);
    else if (code === 0x54) a = (a & k) >>> 0;
    else if (code === 0x15) pc += a === k ? jt : jf;
    else if (code === 0x06) return k;
    else throw new Error(`unexpected BPF code ${code}`);
  }
  throw new Error("fell off the program");
}

describe("the sandbox's seccomp filter", () => {
  const DENY = 0x00050001;
  const ALLOW = 0x7fff0000;
  it.each([
    ["x64", 0xc000003e, [248, 249, 250], [0, 1, 59, 251, 247, 435]],
    ["x64 (x32 ABI)", 0xc000003e, [0x40000000 + 248, 0x40000000 + 249, 0x40000000 + 250], [0x40000000]],
    ["x64 (i386 ABI)", 0x40000003, [286, 287, 288], [248, 249, 250, 11]],
    ["arm64", 0xc00000b7, [217, 218, 219], [220, 56, 63]],
    ["arm64 (arm ABI)", 0x40000028, [309, 310, 311], [217, 218, 219]],
  ])("%s: the keyring calls fail with EPERM, the others pass", (what, arch, denied, allowed) => {
    const program = keyringFilter(what.startsWith("x64") ? "x64" : "arm64", "LE")!;
    for (const nr of denied) expect(runFilter(program, arch, nr), `${what} ${nr}`).toBe(DENY);
    for (const nr of allowed) expect(runFilter(program, arch, nr), `${what} ${nr}`).toBe(ALLOW);
  });

  it("is none where the machine's numbers are not known", () => {
    expect(keyringFilter("mips")).toBeUndefined();
  });
});
