/**
 * Streaming JSONL dataset reader: one zod-validated row a line, errors carry file:line.
 * A regular file is never held in memory (it is read again for each pass); an input that can be read only
 * once (stdin `-`, `/dev/stdin`, a pipe, process substitution) is read once into memory by
 * `openDatasetSource`, and every pass reads that copy. `scanDataset` validates the whole file's structure up front.
 */
import { createHash } from "node:crypto";
import { closeSync, createReadStream, openSync, readSync, statSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { Readable } from "node:stream";
import { createGunzip } from "node:zlib";
import { shellQuote } from "../core/cli_command.js";
import { UserError } from "../core/errors.js";
import * as z from "zod";
import { ExpectedSchema } from "../score/matchers.js";

/** C0 and C1 controls, DEL and the Unicode line and paragraph separators. */
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;

/**
 * How deep a row may nest (objects and arrays). A row is cloned into a worker thread and serialised by recursive code
 * (structured clone, JSON.stringify): a few thousand levels overflow a worker's stack, which would fail every task of
 * the row as a crashed worker, again at each --resume. No real row comes near this.
 */
export const MAX_ROW_DEPTH = 64;

/**
 * What JSON.parse lets through that a row must not have: an object naming a key twice (JSON.parse keeps the last, so
 * `{"prompt": "a", "prompt": "b"}` would run whichever came last), or nesting past MAX_ROW_DEPTH. `text` is valid JSON.
 */
export function jsonShapeProblem(text: string, maxDepth = MAX_ROW_DEPTH): string | undefined {
  // One set of keys per open object; arrays push null so a string inside them is never taken for a key.
  const stack: (Set<string> | null)[] = [];
  let expectKey = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      if (stack.length >= maxDepth) return `nested more than ${maxDepth} levels deep`;
      stack.push(c === 0x7b ? new Set() : null);
      expectKey = c === 0x7b;
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      stack.pop();
      expectKey = false;
    } else if (c === 0x2c /* , */) {
      expectKey = stack.at(-1) instanceof Set;
    } else if (c === 0x3a /* : */) {
      expectKey = false;
    } else if (c === 0x22 /* " */) {
      let j = i + 1;
      for (let d = text.charCodeAt(j); d !== 0x22; d = text.charCodeAt(j)) j += d === 0x5c /* \ */ ? 2 : 1;
      if (expectKey) {
        const raw = text.slice(i + 1, j);
        const key = raw.includes("\\") ? (JSON.parse(text.slice(i, j + 1)) as string) : raw;
        const keys = stack.at(-1) as Set<string>;
        if (keys.has(key)) return `duplicate key ${shownKey(key)} (a JSON object must name each key once)`;
        keys.add(key);
        expectKey = false;
      }
      i = j;
    }
  }
  return undefined;
}

const shownKey = (key: string) => (/^[\x20-\x7e]*$/.test(key) && !key.includes("'") ? `'${key}'` : JSON.stringify(key));

/** A row's own sandbox limits, over the run's --memory-mb, --cpus, --pids-limit and --disk. */
export const TaskLimitsSchema = z
  .object({
    memory_mb: z.number().int().positive(),
    cpus: z.number().positive(),
    pids_limit: z.number().int().positive(),
    disk: z
      .string()
      .regex(/^(none|\d+(\.\d+)?\s*([kKmMgGtT]i?[bB]?)?)$/, "must be a size such as 10g or 512m, or none"),
  })
  .partial()
  .strict();

export type TaskLimits = z.infer<typeof TaskLimitsSchema>;

