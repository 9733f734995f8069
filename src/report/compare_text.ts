/** A comparison as text for the console, and as Markdown for a pull-request comment. */
import { buildDifference, describeBuild } from "../store/build_identity.js";
import { type Comparison, pIs, type SideSummary, type TaskChange } from "./compare.js";
import type { RunSamples } from "./run_samples.js";

/** What a run's files held that the comparison could not take as written: one warning line each. */
export function runWarnings(run: RunSamples, label: string): string[] {
  const warnings: string[] = [];
  if (run.badLines) warnings.push(`warning: ${label} ${run.dir}: ${run.badLines} unreadable line(s) skipped`);
  if (run.duplicateLines)
    warnings.push(
      `warning: ${label} ${run.dir}: ${run.duplicateLines} duplicate line(s) for a task and epoch that already had a result (the first stands); ${run.conflicting} task epoch(s) whose repeated lines disagree with the first`,
    );
  return warnings;
}

const pct = (r: number | null) => (r === null ? "n/a" : `${(r * 100).toFixed(1)} %`);
const pp = (d: number | null) =>
  d === null ? "n/a" : `${d > 0 ? "+" : d < 0 ? "−" : "±"}${Math.abs(d).toFixed(1)} pp`;
const num = (d: number) => `${d < 0 ? "−" : ""}${Math.abs(d).toFixed(1)}`;
const interval = (ci: [number, number] | null) => (ci ? `[${num(ci[0])}, ${num(ci[1])}]` : "n/a");

/**
 * Characters that end a line for some reader (a terminal, a CI log, GitHub Actions' `::command::` parser) or turn
 * the text around it (bidirectional controls), and the other control characters: text from a run (task ids, a
 * judge's reason quoting the answer) cannot start a line of its own or reorder one.
 */
const UNSAFE = /[\u0000-\u0008\u000A-\u001F\u007F-\u009F\u061C\u200E\u200F\u2028\u2029\u202A-\u202E\u2066-\u2069]/g;

/** One line of console text with every unsafe character shown: \n, \r, or <U+XXXX>. */
export function visible(s: string): string {
  return s.replace(UNSAFE, (ch) =>
    ch === "\n" ? "\\n" : ch === "\r" ? "\\r" : `<U+${ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}>`,
  );
}
const signed = (n: number | null, unit = "") =>
  n === null ? "n/a" : `${n >= 0 ? "+" : "−"}${Math.abs(Math.round(n))}${unit}`;
const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;
const TEST_NAMES: Record<NonNullable<Comparison["test"]>, string> = {
  mcnemar_exact: "exact McNemar",
  sign_flip_exact: "exact sign-flip permutation over tasks",
  sign_flip_monte_carlo: "Monte-Carlo sign-flip permutation over tasks",
};

/**
 * The two runs' hermes-batch, when they differ (another version, or one version built from other code): the numbers
 * still compare the runs' results, but a change may come from the harness as well as from the model. Else undefined.
 */
function versions(c: Comparison): { baseline: string; current: string; what: string } | undefined {
  const id = (s: SideSummary) => ({ version: s.hermes_batch_version ?? null, build: s.hermes_batch_build ?? null });
  const diff = buildDifference(id(c.baseline), id(c.current));
  if (diff === undefined) return undefined;
  const withBuild = diff === "build";
  return {
    baseline: describeBuild(id(c.baseline), withBuild),
    current: describeBuild(id(c.current), withBuild),
    what: withBuild ? "builds" : "versions",
  };
}

function verdictLine(c: Comparison): string {
  if (c.verdict === "not_comparable") return `NOT COMPARABLE: ${c.not_comparable.join("; ")}`;
  if (c.verdict === "regression") return `REGRESSION: ${c.regressions.join("; ")}`;
  return c.gate_note;
}

