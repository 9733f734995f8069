/**
 * Scorers: each decides one thing about a finished task. A row names any combination (`expected`,
 * `verify`, `rubric`); all must pass. Scorers are a registry, so a plugin can add one.
 */
import * as z from "zod";
import { parseJsonStrict } from "../core/strict_json.js";
import { errorMessage } from "../core/errors.js";
import { createRegistry } from "../core/registry.js";
import type { ChatModel } from "../core/chat.js";
import type { JudgeRecordSchema, VerifyResult } from "../core/records.js";
import { ExpectedSchema, matchExpected, type Expected } from "./matchers.js";
import type { ScorerResult } from "./summary.js";
import type { HarborVerdict } from "./harbor_reward.js";

export interface ScoreInput {
  prompt: string;
  finalResponse: string | null;
  /** The row's scoring fields. */
  expected?: Expected;
  rubric?: string;
  verify?: VerifyResult;
  /** A Harbor task's verifier verdict. */
  harbor?: HarborVerdict;
  /** The judge model for `rubric` (the run's scheduler wraps it). */
  judge?: ChatModel;
  signal?: AbortSignal;
}

/** A judge call as recorded in the trajectory: what was asked, what came back, what it cost. */
export type JudgeRecord = z.infer<typeof JudgeRecordSchema>;

export interface ScorerOutput extends ScorerResult {
  judge?: JudgeRecord;
}

export interface Scorer {
  readonly name: string;
  /** Whether the row asks for this scorer. */
  applies(input: ScoreInput): boolean;
  score(input: ScoreInput): Promise<ScorerOutput>;
}

export const scorers = createRegistry<Scorer>("scorer");

const expectedScorer: Scorer = {
  name: "expected",
  applies: (i) => i.expected !== undefined,
  async score(i) {
    const r = matchExpected(i.expected!, i.finalResponse);
    return { name: "expected", passed: r.passed, value: r.passed ? 1 : 0, reason: r.reason };
  },
};

const verifyScorer: Scorer = {
  name: "verify",
  applies: (i) => i.verify !== undefined,
  async score(i) {
    const v = i.verify!;
    if (v.exit_code === -1 && !v.timed_out) return { name: "verify", passed: null, value: null, reason: v.output };
    const reason = v.timed_out ? "verify timed out" : `verify exited ${v.exit_code}`;
    return {
      name: "verify",
      passed: v.passed,
      value: v.passed ? 1 : 0,
      reason,
      details: { exit_code: v.exit_code, output_tail: v.output.slice(-2000) },
    };
  },
};

const harborScorer: Scorer = {
  name: "harbor",
  applies: (i) => i.harbor !== undefined,
  async score(i) {
    const h = i.harbor!;
    const details = {
      ...(h.rewards ? { rewards: h.rewards } : {}),
      ...(h.source ? { source: h.source } : {}),
      ...(h.timed_out ? { timed_out: true } : {}),
      ...(h.output_tail ? { output_tail: h.output_tail } : {}),
    };
    if (h.reward === null) return { name: "harbor", passed: null, value: null, reason: h.reason, details };
    return { name: "harbor", passed: h.reward >= h.threshold, value: h.reward, reason: h.reason, details };
  },
};

export const JudgeAnswerSchema = z.object({
  score: z.number().min(0).max(1),
  passed: z.boolean(),
  reason: z.string(),
});

export const JUDGE_RESPONSE_SCHEMA = {
  name: "grade",
  schema: {
    type: "object",
    properties: {
      score: { type: "number", minimum: 0, maximum: 1 },
      passed: { type: "boolean" },
      reason: { type: "string" },
    },
    required: ["score", "passed", "reason"],
    additionalProperties: false,
  },
} as const;

export function judgeMessages(prompt: string, rubric: string, answer: string | null): JudgeRecord["messages"] {
  return [
    {
      role: "system",
      content:
        "You grade an AI agent's final answer against a rubric. Judge only what the answer says. Reply with a JSON object " +
        '{"score": number from 0 to 1, "passed": boolean, "reason": one or two sentences} and nothing else.',
    },
    {
      role: "user",
      content: `Task given to the agent:\n${prompt}\n\nRubric:\n${rubric}\n\nThe agent's final answer:\n${answer ?? "(no final answer)"}`,
    },
  ];
}

/** The judge's JSON answer, also when wrapped in a code fence or surrounded by prose. */
export function parseJudgeAnswer(text: string): z.infer<typeof JudgeAnswerSchema> | undefined {
  const candidates = [text.trim(), /```(?:json)?\s*([\s\S]*?)```/.exec(text)?.[1], /\{[\s\S]*\}/.exec(text)?.[0]];
  for (const c of candidates) {
    if (!c) continue;
    try {
      // Strict: an answer naming `passed` twice says two things, and is no grade.
      const parsed = JudgeAnswerSchema.safeParse(parseJsonStrict(c));
      if (parsed.success) return parsed.data;
    } catch {
      // not JSON: try the next form
    }
  }
  return undefined;
}

const rubricScorer: Scorer = {
  name: "rubric",
  applies: (i) => i.rubric !== undefined,
  async score(i) {
    if (!i.judge) return { name: "rubric", passed: null, value: null, reason: "no judge model configured" };
    const messages = judgeMessages(i.prompt, i.rubric!, i.finalResponse);
    const record: JudgeRecord = {
      model: i.judge.name,
      messages,
      answer: null,
      usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
    };
    try {
      const res = await i.judge.complete({
        messages,
        signal: i.signal,
        responseFormat: { type: "json_schema", json_schema: JUDGE_RESPONSE_SCHEMA },
      });
      record.answer = res.message.content;
      record.usage = res.usage;
      const grade = parseJudgeAnswer(res.message.content ?? "");
      if (!grade)
        return {
          name: "rubric",
          passed: null,
          value: null,
          reason: "the judge's answer was not the requested JSON",
          judge: { ...record, error: "unparsable answer" },
        };
      return { name: "rubric", passed: grade.passed, value: grade.score, reason: grade.reason, judge: record };
    } catch (err) {
      return {
        name: "rubric",
        passed: null,
        value: null,
        reason: `judge failed: ${errorMessage(err)}`,
        judge: { ...record, error: errorMessage(err) },
      };
    }
  },
};

scorers.register("expected", () => expectedScorer);
scorers.register("verify", () => verifyScorer);
scorers.register("rubric", () => rubricScorer);
scorers.register("harbor", () => harborScorer);

/** Runs every registered scorer the row asks for, in name order. */
export async function scoreTask(input: ScoreInput): Promise<ScorerOutput[]> {
  const out: ScorerOutput[] = [];
  for (const name of scorers.names()) {
    const scorer = await scorers.load(name);
    if (scorer.applies(input)) out.push(await scorer.score(input));
  }
  return out;
}

export { ExpectedSchema };
