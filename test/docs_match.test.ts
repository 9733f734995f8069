// The README and --help state defaults and names the code decides: these tests fail when one moves without the other.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runOptionsHelp } from "../src/config/run_flags.js";
import { exportFormats } from "../src/formats/index.js";
import { shardDirName } from "../src/shard/assign.js";
import { DEFAULT_DOCKER_IMAGE } from "../tools/environments/docker/docker.js";

const README = readFileSync(join(import.meta.dirname, "..", "README.md"), "utf8");
const SHARDING = readFileSync(join(import.meta.dirname, "..", "docs", "sharding.md"), "utf8");

describe("docs match behaviour", () => {
  it("the default Docker image is the one --help and the README name", () => {
    expect(runOptionsHelp().replace(/\s+/g, " ")).toContain(`default: ${DEFAULT_DOCKER_IMAGE}`);
    expect(README).toContain(`\`${DEFAULT_DOCKER_IMAGE}\``);
  });

  it("every export format is named in the README's command table", () => {
    const line = README.split("\n").find((l) => l.startsWith("| `export "));
    expect(line).toBeDefined();
    for (const f of exportFormats()) expect(line).toContain(f.name);
  });

  it("shard folder names in the docs are the ones a run writes", () => {
    expect(SHARDING).toContain(`shards/${shardDirName({ index: 0, count: 16 })}/`);
    expect(SHARDING).toContain(`shards/${shardDirName({ index: 1, count: 16 })}/`);
  });
});