function pairedLine(c: Comparison): string {
  const test = c.test
    ? ` (${TEST_NAMES[c.test]}${c.test_on_common_epochs ? ", on each task's first epochs, as many as both runs scored" : ""})`
    : "";
  const drop = c.p_value_drop !== null ? `; one-sided p of a drop ${pIs(c.p_value_drop, c.alpha)}` : "";
  return (
    `paired over ${plural(c.paired, "task")} scored in both (${plural(c.baseline.epochs, "epoch")} baseline, ${c.current.epochs} current): ` +
    `${pct(c.paired_baseline_rate)} → ${pct(c.paired_current_rate)}, ${pp(c.delta_pp)} (95 % CI ${interval(c.delta_ci95_pp)} pp), ` +
    `p ${pIs(c.p_value, c.alpha)} two-sided${test}${drop}`
  );
}

const tokens = (s: SideSummary) =>
  `agent ${s.tokens.agent}, approver ${s.tokens.approver}, judge ${s.tokens.judge}, total ${s.tokens.total}`;
/** Whether the rate (the mean of the tasks' rates) differs from passed/scored: unequal scored epochs per task. */
const taskMean = (s: SideSummary) =>
  s.pass_rate !== null && s.scored > 0 && Math.abs(s.pass_rate - s.passed / s.scored) > 1e-9;
const side = (s: SideSummary) =>
  `${pct(s.pass_rate)} passed${taskMean(s) ? " (mean of the tasks' rates)" : ""}${s.ci95 ? ` (95 % CI ${pct(s.ci95[0])}–${pct(s.ci95[1])})` : ""} (${s.passed}/${s.scored} scored, ${s.unscored} unscored; ${plural(s.tasks, "task")} × ${plural(s.epochs, "epoch")})`;

function changeText(t: TaskChange, perEpoch: boolean): string {
  return perEpoch ? `${t.task_id}  ${t.baseline} → ${t.current}` : t.task_id;
}

export function comparisonText(c: Comparison, maxListed = 20): string {
  const lines: string[] = [];
  const perEpoch = c.baseline.epochs > 1 || c.current.epochs > 1;
  const list = (title: string, items: TaskChange[]) => {
    if (items.length === 0) return;
    lines.push(`${title} (${items.length}):`);
    for (const t of items.slice(0, maxListed)) lines.push(`  ${changeText(t, perEpoch)}  ${t.reason}`);
    if (items.length > maxListed) lines.push(`  … and ${items.length - maxListed} more (--json has them all)`);
  };
  // First, before any task: which hermes-batch made each run, when they differ.
  const v = versions(c);
  if (v)
    lines.push(
      `hermes-batch ${v.what} differ: baseline ${v.baseline}, current ${v.current} (not a failure; a change may come from hermes-batch too)`,
    );
  list("newly failing", c.newly_failing);
  list("newly passing", c.newly_passing);
  lines.push(
    `baseline ${c.baseline.run}: ${side(c.baseline)}`,
    `current  ${c.current.run}: ${side(c.current)}`,
    pairedLine(c),
    `tokens: baseline ${tokens(c.baseline)}; current ${tokens(c.current)}`,
    `per task: tokens ${signed(c.mean_tokens_delta)}, duration ${signed(c.mean_duration_ms_delta, " ms")}${c.cost_usd_delta !== null ? `, cost ${c.cost_usd_delta >= 0 ? "+" : "−"}$${Math.abs(c.cost_usd_delta).toFixed(4)} in all` : ""}`,
  );
  if (c.unscored_tasks)
    lines.push(
      `unscored or missing: ${c.unscored_tasks} task(s) (${Object.entries(c.unscored_reasons)
        .map(([r, n]) => `${n} ${r}`)
        .join(", ")})`,
    );
  if (c.only_in_baseline.length)
    lines.push(
      `only in baseline: ${c.only_in_baseline.length} task(s) (${c.only_in_baseline.slice(0, 5).join(", ")}${c.only_in_baseline.length > 5 ? ", …" : ""})`,
    );
  if (c.only_in_current.length)
    lines.push(
      `only in current: ${c.only_in_current.length} task(s) (${c.only_in_current.slice(0, 5).join(", ")}${c.only_in_current.length > 5 ? ", …" : ""})`,
    );
  if (c.verdict !== "ok") lines.push(`gate: ${c.gate_note}`);
  lines.push(verdictLine(c));
  return lines.map(visible).join("\n") + "\n";
}

