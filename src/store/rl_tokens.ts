/**
 * The engine's token data of `rl.jsonl` by task and epoch, for writers that need it beside a trajectory line (ATIF
 * step metrics). The file is read once to find where each line starts (the last line of a task and epoch wins, as
 * for the other result files); a line is read again only when its trajectory is converted, so a run's token data
 * is never held in memory at once.
 */
import { closeSync, existsSync, openSync, readSync } from "node:fs";
import { RlLineSchema, type CallTokens } from "../core/rl_record.js";

const CHUNK = 1 << 20;
const key = (taskId: string, epoch: number | undefined) => `${epoch ?? 0}\u0000${taskId}`;

export class RlTokenIndex {
  private constructor(
    private readonly path: string,
    private readonly lines: Map<string, { start: number; length: number }>,
  ) {}

  /** The index of `path`, or undefined when there is no such file (a run without --rl-capture). */
  static open(path: string): RlTokenIndex | undefined {
    if (!existsSync(path)) return undefined;
    const lines = new Map<string, { start: number; length: number }>();
    for (const { start, text } of readLines(path)) {
      const parsed = RlLineSchema().pick({ task_id: true, epoch: true }).safeParse(safeJson(text));
      if (parsed.success)
        lines.set(key(parsed.data.task_id, parsed.data.epoch), { start, length: Buffer.byteLength(text) });
    }
    return new RlTokenIndex(path, lines);
  }

  /** The token data of one trajectory's kept calls by message index (calls without engine ids are left out). */
  tokensFor(taskId: string, epoch: number | undefined): Map<number, CallTokens> | undefined {
    const at = this.lines.get(key(taskId, epoch));
    if (!at) return undefined;
    const buf = Buffer.alloc(at.length);
    const fd = openSync(this.path, "r");
    try {
      readSync(fd, buf, 0, at.length, at.start);
    } finally {
      closeSync(fd);
    }
    const line = RlLineSchema().safeParse(safeJson(buf.toString("utf8")));
    if (!line.success) return undefined;
    const out = new Map<number, CallTokens>();
    for (const t of line.data.turns) {
      if (t.prompt_token_ids && t.completion_token_ids) {
        out.set(t.message_index, {
          prompt_token_ids: t.prompt_token_ids,
          completion_token_ids: t.completion_token_ids,
          logprobs: t.logprobs,
        });
      }
    }
    return out;
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Every complete line of a file with its byte offset (a last line without its newline is left out: not yet written). */
function* readLines(path: string): Generator<{ start: number; text: string }> {
  const fd = openSync(path, "r");
  try {
    let carry = Buffer.alloc(0);
    let base = 0;
    const chunk = Buffer.alloc(CHUNK);
    for (;;) {
      const n = readSync(fd, chunk, 0, CHUNK, null);
      if (n === 0) return;
      const data = carry.length ? Buffer.concat([carry, chunk.subarray(0, n)]) : Buffer.from(chunk.subarray(0, n));
      let from = 0;
      for (let nl = data.indexOf(10); nl >= 0; nl = data.indexOf(10, from)) {
        if (nl > from) yield { start: base + from, text: data.toString("utf8", from, nl) };
        from = nl + 1;
      }
      carry = data.subarray(from);
      base += from;
    }
  } finally {
    closeSync(fd);
  }
}
