/**
 * Tool-call argument text as the original Hermes agent judges it: empty means `{}`; text that does not
 * end in `}` or `]` was cut off (a router can rewrite finish_reason "length" to "tool_calls"). A cut that
 * only lost its closing brackets is repaired by closing them; a cut inside a string (or after a key) cannot
 * be repaired and the original refuses to run it; other bad JSON is the model's mistake and is retried.
 */

export type ArgumentsVerdict =
  | { kind: "valid"; text: string }
  | { kind: "repaired"; text: string }
  | { kind: "truncated" }
  | { kind: "invalid"; error: string };

/** The closing brackets a JSON prefix is missing, or undefined when it stops inside a string. */
function missingClosers(text: string): string | undefined {
  const stack: string[] = [];
  let inString = false;
  let escaped = false;
  for (const ch of text) {
    if (inString) {
      if (escaped) escaped = false;
      else if (ch === "\\") escaped = true;
      else if (ch === '"') inString = false;
      continue;
    }
    if (ch === '"') inString = true;
    else if (ch === "{") stack.push("}");
    else if (ch === "[") stack.push("]");
    else if (ch === "}" || ch === "]") stack.pop();
  }
  return inString ? undefined : stack.reverse().join("");
}

function parsesToObject(text: string): boolean {
  try {
    const v: unknown = JSON.parse(text);
    return typeof v === "object" && v !== null && !Array.isArray(v);
  } catch {
    return false;
  }
}

export function judgeArguments(raw: string): ArgumentsVerdict {
  const text = raw.trim();
  if (text === "") return { kind: "valid", text: "{}" };
  try {
    JSON.parse(text);
    return { kind: "valid", text };
  } catch (err) {
    if (text.endsWith("}") || text.endsWith("]")) return { kind: "invalid", error: (err as Error).message };
  }
  const closers = missingClosers(text);
  if (closers === undefined || closers === "") return { kind: "truncated" };
  // A cut right after a separator leaves `,` dangling; the value before it is complete.
  const candidate = text.replace(/,\s*$/, "") + closers;
  return parsesToObject(candidate) ? { kind: "repaired", text: candidate } : { kind: "truncated" };
}
