/**
 * Tool-call argument text as the original Hermes agent judges it on its default (streaming) path
 * (run_agent.py at cb51baec, `_repair_tool_call_arguments` and the stream's mock response): empty means
 * `{}`; JSON that does not parse is repaired when it can be (control characters inside strings, trailing
 * commas, missing closing brackets, surplus closing brackets); what cannot be repaired counts as cut off
 * by the length limit: the request is repeated once, then the task ends partial, nothing of it kept.
 */

export type ArgumentsVerdict =
  /** `value` is the text parsed (the tool pipeline takes it as is instead of parsing the text again). */
  { kind: "valid"; text: string; value: unknown } | { kind: "repaired"; text: string } | { kind: "unrepairable" };

/** Control characters inside JSON strings written as `\u00XX` (already escaped characters untouched). */
function escapeControlCharsInStrings(raw: string): string {
  let out = "";
  let inString = false;
  for (let i = 0; i < raw.length; i++) {
    const ch = raw[i]!;
    if (inString) {
      if (ch === "\\" && i + 1 < raw.length) {
        out += ch + raw[i + 1];
        i++;
        continue;
      }
      if (ch === '"') inString = false;
      out += ch.charCodeAt(0) < 0x20 ? `\\u${ch.charCodeAt(0).toString(16).padStart(4, "0")}` : ch;
    } else {
      if (ch === '"') inString = true;
      out += ch;
    }
  }
  return out;
}

function parses(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** Python's `json.dumps(value, separators=(",", ":"))`: compact, non-ASCII as `\uXXXX`. */
function compactAsciiJson(value: unknown): string {
  return JSON.stringify(value).replace(
    /[\u0080-\uffff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}

function count(text: string, ch: string): number {
  let n = 0;
  for (const c of text) if (c === ch) n++;
  return n;
}

/** The original's repair of argument text that does not parse; `{}` when nothing worked. */
export function repairArguments(raw: string): string {
  const stripped = raw.trim();
  if (!stripped || stripped === "None") return "{}";
  // Pass 0: JSON with raw control characters inside strings (Python's strict=False) is re-serialised.
  const escaped0 = escapeControlCharsInStrings(stripped);
  if (escaped0 !== stripped && parses(escaped0)) return compactAsciiJson(JSON.parse(escaped0));
  // Trailing commas, then missing closers (counted over the whole text, strings included, as there).
  let fixed = stripped.replace(/,\s*([}\]])/g, "$1");
  const openCurly = count(fixed, "{") - count(fixed, "}");
  const openBracket = count(fixed, "[") - count(fixed, "]");
  if (openCurly > 0) fixed += "}".repeat(openCurly);
  if (openBracket > 0) fixed += "]".repeat(openBracket);
  for (let i = 0; i < 50 && !parses(fixed); i++) {
    if (fixed.endsWith("}") && count(fixed, "}") > count(fixed, "{")) fixed = fixed.slice(0, -1);
    else if (fixed.endsWith("]") && count(fixed, "]") > count(fixed, "[")) fixed = fixed.slice(0, -1);
    else break;
  }
  if (parses(fixed)) return fixed;
  const escaped = escapeControlCharsInStrings(fixed);
  if (escaped !== fixed && parses(escaped)) return escaped;
  return "{}";
}

const NOT_JSON = Symbol("not JSON");

function parsed(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return NOT_JSON;
  }
}

export function judgeArguments(raw: string): ArgumentsVerdict {
  if (raw.trim() === "") return { kind: "valid", text: "{}", value: {} };
  const value = parsed(raw);
  if (value !== NOT_JSON) return { kind: "valid", text: raw, value };
  const repaired = repairArguments(raw);
  return repaired === "{}" ? { kind: "unrepairable" } : { kind: "repaired", text: repaired };
}
