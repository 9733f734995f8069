/**
 * Data for the path judges (../judges.ts): what moving a path away, or changing who may use it, is by where
 * the path points (the classes of ../paths.ts). The task's own places (inside, temp) and paths only known
 * when the command runs (unknown) are absent.
 */
import type { ClassKey } from "../classes.js";

/** A move (`mv`) of a path away from where it is. */
export const MOVE_FROM_CLASSES: Record<string, ClassKey> = {
  system: "move_system_path",
  "home-secret": "credential_write",
  ssh: "credential_write",
  home: "move_outside_workdir",
  "shell-rc": "move_outside_workdir",
  device: "move_outside_workdir",
  outside: "move_outside_workdir",
};

/** A change of mode or owner (`chmod`, `chown`): the system's files and credentials are the machine's security. */
export const PERMISSION_CLASSES: Record<string, ClassKey> = {
  system: "chmod_chown_system",
  "home-secret": "chmod_chown_system",
  ssh: "chmod_chown_system",
  home: "chmod_outside_workdir",
  "shell-rc": "chmod_outside_workdir",
  device: "chmod_outside_workdir",
  outside: "chmod_outside_workdir",
};
