/**
 * Argument parsing shared by the tool modules: zod schemas that forgive what models commonly send
 * ("30" for 30, "true" for true) and error results that name the bad field.
 */
import { z } from "zod";
import { toolError } from "./registry.js";

/** An integer, also accepted as a string of digits. */
export const intArg = () =>
  z.union([z.number().int(), z.string().trim().regex(/^-?\d+$/, "expected an integer").transform(Number)]);

/** A boolean, also accepted as "true"/"false". */
export const boolArg = () =>
  z.union([z.boolean(), z.enum(["true", "false", "True", "False"]).transform((v) => v.toLowerCase() === "true")]);

export type ParsedArgs<T> = { ok: true; value: T } | { ok: false; error: string };

/** Parses tool arguments; on failure gives a `{"error": ...}` JSON string naming the field(s). */
export function parseToolArgs<S extends z.ZodType>(tool: string, schema: S, args: unknown): ParsedArgs<z.infer<S>> {
  const result = schema.safeParse(args ?? {});
  if (result.success) return { ok: true, value: result.data };
  const problems = result.error.issues.map((issue) => {
    const field = issue.path.length > 0 ? issue.path.map(String).join(".") : "arguments";
    return `'${field}': ${issue.message}`;
  });
  return { ok: false, error: toolError(`Invalid arguments for ${tool}: ${problems.join("; ")}`) };
}
