/** A comparison as text for the console, and as Markdown for a pull-request comment. */
import type { Comparison, TaskChange } from "./compare.js";

const pct = (r: number | null) => (r === null ? "n/a" : `${(r * 100).toFixed(1)} %`);
const pp = (d: number | null) => (d === null ? "n/a" : `${d >= 0 ? "+" : ""}${d.toFixed(1)} pp`);
const interval = (ci: [number, number] | null) => (ci ? `[${ci[0].toFixed(1)}, ${ci[1].toFixed(1)}]` : "n/a");
const pval = (p: number | null) => (p === null ? "n/a" : p < 0.001 ? "< 0.001" : p.toFixed(3));
const taskName = (t: TaskChange, epochs: number) => (epochs > 1 ? `${t.task_id} [epoch ${t.epoch}]` : t.task_id);
const signed = (n: number | null, unit = "") => (n === null ? "n/a" : `${n >= 0 ? "+" : ""}${Math.round(n)}${unit}`);

function verdictLine(c: Comparison): string {
  if (c.verdict === "not_comparable") return `NOT COMPARABLE: ${c.not_comparable.join("; ")}`;
  if (c.verdict === "regression") return `REGRESSION: ${c.regressions.join("; ")}`;
  return "no regression";
}

export function comparisonText(c: Comparison, maxListed = 20): string {
  const lines: string[] = [];
  const list = (title: string, items: TaskChange[]) => {
    if (items.length === 0) return;
    lines.push(`${title} (${items.length}):`);
    for (const t of items.slice(0, maxListed)) lines.push(`  ${taskName(t, c.epochs)}  ${t.reason}`);
    if (items.length > maxListed) lines.push(`  … and ${items.length - maxListed} more (--json has them all)`);
  };
  list("newly failing", c.newly_failing);
  list("newly passing", c.newly_passing);
  lines.push(
    `baseline ${c.baseline.run}: ${pct(c.baseline.pass_rate)} passed (${c.baseline.passed}/${c.baseline.scored} scored, ${c.baseline.unscored} unscored)`,
    `current  ${c.current.run}: ${pct(c.current.pass_rate)} passed (${c.current.passed}/${c.current.scored} scored, ${c.current.unscored} unscored)`,
    `paired over ${c.paired} task(s) scored in both: ${pct(c.paired_baseline_rate)} → ${pct(c.paired_current_rate)}, ${pp(c.delta_pp)} (95 % CI ${interval(c.delta_ci95_pp)}), p = ${pval(c.p_value)}${c.test ? ` (${c.test.replace("_", " ")})` : ""}`,
    `per task: tokens ${signed(c.mean_tokens_delta)}, duration ${signed(c.mean_duration_ms_delta, " ms")}${c.cost_usd_delta !== null ? `, cost ${c.cost_usd_delta >= 0 ? "+" : ""}$${c.cost_usd_delta.toFixed(4)} in all` : ""}`,
  );
  if (c.only_in_baseline.length) lines.push(`only in baseline: ${c.only_in_baseline.length} task(s) (${c.only_in_baseline.slice(0, 5).join(", ")}${c.only_in_baseline.length > 5 ? ", …" : ""})`);
  if (c.only_in_current.length) lines.push(`only in current: ${c.only_in_current.length} task(s) (${c.only_in_current.slice(0, 5).join(", ")}${c.only_in_current.length > 5 ? ", …" : ""})`);
  lines.push(verdictLine(c));
  return lines.join("\n") + "\n";
}

const mdCell = (s: string) => s.replace(/\|/g, "\\|").replace(/\r?\n/g, " ");

export function comparisonMarkdown(c: Comparison, maxListed = 20): string {
  const icon = c.verdict === "ok" ? "✅" : c.verdict === "regression" ? "❌" : "⚠️";
  const out = [
    `## ${icon} hermes-batch compare: ${verdictLine(c)}`,
    "",
    "| | baseline | current |",
    "|---|---|---|",
    `| pass rate (scored) | ${pct(c.baseline.pass_rate)} (${c.baseline.passed}/${c.baseline.scored}) | ${pct(c.current.pass_rate)} (${c.current.passed}/${c.current.scored}) |`,
    `| unscored | ${c.baseline.unscored} | ${c.current.unscored} |`,
    `| tokens | ${c.baseline.tokens} | ${c.current.tokens} |`,
    "",
    `Paired over ${c.paired} task(s): **${pp(c.delta_pp)}** (95 % CI ${interval(c.delta_ci95_pp)}), p = ${pval(c.p_value)}${c.test ? ` (${c.test.replace("_", " ")})` : ""}.`,
    "",
  ];
  const section = (title: string, items: TaskChange[]) => {
    if (items.length === 0) return;
    out.push(`### ${title} (${items.length})`, "", "| task | why |", "|---|---|");
    for (const t of items.slice(0, maxListed)) out.push(`| ${mdCell(taskName(t, c.epochs))} | ${mdCell(t.reason.slice(0, 300))} |`);
    if (items.length > maxListed) out.push(`| … | ${items.length - maxListed} more |`);
    out.push("");
  };
  section("Newly failing", c.newly_failing);
  section("Newly passing", c.newly_passing);
  if (c.only_in_baseline.length || c.only_in_current.length) {
    out.push(`Tasks only in the baseline: ${c.only_in_baseline.length}; only in the current run: ${c.only_in_current.length}.`, "");
  }
  return out.join("\n");
}
