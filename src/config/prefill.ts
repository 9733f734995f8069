/** `--prefill-messages-file`: read and validated once, in the main thread; the workers get the messages. */
import { readFileSync } from "node:fs";
import * as z from "zod";
import type { ChatMessage } from "../core/chat.js";
import { UserError } from "../core/errors.js";

const PrefillSchema = z.array(
  z.object({ role: z.enum(["system", "user", "assistant"]), content: z.string() }).strict(),
);

/** The messages of a prefill file, or one UserError line naming the flag, the file and the reason. */
export function readPrefillFile(path: string): ChatMessage[] {
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(path, "utf8"));
  } catch (err) {
    throw new UserError(
      `--prefill-messages-file ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
    );
  }
  const r = PrefillSchema.safeParse(data);
  if (!r.success) {
    const i = r.error.issues[0]!;
    throw new UserError(
      `--prefill-messages-file ${path}: [${i.path.join(".")}] ${i.message} (expected a JSON array of {role, content})`,
    );
  }
  return r.data;
}
