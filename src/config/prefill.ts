/** `--prefill-messages-file`: read and validated once, in the main thread; the workers get the messages. */
import * as z from "zod";
import type { ChatMessage } from "../core/chat.js";
import { UserError } from "../core/errors.js";
import { jsonShapeProblem } from "../run/dataset.js";
import { readSettingsText } from "../core/settings_file.js";

const PrefillSchema = z.array(
  z.object({ role: z.enum(["system", "user", "assistant"]), content: z.string() }).strict(),
);

/** The messages of a prefill file, or one UserError line naming the flag, the file and the reason. */
export function readPrefillFile(path: string): ChatMessage[] {
  const text = readSettingsText(path, "--prefill-messages-file");
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (err) {
    throw new UserError(`--prefill-messages-file ${path}: ${(err as Error).message}`);
  }
  // JSON.parse keeps the last of a repeated key: a message that says two things is refused, as a dataset row is.
  const shape = jsonShapeProblem(text);
  if (shape) throw new UserError(`--prefill-messages-file ${path}: ${shape}`);
  const r = PrefillSchema.safeParse(data);
  if (!r.success) {
    const i = r.error.issues[0]!;
    throw new UserError(
      `--prefill-messages-file ${path}: [${i.path.join(".")}] ${i.message} (expected a JSON array of {role, content})`,
    );
  }
  return r.data;
}
