/** JUnit XML of a run: one testcase per task (and epoch); failures say why, unscored tasks are skipped. */
import type { RunSamples } from "./run_samples.js";

const INVALID_XML = /[^\x09\x0A\x0D\x20-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu;

export function xmlEscape(text: string): string {
  return text
    .replace(INVALID_XML, "\uFFFD")
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&apos;");
}

export function runToJUnit(run: RunSamples, suiteName = `hermes-batch.${run.name}`): string {
  const samples = [...run.samples.values()].sort((a, b) => (a.taskId === b.taskId ? a.epoch - b.epoch : a.taskId < b.taskId ? -1 : 1));
  const failures = samples.filter((s) => s.passed === false).length;
  const skipped = samples.filter((s) => s.passed === null).length;
  const time = samples.reduce((t, s) => t + s.durationMs, 0) / 1000;
  const cases = samples.map((s) => {
    const name = run.epochs > 1 ? `${s.taskId} [epoch ${s.epoch}]` : s.taskId;
    const open = `  <testcase classname="${xmlEscape(suiteName)}" name="${xmlEscape(name)}" time="${(s.durationMs / 1000).toFixed(3)}"`;
    if (s.passed === true) return `${open}/>`;
    if (s.passed === null) return `${open}>\n    <skipped message="${xmlEscape(`unscored: ${s.reason}`)}"/>\n  </testcase>`;
    const body = [s.reason, s.details].filter(Boolean).join("\n");
    return `${open}>\n    <failure message="${xmlEscape(s.reason)}" type="${xmlEscape(s.outcome)}">${xmlEscape(body)}</failure>\n  </testcase>`;
  });
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="hermes-batch" tests="${samples.length}" failures="${failures}" skipped="${skipped}" time="${time.toFixed(3)}">`,
    `<testsuite name="${xmlEscape(suiteName)}" tests="${samples.length}" failures="${failures}" errors="0" skipped="${skipped}" time="${time.toFixed(3)}">`,
    ...cases,
    "</testsuite>",
    "</testsuites>",
    "",
  ].join("\n");
}
