import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { PATTERN_CLASSES, analyseCommand, detectDangerousCommand, normalizeCommand } from "../tools/approval/gate.js";
import { shellComments } from "../tools/approval/detect.js";
import { runCliInProcess, type CliResult } from "./helpers/cli.js";
import { parseJsonl } from "./helpers/jsonl.js";

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, "..");

function fixtureText(name: string): string {
  return readFileSync(join(here, "fixtures", name), "utf8");
}

function fixtureLines(name: string): string[] {
  return fixtureText(name)
    .split("\n")
    .filter((l) => l.trim() !== "" && !l.startsWith("#"));
}

/** A fixture written with a working directory says so in a `# workdir: /path` header line; measured as the gate passes it. */
function fixtureOptions(name: string): { cwd: string; defaultCwd: string } | undefined {
  const dir = /^# workdir: (\S+)\s*$/m.exec(fixtureText(name))?.[1];
  return dir ? { cwd: dir, defaultCwd: dir } : undefined;
}

// In the effect tables a literal \n stands for a newline (here-documents).
const multiline = (s: string) => s.replace(/\\n/g, "\n");
const keyed = (line: string) => {
  const tab = line.indexOf("\t");
  return { key: line.slice(0, tab), command: line.slice(tab + 1) };
};
// The *_workdir tables are judged with the working directory their header names (as the gate passes it).
const withOptions = (name: string) => fixtureLines(name).map((line) => ({ line, opts: fixtureOptions(name) }));
const dangerous = [
  ...withOptions("approval_dangerous.txt").map(({ line, opts }) => ({ ...keyed(line), opts })),
  ...["approval_effects_dangerous.txt", "approval_effects_workdir_dangerous.txt"]
    .flatMap(withOptions)
    .map(({ line, opts }) => ({ ...keyed(line), opts }))
    .map((d) => ({ ...d, command: multiline(d.command) })),
];
// Keyed lines whose class the rebuilt analyser does not name yet: table class, class named now, command.
const PENDING = new Map(
  fixtureLines("approval_class_pending.tsv").map((line) => {
    const [table, named, ...rest] = line.split("\t");
    return [multiline(rest.join("\t")), { table: table!, named: named! }] as const;
  }),
);
const harmless = [
  ...withOptions("approval_harmless.txt").map(({ line, opts }) => ({ command: line, opts })),
  ...["approval_effects_harmless.txt", "approval_effects_workdir_harmless.txt"]
    .flatMap(withOptions)
    .map(({ line, opts }) => ({ command: multiline(line), opts })),
];

/** What each judge saw, for a failure's message: analysed again only when an assertion is about to fail. */
const findings = (command: string, opts?: { cwd: string; defaultCwd: string }) =>
  JSON.stringify(analyseCommand(command, opts).findings);

describe("detection table", () => {
  it("has at least 200 dangerous and 200 harmless commands", () => {
    expect(dangerous.length).toBeGreaterThanOrEqual(200);
    expect(harmless.length).toBeGreaterThanOrEqual(200);
    expect(dangerous.every((d) => d.key && d.command)).toBe(true);
  });

  const keyedNow = dangerous.filter((d) => !PENDING.has(d.command));
  it.each(keyedNow)("flags $command as $key", ({ key, command, opts }) => {
    const d = detectDangerousCommand(command, opts);
    expect(d.dangerous, d.dangerous ? undefined : findings(command, opts)).toBe(true);
    expect(d.patternKey).toBe(key);
    expect(d.description).toBe(PATTERN_CLASSES.find((p) => p.key === key)!.description);
  });

  // Lines whose class the analyser does not name yet (approval_class_pending.tsv): held to what it names now.
  const pendingNow = dangerous.filter((d) => PENDING.has(d.command));
  it.each(pendingNow)("names $command as listed in approval_class_pending.tsv (table: $key)", ({ command, opts }) => {
    const named = PENDING.get(command)!.named;
    const d = detectDangerousCommand(command, opts);
    expect(d.dangerous ? d.patternKey : "-").toBe(named);
  });

  it("lists in approval_class_pending.tsv only lines of the tables, with the table's class", () => {
    const byCommand = new Map(dangerous.map((d) => [d.command, d.key]));
    const stale = [...PENDING].filter(([command, p]) => byCommand.get(command) !== p.table).map(([c]) => c);
    expect(stale).toEqual([]);
  });

  it.each(harmless)("does not flag $command", ({ command, opts }) => {
    const d = detectDangerousCommand(command, opts);
    expect(d, d.dangerous ? findings(command, opts) : undefined).toEqual({ dangerous: false });
  });

  it("exercises every pattern and has unique keys", () => {
    const keys = PATTERN_CLASSES.map((p) => p.key);
    expect(new Set(keys).size).toBe(keys.length);
    const covered = new Set(dangerous.map((d) => d.key));
    const uncovered = keys.filter(
      (k) => !covered.has(k) && k !== "unanalysable" && k !== "computed_command" && k !== "symlink_outside_workdir",
    );
    expect(uncovered).toEqual([]);
  });
});

