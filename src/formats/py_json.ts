/**
 * Python's `json.loads` / `json.dumps(..., ensure_ascii=False)` in TypeScript, for Hermes' conversations: values
 * parsed as Python parses them (dict key order kept, ints vs floats kept: `1.0` stays `1.0`) and printed with
 * its ", " and ": " separators and float repr. `pyJsonText` does both in one pass over a JSON text.
 */
/** A number as Python's json module would print it after `json.loads` (int stays int, float stays float). */
class PyNumber {
  constructor(readonly text: string) {}
}

const NUMBER_RE = /-?(?:0|[1-9]\d*)(\.\d+)?([eE][-+]?\d+)?/y;
// eslint-disable-next-line no-control-regex
const PLAIN_RUN_RE = /[^"\\\x00-\x1f]*/y;

/**
 * Parses JSON the way Python's `json.loads` does, into a tree `pyJsonDumps` prints exactly as Python
 * would: objects become Maps (insertion order kept, also for integer-like keys), numbers keep their
 * int/float nature, and NaN / Infinity / -Infinity are accepted. Throws SyntaxError on bad input.
 */
export function parsePyJson(text: string): unknown {
  let i = 0;
  const n = text.length;
  const fail = (what: string): never => {
    throw new SyntaxError(`${what} at position ${i}`);
  };
  const ws = () => {
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) i++;
      else break;
    }
  };
  const literal = (word: string, value: unknown): unknown => {
    if (text.startsWith(word, i)) {
      i += word.length;
      return value;
    }
    return fail("Expecting value");
  };
  const str = (): string => {
    i++; // opening quote
    let out = "";
    let start = i;
    for (;;) {
      if (i >= n) fail("Unterminated string");
      const c = text.charCodeAt(i);
      if (c === 0x22) {
        out += text.slice(start, i);
        i++;
        return out;
      }
      if (c < 0x20) fail("Invalid control character");
      if (c !== 0x5c) {
        PLAIN_RUN_RE.lastIndex = i;
        PLAIN_RUN_RE.test(text);
        i = Math.max(i + 1, PLAIN_RUN_RE.lastIndex);
        continue;
      }
      out += text.slice(start, i);
      const e = text[i + 1];
      i += 2;
      switch (e) {
        case '"':
          out += '"';
          break;
        case "\\":
          out += "\\";
          break;
        case "/":
          out += "/";
          break;
        case "b":
          out += "\b";
          break;
        case "f":
          out += "\f";
          break;
        case "n":
          out += "\n";
          break;
        case "r":
          out += "\r";
          break;
        case "t":
          out += "\t";
          break;
        case "u": {
          const hex = text.slice(i, i + 4);
          if (!/^[0-9a-fA-F]{4}$/.test(hex)) fail("Invalid \\uXXXX escape");
          out += String.fromCharCode(Number.parseInt(hex, 16));
          i += 4;
          break;
        }
        default:
          i -= 2;
          fail("Invalid \\escape");
      }
      start = i;
    }
  };
  const num = (): PyNumber => {
    NUMBER_RE.lastIndex = i;
    const m = NUMBER_RE.exec(text);
    if (!m) return fail("Expecting value");
    i += m[0].length;
    if (m[1] === undefined && m[2] === undefined) return new PyNumber(BigInt(m[0]).toString());
    return new PyNumber(pyFloatRepr(Number(m[0])));
  };
  const value = (): unknown => {
    ws();
    const c = text[i];
    switch (c) {
      case "{": {
        i++;
        const map = new Map<string, unknown>();
        ws();
        if (text[i] === "}") {
          i++;
          return map;
        }
        for (;;) {
          ws();
          if (text[i] !== '"') fail("Expecting property name enclosed in double quotes");
          const key = str();
          ws();
          if (text[i] !== ":") fail("Expecting ':' delimiter");
          i++;
          map.set(key, value());
          ws();
          if (text[i] === ",") {
            i++;
            continue;
          }
          if (text[i] === "}") {
            i++;
            return map;
          }
          fail("Expecting ',' delimiter");
        }
      }
      case "[": {
        i++;
        const arr: unknown[] = [];
        ws();
        if (text[i] === "]") {
          i++;
          return arr;
        }
        for (;;) {
          arr.push(value());
          ws();
          if (text[i] === ",") {
            i++;
            continue;
          }
          if (text[i] === "]") {
            i++;
            return arr;
          }
          fail("Expecting ',' delimiter");
        }
      }
      case '"':
        return str();
      case "t":
        return literal("true", true);
      case "f":
        return literal("false", false);
      case "n":
        return literal("null", null);
      case "N":
        return literal("NaN", new PyNumber("NaN"));
      case "I":
        return literal("Infinity", new PyNumber("Infinity"));
      case "-":
        if (text.startsWith("-Infinity", i)) return literal("-Infinity", new PyNumber("-Infinity"));
        return num();
      default:
        return num();
    }
  };
  const result = value();
  ws();
  if (i !== n) fail("Extra data");
  return result;
}

