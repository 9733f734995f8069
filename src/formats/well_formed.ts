/** Text a training pipeline can read, for the lines `export` writes. */

/** A half of a UTF-16 surrogate pair without its other half. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * The value with every lone surrogate in its strings (keys too) replaced by U+FFFD; the same object when there is
 * none. A model's output cut inside an emoji, or a bad byte a server passed on, can hold one; JSON.stringify
 * writes it as a `\udXXX` escape that parsers give back as it is, and UTF-8 cannot hold it: Python's tokenizers
 * and Arrow refuse the string (and the whole file with it).
 */
export function wellFormed<T>(value: T): T {
  if (typeof value === "string") {
    LONE_SURROGATE.lastIndex = 0;
    return (LONE_SURROGATE.test(value) ? value.replace(LONE_SURROGATE, "\uFFFD") : value) as T;
  }
  if (Array.isArray(value)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const v = wellFormed(value[i]);
      if (v !== value[i]) (out ??= value.slice())[i] = v;
    }
    return (out ?? value) as T;
  }
  if (value !== null && typeof value === "object") {
    let out: Record<string, unknown> | undefined;
    for (const [k, v] of Object.entries(value)) {
      const key = wellFormed(k);
      const clean = wellFormed(v);
      if (key === k && clean === v && !out) continue;
      if (!out) {
        // Rebuilt from the start, keys in their order.
        out = {};
        for (const [k2, v2] of Object.entries(value)) {
          if (k2 === k) break;
          out[k2] = v2;
        }
      }
      out[key] = clean;
    }
    return (out ?? value) as T;
  }
  return value;
}