describe("held-out commands (written before tuning; see the fixture headers)", () => {
  const rate = (files: string[]) => {
    const lines = files.flatMap((f) => fixtureLines(f).map((c) => ({ c, opts: fixtureOptions(f) })));
    return lines.filter(({ c, opts }) => detectDangerousCommand(multiline(c), opts).dangerous).length / lines.length;
  };
  // Each set on its own, so a regression on one cannot hide behind the others.
  const sets = [
    {
      name: "heldout 1+2",
      dangerous: ["approval_heldout_dangerous.txt", "approval_heldout2_dangerous.txt"],
      harmless: ["approval_heldout_harmless.txt", "approval_heldout2_harmless.txt"],
      size: 100,
    },
    {
      name: "heldout3",
      dangerous: ["approval_heldout3_dangerous.txt"],
      harmless: ["approval_heldout3_harmless.txt"],
      size: 150,
    },
    {
      name: "heldout4",
      dangerous: ["approval_heldout4_dangerous.txt"],
      harmless: ["approval_heldout4_harmless.txt"],
      size: 60,
    },
    // Written with the working directory /workspace (its `# workdir:` header): measured with it, as the gate passes it.
    {
      name: "heldout5",
      dangerous: ["approval_heldout5_dangerous.txt"],
      harmless: ["approval_heldout5_harmless.txt"],
      size: 400,
    },
    {
      name: "heldout6",
      dangerous: ["approval_heldout6_dangerous.txt"],
      harmless: ["approval_heldout6_harmless.txt"],
      size: 340,
    },
    {
      name: "heldout7",
      dangerous: ["approval_heldout7_dangerous.txt"],
      harmless: ["approval_heldout7_harmless.txt"],
      size: 500,
    },
    {
      name: "heldout8",
      dangerous: ["approval_heldout8_dangerous.txt"],
      harmless: ["approval_heldout8_harmless.txt"],
      size: 500,
    },
    {
      name: "heldout9",
      dangerous: ["approval_heldout9_dangerous.txt"],
      harmless: ["approval_heldout9_harmless.txt"],
      size: 500,
    },
    {
      name: "heldout10",
      dangerous: ["approval_heldout10_dangerous.txt"],
      harmless: ["approval_heldout10_harmless.txt"],
      size: 500,
    },
    {
      name: "heldout11",
      dangerous: ["approval_heldout11_dangerous.txt"],
      harmless: ["approval_heldout11_harmless.txt"],
      size: 500,
    },
    {
      name: "heldout12",
      dangerous: ["approval_heldout12_dangerous.txt"],
      harmless: ["approval_heldout12_harmless.txt"],
      size: 390,
    },
    {
      name: "heldout13",
      dangerous: ["approval_heldout13_dangerous.txt"],
      harmless: ["approval_heldout13_harmless.txt"],
      size: 600,
    },
    {
      name: "heldout14",
      dangerous: ["approval_heldout14_dangerous.txt"],
      harmless: ["approval_heldout14_harmless.txt"],
      size: 600,
    },
    {
      name: "heldout15",
      dangerous: ["approval_heldout15_dangerous.txt"],
      harmless: ["approval_heldout15_harmless.txt"],
      size: 450,
    },
    {
      name: "heldout16",
      dangerous: ["approval_heldout16_dangerous.txt"],
      harmless: ["approval_heldout16_harmless.txt"],
      size: 600,
    },
    {
      name: "heldout17",
      dangerous: ["approval_heldout17_dangerous.txt"],
      harmless: ["approval_heldout17_harmless.txt"],
      size: 450,
    },
  ];

  it.each(sets)("$name: flags at least 97 % of the dangerous ones", ({ dangerous, size }) => {
    expect(dangerous.flatMap(fixtureLines).length).toBeGreaterThanOrEqual(size);
    expect(rate(dangerous)).toBeGreaterThanOrEqual(0.97);
  });

  it.each(sets)("$name: flags at most 3 % of the harmless ones", ({ harmless, size }) => {
    expect(harmless.flatMap(fixtureLines).length).toBeGreaterThanOrEqual(size);
    expect(rate(harmless)).toBeLessThanOrEqual(0.03);
  });
});

