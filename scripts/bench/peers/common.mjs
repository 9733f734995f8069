/** What the contenders of scripts/bench/peers.mjs share: their arguments, the tool, loading a peer from a folder. */
import { createRequire } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

/** The parameters of the `todo` tool the model server calls (scripts/bench/model-server.mjs). */
export const TODO_PARAMETERS = {
  type: "object",
  properties: {
    todos: {
      type: "array",
      items: {
        type: "object",
        properties: { id: { type: "string" }, content: { type: "string" }, status: { type: "string" } },
        required: ["id", "content", "status"],
      },
    },
  },
  required: ["todos"],
};

export function contenderArgs(parseArgs) {
  const { values } = parseArgs({
    options: {
      "base-url": { type: "string" },
      tasks: { type: "string" },
      concurrency: { type: "string" },
      out: { type: "string" },
      "peers-dir": { type: "string" },
    },
  });
  const tasks = Number(values.tasks);
  const concurrency = Number(values.concurrency);
  if (!values["base-url"] || !values.out || !(tasks > 0) || !(concurrency > 0)) {
    process.stderr.write("usage: --base-url URL --tasks N --concurrency C --out FILE [--peers-dir DIR]\n");
    process.exit(2);
  }
  return { baseUrl: values["base-url"], tasks, concurrency, out: values.out, peersDir: values["peers-dir"] };
}

/** Imports a package installed in the scratch folder `dir` (never a dependency of this project). */
export async function importPeer(dir, name) {
  const resolved = createRequire(join(dir, "package.json")).resolve(name);
  return import(pathToFileURL(resolved).href);
}

/** Runs `tasks` tasks `concurrency` at a time; `write` gets each one's result line. */
export async function pool(tasks, concurrency, run, write) {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < tasks) {
        const i = next++;
        write(`${JSON.stringify(await run(i))}\n`);
      }
    }),
  );
}
