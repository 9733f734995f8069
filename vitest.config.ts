import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";
import SuiteSequencer from "./test/setup/sequencer.js";

/**
 * The suite in five projects, by what a file needs (`npm test` runs them all, `npm run test:unit` the first):
 *  - unit: in process, from the sources: no build, no Docker, no sandbox or CLI child process (< 60 s on 2 cores);
 *    its files share their worker processes (isolate: false: each file's imports are not loaded again, less than
 *    half the CPU), so a unit test file leaves no global state behind: registries, process.env, timers, cwd;
 *  - cli: child processes: the built CLI (`dist/`), the CLI from the sources (tsx), local sandboxes, MCP servers;
 *    a file in none of the lists lands here (the safe default: it gets the build); its files share their worker
 *    processes too (each would otherwise start a process and load vitest, the helpers and the CLI's modules again:
 *    ~1 s of CPU a file), so the same rule holds: a file restores what it changes (process.env, cwd, timers);
 *  - docker: needs the Docker engine and the test images (every file importing test/helpers/docker.ts); its files
 *    share their worker processes too, each starting as in a process of its own (test/setup/docker_file.ts);
 *  - browser: drives Debian's chromium;
 *  - cluster: the one-node Slurm cluster.
 * The projects that need the build get it from test/setup/build.ts, once per `vitest` process and only when a
 * source is newer than `dist/`; the docker project gets the engine and the images from test/setup/docker.ts, once.
 */
const files = (...names: string[]) => names.map((n) => `test/${n}.test.ts`);

const UNIT = files(
  "abort",
  "agent_loop",
  "atif",
  "approval_bypass",
  "approval_effects",
  "approval_policy",
  "approval_rules",
  "approval_smart",
  "approval_structure",
  "build_test_image",
  "cli_summaries",
  "command_stop",
  "compare",
  "config",
  "core_gates",
  "dataset",
  "discovery",
  "distributions",
  "docker_retry",
  "docs_match",
  "early_stop",
  "export_curate",
  "formats",
  "jsonl_file",
  "lazy_schemas",
  "gateway_client",
  "import_rules",
  "library_console",
  "llm_client",
  "mcp_config",
  "model_transport",
  "model_tools",
  "paired_stats",
  "pipeline",
  "progress",
  "py_json",
  "reasoning",
  "records",
  "report_html",
  "registry",
  "run_lock",
  "run_options",
  "sandbox_gates",
  "scheduler",
  "score_metrics",
  "score_criteria",
  "scorers",
  "shell_session",
  "spawn_helper",
  "start_turns",
  "statistics",
  "strict_json",
  "task_outcome",
  "token_totals",
  "tool_batch_deep",
  "tool_name_repair",
  "tool_stats_keys",
  "trajectory_line",
  "tools_agent_web",
  "toolsets",
  "unified_diff",
  "v4a_patch",
);
// Every file that takes the Docker test images (test/helpers/docker.ts, or tool_environments.ts, which takes them)
// needs the engine: found, not listed.
const TEST_DIR = fileURLToPath(new URL("test/", import.meta.url));
const TAKES_IMAGES = ["./helpers/docker.js", "./helpers/tool_environments.js"];
const DOCKER = readdirSync(TEST_DIR)
  .filter((f) => {
    if (!f.endsWith(".test.ts")) return false;
    const text = readFileSync(join(TEST_DIR, f), "utf8");
    return TAKES_IMAGES.some((helper) => text.includes(helper));
  })
  .map((f) => `test/${f}`);
const BROWSER = files("report_browser", "view_runs");
const CLUSTER = files("slurm_e2e", "shards_h4_slurm");

const BUILD = "test/setup/build.ts";
const TMP = "test/setup/tmp_dir.ts";

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: "forks",
    // The built CLI, when a test calls its `main` in process (test/helpers/cli.ts): loaded by Node, not transformed.
    server: { deps: { external: [/\/dist\/src\//] } },
    fileParallelism: true,
    // Four files at a time on 2 cores: the docker, cluster and browser files mostly wait (on the engine, Slurm,
    // chromium, a scripted model's latency), and test/setup/sequencer.ts starts them beside the files that compute.
    // Three left the cores idle at times (vitest 374.6 s against 334.2 s with four, one clone each); four was given
    // up once because the local fork-bomb test's outcome depended on the load, which it no longer does.
    maxWorkers: 4,
    sequence: { sequencer: SuiteSequencer },
    projects: [
      { extends: true, test: { name: "unit", include: UNIT, isolate: false, globalSetup: [TMP] } },
      {
        extends: true,
        test: {
          name: "cli",
          include: ["test/**/*.test.ts"],
          exclude: [...UNIT, ...DOCKER, ...BROWSER, ...CLUSTER],
          globalSetup: [TMP, BUILD],
          isolate: false,
          // A test here chains up to four CLI runs; at a load of 20 on 2 cores one run can take 15 s.
          testTimeout: 180_000,
        },
      },
      {
        extends: true,
        test: {
          name: "docker",
          include: DOCKER,
          globalSetup: [TMP, BUILD, "test/setup/docker.ts"],
          isolate: false,
          setupFiles: ["test/setup/docker_file.ts"],
        },
      },
      { extends: true, test: { name: "browser", include: BROWSER, globalSetup: [TMP, BUILD] } },
      { extends: true, test: { name: "cluster", include: CLUSTER, globalSetup: [TMP, BUILD] } },
    ],
  },
});