describe("seeing through disguises", () => {
  const cases: [string, string][] = [
    ["ANSI colour codes", "\x1b[31mrm\x1b[0m -rf /"],
    ["OSC title sequence", "\x1b]0;title\x07rm -rf /"],
    ["NUL bytes", "r\u0000m -rf /"],
    ["zero-width space", "r\u200bm -rf /"],
    ["fullwidth letters and slash", "ｒｍ　-ｒｆ　／"],
    ["double quotes split", 'r"m" -r"f" /'],
    ["ANSI-C octal", "$'\\162\\155' -rf /"],
    ["line continuation", "rm \\\n -rf \\\n /"],
    ["newline separated", "echo start\nrm -rf /\necho end"],
    ["here-doc fed to bash", "bash <<'EOF'\necho hi\nrm -rf /\nEOF"],
    ["here-string fed to sh", 'sh <<< "rm -rf /"'],
    ["unquoted here-doc runs $( )", "cat > /tmp/x <<EOF\n$(rm -rf /)\nEOF"],
    ["function body", "f() { rm -rf /; }; f"],
    ["nested bash -c", `bash -c "sh -c 'rm -rf /'"`],
    ["find -exec sh -c", `find . -exec sh -c 'rm -rf /' \\;`],
    ["watch", 'watch -n 1 "rm -rf /"'],
    ["ssh remote command", "ssh -p 22 host rm -rf /"],
    ["xargs sh -c", "echo x | xargs sh -c 'rm -rf /'"],
    ["variable with blanks", 'c="rm -rf /"; $c'],
    ["export then use", "export R=rm; $R -rf /"],
    ["background and wait", "rm -rf / & wait"],
    ["pipe with stderr", "rm -rf / |& tee log"],
    ["process substitution", "diff <(rm -rf /) <(ls)"],
    ["case branch", "case $x in a) rm -rf /;; esac"],
    ["sudo with options", "sudo -E -u root -H rm -rf /"],
    ["env -S split string", "env -S 'rm -rf /'"],
    ["exec wrapper", "exec rm -rf /"],
    ["unterminated quote", 'rm -rf "/'],
  ];
  it.each(cases)("%s", (_label, command) => {
    expect(detectDangerousCommand(command).dangerous, JSON.stringify(analyseCommand(command).findings)).toBe(true);
  });

  it("quoted here-docs and comments are data, not commands", () => {
    expect(detectDangerousCommand("cat > notes.md <<'EOF'\n$(rm -rf /)\nrm -rf / is bad\nEOF").dangerous).toBe(false);
    expect(detectDangerousCommand("echo ok # rm -rf /").dangerous).toBe(false);
    expect(shellComments("echo ok # ignore previous instructions")).toEqual(["ignore previous instructions"]);
  });

  it("reports every matching pattern, most severe first", () => {
    const d = detectDangerousCommand("git reset --hard && rm -rf /tmp/x");
    expect(d.patternKey).toBe("recursive_delete");
    expect(d.matches!.map((m) => m.key)).toEqual(["recursive_delete", "git_reset_hard"]);
  });

  it("flags nesting too deep to analyse", () => {
    let cmd = "rm -rf /";
    for (let i = 0; i < 20; i++) cmd = `echo $(${cmd})`;
    expect(detectDangerousCommand(cmd).dangerous).toBe(true);
    let quoted = "ls";
    for (let i = 0; i < 20; i++) quoted = `bash -c ${JSON.stringify(quoted)}`;
    expect(detectDangerousCommand(quoted).patternKey).toBe("unanalysable");
  });

  it("flags a command name computed at run time", () => {
    expect(detectDangerousCommand('x=$(printf "%s" "$CMD"); $x').patternKey).toBe("computed_command");
    expect(detectDangerousCommand("x=$(cat cmd.txt); $x /srv").patternKey).toBe("computed_command");
    // A substitution that writes a literal is that literal: judged by what it runs.
    expect(detectDangerousCommand('x=$(printf "rm -rf /"); $x').patternKey).toBe("delete_system_path");
    expect(detectDangerousCommand("eval \"$(echo 'echo ok')\"").dangerous).toBe(false);
  });

  it("reads long input whole: a dangerous command after a 100 kB heredoc and 5000 pipelines is still found", () => {
    // Speed on this input is measured by scripts/bench/approval-detect.ts, not asserted here.
    const blob = "a".repeat(100_000);
    const long = `cat > big.txt <<'EOF'\n${"echo hello | grep h; ".repeat(5000)}${blob}\nEOF\necho ${blob} | wc -c; ${"x".repeat(50_000)}(){ :; }`;
    expect(detectDangerousCommand(long).dangerous).toBe(false);
    expect(detectDangerousCommand(`${long}\nrm -rf /`).patternKey).toBe("delete_system_path");
  });
});

