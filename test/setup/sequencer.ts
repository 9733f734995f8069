/**
 * The order `npm test` starts its files in (vitest's own order runs the projects one after the other, by name, and
 * a fresh clone has no durations to sort by): the files that mostly wait (the Slurm cluster, Docker, the browser)
 * start beside the ones that keep the CPU busy (the `cli` project's child processes and in-process runs), so
 * neither kind leaves the cores or the worker slots idle, and each kind runs its largest files first so that no
 * long file starts last. The `unit` files come at the end, together: they share worker processes (isolate: false)
 * and take a few seconds in all.
 */
import { statSync } from "node:fs";
import { BaseSequencer, type TestSpecification } from "vitest/node";

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

/** Cluster files first (the longest), then the largest files of each list first. */
function largestFirst(specs: TestSpecification[]): TestSpecification[] {
  const rank = (s: TestSpecification) => WAITING.indexOf(s.project.name);
  return [...specs].sort((a, b) => {
    const byProject = a.project.name === b.project.name ? 0 : rank(a) === 0 ? -1 : rank(b) === 0 ? 1 : 0;
    return byProject || size(b) - size(a);
  });
}

/** a0, b0, a1, b1, … and the rest of the longer list. */
function interleave<T>(a: T[], b: T[]): T[] {
  const out: T[] = [];
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    if (i < a.length) out.push(a[i]!);
    if (i < b.length) out.push(b[i]!);
  }
  return out;
}

export default class SuiteSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const inProjects = (names: string[]) => files.filter((f) => names.includes(f.project.name));
    const other = files.filter((f) => ![...WAITING, ...BUSY, ...LAST].includes(f.project.name));
    return [
      ...interleave(largestFirst(inProjects(WAITING)), largestFirst(inProjects(BUSY))),
      ...other,
      ...inProjects(LAST),
    ];
  }
}
