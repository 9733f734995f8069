/**
 * The info commands, run as real processes: the built CLI (`node dist/src/cli.js …`) from a temporary project
 * folder holding a plugin (so the assertions do not depend on which built-in tools exist yet).
 */
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { prepareDistribution, registerDistribution, resetExtraDistributions } from "../toolset_distributions.js";
import { registerToolset, resetToolsets } from "../tools/toolsets.js";

const ROOT = join(import.meta.dirname, "..");
const CLI = join(ROOT, "dist", "src", "cli.js");
const FIXTURES = join(ROOT, "test", "fixtures", "distributions");

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

let project: string;
let home: string;

function run(args: string[]): Promise<Result> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [CLI, ...args],
      { cwd: project, env: { ...process.env, HOME: home, NO_COLOR: "1" }, timeout: 90_000 },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === "number" ? err.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

const PLUGIN = `const { registry } = globalThis.hermesBatch;
const schema = (name) => ({ name, description: "CLI test tool.", parameters: { type: "object", properties: {} } });
registry.register({ name: "hbtest_echo", toolset: "hbtest", schema: schema("hbtest_echo"), handler: () => "{}" });
registry.register({
  name: "hbtest_locked", toolset: "hbtest", schema: schema("hbtest_locked"), handler: () => "{}",
  checkFn: () => false,
});
`;

const MIX = { description: "CLI test mix", toolsets: { hbtest: 100, vision: 0 } };

const COMMANDS = {
  tools: ["tools"],
  toolsJson: ["tools", "--json", "--toolsets", "hbtest,vision"],
  toolsets: ["toolsets"],
  toolsetsOne: ["toolsets", "hbtest", "--json"],
  toolsetsBad: ["toolsets", "nope"],
  dists: ["distributions", "--distribution-file", "mix.yaml"],
  distOne: ["distributions", "minimal", "--json"],
  distBad: ["distributions", "nope"],
  distBadYaml: ["distributions", "--distribution-file", join(FIXTURES, "bad_yaml.yaml")],
  sample: [
    "sample",
    "--distribution",
    "cli_mix",
    "--seed",
    "5",
    "-n",
    "12",
    "--distribution-file",
    "mix.yaml",
    "--json",
  ],
  sampleText: ["sample", "--distribution", "cli_mix", "--seed", "5", "-n", "3", "--distribution-file", "mix.yaml"],
  sampleBadN: ["sample", "-n", "abc"],
  sampleNothing: ["sample", "--distribution", "browser_only", "-n", "2", "--seed", "1"],
} as const;

const results = {} as Record<keyof typeof COMMANDS, Result>;

beforeAll(async () => {
  project = mkdtempSync(join(tmpdir(), "hb-cli-project-"));
  home = mkdtempSync(join(tmpdir(), "hb-cli-home-"));
  mkdirSync(join(project, ".hermes-batch", "plugins"), { recursive: true });
  writeFileSync(join(project, ".hermes-batch", "plugins", "hbtest_plugin.mjs"), PLUGIN);
  writeFileSync(
    join(project, "mix.yaml"),
    `cli_mix:\n  description: ${MIX.description}\n  toolsets:\n    hbtest: 100\n    vision: 0\n`,
  );
  // Two processes at a time: the machine has two cores.
  const queue = Object.entries(COMMANDS) as [keyof typeof COMMANDS, readonly string[]][];
  const worker = async () => {
    for (let next = queue.shift(); next; next = queue.shift()) results[next[0]] = await run([...next[1]]);
  };
  await Promise.all([worker(), worker()]);
}, 300_000);

afterAll(() => {
  rmSync(project, { recursive: true, force: true });
  rmSync(home, { recursive: true, force: true });
});

function oneLineError(r: Result, pattern: RegExp): void {
  expect(r.code).toBe(2);
  expect(r.stdout).toBe("");
  const lines = r.stderr
    .trim()
    .split("\n")
    .filter((l) => !l.startsWith("warning:"));
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(pattern);
}

describe("hermes-batch tools", () => {
  it("prints a table with availability and reasons, plugin tools included", () => {
    const r = results.tools;
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.split("\n");
    expect(lines[0]).toMatch(/^TOOL\s+TOOLSET\s+AVAILABLE\s+WHY NOT$/);
    expect(lines.find((l) => l.startsWith("hbtest_echo "))).toMatch(/^hbtest_echo\s+hbtest\s+yes$/);
    expect(lines.find((l) => l.startsWith("hbtest_locked "))).toMatch(/^hbtest_locked\s+hbtest\s+no\s+check failed$/);
    expect(lines.find((l) => l.startsWith("vision_analyze "))).toMatch(/vision\s+no\s+not provided by this build$/);
    expect(r.stdout).toMatch(/\d+ of \d+ tools available/);
  });

  it("--json with --toolsets gives just those tools", () => {
    const r = results.toolsJson;
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual([
      { tool: "hbtest_echo", toolset: "hbtest", registered: true, available: true, reason: null },
      { tool: "hbtest_locked", toolset: "hbtest", registered: true, available: false, reason: "check failed" },
      {
        tool: "vision_analyze",
        toolset: "vision",
        registered: false,
        available: false,
        reason: "not provided by this build",
      },
    ]);
  });
});