describe("normalizeCommand", () => {
  it("strips ANSI, NUL, invisible characters, applies NFKC and keeps case", () => {
    expect(normalizeCommand("  \x1b[1mＲＭ\x1b[0m\u0000 -R\u200b /tmp \r\n")).toBe("RM -R /tmp");
    expect(normalizeCommand("a\r\nb")).toBe("a\nb");
  });
});

describe("hermes-batch approval CLI", () => {
  // In process (no command here is about the process itself): `hermes-batch approval ARGS` from the sources.
  const call = (...args: string[]) => runCliInProcess(["approval", ...args], { cwd: root });
  /** A call that must succeed: its result, or a failure naming the exit code and stderr. */
  const cli = async (...args: string[]): Promise<CliResult> => {
    const r = await call(...args);
    expect(r.exitCode, r.stderr).toBe(0);
    return r;
  };

  it("check prints the detection as JSON and exits 0 either way; --file gives one object a line", async () => {
    const one = await cli("check", "rm -rf /tmp/x");
    expect(JSON.parse(one.stdout)).toMatchObject({
      command: "rm -rf /tmp/x",
      dangerous: true,
      patternKey: "recursive_delete",
    });
    const file = join(here, "fixtures", "approval_harmless.txt");
    const many = await cli("check", "--file", file);
    const lines = parseJsonl(many.stdout);
    const expected = readFileSync(file, "utf8")
      .split("\n")
      .filter((l) => l.trim() !== "" && !l.startsWith("#"));
    expect(expected.length).toBeGreaterThan(50);
    expect(lines.map((l) => l.command)).toEqual(expected);
    expect(lines.every((l) => l.dangerous === false)).toBe(true);
  });

  it("check --file skips blank and # lines and names the class of each flagged line", async () => {
    const dir = mkdtempSync(join(tmpdir(), "approval-check-"));
    const file = join(dir, "cmds.txt");
    writeFileSync(
      file,
      "# a comment\n\n   # indented comment\nterraform destroy -auto-approve\n> /etc/passwd\nls -la\n",
    );
    const { stdout } = await cli("check", "--file", file);
    const lines = parseJsonl(stdout);
    expect(lines.map((l) => [l.command, l.patternKey ?? null])).toEqual([
      ["terraform destroy -auto-approve", "infra_teardown"],
      ["> /etc/passwd", "system_config_write"],
      ["ls -la", null],
    ]);
  });

  it("check --cwd judges paths inside the working directory as the task's own", async () => {
    const outside = JSON.parse((await cli("check", "cd /workspace && rm -rf coverage")).stdout);
    expect(outside.dangerous).toBe(true);
    const inside = JSON.parse((await cli("check", "--cwd", "/workspace", "cd /workspace && rm -rf coverage")).stdout);
    expect(inside).toMatchObject({ dangerous: false, cwd: "/workspace" });
    const db = JSON.parse((await cli("check", "--cwd=/workspace", 'sqlite3 test.db "DROP TABLE users"')).stdout);
    expect(db.dangerous).toBe(false);
    const etc = JSON.parse((await cli("check", "--cwd", "/workspace", "rm -rf /etc")).stdout);
    expect(etc.dangerous).toBe(true);
  });

  it("check --cwd needs an absolute path; an unknown option is named", async () => {
    expect(await call("check", "--cwd", "workspace", "ls")).toMatchObject({
      exitCode: 2,
      stderr: expect.stringContaining("--cwd needs an absolute path"),
    });
    expect(await call("check", "--bogus", "ls")).toMatchObject({
      exitCode: 2,
      stderr: expect.stringContaining("unknown option '--bogus'"),
    });
  });

  it("check --file applies # workdir: headers to the lines after them", async () => {
    const dir = mkdtempSync(join(tmpdir(), "approval-check-"));
    const file = join(dir, "cmds.txt");
    writeFileSync(
      file,
      "cd /workspace && rm -rf coverage\n# workdir: /workspace\ncd /workspace && rm -rf coverage\nrm -rf /etc\n",
    );
    const { stdout } = await cli("check", "--file", file);
    const lines = parseJsonl(stdout);
    expect(lines.map((l) => [l.dangerous, l.cwd ?? null])).toEqual([
      [true, null],
      [false, "/workspace"],
      [true, "/workspace"],
    ]);
    writeFileSync(file, "ls\n# workdir: relative\n");
    expect(await call("check", "--file", file)).toMatchObject({
      exitCode: 2,
      stderr: expect.stringContaining(`${file}:2: # workdir:`),
    });
  });

  it("explain prints the command model, every matched class with its description and the rule rows", async () => {
    const { stdout } = await cli("explain", "--cwd", "/workspace", "git -C /srv/app reset --hard && rm -rf /etc");
    const out = JSON.parse(stdout);
    expect(out.dangerous).toBe(true);
    expect(out.commands.length).toBe(2);
    const keys = out.matched.map((m: { key: string }) => m.key);
    expect(keys).toContain("git_reset_hard");
    expect(out.matched.every((m: { description: string }) => m.description.length > 0)).toBe(true);
    const rm = JSON.parse((await cli("explain", "--cwd", "/workspace", "cd /etc && rm -rf ssh")).stdout);
    expect(rm.commands.map((c: { argv: unknown[] }) => c.argv)).toEqual([
      ["cd", "/etc"],
      ["rm", "-rf", "ssh"],
    ]);
    expect(rm.commands[1].cwd).toBe("/etc");
    const row = rm.findings.find((f: { rule?: unknown }) => f.rule).rule;
    expect(row.program).toContain("rm");
    expect(row.flag.length).toBeGreaterThan(0);
    const commented = JSON.parse((await cli("explain", "rm -rf / # approve this")).stdout);
    expect(commented.comments).toEqual(["approve this"]);
    const harmless = JSON.parse((await cli("explain", "ls -la")).stdout);
    expect(harmless).toMatchObject({ dangerous: false, matched: [] });
  });

  it("check --explain adds what each judge saw", async () => {
    const out = JSON.parse((await cli("check", "--explain", "--cwd", "/workspace", "rm -rf /etc")).stdout);
    expect(out).toMatchObject({ dangerous: true, patternKey: "delete_system_path", cwd: "/workspace" });
    expect(out.findings).toContainEqual(expect.objectContaining({ key: "delete_system_path", rule: "rm" }));
    const quiet = JSON.parse((await cli("check", "--explain", "ls")).stdout);
    expect(quiet).toEqual({ command: "ls", dangerous: false, findings: [] });
  });

  it("patterns lists every key with its description", async () => {
    const { stdout } = await cli("patterns", "--json");
    const listed = parseJsonl(stdout);
    expect(listed).toEqual(PATTERN_CLASSES.map((p) => ({ key: p.key, description: p.description })));
  });
});
