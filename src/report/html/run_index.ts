/**
 * `hermes-batch view DIR` on a folder of runs (`view runs`): the index page of its runs, one row a run with
 * its name, start date, model, pass rate and state, each linking to the run's own live page. Read from the
 * small files of each run folder (statistics.json, checkpoint.json, run.yaml), never its trajectories, so the
 * page stays quick with many large runs. Plain HTML without script; every name and model is escaped.
 */
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { parse as parseYaml } from "yaml";
import * as z from "zod";
import { pidAlive } from "../../core/pid_alive.js";
import { RUN_FILES } from "../../store/checkpoint.js";
import { escapeHtml } from "./page.js";

/** The files whose presence makes a folder a run folder (a run just started has run.yaml first). */
const RUN_MARKERS = [
  RUN_FILES.trajectories,
  RUN_FILES.failed,
  RUN_FILES.dropped,
  RUN_FILES.checkpoint,
  RUN_FILES.config,
  RUN_FILES.statistics,
];

export function isRunFolder(dir: string): boolean {
  return RUN_MARKERS.some((f) => existsSync(join(dir, f)));
}

const isDir = (path: string) => {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
};

/** The names of the run folders directly inside `dir` (hidden folders left out), sorted. */
export function runFolderNames(dir: string): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names.filter((n) => !n.startsWith(".") && isDir(join(dir, n)) && isRunFolder(join(dir, n))).sort();
}

// What the index reads of each file; anything else in them, or a file that does not parse, is ignored.
const count = z.number().int().nonnegative();
const StatisticsSchema = z.looseObject({
  run_name: z.string().optional().catch(undefined),
  model: z.string().optional().catch(undefined),
  started_at: z.string().optional().catch(undefined),
  completed_at: z.string().optional().catch(undefined),
  tasks: z.looseObject({ trajectories: count, failed: count, dropped: count }).optional().catch(undefined),
  scores: z
    .looseObject({
      scored: count,
      passed: count,
      unscored: count.optional(),
      pass_rate: z.number().min(0).max(1).nullable(),
    })
    .optional()
    .catch(undefined),
});
const CheckpointSchema = z.looseObject({
  done: count.optional().catch(undefined),
  failed: count.optional().catch(undefined),
  dropped: count.optional().catch(undefined),
  finished: z.boolean().optional().catch(undefined),
});
const RunYamlSchema = z.looseObject({ model: z.unknown().optional() });
const LockSchema = z.looseObject({ pid: z.number().int().positive(), host: z.string() });

