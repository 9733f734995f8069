/**
 * Reasoning capture from a model's assistant message. Providers put it in different places:
 * `reasoning_content` (DeepSeek, vLLM), `reasoning` (OpenRouter), `reasoning_details[]` (OpenRouter,
 * structured) or inline `<think>…</think>` blocks in the content (open-weight models served raw).
 */

/** The parts of an API assistant message (or an assembled stream) that may carry reasoning. */
export interface RawAssistantFields {
  content?: unknown;
  reasoning_content?: unknown;
  reasoning?: unknown;
  reasoning_details?: unknown;
}

export interface ExtractedReasoning {
  /** Content without the `<think>` blocks; null when nothing is left. */
  content: string | null;
  /** All reasoning pieces, deduplicated, joined by a blank line; undefined when there is none. */
  reasoning: string | undefined;
}

const THINK_BLOCK = /<think>([\s\S]*?)<\/think>/gi;
const OPEN_TAG = /<think>/i;
const CLOSE_TAG = /<\/think>/i;

/** Splits `<think>` blocks out of content. Handles a dangling open tag (truncated output) and a close tag
 * with no opening one (chat templates that put `<think>` in the prompt, so the model only emits `</think>`). */
export function splitThinkBlocks(content: string): { content: string; thoughts: string[] } {
  const thoughts: string[] = [];
  let rest = content;
  let touched = false;

  const firstClose = rest.search(CLOSE_TAG);
  const firstOpen = rest.search(OPEN_TAG);
  if (firstClose >= 0 && (firstOpen < 0 || firstClose < firstOpen)) {
    thoughts.push(rest.slice(0, firstClose));
    rest = rest.slice(firstClose + "</think>".length);
    touched = true;
  }

  rest = rest.replace(THINK_BLOCK, (_m, inner: string) => {
    thoughts.push(inner);
    touched = true;
    return "";
  });

  const dangling = rest.search(OPEN_TAG);
  if (dangling >= 0) {
    thoughts.push(rest.slice(dangling + "<think>".length));
    rest = rest.slice(0, dangling);
    touched = true;
  }

  return { content: touched ? rest.trim() : rest, thoughts };
}

function detailText(detail: unknown): string[] {
  if (typeof detail === "string") return [detail];
  if (!detail || typeof detail !== "object") return [];
  const d = detail as Record<string, unknown>;
  const out: string[] = [];
  for (const key of ["text", "summary", "content"]) {
    const v = d[key];
    if (typeof v === "string") out.push(v);
    else if (Array.isArray(v)) for (const item of v) out.push(...detailText(item));
  }
  return out;
}

/** Content and reasoning of an assistant message, from every place reasoning can hide. */
export function extractReasoning(message: RawAssistantFields): ExtractedReasoning {
  const pieces: string[] = [];
  if (typeof message.reasoning_content === "string") pieces.push(message.reasoning_content);
  if (typeof message.reasoning === "string") pieces.push(message.reasoning);
  if (Array.isArray(message.reasoning_details)) {
    for (const d of message.reasoning_details) pieces.push(...detailText(d));
  }

  let content: string | null = null;
  if (typeof message.content === "string") {
    const split = splitThinkBlocks(message.content);
    content = split.content;
    pieces.push(...split.thoughts);
  }

  const seen = new Set<string>();
  const unique: string[] = [];
  for (const p of pieces) {
    const t = p.trim();
    if (!t || seen.has(t)) continue;
    seen.add(t);
    unique.push(t);
  }
  return {
    content: content === null || content.trim() === "" ? null : content,
    reasoning: unique.length ? unique.join("\n\n") : undefined,
  };
}
