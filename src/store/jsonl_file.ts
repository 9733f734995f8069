/**
 * Append-only JSONL files owned by the main thread: one writer, batched fsync, torn-tail repair,
 * and a streaming line reader that reports file:line for bad lines.
 */
import {
  closeSync,
  createReadStream,
  existsSync,
  fsyncSync,
  openSync,
  readSync,
  fstatSync,
  ftruncateSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { createInterface } from "node:readline";

export class JsonlAppender {
  private fd: number;
  private dirty = false;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    readonly path: string,
    fsyncIntervalMs = 1000,
  ) {
    repairTornTail(path);
    this.fd = openSync(path, "a");
    if (fsyncIntervalMs > 0) {
      this.timer = setInterval(() => this.sync(), fsyncIntervalMs);
      this.timer.unref();
    }
  }

  /** Appends one line. The caller treats the record as durable after the next `sync()`. */
  append(record: unknown): void {
    this.appendLine(JSON.stringify(record));
  }

  /** Appends an already serialised record (one line, no newline inside). */
  appendLine(line: string): void {
    writeSync(this.fd, line + "\n");
    this.dirty = true;
  }

  sync(): void {
    if (!this.dirty || this.fd < 0) return;
    fsyncSync(this.fd);
    this.dirty = false;
  }

  close(): void {
    if (this.timer) clearInterval(this.timer);
    if (this.fd < 0) return;
    this.sync();
    closeSync(this.fd);
    this.fd = -1;
  }
}

/**
 * A crash can leave a last line without its newline. Appending after it would glue two records
 * together, so the torn bytes are moved to `<path>.torn` (never lost) and the file cut back.
 */
export function repairTornTail(path: string): { repaired: boolean; bytes: number } {
  if (!existsSync(path)) return { repaired: false, bytes: 0 };
  const fd = openSync(path, "r+");
  try {
    const size = fstatSync(fd).size;
    if (size === 0) return { repaired: false, bytes: 0 };
    const chunk = Buffer.alloc(Math.min(size, 1 << 16));
    let end = size;
    // Scan backwards for the last newline.
    while (end > 0) {
      const start = Math.max(0, end - chunk.length);
      const n = readSync(fd, chunk, 0, end - start, start);
      if (end === size && chunk[n - 1] === 0x0a) return { repaired: false, bytes: 0 };
      const idx = chunk.subarray(0, n).lastIndexOf(0x0a);
      if (idx >= 0) {
        const cut = start + idx + 1;
        const torn = Buffer.alloc(size - cut);
        readSync(fd, torn, 0, torn.length, cut);
        writeFileSync(`${path}.torn`, torn, { flag: "a" });
        ftruncateSync(fd, cut);
        return { repaired: true, bytes: torn.length };
      }
      end = start;
    }
    const torn = Buffer.alloc(size);
    readSync(fd, torn, 0, size, 0);
    writeFileSync(`${path}.torn`, torn, { flag: "a" });
    ftruncateSync(fd, 0);
    return { repaired: true, bytes: size };
  } finally {
    closeSync(fd);
  }
}

export interface JsonlLine<T> {
  line: number;
  value?: T;
  error?: string;
}

/** Streams the non-blank lines of a text file as written, with their 1-based line numbers. */
export async function* readLines(path: string): AsyncGenerator<{ line: number; text: string }> {
  if (!existsSync(path)) return;
  const input = createReadStream(path, { encoding: "utf8" });
  const rl = createInterface({ input, crlfDelay: Infinity });
  let line = 0;
  try {
    for await (const text of rl) {
      line++;
      if (text.trim()) yield { line, text };
    }
  } finally {
    rl.close();
    input.destroy();
  }
}

/** Streams a JSONL file; unparsable lines come back with `error` (and are not fatal). */
export async function* readJsonl<T = unknown>(path: string): AsyncGenerator<JsonlLine<T>> {
  for await (const { line, text } of readLines(path)) {
    try {
      yield { line, value: JSON.parse(text) as T };
    } catch (err) {
      yield { line, error: (err as Error).message };
    }
  }
}
