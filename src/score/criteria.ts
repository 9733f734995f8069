/**
 * What a row is graded against, as one digest (`score.criteria` in its lines): its `expected`, `verify`, `rubric`
 * and the content of its `verify_files` folder. `compare` pairs tasks by id and their prompts; two runs whose rows
 * carry other digests were graded by other criteria (an answer key fixed, a hidden test edited), and their pass
 * rates do not compare.
 */
import { createHash } from "node:crypto";
import { lstatSync, readFileSync, readdirSync, readlinkSync } from "node:fs";
import { join } from "node:path";

/** A folder's digest per path, once per thread: the rows of a dataset share a few folders. */
const folderDigests = new Map<string, string>();

/** Names, kinds and contents of everything under `dir`, in sorted order. */
function folderDigest(dir: string): string {
  let digest = folderDigests.get(dir);
  if (digest !== undefined) return digest;
  const hash = createHash("sha256");
  const walk = (rel: string) => {
    for (const name of readdirSync(join(dir, rel)).sort()) {
      const path = rel ? `${rel}/${name}` : name;
      const full = join(dir, path);
      const st = lstatSync(full);
      if (st.isDirectory()) {
        hash.update(`d ${path}\0`);
        walk(path);
      } else if (st.isSymbolicLink()) hash.update(`l ${path}\0${readlinkSync(full)}\0`);
      else if (st.isFile()) hash.update(`f ${path}\0`).update(readFileSync(full)).update("\0");
    }
  };
  try {
    walk("");
    digest = hash.digest("hex");
  } catch (err) {
    digest = `unreadable: ${(err as NodeJS.ErrnoException).code ?? "error"}`;
  }
  folderDigests.set(dir, digest);
  return digest;
}

/** JSON with object keys sorted: the digest does not change when a row's keys are reordered. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
    entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value ?? null);
}

/** The row's grading criteria as `sha256:<16 hex>`; undefined for a row that names no scorer. */
export function scoringCriteria(row: {
  expected?: unknown;
  verify?: string;
  rubric?: string;
  /** The row's verify_files folder, resolved. */
  verifyFiles?: string;
}): string | undefined {
  if (row.expected === undefined && row.verify === undefined && row.rubric === undefined) return undefined;
  const text = canonicalJson({
    expected: row.expected,
    verify: row.verify,
    rubric: row.rubric,
    verify_files: row.verifyFiles === undefined ? undefined : folderDigest(row.verifyFiles),
  });
  return `sha256:${createHash("sha256").update(text).digest("hex").slice(0, 16)}`;
}
