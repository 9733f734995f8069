/**
 * Streaming JSONL dataset reader: one zod-validated row a line, errors carry file:line.
 * Never holds the file in memory; `scanDataset` validates the whole file's structure up front.
 */
import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { createInterface } from "node:readline";
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
  const input = createReadStream(file, { encoding: "utf8" });
  const lines = createInterface({ input, crlfDelay: Infinity });
  const seenIds = new Map<string, number>();
  const derivedCounts = new Map<string, number>();
  let lineNo = 0;
  let index = 0;
  try {
    for await (const text of lines) {
      lineNo++;
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
    const code = (err as NodeJS.ErrnoException).code;
    yield { ok: false, bad: { file, line: lineNo + 1, reason: code === "ENOENT" ? "file not found" : `cannot read: ${code ?? String(err)}` } };
  } finally {
    lines.close();
    input.destroy();
  }
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
