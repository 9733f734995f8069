/** An error the user can fix (bad flag, bad file, unknown name): printed as one line, exit code 2. */
export class UserError extends Error {
  /** 2 for bad input; a command may choose another documented code (3: results not comparable). */
  constructor(
    message: string,
    readonly exitCode = 2,
  ) {
    super(message);
    this.name = "UserError";
  }
}

export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
