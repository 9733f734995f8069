/**
 * pyJsonText, the one-pass Python JSON of a JSON text, against the tree's way (parsePyJson + pyJsonDumps): the
 * same text for every input it takes, and no answer (the caller takes the tree's way) for the rest.
 */
import { describe, expect, it } from "vitest";
import { parsePyJson, pyJsonDumps, pyJsonText } from "../src/formats/py_json.js";

function treeWay(text: string): string | undefined {
  try {
    return pyJsonDumps(parsePyJson(text));
  } catch {
    return undefined;
  }
}

/** A small deterministic generator (no Math.random: a failure names its seed). */
function rng(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 2 ** 32;
  };
}

const STRINGS = ["", "a", "é日本", 'q"uote', "back\\slash", "tab\tnl\n", "\u0001", "\u2028", "😀", "\ud800", "/"];
const NUMBERS = [
  "0",
  "-0",
  "1",
  "-12",
  "1.0",
  "1.50",
  "2.5e-7",
  "1e3",
  "1E+16",
  "-0.0",
  "123456789012345678901234567890",
];

function randomJson(next: () => number, depth: number): string {
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(next() * xs.length)]!;
  const ws = () => pick(["", "", " ", "\n  ", "\t"]);
  const r = next();
  if (depth > 3 || r < 0.35) {
    const leaf = next();
    if (leaf < 0.4) return JSON.stringify(pick(STRINGS));
    if (leaf < 0.5) return `"${pick(["\\u00e9", "\\/", "\\ud83d\\ude00", "\\ud800", "x\\ny"])}"`;
    if (leaf < 0.8) return pick(NUMBERS);
    return pick(["true", "false", "null", "NaN", "Infinity", "-Infinity"]);
  }
  const n = Math.floor(next() * 4);
  if (r < 0.65) {
    const items = Array.from({ length: n }, () => `${ws()}${randomJson(next, depth + 1)}${ws()}`);
    return `[${items.join(",")}${n ? "" : ws()}]`;
  }
  const keys = Array.from({ length: n }, () => JSON.stringify(pick([...STRINGS, "k", "k2", "10", "__proto__"])));
  return `{${keys.map((k) => `${ws()}${k}${ws()}:${ws()}${randomJson(next, depth + 1)}${ws()}`).join(",")}}`;
}

describe("pyJsonText", () => {
  it("gives the tree's text for generated JSON, and no answer only for repeated keys or bad input", () => {
    let answered = 0;
    for (let seed = 1; seed <= 3000; seed++) {
      const text = randomJson(rng(seed), 0);
      const fast = pyJsonText(text);
      const tree = treeWay(text);
      if (fast !== undefined) {
        answered++;
        expect(fast, `seed ${seed}: ${text}`).toBe(tree);
      } else if (tree !== undefined) {
        // Only an object with a repeated key may take the tree's way.
        expect(text, `seed ${seed}`).toMatch(/"([^"\\]*)"\s*:[\s\S]*"\1"\s*:/);
      }
    }
    expect(answered).toBeGreaterThan(2000);
  });

  it("answers the usual shapes and leaves bad input and repeated keys to the tree", () => {
    expect(pyJsonText('{"a":1,"b":[1.0,2e3,{"c":"d\\n"}],"e":null}')).toBe(
      '{"a": 1, "b": [1.0, 2000.0, {"c": "d\\n"}], "e": null}',
    );
    expect(pyJsonText(" [ ] ")).toBe("[]");
    expect(pyJsonText('{"a": 1, "a": 2}')).toBeUndefined();
    expect(treeWay('{"a": 1, "a": 2}')).toBe('{"a": 2}');
    for (const bad of ["", "{", '{"a" 1}', "[1,]", "01", '"raw\u0001"', "[1] x", '"\\x"', "tru"])
      expect([bad, pyJsonText(bad)]).toEqual([bad, undefined]);
    expect(pyJsonText("[".repeat(100_000))).toBeUndefined();
  });
});
