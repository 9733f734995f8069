/** `gc --all` with the Docker engine out of reach: the skip is said, and sandboxes are counted in English. */
import { describe, expect, it } from "vitest";
import { join } from "node:path";
import { runCli, tempDir } from "./helpers/cli.js";

describe("gc --all with the Docker engine out of reach", () => {
  it("says on stderr why docker was skipped, and counts sandboxes in English", async () => {
    // Never the real engine: DOCKER_HOST is a socket nobody listens on. A process of its own: in this test process
    // another file may already hold a Docker client made for the real engine.
    const dir = tempDir();
    const r = await runCli(["gc", "--all", "--dry-run"], {
      cwd: dir,
      env: { DOCKER_HOST: `unix://${join(dir, "dead.sock")}` },
    });
    expect(r.exitCode).toBe(0);
    const skipped = r.stderr.split("\n").filter((l) => l.includes("docker"));
    expect(skipped, r.stderr).toHaveLength(1);
    expect(skipped[0]).toMatch(/^hermes-batch gc: docker: skipped: \S/);
    expect(r.stdout).not.toContain("sandboxs");
    expect(r.stdout).toContain("would remove 0 sandboxes");
  });
});
