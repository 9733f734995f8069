/**
 * read_file of large files, through the tool dispatch and real environments (a bubblewrap sandbox, a bookworm
 * container and a busybox one): the original (NousResearch/hermes-agent at upstream cb51baec,
 * tools/file_operations.py `read_file`) has no size limit: it runs `wc -c`, `head -c 1000`, `sed -n 'A,Bp'` and
 * `wc -l` in the environment, so only the requested window of lines ever leaves it, and its one refusal is the
 * handler's 100,000-character guard on the numbered window. The harness read the whole file into its own memory
 * (in a worker thread shared by many agent loops) to cut a window out of it, and told a file over 256 MiB
 * "File not found".
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import "../tools/file_tools.js";
import type { Environment } from "../tools/environments/base.js";
import {
  cleanupAllDockerEnvironments,
  createDockerEnvironment,
  removeContainersByLabel,
} from "../tools/environments/docker/docker.js";
import { SandboxEnvironment } from "../tools/environments/local/local_sandbox.js";
import { createToolPipeline } from "../tools/pipeline.js";
import type { ToolContext } from "../tools/registry.js";
import { ensureDockerTestImages, uniqueRunName } from "./helpers/docker.js";
import { silentLogger } from "./helpers/local_ctx.js";

const RUN = uniqueRunName("readbig");
const MiB = 1024 * 1024;

// ------------------------------------------------------------------ the whole-file read (the oracle)

/** The read as it was computed from the whole file's bytes (the original's result, tested against it elsewhere). */
function wholeFileRead(data: Buffer, path: string, offset: number, limit: number): Record<string, unknown> {
  const pyLen = (s: string) => [...s].length;
  const grouped = (n: number) => String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  const sample = [...data.subarray(0, 1000).toString("utf8")].slice(0, 1000);
  const control = sample.filter((c) => c.charCodeAt(0) < 32 && c !== "\n" && c !== "\r" && c !== "\t").length;
  if (sample.length > 0 && control / sample.length > 0.3)
    return {
      content: "",
      total_lines: 0,
      file_size: data.length,
      truncated: false,
      is_binary: true,
      is_image: false,
      error: "Binary file - cannot display as text. Use appropriate tools to handle this file type.",
    };
  const parts = data.toString("utf8").split("\n");
  const lines = parts.map((p, i) => (i < parts.length - 1 ? `${p}\n` : p)).filter((l) => l !== "");
  const end = offset + limit - 1;
  const content = lines
    .slice(offset - 1, end)
    .join("")
    .split("\n")
    .map((line, i) => {
      const shown = pyLen(line) > 2000 ? `${[...line].slice(0, 2000).join("")}... [truncated]` : line;
      return `${String(offset + i).padStart(6, " ")}|${shown}`;
    })
    .join("\n");
  let totalLines = 0;
  for (const b of data) if (b === 10) totalLines++;
  if (pyLen(content) > 100_000)
    return {
      error:
        `Read produced ${grouped(pyLen(content))} characters which exceeds the safety limit (100,000 chars). ` +
        `Use offset and limit to read a smaller range. The file has ${totalLines} lines total.`,
      path,
      total_lines: totalLines,
      file_size: data.length,
    };
  const truncated = totalLines > end;
  const out: Record<string, unknown> = { content, total_lines: totalLines, file_size: data.length, truncated };
  if (truncated)
    out.hint = `Use offset=${end + 1} to continue reading (showing ${offset}-${end} of ${totalLines} lines)`;
  out.is_binary = false;
  out.is_image = false;
  if (data.length > 512_000 && limit > 200 && truncated)
    out._hint =
      `This file is large (${grouped(data.length)} bytes). Consider reading only the section you need with offset and limit ` +
      "to keep context usage efficient.";
  return out;
}

// ------------------------------------------------------------------ random files

function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Lines of every kind the window must cut alike: short, around 2,000 characters, past 8,000 bytes, multibyte, invalid. */
function randomFile(rand: () => number): Buffer {
  const pieces = [
    Buffer.from("a"),
    Buffer.from("Z"),
    Buffer.from(" "),
    Buffer.from("\t"),
    Buffer.from("\r"),
    Buffer.from("é"),
    Buffer.from("€"),
    Buffer.from("😀"),
    Buffer.from([0xff]),
    Buffer.from([0xe2, 0x82]),
    Buffer.from([0x00]),
    Buffer.from([0x01]),
  ];
  const weights = [30, 10, 8, 2, 1, 4, 4, 3, 1, 1, 0.2, 0.1];
  const total = weights.reduce((a, b) => a + b, 0);
  const piece = () => {
    let r = rand() * total;
    for (let i = 0; i < pieces.length; i++) if ((r -= weights[i]!) < 0) return pieces[i]!;
    return pieces[0]!;
  };
  const out: Buffer[] = [];
  const lines = Math.floor(rand() * 30);
  for (let l = 0; l < lines; l++) {
    const kind = rand();
    const n =
      kind < 0.6
        ? Math.floor(rand() * 60)
        : kind < 0.8
          ? 1995 + Math.floor(rand() * 10)
          : kind < 0.9
            ? 2600 + Math.floor(rand() * 1800)
            : 7990 + Math.floor(rand() * 30);
    for (let i = 0; i < n; i++) out.push(piece());
    if (l < lines - 1 || rand() < 0.7) out.push(Buffer.from("\n"));
  }
  return Buffer.concat(out);
}

