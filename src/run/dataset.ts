/**
 * Streaming JSONL dataset reader: one zod-validated row a line, errors carry file:line.
 * Never holds the file in memory; `scanDataset` validates the whole file's structure up front.
 */
import { createHash } from "node:crypto";
import { closeSync, createReadStream, openSync, readSync } from "node:fs";
import type { Readable } from "node:stream";
import { createGunzip } from "node:zlib";
import { UserError } from "../core/errors.js";
import { z } from "zod";
import { ExpectedSchema } from "../score/matchers.js";

export const DatasetRowSchema = z
  .object({
    id: z.union([z.string().min(1), z.number().int()]).transform(String).optional(),
    prompt: z.string().refine((s) => s.trim().length > 0, "must not be empty"),
    image: z.string().min(1).optional(),
    docker_image: z.string().min(1).optional(),
    cwd: z.string().min(1).optional(),
    toolsets: z.array(z.string().min(1)).min(1).optional(),
    verify: z.string().min(1).optional(),
    verify_files: z.string().min(1).optional(),
    expected: ExpectedSchema.optional(),
    rubric: z.string().refine((t) => t.trim().length > 0, "must not be empty").optional(),
    network: z.string().min(1).optional(),
    metadata: z.record(z.string(), z.unknown()).optional(),
  })
  .passthrough();

export type DatasetRow = z.infer<typeof DatasetRowSchema>;

export interface DatasetLine {
  /** 1-based line number in the file. */
  line: number;
  /** 0-based index among valid rows (the Hermes `prompt_index`). */
  index: number;
  id: string;
  row: DatasetRow;
}

export interface BadRow {
  file: string;
  line: number;
  reason: string;
}

export function formatBadRow(b: BadRow): string {
  return `${b.file}:${b.line}: ${b.reason}`;
}

function describeIssues(error: z.ZodError): string {
  return error.issues
    .map((i) => {
      const key = i.path.join(".") || "row";
      if (i.code === "invalid_type" && i.path.length === 1 && i.message.includes("undefined")) return `missing '${key}'`;
      return `'${key}': ${i.message}`;
    })
    .join("; ");
}

/** Default task id: a short hash of the prompt; repeated prompts get `-2`, `-3`… in file order. */
export function promptId(prompt: string): string {
  return createHash("sha256").update(prompt.trim()).digest("hex").slice(0, 16);
}

export type ParsedLine = { ok: true; value: DatasetLine } | { ok: false; bad: BadRow };

/**
 * Yields every non-blank line as a valid row or a bad row. Ids are made unique here:
 * an explicit duplicate id is a bad row; a duplicate derived id gets an occurrence suffix.
 */
