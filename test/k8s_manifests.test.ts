/**
 * The Kubernetes manifests in scripts/k8s/, checked without a cluster (kubectl is not installed): each YAML
 * document against a zod schema of the fields the sharded run relies on, then the rules that tie them
 * together (count = completions, keys only from a Secret, a grace period for the final checkpoint, a
 * restart policy whose retries resume, mounts that exist, the merge job on the same run folder). The
 * rerun command `hermes-batch shards` prints for a Job is applied with jq to the Indexed Job and checked
 * the same way.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import YAML from "yaml";
import * as z from "zod";
import { describe, expect, it } from "vitest";
import { rerunCommands } from "../src/shard/rerun.js";
import type { Launch } from "../src/shard/completion.js";
import type { ShardStatus } from "../src/shard/status.js";

const ROOT = join(import.meta.dirname, "..");
const K8S = join(ROOT, "scripts", "k8s");

const EnvVar = z.strictObject({
  name: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/),
  value: z.string().optional(),
  valueFrom: z
    .strictObject({
      secretKeyRef: z.strictObject({ name: z.string(), key: z.string() }).optional(),
      fieldRef: z.strictObject({ fieldPath: z.string() }).optional(),
    })
    .optional(),
});
const Container = z.strictObject({
  name: z.string(),
  image: z.string(),
  workingDir: z.string().optional(),
  command: z.array(z.string()),
  args: z.array(z.string()),
  env: z.array(EnvVar).optional(),
  resources: z.object({}).passthrough().optional(),
  volumeMounts: z
    .array(z.strictObject({ name: z.string(), mountPath: z.string(), readOnly: z.boolean().optional() }))
    .optional(),
});
const Volume = z.strictObject({
  name: z.string(),
  persistentVolumeClaim: z.strictObject({ claimName: z.string() }).optional(),
  configMap: z.strictObject({ name: z.string() }).optional(),
});
const PodSpec = z.strictObject({
  restartPolicy: z.enum(["Never", "OnFailure"]),
  terminationGracePeriodSeconds: z.number().int().min(60),
  containers: z.array(Container).min(1),
  volumes: z.array(Volume).optional(),
});
const Job = z.strictObject({
  apiVersion: z.literal("batch/v1"),
  kind: z.literal("Job"),
  metadata: z.strictObject({ name: z.string() }),
  spec: z.strictObject({
    completionMode: z.enum(["Indexed", "NonIndexed"]).optional(),
    completions: z.number().int().positive().optional(),
    parallelism: z.number().int().positive().optional(),
    backoffLimit: z.number().int().min(0).optional(),
    backoffLimitPerIndex: z.number().int().min(0).optional(),
    maxFailedIndexes: z.number().int().min(0).optional(),
    podFailurePolicy: z
      .strictObject({
        rules: z.array(
          z.strictObject({
            action: z.enum(["FailJob", "FailIndex", "Ignore", "Count"]),
            onExitCodes: z
              .strictObject({
                containerName: z.string(),
                operator: z.enum(["In", "NotIn"]),
                values: z.array(z.number().int()),
              })
              .optional(),
            onPodConditions: z.array(z.strictObject({ type: z.string() })).optional(),
          }),
        ),
      })
      .optional(),
    template: z.strictObject({ metadata: z.object({}).passthrough().optional(), spec: PodSpec }),
  }),
});
const Pvc = z.strictObject({
  apiVersion: z.literal("v1"),
  kind: z.literal("PersistentVolumeClaim"),
  metadata: z.strictObject({ name: z.string() }),
  spec: z.strictObject({
    accessModes: z.array(z.string()),
    resources: z.strictObject({ requests: z.strictObject({ storage: z.string() }) }),
  }),
});
type JobT = z.infer<typeof Job>;

function docs(file: string): unknown[] {
  return YAML.parseAllDocuments(readFileSync(join(K8S, file), "utf8")).map((d) => {
    expect(d.errors, file).toEqual([]);
    return d.toJSON();
  });
}

function flag(args: string[], name: string): string | undefined {
  const a = args.find((x) => x.startsWith(`${name}=`));
  return a?.slice(name.length + 1);
}

/** The rules a sharded hermes-batch Job must keep; returns what is wrong (empty when fine). */
function problemsOfShardJob(job: JobT, claims: Set<string>): string[] {
  const p: string[] = [];
  const pod = job.spec.template.spec;
  const c = pod.containers[0]!;
  if (job.spec.completionMode !== "Indexed") p.push("completionMode must be Indexed");
  const count = c.env?.find((e) => e.name === "HERMES_BATCH_SHARD_COUNT")?.value;
  if (count !== String(job.spec.completions))
    p.push(`HERMES_BATCH_SHARD_COUNT ${count} ≠ completions ${job.spec.completions}`);
  if ((job.spec.parallelism ?? 1) > (job.spec.completions ?? 1)) p.push("parallelism above completions");
  if (c.command.join(" ") !== "node dist/src/cli.js")
    p.push(`command ${c.command.join(" ")}: node itself, so SIGTERM reaches hermes-batch`);
  if (c.args[0] !== "run" || !c.args.includes("--resume"))
    p.push("args must be run … --resume (a retried pod resumes its shard)");
  if (c.args.some((a) => /api-key/.test(a))) p.push("a key in args");
  for (const e of c.env ?? [])
    if (/KEY|TOKEN|SECRET/.test(e.name) && !e.valueFrom?.secretKeyRef) p.push(`${e.name} not from a Secret`);
  if (!c.env?.some((e) => /API_KEY/.test(e.name) && e.valueFrom?.secretKeyRef)) p.push("no API key from a Secret");
  if (pod.restartPolicy !== "Never" && job.spec.podFailurePolicy) p.push("podFailurePolicy needs restartPolicy Never");
  if ((job.spec.backoffLimitPerIndex ?? job.spec.backoffLimit ?? 6) < 1)
    p.push("no retry: a shard killed once stays unfinished");
  for (const r of job.spec.podFailurePolicy?.rules ?? []) {
    if (r.onExitCodes && !pod.containers.some((x) => x.name === r.onExitCodes!.containerName))
      p.push(`podFailurePolicy names no container ${r.onExitCodes.containerName}`);
    if (r.onExitCodes?.values.some((v) => v !== 2)) p.push("only exit 2 (bad input) is not worth a retry");
  }
  const volumes = new Set((pod.volumes ?? []).map((v) => v.name));
  for (const m of c.volumeMounts ?? []) if (!volumes.has(m.name)) p.push(`mount ${m.name} has no volume`);
  for (const v of pod.volumes ?? [])
    if (v.persistentVolumeClaim && !claims.has(v.persistentVolumeClaim.claimName))
      p.push(`claim ${v.persistentVolumeClaim.claimName} not defined`);
  const out = flag(c.args, "--output-dir");
  if (!out || !(c.volumeMounts ?? []).some((m) => out.startsWith(m.mountPath) && !m.readOnly))
    p.push("--output-dir is not on a writable volume");
  return p;
}

