/**
 * JSON.parse that refuses an object with the same key twice. `JSON.parse('{"decision":"approve","decision":"deny"}')`
 * silently keeps the last value, so an answer that says two things would be read as whichever came last: for a
 * verdict (the approver's, a judge's) that is ambiguity, not an answer.
 */

export class DuplicateKeyError extends SyntaxError {
  constructor(readonly key: string) {
    super(`duplicate key ${JSON.stringify(key)}`);
    this.name = "DuplicateKeyError";
  }
}

/**
 * Parses like JSON.parse (same errors for invalid JSON), then throws DuplicateKeyError when any object in
 * the text repeats a key (compared after unescaping, so `"a"` and `"\u0061"` are the same key).
 */
export function parseJsonStrict(text: string): unknown {
  const value: unknown = JSON.parse(text);
  const duplicate = findDuplicateKey(text);
  if (duplicate !== undefined) throw new DuplicateKeyError(duplicate);
  return value;
}

/** The first key repeated within one object of a valid JSON text, or undefined. */
function findDuplicateKey(text: string): string | undefined {
  // One set of keys per open object; arrays push null so a string inside them is never taken for a key.
  const stack: (Set<string> | null)[] = [];
  let expectKey = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (ch === "{") {
      stack.push(new Set());
      expectKey = true;
    } else if (ch === "[") {
      stack.push(null);
      expectKey = false;
    } else if (ch === "}" || ch === "]") {
      stack.pop();
      expectKey = false;
    } else if (ch === ",") {
      expectKey = stack.at(-1) instanceof Set;
    } else if (ch === ":") {
      expectKey = false;
    } else if (ch === '"') {
      let j = i + 1;
      while (text[j] !== '"') j += text[j] === "\\" ? 2 : 1;
      if (expectKey) {
        const key = JSON.parse(text.slice(i, j + 1)) as string;
        const keys = stack.at(-1) as Set<string>;
        if (keys.has(key)) return key;
        keys.add(key);
        expectKey = false;
      }
      i = j;
    }
  }
  return undefined;
}
