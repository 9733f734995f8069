/** Asserts that an output line is exactly a record of the schema: valid, and no key the schema does not know. */
import { expect } from "vitest";
import type * as z from "zod";

export function expectExactRecord(schema: z.ZodType, value: unknown, what = "record"): void {
  const parsed = schema.safeParse(value);
  expect(parsed.success ? [] : parsed.error.issues, `${what} does not match its schema`).toEqual([]);
  // zod objects drop unknown keys when parsing: a key the schema does not know makes the two differ.
  expect(parsed.data, `${what} has keys its schema does not know`).toEqual(value);
}
