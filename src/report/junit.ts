/**
 * JUnit XML of a run: one testcase per task (and epoch). A failed score is a <failure>, a task that could
 * not be scored (infrastructure failure, dropped, judge failed) an <error> with the reason; <skipped> are a
 * task of the baseline that is absent from this run, and a row that names no scorer (nothing to grade: compare
 * leaves it out of its gate, so a CI step that fails on errors must not fail on it).
 */
import type { RunSample, RunSamples } from "./run_samples.js";

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

export interface JUnitOptions {
  suiteName?: string;
  /** The baseline run: its tasks absent from this run are listed as skipped. */
  baseline?: RunSamples;
}

interface Case {
  taskId: string;
  epoch: number;
  durationMs: number;
  kind: "pass" | "failure" | "error" | "skipped";
  message: string;
  type: string;
  body: string;
}

function toCases(run: RunSamples, baseline: RunSamples | undefined): Case[] {
  const cases: Case[] = [...run.samples.values()].map((s) => ({
    taskId: s.taskId,
    epoch: s.epoch,
    durationMs: s.durationMs,
    kind: s.passed === true ? "pass" : s.passed === false ? "failure" : s.noScorer ? "skipped" : "error",
    message: s.noScorer ? `not graded: ${s.reason}` : s.passed === null ? `unscored: ${s.reason}` : s.reason,
    type: s.outcome,
    body: [s.reason, s.details].filter(Boolean).join("\n"),
  }));
  // A task of the baseline that this run does not have at all: one <skipped> per task, at its first baseline epoch.
  // Epochs the baseline ran and this run did not (3 epochs against 1) are no absence: the task is here.
  const present = new Set([...run.samples.values()].map((s) => s.taskId));
  const absent = new Map<string, RunSample>();
  for (const s of baseline?.samples.values() ?? []) {
    const first = absent.get(s.taskId);
    if (!present.has(s.taskId) && (!first || s.epoch < first.epoch)) absent.set(s.taskId, s);
  }
  for (const s of absent.values()) {
    cases.push({
      taskId: s.taskId,
      epoch: s.epoch,
      durationMs: 0,
      kind: "skipped",
      message: "absent from the current run",
      type: "absent",
      body: "",
    });
  }
  return cases.sort((a, b) => (a.taskId === b.taskId ? a.epoch - b.epoch : a.taskId < b.taskId ? -1 : 1));
}

export function runToJUnit(run: RunSamples, opts: JUnitOptions = {}): string {
  const suiteName = opts.suiteName ?? `hermes-batch.${run.name}`;
  const cases = toCases(run, opts.baseline);
  const count = (kind: Case["kind"]) => cases.filter((c) => c.kind === kind).length;
  const time = cases.reduce((t, c) => t + c.durationMs, 0) / 1000;
  const epochs = Math.max(run.epochs, opts.baseline?.epochs ?? 1);
  const xml = cases.map((c) => {
    const name = epochs > 1 ? `${c.taskId} [epoch ${c.epoch}]` : c.taskId;
    const open = `  <testcase classname="${xmlEscape(suiteName)}" name="${xmlEscape(name)}" time="${(c.durationMs / 1000).toFixed(3)}"`;
    if (c.kind === "pass") return `${open}/>`;
    if (c.kind === "skipped") return `${open}>\n    <skipped message="${xmlEscape(c.message)}"/>\n  </testcase>`;
    return `${open}>\n    <${c.kind} message="${xmlEscape(c.message)}" type="${xmlEscape(c.type)}">${xmlEscape(c.body)}</${c.kind}>\n  </testcase>`;
  });
  const totals = `tests="${cases.length}" failures="${count("failure")}" errors="${count("error")}" skipped="${count("skipped")}" time="${time.toFixed(3)}"`;
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="hermes-batch" ${totals}>`,
    `<testsuite name="${xmlEscape(suiteName)}" ${totals}>`,
    ...xml,
    "</testsuite>",
    "</testsuites>",
    "",
  ].join("\n");
}
