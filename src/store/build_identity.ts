/**
 * Which hermes-batch wrote a run folder: its version and a hash of its bundle, recorded in run.yaml, checkpoint.json,
 * each shard's completion record and a merge's merge.json, beside the config fingerprint but not in it (a new
 * version is no new experiment). `merge` refuses shards of different versions (src/commands/merge.ts), `--resume`
 * by another build warns, `compare` and `view` name both runs' versions when they differ. A folder of an earlier
 * hermes-batch recorded none: its version is unknown, which is never refused.
 */
import { readFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import YAML from "yaml";
import { packageVersion } from "../core/package_version.js";

/**
 * The hermes-batch that writes a record: `hermes_batch_version` (package.json), and `hermes_batch_build`, 16 hex
 * digits of a sha256 over the bundle it runs from (dist/src/*.js, names and contents), so two checkouts or installs
 * of one version that run different code differ. Absent when it runs from the sources (tsx, the tests).
 */
export interface BuildIdentity {
  hermes_batch_version: string;
  hermes_batch_build?: string;
}

let bundleHash: string | null | undefined;

/**
 * The bundle's hash (see BuildIdentity), as scripts/build.mjs wrote it beside the bundle (`build-id`); null when
 * this code is not running from dist/src, or the build wrote none.
 */
function bundleBuild(): string | null {
  if (bundleHash !== undefined) return bundleHash;
  try {
    const dir = dirname(fileURLToPath(import.meta.url));
    if (basename(dir) !== "src" || basename(dirname(dir)) !== "dist") return (bundleHash = null);
    const id = readFileSync(join(dir, "build-id"), "utf8").trim();
    return (bundleHash = /^[0-9a-f]{16}$/.test(id) ? id : null);
  } catch {
    return (bundleHash = null);
  }
}

/** This process's hermes-batch: its version and, when it runs from a build, the build's hash. */
export function buildIdentity(): BuildIdentity {
  const build = bundleBuild();
  return { hermes_batch_version: packageVersion(), ...(build ? { hermes_batch_build: build } : {}) };
}

/** A recorded identity; null where a folder of an earlier hermes-batch recorded none (unknown, never refused). */
export interface RecordedBuild {
  version: string | null;
  build: string | null;
}

/** The identity a record (run.yaml, checkpoint.json, shard-complete.json) holds, or undefined when it has none. */
export function identityOf(record: Record<string, unknown> | undefined | null): RecordedBuild | undefined {
  const version = record?.hermes_batch_version;
  if (typeof version !== "string" || version === "") return undefined;
  const build = record?.hermes_batch_build;
  return { version, build: typeof build === "string" && build !== "" ? build : null };
}

function readRecord(path: string, yaml: boolean): Record<string, unknown> | undefined {
  try {
    const text = readFileSync(path, "utf8");
    const v: unknown = yaml ? YAML.parse(text) : JSON.parse(text);
    return v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Which hermes-batch wrote a run folder (its latest invocation, or the shards a merge joined): run.yaml's record,
 * else checkpoint.json's; unknown for a folder of an earlier version, which recorded none.
 */
export function recordedIdentity(runDir: string): RecordedBuild {
  return (
    identityOf(readRecord(join(runDir, "run.yaml"), true)) ??
    identityOf(readRecord(join(runDir, "checkpoint.json"), false)) ?? { version: null, build: null }
  );
}

/** `0.1.0`, `0.1.0 (build 1a2b…)` with `withBuild`, `unknown (not recorded)`. */
export function describeBuild(id: RecordedBuild, withBuild = false): string {
  if (id.version === null) return "unknown (not recorded)";
  return withBuild && id.build ? `${id.version} (build ${id.build})` : id.version;
}

/**
 * How two recorded identities differ, for a person: `undefined` when they do not (or either is unknown and the
 * other too), `version` when the versions differ (one of them unknown included), `build` when one version was
 * built twice differently (both builds known).
 */
export function buildDifference(a: RecordedBuild, b: RecordedBuild): "version" | "build" | undefined {
  if (a.version !== b.version) return "version";
  if (a.version !== null && a.build && b.build && a.build !== b.build) return "build";
  return undefined;
}

/**
 * For `--resume`: the warning to give when the run folder was last written by another hermes-batch (another
 * version, or the same version built from other code); undefined when it is the same, or the folder recorded none
 * (an earlier version's: unknown, and resuming it is normal). Upgrading mid-run is allowed: the caller warns on
 * stderr and in events.log, and goes on.
 */
export function resumeBuildWarning(runDir: string, current: BuildIdentity = buildIdentity()): string | undefined {
  const before = recordedIdentity(runDir);
  if (before.version === null) return undefined;
  const now: RecordedBuild = { version: current.hermes_batch_version, build: current.hermes_batch_build ?? null };
  const diff = buildDifference(before, now);
  if (diff === undefined) return undefined;
  const withBuild = diff === "build";
  return `${runDir} was written by hermes-batch ${describeBuild(before, withBuild)}; this is ${describeBuild(now, withBuild)}: resuming, so the folder will hold results of both`;
}
