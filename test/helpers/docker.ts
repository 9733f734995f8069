/**
 * Docker engine and test images for integration tests: started and built once per test run by the docker
 * project's global setup (test/setup/docker.ts), which fails loudly (never skips) when that is impossible.
 */
import { inject } from "vitest";

export interface DockerTestImages {
  /** debootstrap bookworm: bash, coreutils, procps, python3, user `agent` (uid 1000). */
  image: string;
  /** busybox only: no bash, no python, no regular user. */
  busyboxImage: string;
}

declare module "vitest" {
  export interface ProvidedContext {
    dockerTestImages: DockerTestImages;
  }
}

/** The test images made by the docker project's global setup (a file that uses Docker belongs in that project). */
export async function ensureDockerTestImages(): Promise<DockerTestImages> {
  const images = inject("dockerTestImages");
  if (!images)
    throw new Error("no Docker test images: this file needs the docker project's global setup (vitest.config.ts)");
  return images;
}

/** A run name unique to this test process, so parallel test files never see each other's containers. */
export function uniqueRunName(prefix: string): string {
  return `${prefix}-${process.pid}-${Date.now().toString(36)}`;
}
