/**
 * Append-only JSONL files owned by the main thread: one writer, batched fsync, torn-tail repair,
 * and a streaming line reader that reports file:line for bad lines.
 */
import {
  closeSync,
  existsSync,
  fsync,
  fsyncSync,
  openSync,
  readSync,
  fstatSync,
  ftruncateSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { open } from "node:fs/promises";

export class JsonlAppender {
  private fd: number;
  private dirty = false;
  private timer: NodeJS.Timeout | undefined;
  /** A periodic fsync is running on libuv's thread pool: the descriptor is closed only once it has returned. */
  private syncing = false;
  private closeAfterSync = -1;

  /**
   * With `fsyncIntervalMs`, written lines are fsynced that often in the background: the main thread does not wait
   * for the disk (an fsync of a second's lines took it 10-50 ms, during which no result was recorded and no task
   * dispatched). `close()` always fsyncs what is left before it returns.
   */
  constructor(
    readonly path: string,
    fsyncIntervalMs = 1000,
  ) {
    repairTornTail(path);
    this.fd = openSync(path, "a");
    if (fsyncIntervalMs > 0) {
      this.timer = setInterval(() => this.syncInBackground(), fsyncIntervalMs);
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

  private syncInBackground(): void {
    if (!this.dirty || this.fd < 0 || this.syncing) return;
    this.dirty = false; // lines appended from now on wait for the next fsync
    this.syncing = true;
    fsync(this.fd, (err) => {
      this.syncing = false;
      if (err) this.dirty = true; // tried again at the next tick, and by close()
      if (this.closeAfterSync >= 0) closeSync(this.closeAfterSync);
    });
  }

  close(): void {
    if (this.timer) clearInterval(this.timer);
    if (this.fd < 0) return;
    // Also while a background fsync runs: close() returns once every line is on disk.
    if (this.dirty || this.syncing) fsyncSync(this.fd);
    this.dirty = false;
    // Closed now, a descriptor could be reused by another file before the background fsync reaches it.
    if (this.syncing) this.closeAfterSync = this.fd;
    else closeSync(this.fd);
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

/** Bytes read at a time by `readLines`. */
const READ_CHUNK = 1 << 20;

/**
 * Streams the non-blank lines of a text file as written, with their 1-based line numbers. Lines end at LF, CRLF
 * or a lone CR, as node:readline splits them (its `crlfDelay: Infinity`), but the file is read in 1 MB chunks and
 * split at LF bytes: readline's stream, string decoder and regular expression cost as much as parsing the lines.
 */
export async function* readLines(path: string): AsyncGenerator<{ line: number; text: string }> {
  if (!existsSync(path)) return;
  const file = await open(path, "r");
  try {
    let line = 0;
    let chunk = Buffer.allocUnsafe(READ_CHUNK);
    let held = 0; // bytes of an unfinished line carried over at the start of `chunk`
    let first = true;
    for (;;) {
      if (held === chunk.length) {
        const bigger = Buffer.allocUnsafe(chunk.length * 2);
        chunk.copy(bigger, 0, 0, held);
        chunk = bigger;
      }
      const { bytesRead } = await file.read(chunk, held, chunk.length - held, null);
      const end = held + bytesRead;
      let start = 0;
      // A byte order mark before the first line (an editor's, on a hand-edited file) is not part of it.
      if (first && chunk[0] === 0xef && chunk[1] === 0xbb && chunk[2] === 0xbf && end >= 3) start = 3;
      first = false;
      for (let lf = chunk.indexOf(0x0a, held); lf >= 0 && lf < end; lf = chunk.indexOf(0x0a, start)) {
        for (const text of splitAtCr(chunk.toString("utf8", start, lf))) {
          line++;
          if (text.trim()) yield { line, text };
        }
        start = lf + 1;
      }
      if (bytesRead === 0) {
        // The last line, without its newline.
        if (start < end)
          for (const text of splitAtCr(chunk.toString("utf8", start, end))) {
            line++;
            if (text.trim()) yield { line, text };
          }
        return;
      }
      held = end - start;
      chunk.copy(chunk, 0, start, end);
    }
  } finally {
    await file.close();
  }
}

/** A text between two LFs as readline's lines: a CR before the LF ends the line with it, any other CR ends one. */
function splitAtCr(text: string): string[] {
  if (!text.includes("\r")) return [text];
  return (text.endsWith("\r") ? text.slice(0, -1) : text).split("\r");
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