/** What of the cutting a window of `data` meets: the kinds the random files are made to hold. */
function windowKinds(data: Buffer, offset: number, limit: number): string[] {
  const lines: Buffer[] = [];
  for (let start = 0, nl = 0; start < data.length; start = nl + 1) {
    nl = data.indexOf(10, start);
    if (nl < 0) nl = data.length - 1;
    lines.push(data.subarray(start, nl + 1));
  }
  const win = lines.slice(offset - 1, offset - 1 + limit);
  const text = Buffer.concat(win);
  const chars = (line: Buffer) => [...line.toString("utf8").replace(/\n$/, "")].length;
  const kinds = [
    win.length === 0 ? "past the end" : offset - 1 + limit < lines.length ? "ends before the end" : "reaches the end",
  ];
  if (win.length > 0 && win.at(-1)!.at(-1) !== 10 && offset - 1 + limit >= lines.length) kinds.push("unterminated");
  if (win.some((l) => chars(l) > 2000)) kinds.push("over 2,000 characters");
  if (win.some((l) => chars(l) >= 1995 && chars(l) <= 2000)) kinds.push("1,995 to 2,000 characters");
  if (win.some((l) => l.length > 8001)) kinds.push("over 8,001 bytes");
  if (text.includes(0)) kinds.push("zero bytes");
  if (text.includes(1)) kinds.push("0x01 bytes");
  if (text.toString("utf8").includes("\ufffd")) kinds.push("invalid UTF-8");
  if (text.includes(13)) kinds.push("CR");
  return kinds;
}

// ------------------------------------------------------------------ environments

interface Backend {
  name: string;
  env: Environment;
  ctx: ToolContext;
}

const backends: Backend[] = [];
let root: string;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "hb-readbig-"));
  const images = await ensureDockerTestImages();
  const make = async (name: string, create: () => Promise<Environment>) => {
    const env = await create();
    backends.push({ name, env, ctx: { taskId: name, envKind: name, getEnv: async () => env, logger: silentLogger } });
  };
  await make("sandbox", () =>
    SandboxEnvironment.create({ runName: RUN, taskId: "s", hostTaskDir: join(root, "s") }, {}),
  );
  for (const [name, image] of [
    ["docker", images.image],
    ["busybox", images.busyboxImage],
  ] as const)
    await make(name, () =>
      createDockerEnvironment(
        { runName: RUN, taskId: name, hostTaskDir: join(root, name), taskTimeoutSec: 900 },
        { image },
      ),
    );
}, 600_000);

afterAll(async () => {
  for (const b of backends) await b.env.cleanup().catch(() => {});
  await cleanupAllDockerEnvironments();
  await removeContainersByLabel({ run: RUN });
  if (root) rmSync(root, { recursive: true, force: true });
});

async function readFileTool(b: Backend, args: Record<string, unknown>): Promise<Record<string, unknown>> {
  // A pipeline per call: no read-loop warning and no unchanged-since-read stub between the cases.
  return JSON.parse(await createToolPipeline().call("read_file", args, b.ctx));
}

/** A file of `size` bytes: `text`, then a hole (zero bytes) that makes its last, unterminated line. */
async function sparseFile(b: Backend, name: string, text: string, size: number): Promise<string> {
  const path = `${b.env.workdir}/${name}`;
  await b.env.writeFile(path, text);
  const r = await b.env.exec(`truncate -s ${size} ${name} && wc -c < ${name}`, { cwd: b.env.workdir });
  expect(r.stdout.trim(), r.stderr).toBe(String(size));
  return path;
}

/** Peak growth of the process's memory (resident set, and buffers outside the heap) while `fn` runs. */
async function peakGrowth<T>(fn: () => Promise<T>): Promise<{ value: T; rss: number; buffers: number }> {
  const base = process.memoryUsage();
  let rss = base.rss;
  let buffers = base.arrayBuffers;
  const sample = () => {
    const m = process.memoryUsage();
    rss = Math.max(rss, m.rss);
    buffers = Math.max(buffers, m.arrayBuffers);
  };
  const timer = setInterval(sample, 2);
  try {
    const value = await fn();
    sample();
    return { value, rss: rss - base.rss, buffers: buffers - base.arrayBuffers };
  } finally {
    clearInterval(timer);
  }
}

const rows = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => `row ${from + i}: text`);

