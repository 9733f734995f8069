/**
 * `--mcp-config FILE` for the listing commands (`tools`, `toolsets`): the servers of the file started once, as a
 * run starts them (a `where: sandbox` server in a throw-away sandbox of `--env`), their tools registered under
 * toolsets `mcp-<server>`, so the listing shows what a run with that file would offer.
 */
import { resolveRunConfig } from "../config/run_config.js";
import { UserError } from "../core/errors.js";
import { setUpMcp } from "../run/mcp_setup.js";

export const MCP_LISTING_OPTIONS = {
  "mcp-config": { type: "string" },
  env: { type: "string" },
  image: { type: "string" },
} as const;

export const MCP_LISTING_HELP = `  --mcp-config FILE also list the tools of these MCP servers (started once to list them; a server
                    that runs in the task's sandbox in a throw-away sandbox of --env)
  --env NAME        the environment for such a server: local (default), docker, singularity
  --image IMAGE     the image of that environment (docker, singularity)`;

/** Registers the file's MCP tools; nothing without `--mcp-config`. Bad config or a server that fails: UserError. */
export async function registerListedMcp(values: {
  "mcp-config"?: string;
  env?: string;
  image?: string;
}): Promise<void> {
  if (values["mcp-config"] === undefined) {
    if (values.env !== undefined || values.image !== undefined)
      throw new UserError("--env and --image choose where --mcp-config's servers start: give --mcp-config FILE too");
    return;
  }
  // The run options the servers need; the dataset and model are not used for a listing.
  const config = resolveRunConfig({
    dataset: "-",
    mcp_config: values["mcp-config"],
    env: values.env,
    image: values.image,
    run_name: "mcp-listing",
  });
  await setUpMcp(config);
}
