import { describe, expect, it } from "vitest";
import type { ChatModel, ChatRequest } from "../src/core/chat.js";
import { parseJudgeAnswer, scoreTask, scorers } from "../src/score/scorers.js";
import { combineScores } from "../src/score/summary.js";

function judge(answer: string | Error): ChatModel & { requests: ChatRequest[] } {
  const requests: ChatRequest[] = [];
  return {
    name: "judge-model",
    requests,
    async complete(req) {
      requests.push(req);
      if (answer instanceof Error) throw answer;
      return {
        message: { role: "assistant", content: answer },
        finishReason: "stop",
        usage: { prompt_tokens: 50, completion_tokens: 10, total_tokens: 60 },
      };
    },
  };
}

describe("scorers", () => {
  it("runs only the scorers a row names; all must pass", async () => {
    const out = await scoreTask({ prompt: "2+2?", finalResponse: "It is 4.", expected: { value: 4, match: "number" } });
    expect(out.map((s) => s.name)).toEqual(["expected"]);
    expect(combineScores(out).passed).toBe(true);
    const both = await scoreTask({
      prompt: "fix it",
      finalResponse: "done",
      expected: "done",
      verify: { command: "pytest", exit_code: 1, passed: false, output: "1 failed", timed_out: false },
    });
    expect(both.map((s) => [s.name, s.passed])).toEqual([
      ["expected", true],
      ["verify", false],
    ]);
    expect(both[1]!.reason).toBe("verify exited 1");
    expect(combineScores(both).passed).toBe(false);
    expect(await scoreTask({ prompt: "p", finalResponse: "x" })).toEqual([]);
  });

  it("a verify that could not run leaves the task unscored", async () => {
    const [v] = await scoreTask({
      prompt: "p",
      finalResponse: "x",
      verify: {
        command: "t",
        exit_code: -1,
        passed: false,
        output: "verify could not run: container gone",
        timed_out: false,
      },
    });
    expect(v).toMatchObject({ name: "verify", passed: null });
  });

  it("rubric: the judge is asked for a JSON-schema answer; its verdict, reason and tokens are recorded", async () => {
    const j = judge('{"score": 0.9, "passed": true, "reason": "correct and complete"}');
    const [r] = await scoreTask({ prompt: "Explain X", finalResponse: "X is …", rubric: "Must define X", judge: j });
    expect(r).toMatchObject({ name: "rubric", passed: true, value: 0.9, reason: "correct and complete" });
    expect(r!.judge).toMatchObject({
      model: "judge-model",
      answer: '{"score": 0.9, "passed": true, "reason": "correct and complete"}',
      usage: { total_tokens: 60 },
    });
    expect(j.requests[0]!.responseFormat?.type).toBe("json_schema");
    expect(j.requests[0]!.messages[1]!.content).toContain("Must define X");
  });

  it("rubric: a deny is a failure; garbage and an outage are unscored, never a 0", async () => {
    const [deny] = await scoreTask({
      prompt: "p",
      finalResponse: "a",
      rubric: "r",
      judge: judge('```json\n{"score": 0.1, "passed": false, "reason": "wrong"}\n```'),
    });
    expect(deny).toMatchObject({ passed: false, value: 0.1 });
    const [garbage] = await scoreTask({
      prompt: "p",
      finalResponse: "a",
      rubric: "r",
      judge: judge("I think it is fine!"),
    });
    expect(garbage).toMatchObject({ passed: null, value: null });
    expect(garbage!.judge!.error).toBe("unparsable answer");
    const [outage] = await scoreTask({
      prompt: "p",
      finalResponse: "a",
      rubric: "r",
      judge: judge(new Error("503 Service Unavailable")),
    });
    expect(outage).toMatchObject({ passed: null, reason: "judge failed: 503 Service Unavailable" });
    expect(combineScores([outage!]).passed).toBeNull();
    const [none] = await scoreTask({ prompt: "p", finalResponse: "a", rubric: "r" });
    expect(none).toMatchObject({ passed: null, reason: "no judge model configured" });
  });

  it("parses a judge answer inside prose, rejects out-of-range scores", () => {
    expect(parseJudgeAnswer('Here: {"score": 1, "passed": true, "reason": "ok"} done')).toEqual({
      score: 1,
      passed: true,
      reason: "ok",
    });
    expect(parseJudgeAnswer('{"score": 7, "passed": true, "reason": "ok"}')).toBeUndefined();
  });

  it("a plugin can register a scorer", async () => {
    scorers.register("length", () => ({
      name: "length",
      applies: (i) => i.finalResponse !== null,
      score: async (i) => ({ name: "length", passed: (i.finalResponse ?? "").length < 10, value: null }),
    }));
    const out = await scoreTask({ prompt: "p", finalResponse: "short" });
    expect(out).toEqual([{ name: "length", passed: true, value: null }]);
  });
});
