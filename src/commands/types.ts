/** A subcommand of `hermes-batch`: one file in src/commands/ each. */
export interface Command {
  /** One line for the command list in `hermes-batch --help`. */
  summary: string;
  /** Full text printed by `hermes-batch <name> --help`. */
  help: string;
  /** Returns the process exit code. Throw UserError for bad input (exit 2). */
  run(argv: string[]): Promise<number>;
}
