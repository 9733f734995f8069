/**
 * A misbehaving MCP stdio server (Python) and a scripted model for the hostile MCP tests: the server's behaviour
 * is a JSON argument (what `initialize` does, what each tool's call does, its tools' schemas), it appends its pid
 * to a file so a test can check that nothing it started outlives the run. The model's first turn calls the tools
 * the prompt lists as JSON (`[{"name": ..., "arguments": ...}]`, or a list of such lists, one per turn); then it
 * answers with every tool result.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { runCli, tempDir } from "./cli.js";
import { text, toolCalls, type RecordedRequest, type Reply } from "./fake_openai.js";

export const HOSTILE_SERVER = String.raw`
import json, os, sys, time
cfg = json.loads(sys.argv[1])
def send(o):
    sys.stdout.write(json.dumps(o) + "\n"); sys.stdout.flush()
def once(key):
    mk = cfg[key]
    if os.path.exists(mk): return False
    open(mk, "w").close(); return True
if cfg.get("pidfile"):
    with open(cfg["pidfile"], "a") as f: f.write("%d\n" % os.getpid())
if cfg.get("envfile"):
    with open(cfg["envfile"], "w") as f: json.dump(dict(os.environ), f)
tools = cfg.get("tools", [{"name": "t", "inputSchema": {"type": "object", "properties": {}}}])
for line in sys.stdin:
    try: m = json.loads(line)
    except Exception: continue
    if "id" not in m: continue
    method, i = m.get("method"), m["id"]
    if method == "initialize":
        # "hang-after-listing": the first start (the run's listing) answers, every later one hangs.
        if cfg.get("init") == "hang-after-listing" and not once("marker"): time.sleep(3600)
        send({"jsonrpc": "2.0", "id": i, "result": {"protocolVersion": m["params"]["protocolVersion"], "capabilities": {"tools": {}}, "serverInfo": {"name": "hostile", "version": "0.1"}}})
    elif method == "tools/list":
        page = {"tools": tools}
        # "endless_cursor": a new cursor on every page (a cursor made of a clock or a counter).
        if cfg.get("endless_cursor"): page["nextCursor"] = "c%d" % i
        send({"jsonrpc": "2.0", "id": i, "result": page})
    elif method == "tools/call":
        b = cfg.get("calls", {}).get(m["params"]["name"], "echo")
        if b == "hang": time.sleep(3600)
        if b == "crash":
            sys.stderr.write("hostile: segfault in the tool\n"); sys.stderr.flush(); os._exit(7)
        if b == "slow": time.sleep(2)
        if isinstance(b, dict) and "text_of_size" in b:
            send({"jsonrpc": "2.0", "id": i, "result": {"content": [{"type": "text", "text": "x" * b["text_of_size"]}]}}); continue
        if isinstance(b, dict): send({"jsonrpc": "2.0", "id": i, "result": b}); continue
        send({"jsonrpc": "2.0", "id": i, "result": {"content": [{"type": "text", "text": "args=" + json.dumps(m["params"].get("arguments"), sort_keys=True)}]}})
    else:
        send({"jsonrpc": "2.0", "id": i, "error": {"code": -32601, "message": "unknown method"}})
`;

/** The model: the prompt's calls, then an answer quoting the tool results (the approver, if asked, approves). */
export function scriptedByPrompt(req: RecordedRequest): Reply {
  if (req.body.response_format) return text(JSON.stringify({ decision: "approve", reason: "ok" }));
  const messages = req.body.messages as { role: string; content: string }[];
  const prompt = messages.find((m) => m.role === "user")!.content;
  let turns: { name: string; arguments: unknown }[][] = [];
  try {
    const parsed = JSON.parse(prompt);
    // One turn's calls, or a list of turns' calls.
    turns = Array.isArray(parsed[0]) ? parsed : [parsed];
  } catch {
    // a plain prompt: no calls
  }
  const turn = messages.filter((m) => m.role === "assistant").length;
  if (turn < turns.length) return toolCalls(turns[turn]!);
  return text(
    `done: ${messages
      .filter((m) => m.role === "tool")
      .map((m) => m.content)
      .join(" | ")}`,
  );
}

export interface HostileRun {
  exitCode: number | undefined;
  stderr: string;
  dir: string;
  ms: number;
  entries: any[];
  failed: any[];
}

/** A folder with the server script; `server(cfg)` is its command line (python3 SCRIPT JSON). */
export function hostileDir(): { dir: string; server: (cfg: Record<string, unknown>) => string[] } {
  const dir = tempDir("hb-mcp-hostile-");
  const script = join(dir, "hostile_server.py");
  writeFileSync(script, HOSTILE_SERVER);
  return { dir, server: (cfg) => [script, JSON.stringify(cfg)] };
}

const lines = (file: string) =>
  existsSync(file)
    ? readFileSync(file, "utf8")
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l))
    : [];

/** `hermes-batch run` of these rows with this MCP config, on the host, the approver off unless args say. */
export async function hostileRun(
  dir: string,
  baseURL: string,
  mcp: unknown,
  rows: Record<string, unknown>[],
  args: string[],
  opts: { env?: Record<string, string>; timeoutMs?: number } = {},
): Promise<HostileRun> {
  writeFileSync(join(dir, "mcp.json"), JSON.stringify(mcp, null, 2));
  writeFileSync(join(dir, "d.jsonl"), rows.map((r) => JSON.stringify(r)).join("\n") + "\n");
  const started = Date.now();
  const r = await runCli(
    [
      "run",
      join(dir, "d.jsonl"),
      "--model",
      "m",
      "--base-url",
      baseURL,
      "--api-key",
      "k",
      "--mcp-config",
      join(dir, "mcp.json"),
      "--output-dir",
      join(dir, "runs"),
      "--run-name",
      "r",
      "--progress",
      "none",
      "--mcp-approval",
      "none",
      ...args,
    ],
    { cwd: dir, env: { HERMES_BATCH_CONFIG_DIR: join(dir, "config"), ...opts.env }, timeoutMs: opts.timeoutMs },
  );
  return {
    exitCode: r.exitCode,
    stderr: r.stderr,
    dir,
    ms: Date.now() - started,
    entries: lines(join(dir, "runs", "r", "trajectories.jsonl")),
    failed: lines(join(dir, "runs", "r", "failed.jsonl")),
  };
}

/** The tool results of a trajectory entry, parsed (each must be a JSON string). */
export const toolResults = (entry: any): any[] =>
  entry.messages.filter((m: any) => m.role === "tool").map((m: any) => JSON.parse(m.content));

/** The pids a pidfile lists that are still alive (a zombie counts as gone). */
export function alivePids(pidfile: string): number[] {
  if (!existsSync(pidfile)) return [];
  return readFileSync(pidfile, "utf8")
    .split("\n")
    .filter(Boolean)
    .map(Number)
    .filter((pid) => {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
        return !/^\d+ \(.*\) Z /.test(stat);
      } catch {
        return false;
      }
    });
}

/** Ends what a failing test left behind (only the pids the test's own servers wrote). */
export function killPids(pidfile: string): void {
  for (const pid of alivePids(pidfile)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // gone
    }
  }
}