/** Python's `repr(float)`: shortest round-trip digits, exponent form below 1e-4 and from 1e16 on. */
export function pyFloatRepr(x: number): string {
  if (Number.isNaN(x)) return "NaN";
  if (x === Infinity) return "Infinity";
  if (x === -Infinity) return "-Infinity";
  if (x === 0) return Object.is(x, -0) ? "-0.0" : "0.0";
  const sign = x < 0 ? "-" : "";
  const [mant, expText] = Math.abs(x).toExponential().split("e") as [string, string];
  const digits = mant.replace(".", "");
  const e = Number(expText);
  if (e >= -4 && e < 16) {
    if (e < 0) return `${sign}0.${"0".repeat(-e - 1)}${digits}`;
    const intPart = digits.slice(0, e + 1).padEnd(e + 1, "0");
    return `${sign}${intPart}.${digits.slice(e + 1) || "0"}`;
  }
  const m = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
  return `${sign}${m}e${e < 0 ? "-" : "+"}${String(Math.abs(e)).padStart(2, "0")}`;
}

function pyNumber(x: number): string {
  if (Number.isInteger(x)) return Number.isSafeInteger(x) ? String(x === 0 ? 0 : x) : BigInt(x).toString();
  return pyFloatRepr(x);
}

/**
 * `json.dumps(value, ensure_ascii=False)` of Python: `{"a": [1, 2], "b": "é"}`. Accepts plain JS
 * values (integral numbers print as ints) and the trees of `parsePyJson`.
 */
export function pyJsonDumps(value: unknown): string {
  if (value === null || value === undefined) return "null";
  switch (typeof value) {
    case "string":
      // JSON.stringify escapes exactly what Python does with ensure_ascii=False (", \, \b \f \n \r \t,
      // other controls as lowercase \u00xx); only lone surrogates differ (escaped here, raw in Python).
      return JSON.stringify(value);
    case "boolean":
      return value ? "true" : "false";
    case "number":
      return pyNumber(value);
    case "bigint":
      return value.toString();
    case "function":
    case "symbol":
      return "null";
  }
  if (value instanceof PyNumber) return value.text;
  if (Array.isArray(value)) return `[${value.map(pyJsonDumps).join(", ")}]`;
  if (value instanceof Map) {
    const parts: string[] = [];
    for (const [k, v] of value) parts.push(`${JSON.stringify(String(k))}: ${pyJsonDumps(v)}`);
    return `{${parts.join(", ")}}`;
  }
  const obj = value as { toJSON?: () => unknown };
  if (typeof obj.toJSON === "function") return pyJsonDumps(obj.toJSON());
  const parts: string[] = [];
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    if (v === undefined || typeof v === "function" || typeof v === "symbol") continue;
    parts.push(`${JSON.stringify(k)}: ${pyJsonDumps(v)}`);
  }
  return `{${parts.join(", ")}}`;
}

const FAILED = Symbol("needs the tree");

/** One pass of `pyJsonText`: the text and where it is. */
class TextReformat {
  at = 0;

  constructor(readonly text: string) {}

