/**
 * A Harbor task directory (or a folder of them) → dataset rows: `id` = [task].name or the folder name,
 * `prompt` = instruction.md verbatim, `metadata` = [metadata] + {harbor: {task_dir, digest, schema}}, and the
 * normalised task under `harbor` for the worker. A task that cannot run is a bad row naming its task.toml.
 */
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { basename, join, relative, resolve } from "node:path";
import { UserError } from "../core/errors.js";
import { normaliseTask, parseTaskToml, TaskTomlError, type HarborTask } from "./task_config.js";

export interface HarborRow {
  id: string;
  prompt: string;
  metadata: Record<string, unknown>;
  harbor: HarborTask;
  /** The task's `[[environment.mcp_servers]]`: a row's own servers, run as any row's are. */
  mcp_servers?: Record<string, unknown>[];
}

export interface HarborBad {
  file: string;
  line?: number;
  reason: string;
}

const isDir = (p: string) => existsSync(p) && statSync(p).isDirectory();

/** The task folders PATH names: itself when it has task.toml, else its sub-folders that have one (sorted). */
export function harborTaskDirs(path: string): string[] {
  const root = resolve(path);
  if (!isDir(root)) throw new UserError(`--harbor ${path}: no such folder`);
  if (existsSync(join(root, "task.toml"))) return [root];
  const dirs = readdirSync(root, { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(join(root, d.name, "task.toml")))
    .map((d) => join(root, d.name))
    .sort();
  if (dirs.length === 0)
    throw new UserError(`--harbor ${path}: neither a task folder (task.toml) nor a folder of task folders`);
  return dirs;
}

/** Every regular file under the folder, as sorted relative paths with `/` (links are not followed). */
function treeFiles(root: string, rel = ""): string[] {
  const out: string[] = [];
  for (const e of readdirSync(join(root, rel), { withFileTypes: true })) {
    const p = rel ? `${rel}/${e.name}` : e.name;
    if (e.isDirectory()) out.push(...treeFiles(root, p));
    else if (e.isFile() || e.isSymbolicLink()) out.push(p);
  }
  return out.sort();
}

/** sha256 over the sorted file tree: each path, its mode's exec bit and its content (a link: its target). */
export function taskDigest(dir: string): string {
  const h = createHash("sha256");
  for (const rel of treeFiles(dir)) {
    const full = join(dir, rel);
    const st = statSync(full, { throwIfNoEntry: false });
    h.update(`${rel}\0${st && st.mode & 0o111 ? "x" : "-"}\0`);
    h.update(st?.isFile() ? readFileSync(full) : Buffer.from("missing link target"));
    h.update("\0");
  }
  return h.digest("hex");
}

function checkLayout(dir: string, task: HarborTask): void {
  const env = join(dir, "environment");
  if (["docker-compose.yaml", "docker-compose.yml", "compose.yaml"].some((f) => existsSync(join(env, f)))) {
    throw new TaskTomlError("docker-compose environments are not supported yet");
  }
  if (isDir(join(dir, "steps"))) throw new TaskTomlError("multi-step tasks (steps/) are not supported yet");
  if (!existsSync(join(dir, "instruction.md"))) throw new TaskTomlError("instruction.md is missing");
  if (!existsSync(join(dir, "tests", "test.sh")))
    throw new TaskTomlError(
      existsSync(join(dir, "tests", "test.bat"))
        ? "Windows tasks (tests/test.bat) are not supported"
        : "tests/test.sh is missing",
    );
  if (!task.docker_image && !existsSync(join(env, "Dockerfile")))
    throw new TaskTomlError("neither [environment].docker_image nor environment/Dockerfile");
}

/** One task folder → its row, or why it cannot run. */
export function readHarborTask(dir: string): { ok: true; row: HarborRow } | { ok: false; bad: HarborBad } {
  const file = join(dir, "task.toml");
  try {
    const toml = parseTaskToml(readFileSync(file, "utf8"));
    const { mcp_servers, ...task } = normaliseTask(toml, dir, taskDigest(dir));
    checkLayout(dir, task);
    const prompt = readFileSync(join(dir, "instruction.md"), "utf8");
    if (prompt.trim() === "") throw new TaskTomlError("instruction.md is empty");
    const id = toml.task.name ?? basename(dir);
    return {
      ok: true,
      row: {
        id,
        prompt,
        metadata: { ...toml.metadata, harbor: { task_dir: dir, digest: task.digest, schema: task.schema } },
        harbor: task,
        ...(mcp_servers ? { mcp_servers } : {}),
      },
    };
  } catch (err) {
    if (err instanceof TaskTomlError)
      return { ok: false, bad: { file, ...(err.line ? { line: err.line } : {}), reason: err.message } };
    return { ok: false, bad: { file, reason: `cannot read: ${(err as NodeJS.ErrnoException).code ?? String(err)}` } };
  }
}

/** Rows and refusals for PATH (one task folder or a folder of them). */
export function readHarborTasks(path: string): { rows: HarborRow[]; bad: HarborBad[] } {
  const rows: HarborRow[] = [];
  const bad: HarborBad[] = [];
  for (const dir of harborTaskDirs(path)) {
    const r = readHarborTask(dir);
    if (r.ok) rows.push(r.row);
    else bad.push(r.bad);
  }
  return { rows, bad };
}

/** How a refusal is shown: `path/task.toml[:line]: reason`, the path relative to the current folder. */
export function formatHarborBad(b: HarborBad): string {
  return `${shownPath(b.file)}${b.line ? `:${b.line}` : ""}: ${b.reason}`;
}

/** A path relative to the current folder when it is under it, else absolute. */
export function shownPath(file: string): string {
  const rel = relative(process.cwd(), file);
  return rel && !rel.startsWith("..") ? rel : file;
}