function readParsed<T extends z.ZodType>(path: string, schema: T, yaml = false): z.infer<T> | undefined {
  try {
    const text = readFileSync(path, "utf8");
    const parsed = schema.safeParse(yaml ? parseYaml(text) : JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

export type RunState = "running" | "finished" | "interrupted" | "unknown";

export interface RunSummary {
  /** The folder's name: the link goes to it. */
  name: string;
  /** ISO time the run started (statistics.json), else when its run.yaml was written; null when neither is known. */
  started: string | null;
  model: string;
  /** Scored tasks (samples) and how many passed; pass_rate null when nothing is scored yet. */
  scored: number;
  passed: number;
  unscored: number;
  pass_rate: number | null;
  /** Results in the folder: done (trajectories), failed (infrastructure) and dropped. */
  done: number | null;
  failed: number | null;
  dropped: number | null;
  state: RunState;
}

/** A lock held by a live process on this machine (or any lock from another machine): the run is going on. */
function lockHeld(dir: string): boolean {
  const lock = readParsed(join(dir, ".lock"), LockSchema);
  if (!lock) return false;
  return lock.host !== hostname() || pidAlive(lock.pid);
}

export function summarizeRun(dir: string, name: string): RunSummary {
  const stats = readParsed(join(dir, RUN_FILES.statistics), StatisticsSchema);
  const checkpoint = readParsed(join(dir, RUN_FILES.checkpoint), CheckpointSchema);
  const runYaml = readParsed(join(dir, RUN_FILES.config), RunYamlSchema, true);
  let started = stats?.started_at ?? null;
  if (started === null) {
    try {
      started = statSync(join(dir, RUN_FILES.config)).mtime.toISOString();
    } catch {
      started = null;
    }
  }
  const model = stats?.model ?? (typeof runYaml?.model === "string" ? runYaml.model : "");
  const scores = stats?.scores;
  const state: RunState = lockHeld(dir)
    ? "running"
    : checkpoint?.finished === true
      ? "finished"
      : checkpoint
        ? "interrupted"
        : "unknown";
  return {
    name,
    started,
    model,
    scored: scores?.scored ?? 0,
    passed: scores?.passed ?? 0,
    unscored: scores?.unscored ?? 0,
    pass_rate: scores && scores.scored > 0 ? (scores.pass_rate ?? scores.passed / scores.scored) : null,
    done: checkpoint?.done ?? stats?.tasks?.trajectories ?? null,
    failed: checkpoint?.failed ?? stats?.tasks?.failed ?? null,
    dropped: checkpoint?.dropped ?? stats?.tasks?.dropped ?? null,
    state,
  };
}

/** Every run folder in `dir`, newest first (runs of unknown date last, by name). */
export function listRuns(dir: string): RunSummary[] {
  const runs = runFolderNames(dir).map((n) => summarizeRun(join(dir, n), n));
  return runs.sort((a, b) => (b.started ?? "").localeCompare(a.started ?? "") || a.name.localeCompare(b.name));
}

const STYLE = `:root { --fg: #1d2330; --muted: #5d6675; --line: #d9dee7; --bg: #f6f7f9; --pass: #1a7f37; --fail: #c62828; --warn: #b26a00; --accent: #2457c5; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, "DejaVu Sans", sans-serif; color: var(--fg); background: var(--bg); }
header { background: #18202e; color: #eef1f6; padding: 14px 22px; }
header h1 { margin: 0; font-size: 19px; font-weight: 600; word-break: break-all; }
header p { margin: 4px 0 0; color: #b8c1d1; font-size: 13px; }
main { padding: 18px 22px 40px; }
a { color: var(--accent); text-decoration: none; }
a:hover { text-decoration: underline; }
table { border-collapse: collapse; width: 100%; background: #fff; border: 1px solid var(--line); border-radius: 8px; font-size: 13px; }
th, td { text-align: left; padding: 6px 10px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { color: var(--muted); font-weight: 600; }
td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.name { word-break: break-all; font-weight: 600; }
.sub { color: var(--muted); font-size: 12px; }
.state { font-size: 12px; font-weight: 600; color: var(--muted); }
.state.running { color: var(--pass); }
.state.interrupted { color: var(--warn); }
.empty { color: var(--muted); font-style: italic; }
`;

const sha256 = (text: string) => `'sha256-${createHash("sha256").update(text, "utf8").digest("base64")}'`;

/** The index's Content-Security-Policy: its one inline style, nothing else (no script, no request). */
export function runIndexCsp(): string {
  return `default-src 'none'; style-src ${sha256(STYLE)}; img-src data:; base-uri 'none'; form-action 'none'`;
}

function dateText(iso: string | null): string {
  if (iso === null) return "";
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : `${d.toISOString().slice(0, 16).replace("T", " ")} UTC`;
}

function passText(run: RunSummary): string {
  if (run.pass_rate === null)
    return `<span class="sub">${run.unscored > 0 ? `nothing scored (${run.unscored} unscored)` : "not scored"}</span>`;
  const unscored = run.unscored > 0 ? `, ${run.unscored} unscored` : "";
  return `${(run.pass_rate * 100).toFixed(1)} %<br><span class="sub">${run.passed}/${run.scored} passed${unscored}</span>`;
}

function resultsText(run: RunSummary): string {
  if (run.done === null) return "";
  const extra = [run.failed ? `${run.failed} failed` : "", run.dropped ? `${run.dropped} dropped` : ""]
    .filter(Boolean)
    .join(", ");
  return `${run.done}${extra ? `<br><span class="sub">${extra}</span>` : ""}`;
}

/**
 * The index page: `href(name)` gives each run's link (relative, already safe for a URL). Names and models come
 * from folder names and files anyone could have written, so all of it is escaped.
 */
export function runIndexHtml(opts: {
  title: string;
  dir: string;
  runs: RunSummary[];
  href: (name: string) => string;
}): string {
  const rows = opts.runs.map(
    (r) =>
      `<tr data-run="${escapeHtml(r.name)}"><td class="name"><a href="${escapeHtml(opts.href(r.name))}">${escapeHtml(r.name)}</a></td>` +
      `<td>${escapeHtml(dateText(r.started))}</td><td>${escapeHtml(r.model)}</td><td class="n">${passText(r)}</td>` +
      `<td class="n">${resultsText(r)}</td><td><span class="state ${r.state}">${r.state === "unknown" ? "" : r.state}</span></td></tr>`,
  );
  const table = rows.length
    ? `<table><thead><tr><th>run</th><th>started</th><th>model</th><th class="n">pass rate</th><th class="n">done</th><th>state</th></tr></thead>\n<tbody>\n${rows.join("\n")}\n</tbody></table>`
    : `<p class="empty">No run folders in ${escapeHtml(opts.dir)} yet.</p>`;
  return [
    '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n',
    `<meta http-equiv="Content-Security-Policy" content="${escapeHtml(runIndexCsp())}">\n`,
    '<meta name="viewport" content="width=device-width, initial-scale=1">\n<meta name="referrer" content="no-referrer">\n',
    `<title>${escapeHtml(opts.title)}</title>\n<style>${STYLE}</style>\n</head>\n<body>\n`,
    `<header><h1>${escapeHtml(opts.title)}</h1><p>${opts.runs.length} run(s) in ${escapeHtml(opts.dir)}, newest first; reload for new ones</p></header>\n`,
    `<main>\n${table}\n</main>\n</body>\n</html>\n`,
  ].join("");
}
