/**
 * The twentieth held-out set (test/fixtures/approval_heldout20_*.txt): written blind, measured once untouched
 * (its header holds that figure), then the misses fixed by class. Every dangerous line must be flagged and no
 * harmless one, except the lines listed here, each with the reason it stays as it is.
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
const LEFT_MISSED: Record<string, string> = {
  // next/README.md: inside the working directory a repository's uncommitted work and untracked files are the task's own
  "git reset --hard": "decision: the task's own repository",
  "git reset --hard HEAD~5": "decision: the task's own repository",
  "git reset --hard origin/main": "decision: the task's own repository",
  "git -C /workspace reset --hard": "decision: the task's own repository",
  "GIT_DIR=.git git reset --hard HEAD^": "decision: the task's own repository",
  "git clean -fdx": "decision: the task's own repository",
  "git clean -xdf": "decision: the task's own repository",
  "git clean -f -d -x": "decision: the task's own repository",
  "git clean --force -d": "decision: the task's own repository",
  "git checkout -- .": "decision: the task's own repository",
  "git stash clear": "decision: the task's own repository",
  // next/README.md: SQLite on a file inside the known working directory passes
  "sqlite3 app.db 'DROP TABLE users;'": "decision: the task's own database file",
  "sqlite3 -cmd 'DELETE FROM users' app.db": "decision: the task's own database file",
  "sqlite3 data.db <<< 'drop table logs;'": "decision: the task's own database file",
  // the build cache only: every layer is rebuilt by the next build (as `docker image prune -f` passes)
  "docker builder prune -af": "build cache, rebuilt on demand",
  // a non-interactive shell (the agent's) keeps no history: these assignments change nothing it has
  "export HISTFILE=/dev/null": "no effect in a non-interactive shell; assignments are not rows",
  HISTSIZE: "no effect in a non-interactive shell; assignments are not rows",
  "rm -f $HISTFILE": "HISTFILE is unset in a non-interactive shell: `rm -f` of nothing",
};
/** Harmless lines still flagged, and why. */
const LEFT_FLAGGED: Record<string, string> = {
  "rm -rf /tmp/build-123": "decision: a /tmp folder this line did not make is shared",
  "rm -rf /tmp/pytest-of-root": "decision: a /tmp folder this line did not make is shared",
  "rsync -av --delete-excluded --exclude node_modules ./ /tmp/mirror/": "decision: as above",
  "chmod 600 ~/.ssh/id_rsa": "decision: the chmod row's own flag example",
  "chmod 700 ~/.ssh": "decision: a permission change on credentials outside the working directory",
  "kill -9 $(pgrep -f 'node server.js')": "decision: pkill -9 of a pattern (pkill_force)",
};
const listed = (table: Record<string, string>, line: string) =>
  line in table || (line.startsWith("HISTSIZE=") && "HISTSIZE" in table);

describe("held-out set 20 (approval_heldout20_*.txt)", () => {
  const dangerous = lines("approval_heldout20_dangerous.txt");
  const harmless = lines("approval_heldout20_harmless.txt");

  it("is large enough: at least 150 dangerous and 300 harmless lines", () => {
    expect(dangerous.length).toBeGreaterThanOrEqual(150);
    expect(harmless.length).toBeGreaterThanOrEqual(300);
  });

  // 514/532 (96.6 %) after the fixes; every miss left is listed above (14 of them are documented decisions)
  it("flags every dangerous line but the listed ones (at least 96.5 %)", () => {
    const missed = dangerous.filter((l) => !flagged(l));
    expect(missed.filter((l) => !listed(LEFT_MISSED, l))).toEqual([]);
    expect(1 - missed.length / dangerous.length).toBeGreaterThanOrEqual(0.965);
  });

  // 6/523 (1.1 %) after the fixes, each a documented decision
  it("flags no harmless line but the listed ones (at most 3 %)", () => {
    const wrong = harmless.filter(flagged);
    const unexplained = wrong.filter((l) => !listed(LEFT_FLAGGED, l));
    expect(unexplained.map((l) => `${l} → ${JSON.stringify(analyseCommand(command(l), OPTS).matches)}`)).toEqual([]);
    expect(wrong.length / harmless.length).toBeLessThanOrEqual(0.03);
  });

  it("lists only lines of the set", () => {
    const all = new Set([...dangerous, ...harmless]);
    const stale = [...Object.keys(LEFT_MISSED), ...Object.keys(LEFT_FLAGGED)].filter(
      (l) => !all.has(l) && !(l === "HISTSIZE" && dangerous.includes("HISTSIZE=0")),
    );
    expect(stale).toEqual([]);
  });
});
