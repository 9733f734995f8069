/**
 * The rebuilt analyser's generic judges (tools/approval/next/: remote.ts, fetch_exec.ts, exfil.ts,
 * inline.ts): the examples their data tables carry must be flagged or passed as they say.
 */
import { describe, expect, it } from "vitest";
import { judgeCommand } from "../tools/approval/next/analyse.js";
import { ACCESS_EXAMPLES } from "../tools/approval/next/rules/access.js";
import { EXFIL_EXAMPLES } from "../tools/approval/next/rules/exfil.js";
import { FETCH_EXAMPLES } from "../tools/approval/next/rules/fetch.js";
import { INLINE_EXAMPLES } from "../tools/approval/next/rules/inline.js";
import { GENERIC_REMOTE_EXAMPLES } from "../tools/approval/next/rules/remote.js";

const inWorkspace = { cwd: "/workspace", defaultCwd: "/workspace" };
const tables = {
  "remote state": GENERIC_REMOTE_EXAMPLES,
  "fetched or decoded code": FETCH_EXAMPLES,
  exfiltration: EXFIL_EXAMPLES,
  "remote access": ACCESS_EXAMPLES,
  "inline interpreter code": INLINE_EXAMPLES,
};

describe("generic judges' examples", () => {
  for (const [name, examples] of Object.entries(tables)) {
    it(`${name}: must-flag examples are flagged`, () => {
      for (const command of examples.flag)
        expect({ command, dangerous: judgeCommand(command, inWorkspace).dangerous }).toEqual({
          command,
          dangerous: true,
        });
    });
    it(`${name}: must-pass examples pass`, () => {
      for (const command of examples.pass)
        expect({ command, dangerous: judgeCommand(command, inWorkspace).dangerous }).toEqual({
          command,
          dangerous: false,
        });
    });
  }
});

describe("SQLite inside the working directory", () => {
  it("passes SQL on a database file of the task and flags one outside it", () => {
    expect(judgeCommand('sqlite3 test.db "DROP TABLE users"', inWorkspace).dangerous).toBe(false);
    expect(judgeCommand('sqlite3 /var/lib/app/app.db "DROP TABLE users"', inWorkspace).dangerous).toBe(true);
  });
});
