import { describe, expect, it } from "vitest";
import { applyV4AHunks, parseV4APatch, V4AError } from "../tools/v4a_patch.js";

const patch = (...lines: string[]) => ["*** Begin Patch", ...lines, "*** End Patch"].join("\n");

describe("V4A patches", () => {
  it("parses every operation, several hunks and a blank context line", () => {
    const ops = parseV4APatch(
      patch(
        "*** Update File: a.py",
        "@@ class A:",
        " x = 1",
        "",
        "-y = 2",
        "+y = 3",
        "@@",
        "-z",
        "+w",
        "",
        "*** Delete File: b.py",
        "*** Add File: c.txt",
        "+hi",
        "+",
      ),
    );
    expect(ops).toEqual([
      {
        kind: "update",
        path: "a.py",
        hunks: [
          { anchor: "class A:", oldLines: ["x = 1", "", "y = 2"], newLines: ["x = 1", "", "y = 3"] },
          { anchor: "", oldLines: ["z"], newLines: ["w"] },
        ],
      },
      { kind: "delete", path: "b.py" },
      { kind: "add", path: "c.txt", content: "hi\n" }, // the lines joined, no final newline (as the original)
    ]);
  });

  it("refuses malformed patches with the line", () => {
    expect(() => parseV4APatch("*** Update File: a")).toThrow(V4AError);
    expect(() => parseV4APatch(patch("*** Frobnicate File: a"))).toThrow(/line 2: expected/);
    expect(() => parseV4APatch(patch("*** Update File: a", "?weird"))).toThrow(/line 3: a change line starts with/);
    expect(() => parseV4APatch(patch("*** Add File: a", "no plus"))).toThrow(/line 3: every line of an added file/);
    expect(() => parseV4APatch(["*** Begin Patch", "*** Delete File: a"].join("\n"))).toThrow(
      /ends with '\*\*\* End Patch'/,
    );
    expect(() => parseV4APatch(patch("*** Update File: a", " same"))).toThrow(/changes nothing/);
  });

  it("applies hunks in order, tolerating trailing and surrounding white space, keeping the final newline state", () => {
    const text = "def f():\n    return 1   \n\ndef g():\n    return 2\n";
    const [op] = parseV4APatch(
      patch("*** Update File: m.py", "-    return 1", "+    return 10", "@@ def g():", "-  return 2", "+    return 20"),
    );
    expect(applyV4AHunks("m.py", text, (op as { hunks: never[] }).hunks)).toBe(
      "def f():\n    return 10\n\ndef g():\n    return 20\n",
    );
    const [add] = parseV4APatch(patch("*** Update File: n.txt", "+appended"));
    expect(applyV4AHunks("n.txt", "a\nb", (add as { hunks: never[] }).hunks)).toBe("a\nb\nappended");
    expect(() => applyV4AHunks("m.py", text, [{ anchor: "", oldLines: ["nope"], newLines: ["x"] }])).toThrow(
      "m.py: hunk (no hint) not found \u2014 Could not find a match for old_string in the file",
    );
    // Lines the comparisons miss are matched as the original matches them (here: runs of blanks, smart quotes).
    const loose = [
      { anchor: "", oldLines: ["total = a + b"], newLines: ["total = a - b"] },
      { anchor: "g", oldLines: ['say "hi"'], newLines: ["say bye"] },
    ];
    expect(applyV4AHunks("t.txt", "total  =  a +\tb\nsay \u201chi\u201d\n", loose)).toBe("total = a - b\nsay bye\n");
    expect(() =>
      applyV4AHunks("t.txt", "x = 1\nx  = 1\n", [{ anchor: "", oldLines: ["x =   1"], newLines: ["y"] }]),
    ).toThrow(
      "t.txt: hunk (no hint) not found \u2014 Found 2 matches for old_string. Provide more context to make it unique, or use replace_all=True.",
    );
  });
});
