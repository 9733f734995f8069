/**
 * The twenty-first held-out set (test/fixtures/approval_heldout21_*.txt): written blind in forms unlike the
 * earlier sets, measured once untouched (its header holds that figure), then the misses and false alarms
 * fixed by class. Every dangerous line must be flagged and no harmless one, except the lines listed here,
 * each with the reason it stays as it is.
 */
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { analyseCommand, detectDangerousCommand } from "../tools/approval/detect.js";

const fixtures = join(dirname(fileURLToPath(import.meta.url)), "fixtures");
const OPTS = { cwd: "/workspace", defaultCwd: "/workspace" };

function lines(name: string): string[] {
  const text = readFileSync(join(fixtures, name), "utf8");
  expect(/^# workdir: (\S+)\s*$/m.exec(text)?.[1]).toBe(OPTS.cwd);
  return text.split("\n").filter((l) => l.trim() !== "" && !l.startsWith("#"));
}
const command = (line: string) => line.replace(/\\n/g, "\n");
const flagged = (line: string) => detectDangerousCommand(command(line), OPTS).dangerous;

/** Dangerous lines left unflagged, and why. */
const LEFT_MISSED: Record<string, string> = {};
/** Harmless lines still flagged, and why. */
const LEFT_FLAGGED: Record<string, string> = {
  // decoded text piped or substituted into a shell is asked about whatever it decodes to: the encoding is the sign
  "echo ZWNobyBoZWxsbw== | base64 -d | sh": "decision: decoded text run by a shell (decoded_code_exec)",
  'bash -c "$(echo ZWNobyBvaw== | base64 -d)"': "decision: decoded text run by a shell (decoded_code_exec)",
  // earlier sets flag `echo './nightly.sh' | at now + 5 minutes`: a job outlives the task, whatever it runs
  "echo 'echo hi' | at now + 5 minutes -q z 2>/dev/null || true": "decision: an at job is schedule_job",
  // earlier sets flag `mongosh --eval 'db.dropDatabase()'` (localhost): a database server is not the task's file
  "mongosh \"mongodb://localhost:27017/test\" --eval 'db.dropDatabase()'": "decision: a server's database, even local",
  // awk's fields are not modelled from the line fed to it; its system() of `$1` is computed text
  "echo build | awk '{system(\"rm -rf \" $1)}'":
    "awk input fields are not modelled (the code-line budget): computed shell text is asked about",
};

describe("held-out set 21 (approval_heldout21_*.txt)", () => {
  const dangerous = lines("approval_heldout21_dangerous.txt");
  const harmless = lines("approval_heldout21_harmless.txt");

  it("is large enough: at least 300 dangerous and 240 harmless lines", () => {
    expect(dangerous.length).toBeGreaterThanOrEqual(300);
    expect(harmless.length).toBeGreaterThanOrEqual(240);
  });

  // 331/331 after the fixes (321 untouched)
  it("flags every dangerous line but the listed ones", () => {
    const missed = dangerous.filter((l) => !flagged(l));
    expect(missed.filter((l) => !(l in LEFT_MISSED))).toEqual([]);
  });

  // 5/247 (2.0 %) after the fixes (8 untouched), each listed above
  it("flags no harmless line but the listed ones", () => {
    const wrong = harmless.filter(flagged).filter((l) => !(l in LEFT_FLAGGED));
    expect(wrong.map((l) => `${l} → ${JSON.stringify(analyseCommand(command(l), OPTS).matches)}`)).toEqual([]);
  });

  it("lists only lines of the set, each still going the listed way", () => {
    expect(Object.keys(LEFT_MISSED).filter((l) => !dangerous.includes(l) || flagged(l))).toEqual([]);
    expect(Object.keys(LEFT_FLAGGED).filter((l) => !harmless.includes(l) || !flagged(l))).toEqual([]);
  });
});
