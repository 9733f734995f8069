/**
 * The exact commands that rerun unfinished shards, from what the shards recorded when they started
 * (launch.json): the same shard count, output folder, run name and options, for the plain shell, Slurm
 * and Kubernetes. Keys never appear: they come from the environment (or the Kubernetes Secret).
 */
import { cliCommandLine, shellQuote } from "../core/cli_command.js";
import type { Launch } from "./completion.js";
import type { ShardStatus } from "./status.js";

/** Flags that choose which of the shard's tasks an invocation runs: the rerun sets its own. */
const SELECTION_FLAGS = new Set(["--resume", "--retry-failed", "--retry-internal", "--retry-unscored", "--dry-run"]);
/** Such flags with a value: the shard, and `--only` (a rerun of the whole shard must not keep an earlier `--only`). */
const SELECTION_VALUE_FLAGS = new Set(["--shard", "--shard-count", "--only"]);

/** Run arguments without any shard selection, resume or task selection flag: those are set by the rerun itself. */
function baseArgs(launch: Launch): string[] {
  const out: string[] = [];
  const args = launch.args;
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (SELECTION_FLAGS.has(a)) continue;
    if (SELECTION_VALUE_FLAGS.has(a)) {
      i++;
      continue;
    }
    const eq = a.indexOf("=");
    if (
      a.startsWith("--") &&
      eq > 0 &&
      (SELECTION_VALUE_FLAGS.has(a.slice(0, eq)) || SELECTION_FLAGS.has(a.slice(0, eq)))
    )
      continue;
    out.push(a);
  }
  // Pin what a rerun must not pick differently, whatever the defaults of where it runs.
  if (!out.some((a) => a === "--run-name" || a.startsWith("--run-name="))) out.push("--run-name", launch.run_name);
  if (!out.some((a) => a === "--output-dir" || a.startsWith("--output-dir=")))
    out.push("--output-dir", launch.output_dir);
  return out;
}

export interface RerunCommands {
  shell: string[];
  slurm?: string;
  kubernetes?: string[];
  /** Secret flags the original command line had: the rerun needs the key from the environment instead. */
  keyNote?: string;
}

/**
 * `launches`: each shard's launch record (any shard's serves for one that never started: only the index
 * differs). `unfinished`: the shards to rerun.
 */
export function rerunCommands(
  unfinished: ShardStatus[],
  count: number,
  launches: (Launch | undefined)[],
  mode: "resume" | "retry-failed" = "resume",
): RerunCommands | undefined {
  // --retry-failed reruns only the shard's failed tasks (each resumes its folder either way).
  const again = mode === "retry-failed" ? "--retry-failed" : "--resume";
  const any = launches.find((l) => l !== undefined);
  if (!any || unfinished.length === 0) return undefined;
  const launchOf = (i: number) => launches[i] ?? any;
  const shell = unfinished.map((s) => {
    const l = launchOf(s.index);
    const args = [...baseArgs(l), "--shard", `${s.index}/${count}`, again];
    return `cd ${shellQuote(l.cwd)} && ${cliCommandLine(args, l)}`;
  });
  const out: RerunCommands = { shell };
  const slurm = launches.map((l) => l?.scheduler).find((s) => s?.kind === "slurm" && s.submit_script !== undefined);
  if (slurm?.kind === "slurm") {
    const l = launches.find((x) => x?.scheduler.kind === "slurm") ?? any;
    // submit.sh again, for these array indexes only: the same count, output folder, sbatch options and run options.
    const array = unfinished.map((s) => s.index).join(",");
    out.slurm =
      `cd ${shellQuote(l.cwd)} && SHARDS=${count} ARRAY=${array} OUTPUT_DIR=${shellQuote(l.output_dir)} ${shellQuote(slurm.submit_script!)}` +
      `${slurm.sbatch_options ? ` ${slurm.sbatch_options}` : ""} -- ${slurm.script_args ?? ""}${mode === "retry-failed" ? " --retry-failed" : ""}`.trimEnd();
  }
  const k8s = launches.map((l) => l?.scheduler).find((s) => s?.kind === "kubernetes" && s.job_name !== undefined);
  if (k8s?.kind === "kubernetes") {
    const ns = k8s.namespace ? ` -n ${shellQuote(k8s.namespace)}` : "";
    // One plain Job per shard, copied from the Indexed Job, with the index given by JOB_COMPLETION_INDEX itself;
    // a rerun of failed tasks puts --retry-failed in place of the Job's --resume (with --resume it would start the shard's unstarted tasks too; the rerun is of the failed ones).
    out.kubernetes = unfinished.map(
      (s) =>
        `kubectl get job${ns} ${shellQuote(k8s.job_name!)} -o json | jq ${shellQuote(
          `{apiVersion, kind, metadata: {name: (.metadata.name + "-rerun-${s.index}")}, spec: (.spec | del(.selector, .completionMode, .backoffLimitPerIndex, .maxFailedIndexes, .podFailurePolicy) | .completions = 1 | .parallelism = 1 | .backoffLimit = 2 | .template.metadata.labels = {} | .template.spec.containers[0].env += [{name: "JOB_COMPLETION_INDEX", value: "${s.index}"}]${mode === "retry-failed" ? ` | .template.spec.containers[0].args |= (map(select(. != "--resume")) + ["--retry-failed"])` : ""})}`,
        )} | kubectl create${ns} -f -`,
    );
  }
  const flags = [...new Set(launches.flatMap((l) => l?.dropped_secret_flags ?? []))];
  if (flags.length)
    out.keyNote = `the shards were started with ${flags.join(", ")} on the command line; the rerun takes the key from the environment (e.g. OPENAI_API_KEY) instead`;
  return out;
}

export function rerunText(r: RerunCommands | undefined, indent = "  "): string {
  if (!r)
    return `${indent}(no shard recorded how it was started: rerun them as you started them, with --shard i/N --resume)\n`;
  const lines: string[] = [];
  if (r.slurm) lines.push(`${indent}Slurm:`, `${indent}  ${r.slurm}`);
  if (r.kubernetes)
    lines.push(
      `${indent}Kubernetes (one Job per shard, copied from the Indexed Job):`,
      ...r.kubernetes.map((c) => `${indent}  ${c}`),
    );
  lines.push(`${indent}shell:`, ...r.shell.map((c) => `${indent}  ${c}`));
  if (r.keyNote) lines.push(`${indent}note: ${r.keyNote}`);
  return lines.join("\n") + "\n";
}