/**
 * Text from runs (task ids, model output, scorer reasons) made inert for GitHub Markdown: HTML is escaped
 * (no tag, no entity survives), Markdown punctuation is backslash-escaped, @mentions do not notify, and a
 * newline cannot end a table row.
 */
export function mdText(s: string): string {
  return s
    .replace(/\r?\n|\r/g, " ")
    .replace(UNSAFE, (ch) => visible(ch))
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/[\\`*_{}[\]()#+\-!|~:]/g, "\\$&")
    .replace(/@/g, "&#64;");
}

/** "75.0 % (3/4)"; a mean of task rates that is not passed/scored says so: "75.0 % (mean of task rates; 2/3 scored epochs)". */
const mdRate = (s: SideSummary) =>
  taskMean(s)
    ? `${pct(s.pass_rate)} (mean of task rates; ${s.passed}/${s.scored} scored epochs)`
    : `${pct(s.pass_rate)} (${s.passed}/${s.scored})`;

export function comparisonMarkdown(c: Comparison, maxListed = 20): string {
  const icon = c.verdict === "ok" ? "✅" : c.verdict === "regression" ? "❌" : "⚠️";
  const perEpoch = c.baseline.epochs > 1 || c.current.epochs > 1;
  const out = [
    `## ${icon} hermes-batch compare: ${mdText(verdictLine(c))}`,
    "",
    "| | baseline | current |",
    "|---|---|---|",
    `| pass rate (scored) | ${mdRate(c.baseline)} | ${mdRate(c.current)} |`,
    `| tasks × epochs | ${c.baseline.tasks} × ${c.baseline.epochs} | ${c.current.tasks} × ${c.current.epochs} |`,
    `| unscored | ${c.baseline.unscored} | ${c.current.unscored} |`,
    `| tokens (agent / approver / judge) | ${c.baseline.tokens.agent} / ${c.baseline.tokens.approver} / ${c.baseline.tokens.judge} | ${c.current.tokens.agent} / ${c.current.tokens.approver} / ${c.current.tokens.judge} |`,
    `| tokens (total) | ${c.baseline.tokens.total} | ${c.current.tokens.total} |`,
    ...((v) => (v ? [`| hermes-batch | ${mdText(v.baseline)} | ${mdText(v.current)} |`] : []))(versions(c)),
    "",
    `${mdText(pairedLine(c))}.`,
    "",
    `Gate: ${mdText(c.gate_note)}`,
    "",
  ];
  const section = (title: string, items: TaskChange[]) => {
    if (items.length === 0) return;
    out.push(
      `### ${title} (${items.length})`,
      "",
      perEpoch ? "| task | baseline | current | why |" : "| task | why |",
      perEpoch ? "|---|---|---|---|" : "|---|---|",
    );
    for (const t of items.slice(0, maxListed)) {
      const why = mdText(t.reason.slice(0, 300));
      out.push(
        perEpoch
          ? `| ${mdText(t.task_id)} | ${t.baseline} | ${t.current} | ${why} |`
          : `| ${mdText(t.task_id)} | ${why} |`,
      );
    }
    if (items.length > maxListed)
      out.push(perEpoch ? `| … | | | ${items.length - maxListed} more |` : `| … | ${items.length - maxListed} more |`);
    out.push("");
  };
  section("Newly failing", c.newly_failing);
  section("Newly passing", c.newly_passing);
  if (c.only_in_baseline.length || c.only_in_current.length) {
    out.push(
      `Tasks only in the baseline: ${c.only_in_baseline.length}; only in the current run: ${c.only_in_current.length}.`,
      "",
    );
  }
  return out.join("\n");
}