export const DatasetRowSchema = z
  .object({
    id: z
      .union([z.string().min(1), z.number().int()], {
        error: (issue) => `must be a string or a whole number, got ${JSON.stringify(issue.input)}`,
      })
      .transform(String)
      .refine((id) => id.trim() !== "", "must not be blank")
      // A task id is printed (the console, events.log, failure summaries) and names files: no terminal codes.
      .refine(
        (id) => !CONTROL_CHARACTERS.test(id),
        "must not contain control characters (line breaks, tabs, escape codes)",
      )
      .optional(),
    prompt: z.string().refine((s) => s.trim().length > 0, "must not be empty"),
    image: z.string().min(1).optional(),
    docker_image: z.string().min(1).optional(),
    cwd: z.string().min(1).optional(),
    toolsets: z.array(z.string().min(1)).min(1).optional(),
    verify: z.string().min(1).optional(),
    verify_files: z.string().min(1).optional(),
    expected: ExpectedSchema.optional(),
    rubric: z
      .string()
      .refine((t) => t.trim().length > 0, "must not be empty")
      .optional(),
    network: z.string().min(1).optional(),
    limits: TaskLimitsSchema.optional(),
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
  /** Absent for a refusal about a whole file (a Harbor task's task.toml). */
  line?: number;
  reason: string;
}

export function formatBadRow(b: BadRow): string {
  return `${b.file}${b.line !== undefined ? `:${b.line}` : ""}: ${b.reason}`;
}

function describeIssues(error: z.ZodError): string {
  return error.issues
    .map((i) => {
      const key = i.path.join(".") || "row";
      if (i.code === "invalid_type" && i.path.length === 1 && i.message.includes("undefined"))
        return `missing '${key}'`;
      return `'${key}': ${i.message}`;
    })
    .join("; ");
}

/** Default task id: a short hash of the prompt; repeated prompts get `-2`, `-3`… in file order. */
export function promptId(prompt: string): string {
  return createHash("sha256").update(prompt.trim()).digest("hex").slice(0, 16);
}

export type ParsedLine = { ok: true; value: DatasetLine } | { ok: false; bad: BadRow };

/** What messages call a dataset read from stdin (`<stdin>:LINE: reason`). */
export const STDIN_NAME = "<stdin>";

/**
 * Where the rows come from. A regular file is read from its path as often as needed; an input that cannot
 * be read twice (stdin, a FIFO, process substitution's /dev/fd/N) holds its whole content in `bytes`,
 * read once: the fingerprint, the up-front scan and the run all read that copy.
 */
export interface DatasetSource {
  /** As given on the command line (`-` for stdin). */
  path: string;
  /** What messages call it: the path, or `<stdin>`. */
  name: string;
  /** The whole content of an input that can be read only once; undefined for a regular file. */
  bytes?: Buffer;
  /** The folder a row's `verify_files` are relative to: the file's own, the current folder for a pipe. */
  dir: string;
  /** Refusals found while the rows were made (Harbor tasks that cannot run), reported before the rows. */
  refused?: BadRow[];
  /** Every line of a first complete pass, kept when the dataset is small: later passes read them (see readDataset). */
  parsed?: ParsedLine[];
}

/**
 * A run counts and checks its dataset before any task starts, then dispatches its tasks. Up to this many bytes of
 * rows, the first pass's parsed and validated lines are kept: the dispatch then takes the tasks the count planned
 * (src/run/planned_tasks.ts), and `--only` and the shard ledger read the kept lines. A bigger dataset is read
 * again for each of them.
 */
const KEEP_PARSED_MAX_BYTES = 4 * 1024 * 1024;

/** Paths that are this process's stdin under another name. */
const STDIN_PATHS = new Set(["-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"]);

/** A path of the kernel's (`/dev/stdin`, `/dev/fd/63`, `/proc/self/fd/N`): its folder means nothing to a row. */
const isKernelPath = (path: string) => /^\/(dev|proc)\//.test(path);

/** The run name a dataset gives by default: `stdin` for stdin, `pipe` for another descriptor, else the file name. */
export function datasetBaseName(path: string): string | undefined {
  if (STDIN_PATHS.has(path)) return "stdin";
  if (/^\/(dev\/fd|proc\/[^/]+\/fd)\/\d+$/.test(path)) return "pipe";
  return undefined;
}

/** Whether the dataset at this path can be read only once (stdin, a FIFO, a pipe's descriptor). */
export function readsOnce(path: string): boolean {
  if (path === "-") return true;
  try {
    const st = statSync(path);
    return !st.isFile() && !st.isDirectory();
  } catch {
    return false;
  }
}

/**
 * Most bytes of a dataset held in memory (stdin, a pipe): past this the input is refused rather than read until
 * memory runs out (an endless generator, `run /dev/urandom`). A bigger dataset is read from a file, streamed.
 */
export const MAX_IN_MEMORY_BYTES = 2 * 1024 ** 3;

/**
 * The whole of an input that can be read only once. Its first 4 KiB are checked as a file's are (checkHead), as soon
 * as they are there: `/dev/zero` or a binary stream is refused at once, not read without end.
 */
async function readAll(input: AsyncIterable<Buffer | string>, name: string, maxBytes: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  let checked = false;
  const head = () => Buffer.concat(chunks).subarray(0, 4096);
  for await (const chunk of input) {
    const buf = Buffer.from(chunk);
    chunks.push(buf);
    size += buf.length;
    if (!checked && size >= 4096) {
      checkHead(head(), name);
      checked = true;
    }
    if (size > maxBytes)
      throw new UserError(
        `dataset ${name}: more than ${maxBytes} bytes from a pipe or stdin (it is held in memory); write it to a file and run that`,
      );
  }
  if (!checked) checkHead(head(), name);
  return Buffer.concat(chunks);
}

/**
 * Opens the dataset named on the command line: `-` is stdin; a path that is not a regular file (a FIFO,
 * `/dev/stdin` on a pipe, `<(…)`) is read once, whole, into memory. A missing path or a folder is a UserError.
 */
export async function openDatasetSource(
  path: string,
  stdinStream?: NodeJS.ReadableStream & { isTTY?: boolean },
  maxBytes = MAX_IN_MEMORY_BYTES,
): Promise<DatasetSource> {
  const name = STDIN_PATHS.has(path) ? STDIN_NAME : path;
  const fromStdin = async (): Promise<DatasetSource> => {
    // Only here: process.stdin is made on first access (a stream and its handle), which a file's run never needs.
    const stdin = stdinStream ?? process.stdin;
    if (stdin.isTTY)
      throw new UserError(
        `dataset ${path}: reads the rows from stdin, but stdin is a terminal; pipe them in (run - < data.jsonl)`,
      );
    return { path, name, bytes: await readAll(stdin as AsyncIterable<Buffer>, name, maxBytes), dir: process.cwd() };
  };
  if (path === "-") return fromStdin();
  let st;
  try {
    st = statSync(path);
  } catch (err) {
    if (STDIN_PATHS.has(path)) return fromStdin();
    const code = (err as NodeJS.ErrnoException).code;
    throw new UserError(
      `dataset ${path}: ${code === "ENOENT" ? "file not found" : `cannot read: ${code ?? String(err)}`}`,
    );
  }
  // stdin by another name, when it is no file: read from the descriptor itself (a socket, as a parent
  // written in Node gives its child, cannot be opened again through /dev/stdin).
  if (STDIN_PATHS.has(path) && !st.isFile()) return fromStdin();
  if (st.isDirectory()) throw new UserError(`dataset ${path}: is a folder, not a JSONL file`);
  const dir = isKernelPath(path) ? process.cwd() : dirname(resolve(path));
  if (st.isFile()) return { path, name, dir };
  try {
    return { path, name, bytes: await readAll(createReadStream(path), name, maxBytes), dir };
  } catch (err) {
    if (err instanceof UserError) throw err;
    throw new UserError(`dataset ${path}: cannot read: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
}

/** A dataset path as run.yaml records it, for a later reader (merge, score): a folder is Harbor tasks (run --harbor), read as its rows. */
export async function recordedDatasetSource(path: string): Promise<string | DatasetSource> {
  if (!statSync(path, { throwIfNoEntry: false })?.isDirectory()) return path;
  return (await import("../harbor/source.js")).harborDatasetSource(path);
}

/** sha256 (hex) of a dataset held in memory; undefined for a regular file (the fingerprint streams that one). */
export function inMemorySha256(source: DatasetSource): string | undefined {
  return source.bytes === undefined ? undefined : createHash("sha256").update(source.bytes).digest("hex");
}

/**
 * Yields every non-blank line as a valid row or a bad row. Ids are made unique here:
 * an explicit duplicate id is a bad row; a duplicate derived id gets an occurrence suffix.
 */
export async function* readDataset(source: string | DatasetSource): AsyncGenerator<ParsedLine> {
  if (typeof source !== "string" && source.parsed) {
    yield* source.parsed;
    return;
  }
  const pass: PassRecord | undefined =
    typeof source === "string" ? undefined : { lines: [], bytes: 0, complete: false };
  for await (const item of parseDataset(source, pass)) {
    if (pass && pass.bytes <= KEEP_PARSED_MAX_BYTES) pass.lines.push(item);
    else if (pass?.lines.length) pass.lines = [];
    yield item;
  }
  if (pass?.complete && pass.bytes <= KEEP_PARSED_MAX_BYTES) (source as DatasetSource).parsed = pass.lines;
}

/** What one pass over a dataset saw, for readDataset to keep: complete when the input was read to its end. */
interface PassRecord {
  lines: ParsedLine[];
  bytes: number;
  complete: boolean;
}

async function* parseDataset(source: string | DatasetSource, pass?: PassRecord): AsyncGenerator<ParsedLine> {
  const file = typeof source === "string" ? source : source.name;
  const input =
    typeof source === "string" || source.bytes === undefined
      ? openDataset(typeof source === "string" ? source : source.path, file)
      : bytesDataset(source.bytes, file);
  const lines = byteLines(input);
  const utf8 = new TextDecoder("utf-8", { fatal: true });
  const seenIds = new Map<string, number>();
  const derivedCounts = new Map<string, number>();
  let lineNo = 0;
  let index = 0;
  if (typeof source !== "string") for (const bad of source.refused ?? []) yield { ok: false, bad };
  try {
    for await (const bytes of lines) {
      lineNo++;
      if (pass) pass.bytes += bytes.length;
      let text: string;
      try {
        text = utf8.decode(
          lineNo === 1 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? bytes.subarray(3) : bytes,
        );
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
      const shape = jsonShapeProblem(text);
      if (shape !== undefined) {
        yield { ok: false, bad: { file, line: lineNo, reason: shape } };
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
        yield {
          ok: false,
          bad: { file, line: lineNo, reason: `duplicate id '${id}' (first seen on line ${firstLine})` },
        };
        continue;
      }
      seenIds.set(id, lineNo);
      yield { ok: true, value: { line: lineNo, index: index++, id, row } };
    }
    if (pass) pass.complete = true;
  } catch (err) {
    if (err instanceof UserError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    const reason =
      code === "ENOENT"
        ? "file not found"
        : code === "Z_DATA_ERROR" || code === "Z_BUF_ERROR"
          ? "the gzip data is damaged or cut off"
          : `cannot read: ${code ?? String(err)}`;
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

/** gzip is read transparently; any other binary content is one clear UserError. */
function checkHead(head: Buffer, name: string): "gzip" | "text" {
  if (head[0] === 0x1f && head[1] === 0x8b) return "gzip";
  const known = MAGIC.find(([magic]) => magic.every((b, i) => head[i] === b));
  if (known) throw new UserError(`dataset ${name}: this is ${known[1]}, not a JSONL text file`);
  if (head.includes(0))
    throw new UserError(`dataset ${name}: this is binary data (it has NUL bytes), not a JSONL text file`);
  // A JSON array (pretty-printed or on one line) would be a bad row per line, none saying what is wrong.
  const text = head.subarray(head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf ? 3 : 0).toString("latin1");
  if (text.trimStart().startsWith("[")) throw new UserError(`dataset ${name}: ${jsonArrayAdvice(name)}`);
  return "text";
}

/** How to turn a JSON array file into JSON Lines, into a file beside it that is not the input itself. */
function jsonArrayAdvice(name: string): string {
  const what = "a JSON array, not JSON Lines (one object per line)";
  if (name === STDIN_NAME) return `${what}: pipe it through jq -c '.[]' first`;
  let out = `${name.replace(/\.(json|jsonl|ndjson|txt)$/i, "")}.jsonl`;
  if (out === name) out = `${name.replace(/\.jsonl$/i, "")}.lines.jsonl`;
  return `${what}: convert it with jq -c '.[]' ${shellQuote(name)} > ${shellQuote(out)}`;
}

/** A dataset held in memory (read once from stdin or a pipe). */
function bytesDataset(bytes: Buffer, name: string): Readable {
  const input = Readable.from([bytes]);
  return checkHead(bytes.subarray(0, 4096), name) === "gzip" ? input.pipe(createGunzip()) : input;
}

/** The dataset's bytes: gzip is read transparently; any other binary file is one clear UserError. */
function openDataset(file: string, name = file): Readable {
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
  if (checkHead(head, name) === "gzip") return createReadStream(file).pipe(createGunzip());
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
export async function scanDataset(file: string | DatasetSource, keepBad = 20): Promise<DatasetScan> {
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
