/** An error the user can fix (bad flag, bad file, unknown name): printed as one line, exit code 2. */
export class UserError extends Error {
  readonly exitCode = 2;
  constructor(message: string) {
    super(message);
    this.name = "UserError";
  }
}

export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
