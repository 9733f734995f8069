/**
 * Reasoning capture from a model's assistant message, with the original Hermes agent's rules
 * (run_agent.py `_extract_reasoning`, `_strip_think_blocks`, `_build_assistant_message`):
 *
 * - Fields first, in this order, each kept exactly as received (whitespace included) and an exact
 *   duplicate of an earlier piece skipped: `reasoning`, `reasoning_content`, then every
 *   `reasoning_details[]` entry's `summary`, `thinking`, `content` or `text` (the first that is set).
 * - Only when no field carries reasoning: the blocks of the tags think, thinking, thought, reasoning and
 *   REASONING_SCRATCHPAD in the content (tag by tag, in that order), each trimmed.
 * - The content always loses its reasoning blocks (closed pairs, an unterminated block that opens a line,
 *   stray tags) and is trimmed.
 *
 * Reasoning that only `reasoning_details` carries is kept in `reasoning`; the original's default (streaming)
 * path never reads that field, so `withoutDetails` also gives what it records (see ExtractedReasoning).
 *
 * One deliberate difference: an unterminated block (output cut mid-thought) and text before a lone closing
 * tag (templates that put the opening tag in the prompt) are kept as reasoning when no field exists,
 * where the original only drops them from the content.
 */

/** The parts of an API assistant message (or an assembled stream) that may carry reasoning. */
export interface RawAssistantFields {
  content?: unknown;
  reasoning_content?: unknown;
  reasoning?: unknown;
  reasoning_details?: unknown;
}

export interface ExtractedReasoning {
  /** Content without reasoning blocks, trimmed; null when nothing is left. */
  content: string | null;
  /** The reasoning pieces joined by a blank line; undefined when there is none. */
  reasoning: string | undefined;
  /**
   * Set only when `reasoning_details` added reasoning the other fields lack: the reasoning without them
   * (the other fields, else the reasoning blocks of the content; "" when none), which is what the
   * original's default streaming path records, since it reads only `reasoning_content`/`reasoning`.
   */
  withoutDetails?: string;
}

const TAGS = ["think", "thinking", "thought", "reasoning", "REASONING_SCRATCHPAD"] as const;
const TAG_ALTERNATION = "think|thinking|reasoning|thought|REASONING_SCRATCHPAD";
const UNTERMINATED_BLOCK = new RegExp(`(?:^|\\n)[ \\t]*<(?:${TAG_ALTERNATION})\\b[^>]*>([\\s\\S]*)$`, "i");
const STRAY_TAG = new RegExp(`</?(?:${TAG_ALTERNATION})>\\s*`, "gi");
const LEADING_CLOSE = new RegExp(`^([\\s\\S]*?)</(?:${TAG_ALTERNATION})>`, "i");
const OPEN_TAG = new RegExp(`<(?:${TAG_ALTERNATION})\\b[^>]*>`, "i");

const CLOSED_BLOCKS = new Map<string, RegExp>();

/** `<tag>…</tag>`, global: `replace` and `matchAll` never leave its `lastIndex` set, so one object serves all. */
function closedBlock(tag: string): RegExp {
  let re = CLOSED_BLOCKS.get(tag);
  if (!re) CLOSED_BLOCKS.set(tag, (re = new RegExp(`<${tag}>([\\s\\S]*?)</${tag}>`, "gi")));
  return re;
}

/** Content without any reasoning block: what the original shows and stores (before trimming). */
export function stripReasoningBlocks(content: string): string {
  let out = content;
  for (const tag of ["think", "thinking", "reasoning", "REASONING_SCRATCHPAD", "thought"])
    out = out.replace(closedBlock(tag), "");
  out = out.replace(UNTERMINATED_BLOCK, "");
  return out.replace(STRAY_TAG, "");
}

function pushUnique(parts: string[], piece: unknown): void {
  if (typeof piece === "string" && piece !== "" && !parts.includes(piece)) parts.push(piece);
}

function detailText(detail: unknown): unknown {
  if (!detail || typeof detail !== "object" || Array.isArray(detail)) return undefined;
  const d = detail as Record<string, unknown>;
  for (const key of ["summary", "thinking", "content", "text"]) {
    const v = d[key];
    if (typeof v === "string" && v !== "") return v;
  }
  return undefined;
}

/** Reasoning written inside the content (used only when the message has no reasoning field), and the
 * content left to show: a lone leading closing tag takes the text before it along. */
function inlineReasoning(content: string): { parts: string[]; rest: string } {
  const parts: string[] = [];
  let rest = content;
  const leading = LEADING_CLOSE.exec(content);
  if (leading && !OPEN_TAG.test(leading[1]!)) {
    pushUnique(parts, leading[1]!.trim());
    rest = content.slice(leading[0].length);
  }
  for (const tag of TAGS) {
    for (const m of rest.matchAll(closedBlock(tag))) pushUnique(parts, m[1]!.trim());
  }
  const withoutClosed = TAGS.reduce((text, tag) => text.replace(closedBlock(tag), ""), rest);
  const dangling = UNTERMINATED_BLOCK.exec(withoutClosed);
  if (dangling) pushUnique(parts, dangling[1]!.trim());
  return { parts, rest };
}

/** Content and reasoning of an assistant message, from every place reasoning can be. */
export function extractReasoning(message: RawAssistantFields): ExtractedReasoning {
  const parts: string[] = [];
  pushUnique(parts, message.reasoning);
  pushUnique(parts, message.reasoning_content);
  const fieldParts = parts.length;
  if (Array.isArray(message.reasoning_details))
    for (const d of message.reasoning_details) pushUnique(parts, detailText(d));
  if (parts.length > fieldParts) {
    const without = extractReasoning({ ...message, reasoning_details: undefined });
    return { ...contentAndReasoning(message.content, parts), withoutDetails: without.reasoning ?? "" };
  }
  return contentAndReasoning(message.content, parts);
}

/** The visible content and the joined reasoning, given the reasoning taken from the fields (`parts`, extended here). */
function contentAndReasoning(rawContent: unknown, parts: string[]): ExtractedReasoning {
  let content: string | null = null;
  if (typeof rawContent === "string" && !rawContent.includes("<")) {
    // Every tag pattern needs a "<": the usual answer skips them all.
    content = rawContent.trim() || null;
  } else if (typeof rawContent === "string") {
    let text = rawContent;
    if (parts.length === 0) {
      const inline = inlineReasoning(text);
      parts.push(...inline.parts);
      text = inline.rest;
    }
    const visible = stripReasoningBlocks(text).trim();
    content = visible === "" ? null : visible;
  }
  return { content, reasoning: parts.length ? parts.join("\n\n") : undefined };
}