describe("hermes-batch toolsets", () => {
  it("lists toolsets with availability, resolved tools and legacy names", () => {
    const r = results.toolsets;
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.split("\n")[0]).toMatch(/^TOOLSET\s+AVAILABLE\s+DESCRIPTION$/);
    expect(r.stdout).toMatch(/^hbtest\s+partly \(1\/2\)\s+Tools registered in toolset 'hbtest'$/m);
    expect(r.stdout).toMatch(/^\s+tools: hbtest_echo, hbtest_locked$/m);
    expect(r.stdout).toMatch(/^vision\s+no \(not provided\)/m);
    expect(r.stdout).toMatch(
      /^debugging\s+.*\n\s+tools: patch, process, read_file, search_files, terminal, web_extract, web_search, write_file$/m,
    );
    expect(r.stdout).toContain("web_tools→web");
  });

  it("shows one toolset as JSON", () => {
    const r = results.toolsetsOne;
    expect(r.code, r.stderr).toBe(0);
    const info = JSON.parse(r.stdout);
    expect(info.name).toBe("hbtest");
    expect(info.resolvedTools).toEqual(["hbtest_echo", "hbtest_locked"]);
    expect(info.tools.map((t: { available: boolean }) => t.available)).toEqual([true, false]);
  });

  it("exits 2 with one line for an unknown toolset", () => {
    oneLineError(results.toolsetsBad, /^hermes-batch toolsets: Unknown toolset: nope\. Known toolsets: .*hbtest/);
  });
});

describe("hermes-batch distributions", () => {
  it("lists every distribution sorted, probabilities descending, unavailable toolsets marked", () => {
    const r = results.dists;
    expect(r.code, r.stderr).toBe(0);
    const names = [...r.stdout.matchAll(/^(\S+): /gm)].map((m) => m[1]);
    expect(names).toHaveLength(18);
    expect(names).toEqual([...names].sort());
    expect(names).toContain("mixed_tasks");
    expect(r.stdout).toMatch(
      /^cli_mix: CLI test mix {2}\[from mix\.yaml\]\n {2}hbtest +100%\n {2}vision +0% {2}\(not provided here: drawn, offers no tool\)$/m,
    );
    expect(r.stdout).toMatch(/^browser_only: .*\n {2}browser +100% {2}\(not provided here: drawn, offers no tool\)$/m);
    expect(r.stdout).toMatch(
      /^reasoning: Heavy mixture of agents usage with minimal other tools\n {2}moa +90%.*\n {2}web +30%.*\n {2}terminal +20%/m,
    );
  });

  it("shows one distribution as JSON", () => {
    const r = results.distOne;
    expect(r.code, r.stderr).toBe(0);
    const view = JSON.parse(r.stdout);
    expect(view.name).toBe("minimal");
    expect(view.source).toBe("built-in");
    expect(view.toolsets).toHaveLength(1);
    expect(view.toolsets[0]).toMatchObject({ toolset: "web", probability: 100 });
  });

  it("exits 2 with one line for an unknown distribution or a bad YAML file", () => {
    oneLineError(
      results.distBad,
      /^hermes-batch distributions: Unknown distribution: nope\. Available: balanced, browser_only, /,
    );
    oneLineError(results.distBadYaml, /^hermes-batch distributions: .*bad_yaml\.yaml:4: invalid YAML: /);
  });
});

describe("hermes-batch sample", () => {
  it("shows seeded draws for task_0.., equal to the in-process sampler's, with one warning", () => {
    const r = results.sample;
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out).toMatchObject({ distribution: "cli_mix", seed: "5", epoch: 0, unprovided: ["vision"] });
    expect(out.draws.map((d: { task_id: string }) => d.task_id)).toEqual(
      Array.from({ length: 12 }, (_, i) => `task_${i}`),
    );

    // The in-process twin is registered for this comparison only: the cli project's files share their process.
    registerToolset("hbtest", { description: "in-process twin of the plugin toolset", tools: ["hbtest_echo"] });
    registerDistribution("cli_mix", MIX);
    let expected: { task_id: string; toolsets: string[] }[];
    try {
      const sampler = prepareDistribution("cli_mix", { available: new Set(["hbtest"]) });
      expected = Array.from({ length: 12 }, (_, i) => ({
        task_id: `task_${i}`,
        toolsets: sampler.sample({ seed: 5, taskId: `task_${i}` }),
      }));
    } finally {
      resetToolsets();
      resetExtraDistributions();
    }
    expect(out.draws).toEqual(expected);
    for (const d of out.draws) expect(d.toolsets).toEqual(["hbtest"]);
    const notes = r.stderr.split("\n").filter((l) => l.includes("does not provide"));
    expect(notes).toEqual([
      "note: distribution 'cli_mix' includes vision, which this build does not provide: they are drawn and recorded in toolsets_used as in Hermes, and offer no tool (toolsets_offered lists what a task got)",
    ]);
  });

  it("prints a readable table", () => {
    const r = results.sampleText;
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(
      "distribution cli_mix, seed 5, epoch 0\ntask_0  hbtest\ntask_1  hbtest\ntask_2  hbtest\n",
    );
    expect(r.stdout).toMatch(/hbtest +3\/3 {2}\(100%\)/);
    expect(r.stdout).toMatch(/vision +0\/3 {2}\(0%\) {2}not provided here: offers no tool/);
  });

  it("exits 2 for a bad flag", () => {
    oneLineError(results.sampleBadN, /^hermes-batch sample: -n must be a whole number, got 'abc'$/);
  });

  it("draws a distribution with nothing this build provides (its tasks run without tools), saying so", () => {
    const r = results.sampleNothing;
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("task_0  browser\ntask_1  browser\n");
    expect(r.stderr).toContain(
      "note: distribution 'browser_only' has no toolset this build provides (browser): they are drawn and recorded in toolsets_used as in Hermes, and every task runs without tools",
    );
  });
});
