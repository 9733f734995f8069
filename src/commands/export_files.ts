/**
 * `export --split-files DIR`: one pretty-printed JSON file per exported record, named after its task
 * (`<task>.json`, `<task>.epoch-<k>.json` with --epochs), as Harbor keeps one trajectory.json per trial.
 * Each file is written under a temporary name and renamed when complete.
 */
import { existsSync, mkdirSync, readdirSync, renameSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { UserError } from "../core/errors.js";
import { taskDirName } from "../core/task_dir_name.js";

export class JsonFilesOutput {
  written = 0;
  private readonly names = new Set<string>();

  constructor(readonly dir: string) {
    if (existsSync(dir) && !statSync(dir).isDirectory()) throw new UserError(`--split-files ${dir}: is not a folder`);
    // Documents of an earlier export (other filters, another run) would be read with this one's as one set.
    const earlier = existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith(".json")).length : 0;
    if (earlier)
      throw new UserError(
        `--split-files ${dir} already holds ${earlier} .json file${earlier === 1 ? "" : "s"}: they would be read as this export's too; give an empty or new folder`,
      );
    try {
      mkdirSync(dir, { recursive: true });
    } catch (err) {
      throw new UserError(`--split-files ${dir}: cannot create the folder (${(err as Error).message})`);
    }
  }

  /** Writes one record; a second record of the same task and epoch is refused (the input repeats a line). */
  write(taskId: string, epoch: number | undefined, record: unknown): void {
    const name = `${taskDirName(taskId)}${epoch === undefined ? "" : `.epoch-${epoch}`}.json`;
    if (this.names.has(name))
      throw new UserError(
        `task ${taskId}${epoch === undefined ? "" : ` epoch ${epoch}`} appears twice in the input: --split-files writes one file per trajectory`,
      );
    this.names.add(name);
    const path = join(this.dir, name);
    writeFileSync(`${path}.tmp-${process.pid}`, JSON.stringify(record, null, 2) + "\n");
    renameSync(`${path}.tmp-${process.pid}`, path);
    this.written++;
  }
}
