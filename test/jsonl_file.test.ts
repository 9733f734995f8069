import { createReadStream, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterEach, describe, expect, it, vi } from "vitest";
import { JsonlAppender, readJsonl, readLines } from "../src/store/jsonl_file.js";

/** What node:readline (crlfDelay: Infinity) makes of a file: the reference readLines keeps. */
async function readlineLines(path: string): Promise<{ line: number; text: string }[]> {
  const out: { line: number; text: string }[] = [];
  let line = 0;
  for await (const text of createInterface({ input: createReadStream(path, "utf8"), crlfDelay: Infinity })) {
    line++;
    if (text.trim()) out.push({ line, text });
  }
  return out;
}

async function collect<T>(gen: AsyncGenerator<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of gen) out.push(x);
  return out;
}

describe("readLines", () => {
  let dir: string | undefined;
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });
  const file = (content: string | Buffer) => {
    dir ??= mkdtempSync(join(tmpdir(), "jsonl-"));
    const path = join(dir, `f${Math.random()}.jsonl`);
    writeFileSync(path, content);
    return path;
  };

  it("splits and numbers lines as node:readline does: LF, CRLF, lone CR, blank lines, no final newline", async () => {
    const cases = [
      "",
      "\n",
      "a",
      "a\n",
      "a\nb",
      "a\r\nb\r\n",
      "a\rb\n",
      "a\r\r\n",
      "a\r",
      "\r\n\r\n",
      "a\n\n  \nb\n",
      '{"x":1}\r\n\r{"y":"é💥"}\n\r',
    ];
    for (const content of cases) {
      const path = file(content);
      expect(await collect(readLines(path)), JSON.stringify(content)).toEqual(await readlineLines(path));
    }
  });

  it("drops a UTF-8 byte order mark at the start of the file (a hand-edited file), and only there", async () => {
    const path = file('\ufeff{"bom":true}\n\ufeff{"later":1}\n');
    expect(await collect(readLines(path))).toEqual([
      { line: 1, text: '{"bom":true}' },
      { line: 2, text: '\ufeff{"later":1}' },
    ]);
    expect((await collect(readJsonl(file('\ufeff{"bom":true}\n'))))[0]).toEqual({ line: 1, value: { bom: true } });
    expect(await collect(readLines(file("\ufeff")))).toEqual([]);
  });

  it("keeps lines whole across its read chunks: long lines, multi-byte characters at every offset", async () => {
    const lines: string[] = [];
    let size = 0;
    for (let i = 0; size < 3.5 * 2 ** 20; i++) {
      const text = JSON.stringify({ i, s: "é💥x".repeat((i * 7919) % 4000), crlf: i % 3 === 0 });
      lines.push(i % 3 === 0 ? `${text}\r` : text);
      size += text.length * 2;
    }
    lines.push("x".repeat(2.5 * 2 ** 20)); // longer than a chunk
    lines.push('{"last":true}');
    const path = file(lines.join("\n"));
    const ours = await collect(readLines(path));
    expect(ours.length).toBe(lines.length);
    expect(ours).toEqual(await readlineLines(path));
  });

  it("reads invalid UTF-8 as the stream decoder does", async () => {
    const path = file(
      Buffer.concat([Buffer.from('{"a":"'), Buffer.from([0xc3, 0x0a, 0xff, 0xe2, 0x82]), Buffer.from('"}\n')]),
    );
    expect(await collect(readLines(path))).toEqual(await readlineLines(path));
  });

  it("stops reading when the consumer stops, and a missing file has no lines", async () => {
    const path = file("1\n2\n3\n");
    for await (const l of readJsonl<number>(path)) {
      expect(l).toEqual({ line: 1, value: 1 });
      break;
    }
    expect(await collect(readLines(join(dir!, "absent.jsonl")))).toEqual([]);
  });
});

describe("JsonlAppender", () => {
  const openFds = () => readdirSync("/proc/self/fd").length;

  it("fsyncs in the background; close() during that fsync keeps every line and closes its descriptor after it", async () => {
    const dir = mkdtempSync(join(tmpdir(), "jsonl-"));
    vi.useFakeTimers({ toFake: ["setInterval", "clearInterval"] });
    try {
      const before = openFds();
      const path = join(dir, "t.jsonl");
      const out = new JsonlAppender(path, 1000);
      for (let i = 0; i < 500; i++) out.append({ i, text: "x".repeat(1000) });
      vi.advanceTimersByTime(1000); // the background fsync starts; its callback cannot run before close()
      out.append({ last: true });
      out.close();
      out.close();
      const lines = readFileSync(path, "utf8").trimEnd().split("\n");
      expect(lines.length).toBe(501);
      expect(JSON.parse(lines.at(-1)!)).toEqual({ last: true });
      expect(openFds()).toBe(before + 1); // still open: the fsync in flight has it
      for (let i = 0; i < 200 && openFds() > before; i++) await new Promise((r) => setTimeout(r, 5));
      expect(openFds()).toBe(before);
    } finally {
      vi.useRealTimers();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