describe.each(["sandbox", "docker", "busybox"])("read_file of large files (%s)", (name) => {
  const backend = () => backends.find((b) => b.name === name)!;

  // Over 256 MiB (the whole-file read's old bound), in the sandbox: each case scans 300 MiB in its environment
  // (10 s under busybox). The tools' differences (busybox, Docker's transport) are the cases below.
  const bigFileCase = name === "sandbox" ? it : () => undefined;
  bigFileCase(
    "a file over 256 MiB reads as the original reads it: its window, line count, size and the large-file hint",
    async () => {
      const b = backend();
      const size = 300 * MiB;
      const text = `${rows(1, 600).join("\n")}\n`;
      const path = await sparseFile(b, "big.log", text, size);
      const first = await readFileTool(b, { path });
      const numbered = (from: number, to: number) =>
        rows(from, to)
          .map((r, i) => `${String(from + i).padStart(6, " ")}|${r}`)
          .join("\n");
      expect(Object.keys(first)).toEqual([
        "content",
        "total_lines",
        "file_size",
        "truncated",
        "hint",
        "is_binary",
        "is_image",
        "_hint",
      ]);
      expect(first).toEqual({
        content: `${numbered(1, 500)}\n   501|`,
        total_lines: 600,
        file_size: size,
        truncated: true,
        hint: "Use offset=501 to continue reading (showing 1-500 of 600 lines)",
        is_binary: false,
        is_image: false,
        _hint:
          "This file is large (314,572,800 bytes). Consider reading only the section you need with offset and limit to keep context usage efficient.",
      });
      // The last line: 300 MiB of zero bytes without a final newline, cut to 2,000 characters.
      const last = await readFileTool(b, { path, offset: 599, limit: 5 });
      expect(last).toEqual({
        content: `${numbered(599, 600)}\n   601|${"\0".repeat(2000)}... [truncated]`,
        total_lines: 600,
        file_size: size,
        truncated: false,
        is_binary: false,
        is_image: false,
      });
      await b.env.exec("rm -f big.log", { cwd: b.env.workdir });
    },
    180_000,
  );

  it("a window of a 200 MB file costs the harness no more than a few MB", async () => {
    const b = backend();
    const size = 200 * 1000 * 1000;
    const path = await sparseFile(b, "mem.log", `${rows(1, 1000).join("\n")}\n`, size);
    const { value, rss, buffers } = await peakGrowth(() => readFileTool(b, { path, offset: 10, limit: 20 }));
    expect(value).toMatchObject({ total_lines: 1000, file_size: size, truncated: true });
    expect((value.content as string).split("\n")[0]).toBe("    10|row 10: text");
    console.log(`${name}: peak growth while reading a window of 200 MB: rss ${rss} B, buffers ${buffers} B`);
    expect(buffers).toBeLessThan(16 * MiB);
    expect(rss).toBeLessThan(100 * MiB);
    await b.env.exec("rm -f mem.log", { cwd: b.env.workdir });
  }, 180_000);

  it("every window of random files reads as the whole-file read computes it; every kind of window met", async () => {
    const b = backend();
    const rand = prng(name.length * 7919 + 17);
    const path = `${b.env.workdir}/random.txt`;
    // Eight files of up to 30 lines each: their windows meet every kind of line and window the files are made to
    // hold (asserted below, in each backend), and one is all it takes to go through a backend's tools and transport.
    const met = new Set<string>();
    for (let c = 0; c < 8; c++) {
      const data = randomFile(rand);
      await b.env.writeFile(path, data);
      const totalLines = data.filter((x) => x === 10).length;
      for (let w = 0; w < 3; w++) {
        const offset = 1 + Math.floor(rand() * (totalLines + 3));
        const limit = [1, 2, 5, 17, 500, 2000][Math.floor(rand() * 6)]!;
        const got = await readFileTool(b, { path, offset, limit });
        const want = wholeFileRead(data, path, offset, limit);
        expect(JSON.stringify(got), `case ${c} offset ${offset} limit ${limit}`).toBe(JSON.stringify(want));
        for (const kind of windowKinds(data, offset, limit)) met.add(kind);
      }
    }
    expect([...met].sort()).toEqual(
      [
        "past the end",
        "ends before the end",
        "reaches the end",
        "unterminated",
        "over 2,000 characters",
        "1,995 to 2,000 characters",
        "over 8,001 bytes",
        "zero bytes",
        "0x01 bytes",
        "invalid UTF-8",
        "CR",
      ].sort(),
    );
  }, 300_000);

  it("a window over 100,000 characters gets the original's refusal with the exact count", async () => {
    const b = backend();
    const path = `${b.env.workdir}/wide.txt`;
    // Lines past 8,000 bytes: the window's text is larger than what the first look at it keeps.
    const wide = Buffer.from(
      Array.from({ length: 300 }, (_, i) => `${i}${"é".repeat(4100 + (i % 7))}\n`).join("") + "tail",
    );
    await b.env.writeFile(path, wide);
    for (const [offset, limit] of [
      [1, 2000],
      [250, 60],
      [1, 49],
      [290, 500],
    ] as const) {
      const got = await readFileTool(b, { path, offset, limit });
      expect(JSON.stringify(got), `offset ${offset} limit ${limit}`).toBe(
        JSON.stringify(wholeFileRead(wide, path, offset, limit)),
      );
    }
    const refused = await readFileTool(b, { path, offset: 1, limit: 2000 });
    expect(refused.error).toBe(
      "Read produced 606,911 characters which exceeds the safety limit (100,000 chars). Use offset and limit to read a smaller range. The file has 300 lines total.",
    );
  }, 180_000);
});
