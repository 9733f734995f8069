/**
 * A Harbor task's image: its docker_image, else environment/Dockerfile built with environment/ as context and
 * tagged by the task's digest (`hb-<name>:<digest12>`), so a changed task gets a new image and an unchanged
 * one is built once. Building runs the task author's code on this host: only with --allow-build.
 */
import { spawn } from "node:child_process";
import { join } from "node:path";
import type { HarborTask } from "./task_config.js";

export function harborImageTag(task: Pick<HarborTask, "task_dir" | "digest">): string {
  const name =
    (task.task_dir.split("/").pop() ?? "task")
      .toLowerCase()
      .replace(/[^a-z0-9._-]/g, "-")
      .replace(/^[^a-z0-9]+/, "")
      .slice(0, 60) || "task";
  return `hb-${name}:${task.digest.slice(0, 12)}`;
}

/** One build per tag in this thread at a time (epochs of one task share it). */
const building = new Map<string, Promise<void>>();

async function imageExists(tag: string): Promise<boolean> {
  try {
    // Loaded on first use: every worker thread imports this module, and dockerode costs ~0.3 s of start-up.
    const { dockerClient } = await import("../../tools/environments/docker/docker_client.js");
    await dockerClient().getImage(tag).inspect();
    return true;
  } catch {
    return false;
  }
}

function dockerBuild(tag: string, context: string, timeoutSec: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn("docker", ["build", "-q", "-t", tag, "-f", join(context, "Dockerfile"), context], {
      stdio: ["ignore", "ignore", "pipe"],
      signal,
    });
    let stderr = "";
    child.stderr.on("data", (b: Buffer) => void (stderr = (stderr + b.toString("utf8")).slice(-2000)));
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutSec * 1000);
    child.on("error", (err) => {
      clearTimeout(timer);
      reject(new Error(`docker build of ${tag} could not start: ${err.message}`));
    });
    child.on("close", (code, sig) => {
      clearTimeout(timer);
      if (code === 0) resolve();
      else
        reject(
          new Error(
            `docker build of ${tag} failed (${sig === "SIGKILL" ? `over build_timeout_sec ${timeoutSec}` : `exit ${code}`}): ${stderr.trim().split("\n").slice(-3).join(" | ")}`,
          ),
        );
    });
  });
}

/** The image to start for the task, built first when needed (the caller checked --allow-build). */
export async function ensureHarborImage(task: HarborTask, signal?: AbortSignal): Promise<string> {
  if (task.docker_image) return task.docker_image;
  const tag = harborImageTag(task);
  if (await imageExists(tag)) return tag;
  let pending = building.get(tag);
  if (!pending) {
    pending = dockerBuild(tag, join(task.task_dir, "environment"), task.build_timeout_sec, signal).finally(() =>
      building.delete(tag),
    );
    building.set(tag, pending);
  }
  await pending;
  return tag;
}
