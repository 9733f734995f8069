/**
 * A trajectory line's JSON text, the bytes `JSON.stringify` gives, with the parts that are the same for many
 * tasks serialised once: the tool list, the conversation's system turn (the tool list again, as Python JSON
 * inside a string), and the zero-filled tool stats (see report/tool_stats.ts `toolStatsJson`).
 */
import type { ConversationTurn } from "../core/records.js";

/** A value already serialised: written into the line as it is. */
export class JsonText {
  constructor(readonly json: string) {}
}

/**
 * `JSON.stringify({...record, ...extra})` where a JsonText value stands for its text. The extra keys must not
 * be keys of `record` (they come after its keys; a spread would keep a repeated key at its first place).
 */
export function recordJson(record: object, extra?: object): string {
  const parts: string[] = [];
  const write = (from: object) => {
    for (const key in from) {
      const value = (from as Record<string, unknown>)[key];
      const json = value instanceof JsonText ? value.json : JSON.stringify(value);
      if (json === undefined) continue;
      parts.push(`${parts.length ? "," : "{"}${keyJson(key)}:`, json);
    }
  };
  write(record);
  if (extra) write(extra);
  if (!parts.length) return "{}";
  parts.push("}");
  // One flat string: a `+=` chain is a rope that postMessage would flatten into a copy of its own.
  return parts.join("");
}

const keyJsonCache = new Map<string, string>();

/** A key's JSON (`"task_id"`), made once per key name. */
function keyJson(key: string): string {
  let json = keyJsonCache.get(key);
  if (json === undefined) {
    json = JSON.stringify(key);
    if (keyJsonCache.size < 256) keyJsonCache.set(key, json);
  }
  return json;
}

/** The last big turn value serialised (the system turn: the same string object for every task of a tool list). */
let lastTurn: { value: string; json: string } | undefined;

/** `JSON.stringify(turns)` of a Hermes conversation. */
export function conversationsJson(turns: readonly ConversationTurn[]): string {
  let out = "[";
  for (let i = 0; i < turns.length; i++) {
    const turn = turns[i]!;
    const { from, value } = turn;
    if (typeof from !== "string" || typeof value !== "string") {
      out += `${i ? "," : ""}${JSON.stringify(turn)}`;
      continue;
    }
    let json: string;
    if (lastTurn?.value === value) json = lastTurn.json;
    else {
      json = JSON.stringify(value);
      if (i === 0) lastTurn = { value, json };
    }
    out += `${i ? "," : ""}{"from":${JSON.stringify(from)},"value":${json}}`;
  }
  return `${out}]`;
}

const toolListJson = new WeakMap<readonly unknown[], string>();

/**
 * `JSON.stringify(tools)` of a tool list, kept per frozen list (getToolDefinitions gives the same deep-frozen
 * array to every task of a toolset choice).
 */
export function toolsJson(tools: readonly unknown[]): string {
  if (!Object.isFrozen(tools)) return JSON.stringify(tools);
  let json = toolListJson.get(tools);
  if (json === undefined) toolListJson.set(tools, (json = JSON.stringify(tools)));
  return json;
}
