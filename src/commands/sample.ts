/** `hermes-batch sample`: shows the toolset draws a run would make for its first N tasks. */
import { once } from "node:events";
import { loadDistributionFile, prepareDistribution } from "../../toolset_distributions.js";
import { checkedDistributionFile } from "../core/settings_file.js";
import { UserError } from "../core/errors.js";
import { ensureToolsLoaded, providedToolsets } from "../../tools/model_tools.js";
import { parseCommandArgs, parseIntFlag } from "./args.js";
import type { Command } from "./types.js";

/** The JSON output holds every draw in memory: bounded. */
const MAX_JSON_DRAWS = 1_000_000;

export const command: Command = {
  summary: "show seeded toolset draws from a distribution",
  help: `Usage: hermes-batch sample [--distribution NAME] [--seed S] [-n N] [--epoch E]
                           [--distribution-file FILE] [--json]

Draws toolsets for tasks task_0 … task_{N-1} exactly as a run with this seed would: each toolset is
included independently with its probability; if none is drawn, the most likely one is used. A draw
depends only on (seed, task id, epoch), so it is the same whatever the worker count or order.
Toolsets this build does not provide are drawn too, as in the original (one note; --json lists
them as "unprovided"): a run records them in toolsets_used, but they offer the model no tool.

Options:
  --distribution NAME        default: default
  --seed S                   run seed (default 0)
  -n N                       number of tasks (default 10)
  --epoch E                  repeat index (default 0)
  --distribution-file FILE   also read distributions from a YAML file
  --json                     machine-readable output
`,
  async run(argv) {
    const { values } = parseCommandArgs(
      argv,
      {
        distribution: { type: "string" },
        seed: { type: "string" },
        n: { type: "string", short: "n" },
        epoch: { type: "string" },
        "distribution-file": { type: "string" },
        json: { type: "boolean" },
      },
      false,
    );
    const count = parseIntFlag(values.n, "-n", 1) ?? 10;
    const epoch = parseIntFlag(values.epoch, "--epoch", 0) ?? 0;
    // As run reads it (`--seed 007` is seed 7, `abc` refused): the draws are a run's only for the same number.
    const seed = String(parseIntFlag(values.seed, "--seed", Number.MIN_SAFE_INTEGER) ?? 0);
    await ensureToolsLoaded(); // first: plugin toolsets may appear in a distribution file
    if (values["distribution-file"] !== undefined)
      loadDistributionFile(checkedDistributionFile(values["distribution-file"]));
    const name = values.distribution ?? "default";
    const sampler = prepareDistribution(name, {
      available: providedToolsets(),
      warn: (m) => process.stderr.write(`note: ${m}\n`),
    });

    const draw = (i: number) => ({
      task_id: `task_${i}`,
      toolsets: sampler.sample({ seed, taskId: `task_${i}`, epoch }),
    });
    if (values.json) {
      if (count > MAX_JSON_DRAWS)
        throw new UserError(
          `-n ${count} with --json is more than ${MAX_JSON_DRAWS} draws (the JSON is built in memory); use the text output`,
        );
      const out = {
        distribution: name,
        seed,
        epoch,
        unprovided: sampler.unprovided,
        draws: Array.from({ length: count }, (_, i) => draw(i)),
      };
      process.stdout.write(JSON.stringify(out, null, 2) + "\n");
      return 0;
    }
    // Streamed: any -n runs in constant memory (the draws are never all held).
    const width = `task_${count - 1}`.length;
    const hits = new Map<string, number>();
    let block: string[] = [`distribution ${name}, seed ${seed}, epoch ${epoch}`];
    for (let i = 0; i < count; i++) {
      const d = draw(i);
      for (const ts of new Set(d.toolsets)) hits.set(ts, (hits.get(ts) ?? 0) + 1);
      block.push(`${d.task_id.padEnd(width)}  ${d.toolsets.join(", ")}`);
      if (block.length >= 10_000) {
        if (!process.stdout.write(block.join("\n") + "\n")) await once(process.stdout, "drain");
        block = [];
      }
    }
    block.push("", `drawn in ${count} tasks (probability):`);
    for (const ts of Object.keys(sampler.toolsets)) {
      const note = sampler.unprovided.includes(ts) ? "  not provided here: offers no tool" : "";
      block.push(
        `  ${ts.padEnd(12)} ${String(hits.get(ts) ?? 0).padStart(String(count).length)}/${count}  (${sampler.toolsets[ts]}%)${note}`,
      );
    }
    process.stdout.write(block.join("\n") + "\n");
    return 0;
  },
};
