/** `gc` as a first-time user types it: a backend that never leaves a sandbox behind is a mistake, said in one line. */
import { describe, expect, it } from "vitest";
import { main } from "../src/cli_main.js";

async function call(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const [w1, w2] = [process.stdout.write, process.stderr.write];
  process.stdout.write = ((c: string) => out.push(String(c)) > 0) as typeof process.stdout.write;
  process.stderr.write = ((c: string) => err.push(String(c)) > 0) as typeof process.stderr.write;
  try {
    const code = await main(args);
    return { code, stdout: out.join(""), stderr: err.join("") };
  } finally {
    process.stdout.write = w1;
    process.stderr.write = w2;
  }
}

describe("gc --env", () => {
  // `gc --all --env host --json` exited 1 and printed nothing at all.
  // Never with docker in the list: on the old code that would remove every run's containers on this machine.
  it.each(["host", "local", "local,singularity"])(
    "--env %s: names the backend that leaves nothing, exit 2",
    async (env) => {
      const r = await call(["gc", "--all", "--env", env, "--json"]);
      expect(r).toEqual({
        code: 2,
        stdout: "",
        stderr: `hermes-batch gc: --env ${env.split(",")[0]}: leaves no sandbox behind when a run ends; gc is for docker and singularity\n`,
      });
    },
  );
});
