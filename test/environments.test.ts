/**
 * The environment registry and the backend interface, without a container engine: names, the one-line
 * error for an unknown backend, the local backend through a TaskEnvironment, availability, and `gc --env`.
 */
import { existsSync, mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execa } from "execa";
import { describe, expect, it } from "vitest";
import { UserError } from "../src/core/errors.js";
import {
  describeEnvironment,
  environmentAvailability,
  environmentBackend,
  environments,
} from "../tools/environments/index.js";
import { TaskEnvironment } from "../tools/environments/manager.js";
import { ROOT } from "./helpers/cli.js";

describe("environment registry", () => {
  it("knows local, host, docker and singularity, and names them for an unknown backend", async () => {
    expect(environments.names()).toEqual(["docker", "host", "local", "singularity"]);
    const err = await environmentBackend("podman").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UserError);
    expect((err as Error).message).toBe("unknown environment 'podman'; known: docker, host, local, singularity");
    const task = new TaskEnvironment("podman", { runName: "r", taskId: "t", hostTaskDir: "/tmp/x" });
    await expect(task.get()).rejects.toThrow("unknown environment 'podman'; known: docker, host, local, singularity");
  });

  it("says where each backend runs commands (for the approver) without loading it", () => {
    expect(describeEnvironment("local")).toBe(
      "local (runs in a bubblewrap sandbox on the host machine: no network, host files read-only)",
    );
    expect(describeEnvironment("host")).toBe("host (runs directly on the host machine, no sandbox)");
    expect(describeEnvironment("docker")).toBe("docker (runs inside a disposable container)");
    expect(describeEnvironment("singularity")).toBe("singularity (runs inside a disposable container)");
    expect(describeEnvironment("podman")).toBe("podman");
  });

  it("every backend answers the whole interface", async () => {
    for (const name of environments.names()) {
      const b = await environmentBackend(name);
      expect(b.name).toBe(name);
      for (const fn of [
        "availability",
        "preflightRun",
        "preflightTask",
        "create",
        "listLeftovers",
        "removeLeftovers",
        "afterRun",
      ] as const) {
        expect(typeof b[fn], `${name}.${fn}`).toBe("function");
      }
    }
  });

  it("a local task environment: preflight passes, created on first use, its folder removed on cleanup when asked", async () => {
    const base = mkdtempSync(join(tmpdir(), "hb-envreg-"));
    const spec = { runName: "r", taskId: "t", hostTaskDir: join(base, "t") };
    const kept = new TaskEnvironment("local", spec);
    await kept.preflight();
    expect(kept.created).toBe(false);
    const env = await kept.get();
    expect((await env.exec("echo hi > f; cat f")).stdout).toBe("hi\n");
    await kept.cleanup();
    expect(existsSync(join(base, "t", "f"))).toBe(true);
    await expect(kept.get()).rejects.toThrow(/already cleaned up/);

    const removed = new TaskEnvironment(
      "local",
      { ...spec, taskId: "u", hostTaskDir: join(base, "u") },
      { removeTaskDirOnCleanup: true },
    );
    await (await removed.get()).exec("touch g");
    await removed.cleanup();
    expect(existsSync(join(base, "u"))).toBe(false);

    const local = await environmentBackend("local");
    expect(local.sandboxed).toBe(true);
    expect((await environmentBackend("host")).sandboxed).toBe(false);
    expect(await local.listLeftovers({ run: "r" })).toEqual([]);
  });

  it("availability lists every backend with a reason when it cannot run", async () => {
    const rows = await environmentAvailability();
    expect(rows.map((r) => r.name)).toEqual(["docker", "host", "local", "singularity"]);
    expect(rows.find((r) => r.name === "host")).toEqual({
      name: "host",
      available: true,
      reason: "not a sandbox: runs directly on this machine",
    });
    expect(rows.find((r) => r.name === "local")).toEqual({
      name: "local",
      available: true,
      reason: "a bubblewrap sandbox per task on this machine",
    });
    for (const r of rows) if (!r.available) expect(r.reason, r.name).toBeTruthy();
  });
});

describe("hermes-batch gc --env", () => {
  it("an unknown backend is one clear line, exit 2", async () => {
    const r = await execa("node", ["dist/src/cli.js", "gc", "--run", "x", "--env", "podman"], {
      cwd: ROOT,
      reject: false,
    });
    expect(r.exitCode).toBe(2);
    expect(r.stderr.trim()).toMatch(/unknown environment 'podman'; known: docker, host, local, singularity$/);
  });

  it("a named backend that cannot run here is an error naming it", async () => {
    const empty = mkdtempSync(join(tmpdir(), "hb-nopath-"));
    const r = await execa("node", ["dist/src/cli.js", "gc", "--run", "x", "--env", "singularity"], {
      cwd: ROOT,
      reject: false,
      env: {
        PATH: `${empty}:${process.env
          .PATH!.split(":")
          .filter((d) => !existsSync(join(d, "apptainer")) && !existsSync(join(d, "singularity")))
          .join(":")}`,
      },
    });
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain("hermes-batch gc: singularity: neither apptainer nor singularity is on PATH");
  });

  it("removes a crashed run's Singularity instances (fake apptainer), and only that run's", async () => {
    const base = mkdtempSync(join(tmpdir(), "hb-gc-sing-"));
    mkdirSync(join(base, "bin"));
    symlinkSync(join(ROOT, "test/fixtures/fake-apptainer"), join(base, "bin", "apptainer"));
    writeFileSync(join(base, "image.sif"), "fake sif");
    const env = {
      PATH: `${join(base, "bin")}:${process.env.PATH}`,
      APPTAINER_FAKE_STATE: join(base, "state"),
      HOME: base,
    };
    // A run that vanished without cleanup: two instances of "crashed", one of "alive".
    const script = `
      import { createSingularityEnvironment } from "./tools/environments/singularity/singularity.ts";
      const s = (run, task) => ({ runName: run, taskId: task, hostTaskDir: ${JSON.stringify(join(base, "tasks"))} + "/" + task, image: ${JSON.stringify(join(base, "image.sif"))}, taskTimeoutSec: 90 });
      // (Their watchdogs would stop them after 90 s; gc must not wait for that.)
      for (const [run, task] of [["crashed", "a"], ["crashed", "b"], ["alive", "c"]]) await createSingularityEnvironment(s(run, task), { deadmanMarginSec: 0 });
      process.exit(0);
    `;
    await execa("node", ["--import", "tsx", "--input-type=module", "-e", script], { cwd: ROOT, env });
    const gc = (...args: string[]) =>
      execa("node", ["dist/src/cli.js", "gc", ...args, "--env", "singularity"], {
        cwd: ROOT,
        env,
        reject: false,
      });

    const dry = await gc("--run", "crashed", "--dry-run");
    expect(dry.stdout).toContain("would remove 2 instances of run crashed");
    const done = await gc("--run", "crashed");
    expect(done.exitCode, done.stderr).toBe(0);
    expect(done.stdout).toContain("removed 2 instances of run crashed");
    const rest = await gc("--all", "--dry-run", "--json");
    expect(JSON.parse(rest.stdout).removed.map((l: { run: string; task: string }) => [l.run, l.task])).toEqual([
      ["alive", "c"],
    ]);
  });
});
