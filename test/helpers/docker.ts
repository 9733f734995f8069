/**
 * Docker engine and test images for integration tests. Starts the engine and builds the images with the
 * project's own scripts; fails loudly (never skips) when that is impossible, so CI cannot pass silently
 * without having run the Docker tests.
 */
import { fileURLToPath } from "node:url";
import { execa } from "execa";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

export interface DockerTestImages {
  /** debootstrap bookworm: bash, coreutils, procps, python3, user `agent` (uid 1000). */
  image: string;
  /** busybox only: no bash, no python, no regular user. */
  busyboxImage: string;
}

let ready: Promise<DockerTestImages> | undefined;

export function ensureDockerTestImages(): Promise<DockerTestImages> {
  ready ??= (async () => {
    const start = await execa("bash", [`${ROOT}/scripts/start-dockerd.sh`], { reject: false, all: true });
    if (start.exitCode !== 0) {
      throw new Error(
        `Docker tests need a running engine and could not start one (scripts/start-dockerd.sh exit ${start.exitCode}):\n${start.all}`,
      );
    }
    const build = await execa("bash", [`${ROOT}/scripts/build-test-image.sh`], { reject: false, stderr: "pipe", timeout: 600_000 });
    if (build.exitCode !== 0) {
      throw new Error(`scripts/build-test-image.sh failed (exit ${build.exitCode}):\n${build.stderr}`);
    }
    const lines = build.stdout.trim().split("\n");
    const image = lines[lines.length - 1]!.trim();
    return { image, busyboxImage: process.env.HERMES_TEST_BUSYBOX_IMAGE ?? "hermes-batch-test:busybox" };
  })();
  return ready;
}

/** A run name unique to this test process, so parallel test files never see each other's containers. */
export function uniqueRunName(prefix: string): string {
  return `${prefix}-${process.pid}-${Date.now().toString(36)}`;
}