describe("scripts/k8s manifests", () => {
  const indexed = docs("indexed-job.yaml");
  const pvc = Pvc.parse(indexed.find((d) => (d as { kind?: string }).kind === "PersistentVolumeClaim"));
  const job = Job.parse(indexed.find((d) => (d as { kind?: string }).kind === "Job"));
  const merge = Job.parse(docs("merge-job.yaml")[0]);
  const claims = new Set([pvc.metadata.name]);

  it("the Indexed Job parses and keeps every rule: count = completions, keys from a Secret, a grace period, retries that resume", () => {
    expect(pvc.spec.accessModes).toContain("ReadWriteMany");
    expect(problemsOfShardJob(job, claims)).toEqual([]);
    expect(job.spec.template.spec.terminationGracePeriodSeconds).toBeGreaterThanOrEqual(60);
    expect(
      job.spec.podFailurePolicy?.rules.some(
        (r) => r.action === "Ignore" && r.onPodConditions?.some((c) => c.type === "DisruptionTarget"),
      ),
    ).toBe(true);
  });

  it("the checks catch a broken Job (a rule that cannot fail is no rule)", () => {
    const broken = structuredClone(job);
    const c = broken.spec.template.spec.containers[0]!;
    c.command = ["npx", "hermes-batch"];
    c.args = c.args.filter((a) => a !== "--resume").concat("--api-key=sk-x");
    c.env = c.env!.map((e) =>
      e.name === "HERMES_BATCH_SHARD_COUNT"
        ? { ...e, value: "8" }
        : e.name === "OPENAI_API_KEY"
          ? { name: e.name, value: "sk-x" }
          : e,
    );
    broken.spec.template.spec.restartPolicy = "OnFailure";
    expect(problemsOfShardJob(broken, claims)).toEqual([
      "HERMES_BATCH_SHARD_COUNT 8 ≠ completions 16",
      "command npx hermes-batch: node itself, so SIGTERM reaches hermes-batch",
      "args must be run … --resume (a retried pod resumes its shard)",
      "a key in args",
      "OPENAI_API_KEY not from a Secret",
      "no API key from a Secret",
      "podFailurePolicy needs restartPolicy Never",
    ]);
    expect(() =>
      Job.parse({
        ...job,
        spec: { ...job.spec, template: { spec: { ...job.spec.template.spec, terminationGracePeriodSeconds: 5 } } },
      }),
    ).toThrow();
  });

  it("the merge Job runs merge on the Indexed Job's run folder, with the dataset mounted", () => {
    const c = merge.spec.template.spec.containers[0]!;
    const shard = job.spec.template.spec.containers[0]!;
    expect(c.command).toEqual(["node", "dist/src/cli.js"]);
    expect(c.args).toEqual(["merge", `${flag(shard.args, "--output-dir")}/${flag(shard.args, "--run-name")}`]);
    expect(merge.spec.template.spec.restartPolicy).toBe("Never");
    const mounts = (x: typeof c) => new Map((x.volumeMounts ?? []).map((m) => [m.mountPath, m.name]));
    for (const [path] of mounts(shard)) expect(mounts(c).has(path), path).toBe(true);
    for (const v of merge.spec.template.spec.volumes ?? [])
      if (v.persistentVolumeClaim) expect(claims.has(v.persistentVolumeClaim.claimName)).toBe(true);
  });

  it("the rerun `hermes-batch shards` prints for a Job turns the Indexed Job into a one-shard Job that still keeps the rules", () => {
    const launch: Launch = {
      version: 1,
      at: "2026-01-01T00:00:00Z",
      shard: { index: 3, count: 16 },
      run_name: "exp1",
      output_dir: "/work/runs",
      cwd: "/app",
      node: "/usr/local/bin/node",
      cli: "/app/dist/src/cli.js",
      args: ["run", "/data/data.jsonl"],
      dropped_secret_flags: [],
      scheduler: { kind: "kubernetes", job_name: "hermes-batch-exp1", namespace: "default" },
    };
    const status = { index: 3, state: "killed", done: 0, dropped: 0, failed: [], missing: [] } as ShardStatus;
    const cmd = rerunCommands([status], 16, [launch])!.kubernetes![0]!;
    expect(cmd).toMatch(
      /^kubectl get job -n default hermes-batch-exp1 -o json \| jq '.*' \| kubectl create -n default -f -$/,
    );
    const filter = /\| jq '(.*)' \| kubectl/.exec(cmd)![1]!.replace(/'\\''/g, "'");
    let out: string;
    try {
      out = execFileSync("jq", [filter], {
        input: JSON.stringify({ ...job, status: {}, metadata: { ...job.metadata, uid: "u" } }),
      }).toString();
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return; // no jq here: the shape is checked above
      throw err;
    }
    const one = Job.parse(JSON.parse(out));
    expect(one.metadata.name).toBe("hermes-batch-exp1-rerun-3");
    expect(one.spec.completionMode).toBeUndefined();
    expect(one.spec.completions).toBe(1);
    const env = one.spec.template.spec.containers[0]!.env!;
    expect(env.find((e) => e.name === "JOB_COMPLETION_INDEX")?.value).toBe("3");
    expect(env.find((e) => e.name === "HERMES_BATCH_SHARD_COUNT")?.value).toBe("16");
    expect(one.spec.template.spec.containers[0]!.args).toContain("--resume");

    // The rerun of a finished shard's failed tasks: --retry-failed in place of the Job's --resume (beside it, the
    // rerun would also start tasks the shard never started).
    const retry = rerunCommands([status], 16, [launch], "retry-failed")!.kubernetes![0]!;
    const retryFilter = /\| jq '(.*)' \| kubectl/.exec(retry)![1]!.replace(/'\\''/g, "'");
    const retried = Job.parse(
      JSON.parse(
        execFileSync("jq", [retryFilter], {
          input: JSON.stringify({ ...job, status: {}, metadata: { ...job.metadata, uid: "u" } }),
        }).toString(),
      ),
    );
    const args = retried.spec.template.spec.containers[0]!.args!;
    expect(args).toContain("--retry-failed");
    expect(args).not.toContain("--resume");
    expect(args.slice(0, -1)).toEqual(job.spec.template.spec.containers[0]!.args!.filter((a) => a !== "--resume"));
  });
});
