/**
 * Global setup of the docker project: starts the engine and builds the test images once for the whole run,
 * with the project's own scripts, and hands the image names to the test files (`inject("dockerTestImages")`,
 * read by test/helpers/docker.ts). Fails loudly (never skips) when that is impossible, so CI cannot pass
 * without having run the Docker tests.
 */
import { execFileSync } from "node:child_process";
import { resolve } from "node:path";
import type { TestProject } from "vitest/node";
import type { DockerTestImages } from "../helpers/docker.js";

const ROOT = resolve(import.meta.dirname, "..", "..");

function script(name: string, timeoutMs: number): string {
  try {
    return execFileSync("bash", [`${ROOT}/scripts/${name}`], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
      timeout: timeoutMs,
    });
  } catch (err) {
    const e = err as { status?: number; stdout?: string; stderr?: string };
    throw new Error(
      `Docker tests need scripts/${name}, which failed (exit ${e.status}):\n${e.stdout ?? ""}${e.stderr ?? ""}`,
    );
  }
}

export default function setup(project: TestProject): void {
  script("start-dockerd.sh", 120_000);
  const image = script("build-test-image.sh", 600_000).trim().split("\n").at(-1)!.trim();
  const images: DockerTestImages = {
    image,
    busyboxImage: process.env.HERMES_TEST_BUSYBOX_IMAGE ?? "hermes-batch-test:busybox",
  };
  project.provide("dockerTestImages", images);
}
