/** The command that resumes this invocation, as the user typed it, without its secrets. */
import type { RunConfig } from "../config/run_config.js";
import { SECRET_KEYS } from "../config/run_config.js";
import { HEADER_KEYS, isShowableHeaderValue, parseHeaderLine } from "../config/headers.js";
import { flagOf } from "../config/run_options.js";
import { cliCommandLine } from "../core/cli_command.js";
import { scrubUrlCredentials } from "../core/url_credentials.js";
import { readsOnce } from "./dataset.js";
import { formatShard, type Shard } from "../shard/assign.js";

/**
 * The command line of this invocation with --resume (or --retry-failed, which reruns the failed tasks that
 * --resume leaves, and does not combine with --only), as the user typed it (flags, config, output dir).
 */
export function resumeCommand(
  config: RunConfig,
  shard: Shard | undefined,
  again: "--resume" | "--retry-failed" | "--resume --retry-failed" = "--resume",
): string {
  const typed = process.argv
    .slice(2)
    .filter((a) => a !== "--resume" && a !== "--retry-failed" && a !== "--retry-unscored")
    .filter(
      (a, i, all) => again === "--resume" || !(a.startsWith("--only=") || a === "--only" || all[i - 1] === "--only"),
    );
  // A key is never printed: its place says that one must be given again (or come from the environment).
  // Header values appear only as `${VAR}` references, URL credentials as USER:PASSWORD.
  const secretFlags = new Set(SECRET_KEYS.map((k) => `--${k.replace(/_/g, "-")}`));
  const headerFlags = new Set(HEADER_KEYS.map((k) => flagOf(k)!));
  const hidden = (flag: string, value: string): string => {
    if (secretFlags.has(flag)) return "KEY";
    if (headerFlags.has(flag)) {
      const h = parseHeaderLine(value);
      return h && !isShowableHeaderValue(h[1]) ? `${h[0]}: VALUE` : value;
    }
    return scrubUrlCredentials(value, "USER:PASSWORD");
  };
  const args = typed.map((a, i) => {
    const eq = a.indexOf("=");
    if (a.startsWith("--") && eq > 0) return `${a.slice(0, eq)}=${hidden(a.slice(0, eq), a.slice(eq + 1))}`;
    return i > 0 && typed[i - 1]!.startsWith("--") ? hidden(typed[i - 1]!, a) : scrubUrlCredentials(a, "USER:PASSWORD");
  });
  if (!args.includes("--run-name")) args.push("--run-name", config.run_name!);
  if (shard && !args.includes("--shard")) args.push("--shard", formatShard(shard));
  const gaps = [
    ...(args.includes("KEY") || args.some((a) => a.endsWith("=KEY")) ? ["your key back in place of KEY"] : []),
    ...(args.some((a) => /: VALUE$/.test(a)) ? ["the header values back in place of VALUE"] : []),
    ...(args.some((a) => a.includes("USER:PASSWORD@")) ? ["the URL credentials back in place of USER:PASSWORD"] : []),
  ];
  const hints = [
    ...(gaps.length ? [`put ${gaps.join(", ")}`] : []),
    ...(readsOnce(config.dataset) ? ["pipe the same dataset into it again"] : []),
  ];
  const hint = hints.length ? ` (${hints.join("; ")})` : "";
  return `${cliCommandLine([...args, ...again.split(" ")])}${hint}`;
}