  ws(): void {
    const { text } = this;
    for (;;) {
      const c = text.charCodeAt(this.at);
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) this.at++;
      else return;
    }
  }

  value(): string {
    this.ws();
    const { text } = this;
    switch (text[this.at]) {
      case "{":
        return this.object();
      case "[":
        return this.array();
      case '"':
        return this.string().json;
      case "t":
        return this.literal("true");
      case "f":
        return this.literal("false");
      case "n":
        return this.literal("null");
      case "N":
        return this.literal("NaN");
      case "I":
        return this.literal("Infinity");
      case "-":
        if (text.startsWith("-Infinity", this.at)) return this.literal("-Infinity");
        return this.number();
      default:
        return this.number();
    }
  }

  literal(word: string): string {
    if (!this.text.startsWith(word, this.at)) throw FAILED;
    this.at += word.length;
    return word;
  }

  number(): string {
    NUMBER_RE.lastIndex = this.at;
    const m = NUMBER_RE.exec(this.text);
    if (!m) throw FAILED;
    this.at += m[0].length;
    if (m[1] === undefined && m[2] === undefined) return m[0] === "-0" ? "0" : m[0];
    return pyFloatRepr(Number(m[0]));
  }

  /** The string at `at` (its opening quote): its value, and that value as JSON.stringify writes it. */
  string(): { value: string; json: string } {
    const { text } = this;
    const start = this.at;
    PLAIN_STRING_RE.lastIndex = start + 1;
    if (PLAIN_STRING_RE.test(text)) {
      this.at = PLAIN_STRING_RE.lastIndex;
      // Nothing in it that JSON.stringify escapes: the literal is its own JSON.
      return { value: text.slice(start + 1, this.at - 1), json: text.slice(start, this.at) };
    }
    ESCAPED_STRING_RE.lastIndex = start + 1;
    if (!ESCAPED_STRING_RE.test(text)) throw FAILED;
    this.at = ESCAPED_STRING_RE.lastIndex;
    // Escapes and raw surrogates: JSON's own string decoding is Python's for every valid string.
    const value = JSON.parse(text.slice(start, this.at)) as string;
    return { value, json: JSON.stringify(value) };
  }

  object(): string {
    this.at++;
    this.ws();
    if (this.text[this.at] === "}") {
      this.at++;
      return "{}";
    }
    const keys = new KeySet();
    let out = "{";
    for (;;) {
      this.ws();
      if (this.text[this.at] !== '"') throw FAILED;
      const key = this.string();
      // A repeated key keeps its first place with its last value in Python: the tree does that.
      if (!keys.add(key.value)) throw FAILED;
      this.ws();
      if (this.text[this.at] !== ":") throw FAILED;
      this.at++;
      out += `${keys.size > 1 ? ", " : ""}${key.json}: ${this.value()}`;
      this.ws();
      const c = this.text[this.at++];
      if (c === "}") return `${out}}`;
      if (c !== ",") throw FAILED;
    }
  }

  array(): string {
    this.at++;
    this.ws();
    if (this.text[this.at] === "]") {
      this.at++;
      return "[]";
    }
    let out = "[";
    for (let first = true; ; first = false) {
      out += `${first ? "" : ", "}${this.value()}`;
      this.ws();
      const c = this.text[this.at++];
      if (c === "]") return `${out}]`;
      if (c !== ",") throw FAILED;
    }
  }
}

/** An object's keys so far: a list while short, a Set beyond. */
class KeySet {
  private list: string[] = [];
  private set: Set<string> | undefined;

  get size(): number {
    return this.set ? this.set.size : this.list.length;
  }

  /** False when the key was there already. */
  add(key: string): boolean {
    if (this.set) return this.set.size !== this.set.add(key).size;
    if (this.list.includes(key)) return false;
    this.list.push(key);
    if (this.list.length > 16) this.set = new Set(this.list);
    return true;
  }
}

// A string without escapes, control characters or surrogates is its own JSON (the closing quote included).
// eslint-disable-next-line no-control-regex
const PLAIN_STRING_RE = /[^"\\\x00-\x1f\ud800-\udfff]*"/y;
const ESCAPED_STRING_RE = /(?:[^"\\]|\\[\s\S])*"/y;

/**
 * `pyJsonDumps(parsePyJson(text))` in one pass over the text, without the tree; undefined where that needs the
 * tree (an object with a repeated key) or would throw (not JSON): the caller then takes the tree's way.
 */
export function pyJsonText(text: string): string | undefined {
  const pass = new TextReformat(text);
  try {
    const out = pass.value();
    pass.ws();
    return pass.at === text.length ? out : undefined;
  } catch (err) {
    if (err === FAILED || err instanceof SyntaxError || err instanceof RangeError) return undefined;
    throw err;
  }
}
