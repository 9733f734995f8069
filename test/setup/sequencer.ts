/**
 * The order `npm test` starts its files in (vitest's own order runs the projects one after the other, by name, and
 * a fresh clone has no durations to sort by): the files that mostly wait (the Slurm cluster, Docker, the browser)
 * start beside the ones that keep the CPU busy (the `cli` project's child processes and in-process runs), so
 * neither kind leaves the cores or the worker slots idle, and each kind runs its longest files first (a list of
 * the known ones, then by size) so that no long file starts last. The `unit` files come at the end, together:
 * they share worker processes (isolate: false) and take a few seconds in all.
 */
import { statSync } from "node:fs";
import { BaseSequencer, type TestSpecification } from "vitest/node";

/**
 * Files that took longest in CI runs (mean file duration in 7 fresh-clone runs of 270-290 s, 10-53 s each, longest
 * first): started first among their kind. A long file started late is the suite's tail: in those runs
 * local_sandbox (26 s) started at 123 s, run_sandbox_limits (24 s) at 161 s, run_docker_engine_faults (20 s) at
 * 211 s and run_time_limit (16 s) at 234 s, each placed by its size alone. A hint only: a file missing here is
 * placed by its size.
 */
const LONG = [
  "slurm_e2e",
  "harbor_docker",
  "run_mcp",
  "run_resume",
  "docker_env",
  "local_sandbox",
  "run_sandbox_limits",
  "run_docker_faults",
  "run_docker_engine_faults",
  "run_verify_forgery",
  "singularity",
  "run_stdin",
  "run_sandbox_canaries",
  "approval_detect",
  "run_time_limit",
  "run_data_safety",
  "hostile2_docker",
  "run_sandbox_limit",
  "run_cli",
  "report_browser",
  "run_docker_signals",
  "score_cli",
  "run_tempdirs",
  "hostile2_local",
  "ci_numbers",
  "background_notices",
  "mcp_tools",
  "run_verify_isolated",
].map((n) => `/test/${n}.test.ts`);

/** Projects whose files spend most of their time waiting on a daemon, a cluster or a browser. */
const WAITING = ["cluster", "docker", "browser"];
const BUSY = ["cli"];
const LAST = ["unit"];

function size(spec: TestSpecification): number {
  try {
    return statSync(spec.moduleId).size;
  } catch {
    return 0;
  }
}

/** The LONG files first, in that order, then the largest. */
function longestFirst(specs: TestSpecification[]): TestSpecification[] {
  const rank = (s: TestSpecification) => {
    const i = LONG.findIndex((suffix) => s.moduleId.endsWith(suffix));
    return i < 0 ? LONG.length : i;
  };
  return [...specs].sort((a, b) => rank(a) - rank(b) || size(b) - size(a));
}

/**
 * One waiting file, then a run of busy ones: w0, b0, b1, b2, w1, b3, b4, b5, …, each kind spread evenly. The busy
 * files in a row share their worker process (the cli project is not isolated): vitest hands a finished worker the
 * next file only when that file is of the same project, so each waiting file between them ends one worker process.
 */
function interleave<T>(waiting: T[], busy: T[]): T[] {
  const run = Math.max(1, Math.ceil(busy.length / Math.max(waiting.length, 1)));
  const out: T[] = [];
  for (let i = 0; i < Math.max(waiting.length, Math.ceil(busy.length / run)); i++) {
    if (i < waiting.length) out.push(waiting[i]!);
    out.push(...busy.slice(i * run, (i + 1) * run));
  }
  return out;
}

export default class SuiteSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const inProjects = (names: string[]) => files.filter((f) => names.includes(f.project.name));
    const other = files.filter((f) => ![...WAITING, ...BUSY, ...LAST].includes(f.project.name));
    return [
      ...interleave(longestFirst(inProjects(WAITING)), longestFirst(inProjects(BUSY))),
      ...other,
      ...inProjects(LAST),
    ];
  }
}