export async function* readDataset(file: string): AsyncGenerator<ParsedLine> {
  const input = openDataset(file);
  const lines = byteLines(input);
  const utf8 = new TextDecoder("utf-8", { fatal: true });
  const seenIds = new Map<string, number>();
  const derivedCounts = new Map<string, number>();
  let lineNo = 0;
  let index = 0;
  try {
    for await (const bytes of lines) {
      lineNo++;
      let text: string;
      try {
        text = utf8.decode(lineNo === 1 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? bytes.subarray(3) : bytes);
      } catch {
        yield { ok: false, bad: { file, line: lineNo, reason: "invalid UTF-8 (the file must be UTF-8 text)" } };
        continue;
      }
      if (text.endsWith("\r")) text = text.slice(0, -1);
      if (text.trim() === "") continue;
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch (err) {
        yield { ok: false, bad: { file, line: lineNo, reason: `invalid JSON: ${(err as Error).message}` } };
        continue;
      }
      if (typeof json !== "object" || json === null || Array.isArray(json)) {
        yield { ok: false, bad: { file, line: lineNo, reason: "each line must be a JSON object with a 'prompt'" } };
        continue;
      }
      const parsed = DatasetRowSchema.safeParse(json);
      if (!parsed.success) {
        yield { ok: false, bad: { file, line: lineNo, reason: describeIssues(parsed.error) } };
        continue;
      }
      const row = parsed.data;
      let id: string;
      if (row.id !== undefined) {
        id = row.id;
      } else {
        const base = promptId(row.prompt);
        const n = (derivedCounts.get(base) ?? 0) + 1;
        derivedCounts.set(base, n);
        id = n === 1 ? base : `${base}-${n}`;
      }
      const firstLine = seenIds.get(id);
      if (firstLine !== undefined) {
        yield { ok: false, bad: { file, line: lineNo, reason: `duplicate id '${id}' (first seen on line ${firstLine})` } };
        continue;
      }
      seenIds.set(id, lineNo);
      yield { ok: true, value: { line: lineNo, index: index++, id, row } };
    }
  } catch (err) {
    if (err instanceof UserError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    const reason = code === "ENOENT" ? "file not found" : code === "Z_DATA_ERROR" || code === "Z_BUF_ERROR" ? "the gzip data is damaged or cut off" : `cannot read: ${code ?? String(err)}`;
    yield { ok: false, bad: { file, line: lineNo + 1, reason } };
  } finally {
    input.destroy();
  }
}

/** Leading bytes of known binary formats, and what to call them. */
const MAGIC: [number[], string][] = [
  [[0x25, 0x50, 0x44, 0x46], "a PDF document"],
  [[0x89, 0x50, 0x4e, 0x47], "a PNG image"],
  [[0xff, 0xd8, 0xff], "a JPEG image"],
  [[0x50, 0x4b, 0x03, 0x04], "a ZIP archive (or an xlsx/docx/jar file)"],
  [[0x7f, 0x45, 0x4c, 0x46], "an ELF executable"],
  [[0x28, 0xb5, 0x2f, 0xfd], "zstd-compressed data (not read directly: decompress it with `zstd -d`, or gzip it)"],
  [[0x42, 0x5a, 0x68], "bzip2-compressed data (decompress it first)"],
  [[0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00], "xz-compressed data (decompress it first)"],
  [[0x53, 0x51, 0x4c, 0x69, 0x74, 0x65], "an SQLite database"],
  [[0x50, 0x41, 0x52, 0x31], "a Parquet file (convert it to JSONL first)"],
];

/** The dataset's bytes: gzip is read transparently; any other binary file is one clear UserError. */
function openDataset(file: string): Readable {
  let head: Buffer;
  try {
    const fd = openSync(file, "r");
    try {
      head = Buffer.alloc(4096);
      head = head.subarray(0, readSync(fd, head, 0, head.length, 0));
    } finally {
      closeSync(fd);
    }
  } catch {
    return createReadStream(file); // the stream reports the error (not found, unreadable) as a bad row
  }
  if (head[0] === 0x1f && head[1] === 0x8b) return createReadStream(file).pipe(createGunzip());
  const known = MAGIC.find(([magic]) => magic.every((b, i) => head[i] === b));
  if (known) throw new UserError(`dataset ${file}: this is ${known[1]}, not a JSONL text file`);
  if (head.includes(0)) throw new UserError(`dataset ${file}: this is binary data (it has NUL bytes), not a JSONL text file`);
  return createReadStream(file);
}

/** Splits a byte stream into lines (without the newline), so each line can be decoded and judged alone. */
async function* byteLines(input: AsyncIterable<Buffer | string>): AsyncGenerator<Buffer> {
  let rest: Buffer = Buffer.alloc(0);
  for await (const chunk of input) {
    const buf = rest.length ? Buffer.concat([rest, Buffer.from(chunk)]) : Buffer.from(chunk);
    let start = 0;
    for (let nl = buf.indexOf(10, start); nl !== -1; nl = buf.indexOf(10, start)) {
      yield buf.subarray(start, nl);
      start = nl + 1;
    }
    rest = Buffer.from(buf.subarray(start));
  }
  if (rest.length) yield rest;
}

export interface DatasetScan {
  rows: number;
  bad: BadRow[];
  badCount: number;
}

/** Reads the whole file once to find bad rows before any task starts (keeps the first `keepBad`). */
export async function scanDataset(file: string, keepBad = 20): Promise<DatasetScan> {
  const scan: DatasetScan = { rows: 0, bad: [], badCount: 0 };
  for await (const item of readDataset(file)) {
    if (item.ok) scan.rows++;
    else {
      scan.badCount++;
      if (scan.bad.length < keepBad) scan.bad.push(item.bad);
    }
  }
  return scan;
}
