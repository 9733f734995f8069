/** Parsing that refuses ambiguity (duplicate keys) and scrubbing of URL credentials: the small pure helpers. */
import { describe, expect, it } from "vitest";
import { DuplicateKeyError, parseJsonStrict } from "../src/core/strict_json.js";
import { credentialValues, scrubUrlCredentials, splitUrlCredentials } from "../src/core/url_credentials.js";
import { parseJudgeAnswer } from "../src/score/scorers.js";
import { expandEnvReferences } from "../src/core/env_refs.js";
import { isShowableHeaderValue, publicHeaders } from "../src/config/headers.js";

describe("parseJsonStrict", () => {
  it("parses what JSON.parse parses when no object repeats a key", () => {
    for (const t of [
      '{"a":1,"b":{"a":2},"c":[{"a":3},{"a":4}]}',
      '["a","a"]',
      '{"a":"x\\"y","b":"}"}',
      "3",
      '{"k":{"k":{"k":1}}}',
    ]) {
      expect(parseJsonStrict(t)).toEqual(JSON.parse(t));
    }
  });
  it("refuses a repeated key at any depth, also when spelled with escapes", () => {
    for (const [t, key] of [
      ['{"decision":"approve","decision":"deny"}', "decision"],
      ['{"x":[{"a":1,"b":2,"a":3}]}', "a"],
      ['{"dec\\u0069sion":"deny","decision":"approve"}', "decision"],
      ['{"a":{"b":1},"c":2,"a":1}', "a"],
    ] as const) {
      expect(() => parseJsonStrict(t)).toThrow(DuplicateKeyError);
      expect(() => parseJsonStrict(t)).toThrow(`duplicate key ${JSON.stringify(key)}`);
    }
  });
  it("invalid JSON fails as JSON.parse does", () => {
    expect(() => parseJsonStrict("{decision: approve}")).toThrow(SyntaxError);
  });
  it("a judge answer with a duplicate key is no grade", () => {
    expect(parseJudgeAnswer('{"score": 1, "passed": true, "reason": "ok"}')).toMatchObject({ passed: true });
    expect(parseJudgeAnswer('{"score": 0, "passed": false, "reason": "bad", "passed": true}')).toBeUndefined();
    expect(
      parseJudgeAnswer('Here: ```json\n{"score": 0, "passed": false, "passed": true, "reason": "x"}\n```'),
    ).toBeUndefined();
  });
});

describe("URL credentials", () => {
  it("are split off, decoded, and scrubbed from text; a user name alone is kept", () => {
    expect(splitUrlCredentials("http://al%40ice:p%3Aw@127.0.0.1:8/v1")).toEqual({
      url: "http://127.0.0.1:8/v1",
      username: "al@ice",
      password: "p:w",
    });
    expect(splitUrlCredentials("http://u:p@127.0.0.1:8")).toMatchObject({ url: "http://127.0.0.1:8" });
    expect(splitUrlCredentials("http://127.0.0.1:8/v1")).toEqual({ url: "http://127.0.0.1:8/v1" });
    expect(scrubUrlCredentials("GET https://u:secret@h/v1 and ssh://git@github.com/x")).toBe(
      "GET https://<redacted>@h/v1 and ssh://git@github.com/x",
    );
    expect(credentialValues("http://al%40ice:p%3Aw@h/v1")).toEqual(
      expect.arrayContaining(["p%3Aw", "p:w", "al@ice:p:w", Buffer.from("al@ice:p:w").toString("base64")]),
    );
  });
});

describe("header values", () => {
  it("${VAR} is read from the environment; a missing one names itself", () => {
    expect(expandEnvReferences("Bearer ${A}-${B}", { A: "x", B: "y" }, "w")).toBe("Bearer x-y");
    expect(() => expandEnvReferences("${MISSING}", {}, "--header 'X'")).toThrow(
      "--header 'X': environment variable MISSING is not set",
    );
    expect(() => expandEnvReferences("${EMPTY}", { EMPTY: "" }, "w")).toThrow("EMPTY is not set");
  });
  it("only pure references (after one scheme word) are shown; literal values are redacted", () => {
    expect(isShowableHeaderValue("${KEY}")).toBe(true);
    expect(isShowableHeaderValue("Bearer ${KEY}")).toBe(true);
    expect(isShowableHeaderValue("sk-live-${KEY}")).toBe(false);
    expect(isShowableHeaderValue("literal")).toBe(false);
    expect(publicHeaders({ A: "Bearer ${K}", B: "secret ${K} tail" })).toEqual({ A: "Bearer ${K}", B: "<redacted>" });
  });
});
