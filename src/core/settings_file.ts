/**
 * Files the user names for a run's settings (`--config`, `--mcp-config`, `--prefill-messages-file`,
 * `--distribution-file`): read whole, bounded, as UTF-8, and parsed as YAML into plain data of bounded depth, so a
 * hostile file is one UserError line naming the file (and line), never a hang, a crash or a stack trace.
 */
import { closeSync, openSync, readSync, statSync } from "node:fs";
import YAML from "yaml";
import { UserError } from "./errors.js";

/** More than any settings file needs; `/dev/zero` or an endless pipe stops here instead of filling memory. */
export const MAX_SETTINGS_FILE_BYTES = 16 * 1024 * 1024;
/** Nesting deeper than this is no settings file (and an alias that contains itself is infinitely deep). */
export const MAX_SETTINGS_DEPTH = 64;

/**
 * Refuses what cannot be a settings file before anything reads it: an empty name, a missing path, a folder, a device
 * (`/dev/zero`, `/dev/urandom`; `/dev/null` stays the empty file) or a socket. FIFOs and process substitution
 * (`<(…)`) are files that can be read once; they pass. `label` names the flag (`--config`).
 */
export function checkSettingsPath(path: string, label: string): void {
  if (path.trim() === "") throw new UserError(`${label}: give a file name (got an empty one)`);
  let st: ReturnType<typeof statSync>;
  try {
    st = statSync(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new UserError(
      `${label} ${path}: ${code === "ENOENT" ? "no such file" : `cannot read: ${code ?? String(err)}`}`,
    );
  }
  if (st.isDirectory()) throw new UserError(`${label} ${path}: is a folder, not a file`);
  if (
    (st.isCharacterDevice() || st.isBlockDevice()) &&
    path !== "/dev/null" &&
    !/^\/(dev\/(stdin|fd\/\d+)|proc\/self\/fd\/\d+)$/.test(path)
  )
    throw new UserError(`${label} ${path}: is a device, not a file`);
  if (st.isSocket()) throw new UserError(`${label} ${path}: is a socket, not a file`);
}

/** The text of a settings file: at most `maxBytes`, UTF-8 (a leading BOM dropped), else a UserError naming it. */
export function readSettingsText(path: string, label: string, maxBytes = MAX_SETTINGS_FILE_BYTES): string {
  checkSettingsPath(path, label);
  const chunks: Buffer[] = [];
  let size = 0;
  let fd: number | undefined;
  try {
    fd = openSync(path, "r");
    const chunk = Buffer.alloc(65536);
    for (;;) {
      const n = readSync(fd, chunk, 0, chunk.length, null);
      if (n === 0) break;
      chunks.push(Buffer.from(chunk.subarray(0, n)));
      size += n;
      if (size > maxBytes) throw new UserError(`${label} ${path}: larger than ${maxBytes} bytes; not a settings file`);
    }
  } catch (err) {
    if (err instanceof UserError) throw err;
    throw new UserError(`${label} ${path}: cannot read: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
  let bytes = Buffer.concat(chunks);
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) bytes = bytes.subarray(3);
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw new UserError(`${label} ${path}: invalid UTF-8 (the file must be UTF-8 text)`);
  }
}

/**
 * A YAML (or JSON) text as plain data. Refused, as `FILE[:LINE]: reason`: a syntax error, a key given twice, more
 * than one document, a tag this parser does not know (`!!js/function`: it would otherwise be read as a plain string,
 * with a multi-line warning), an alias bomb, and nesting past MAX_SETTINGS_DEPTH (an alias inside itself included).
 * `lineCounter`, when given, is filled for the caller's own line lookups.
 */
export function parseSettingsYaml(
  text: string,
  file: string,
  kind: "YAML" | "JSON" = /\.json$/i.test(file) ? "JSON" : "YAML",
  lineCounter = new YAML.LineCounter(),
): { value: unknown; doc: YAML.Document } {
  const where = (pos?: { line: number }[]) => `${file}${pos?.[0]?.line ? `:${pos[0].line}` : ""}`;
  let docs: YAML.Document.Parsed[];
  try {
    docs = YAML.parseAllDocuments(text, {
      lineCounter,
      uniqueKeys: true,
      prettyErrors: true,
    }) as YAML.Document.Parsed[];
  } catch (err) {
    throw new UserError(`${file}: invalid ${kind}: ${(err as Error).message.split("\n")[0]}`);
  }
  if (!Array.isArray(docs)) docs = [];
  if (docs.length > 1) {
    const line = lineCounter.linePos(docs[1]!.range[0]).line;
    throw new UserError(`${file}:${line}: invalid ${kind}: a second document ('---'); the file must hold one`);
  }
  const doc = docs[0] ?? new YAML.Document(null);
  const problem = doc.errors[0] ?? doc.warnings[0];
  if (problem) throw new UserError(`${where(problem.linePos)}: invalid ${kind}: ${problem.message.split("\n")[0]}`);
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: 100 });
  } catch (err) {
    throw new UserError(`${file}: invalid ${kind}: ${(err as Error).message.split("\n")[0]}`);
  }
  const deep = depthProblem(value);
  if (deep) throw new UserError(`${file}: ${deep}`);
  return { value, doc };
}

/** Past MAX_SETTINGS_DEPTH (which an alias inside itself always is): the reason, else undefined. Bounded recursion. */
function depthProblem(value: unknown, depth = 0): string | undefined {
  if (value === null || typeof value !== "object") return undefined;
  if (depth >= MAX_SETTINGS_DEPTH)
    return `nested more than ${MAX_SETTINGS_DEPTH} levels deep (or an alias that refers to itself)`;
  const items = value instanceof Map ? [...value.values()] : Array.isArray(value) ? value : Object.values(value);
  for (const item of items) {
    const p = depthProblem(item, depth + 1);
    if (p) return p;
  }
  return undefined;
}

/**
 * `--distribution-file`: checked by name and kind before toolset_distributions.ts reads it (an empty name, a folder
 * or `/dev/zero` is one line here, not ignored or read without end). Returns the path.
 */
export function checkedDistributionFile(path: string): string {
  checkSettingsPath(path, "--distribution-file");
  return path;
}
