/**
 * Building blocks for the tools' zod argument schemas. They forgive what models commonly send ("30"
 * for 30, "true" for true) before validating, so the JSON Schema derived for the model stays the
 * plain one (`{"type": "integer", "minimum": 1}`).
 */
import * as z from "zod";

export interface IntegerArg {
  min?: number;
  max?: number;
  /**
   * Out-of-range values are brought into range instead of refused (the bounds are still advertised):
   * `both` bounds, or only the `max`.
   */
  clamp?: "both" | "max";
}

/** An integer, also accepted as a string of digits. */
export function integerArg(opts: IntegerArg = {}) {
  let schema = z.number({ error: "expected an integer" }).int("expected an integer");
  if (opts.min !== undefined) schema = schema.min(opts.min, `must be >= ${opts.min}`);
  if (opts.max !== undefined) schema = schema.max(opts.max, `must be <= ${opts.max}`);
  return z.preprocess((v) => {
    const n = typeof v === "string" && /^\s*-?\d+\s*$/.test(v) ? Number(v) : v;
    if (!opts.clamp || typeof n !== "number" || !Number.isInteger(n)) return n;
    let clamped = n;
    if (opts.min !== undefined && opts.clamp === "both") clamped = Math.max(opts.min, clamped);
    if (opts.max !== undefined) clamped = Math.min(opts.max, clamped);
    return clamped;
  }, schema);
}

/** A boolean, also accepted as "true"/"false" in any case. */
export function booleanArg() {
  return z.preprocess(
    (v) => (typeof v === "string" && /^(true|false)$/i.test(v.trim()) ? v.trim().toLowerCase() === "true" : v),
    z.boolean({ error: "expected true or false" }),
  );
}

/** A non-empty string; `blankOk: false` also refuses one of only white space. */
export function nonEmptyString(opts: { blankOk?: boolean } = {}) {
  return z.string().refine((s) => (opts.blankOk === false ? s.trim() : s) !== "", "must not be empty");
}

/**
 * A path: a string without NUL bytes. No file name holds one, and the shell a backend writes through drops it, so
 * `a\u0000b` would read or write `ab`, a file the model never named.
 */
export function pathArg(base: z.ZodString = z.string()) {
  return base.refine((s) => !s.includes("\u0000"), "must not contain a NUL byte");
}

const unadvertised = new WeakSet<z.ZodType>();

/** An argument that is accepted (an alias or legacy name) but left out of the schema the model sees. */
export function unadvertisedArg<T extends z.ZodType>(schema: T): T {
  unadvertised.add(schema);
  return schema;
}

const advertisedRequired = new WeakSet<z.ZodType>();

/**
 * An argument the model is told is required (the original's schema lists it in `required`) while a call
 * that leaves it out is still accepted with the handler's default, as the original's handler accepts it.
 */
export function requiredInSchema<T extends z.ZodType>(schema: T): T {
  advertisedRequired.add(schema);
  return schema;
}

const documentedDefaults = new WeakMap<z.ZodType, unknown>();

/**
 * An optional argument whose default the model is told (`"default": value` in its JSON Schema, as the
 * original's schemas have); the handler applies the same default when the argument is left out.
 */
export function withDefault<T extends z.ZodType>(schema: T, value: unknown): T {
  documentedDefaults.set(schema, value);
  return schema;
}

/**
 * The JSON Schema the model sees for a zod argument schema: the input side (what the model sends),
 * without `$schema` and unadvertised arguments, keys ordered as hand-written schemas read them (`type`
 * first, `description` last but before nested object schemas); property order and `required` are
 * zod's (the declaration order). The tool schemas appear verbatim in every trajectory's system prompt.
 */
export function toolParameters(args: z.ZodType): Record<string, unknown> {
  const schema = z.toJSONSchema(args, {
    io: "input",
    unrepresentable: "any",
    override: (ctx) => {
      const shape = (ctx.zodSchema as unknown as { _zod: { def: { shape?: Record<string, z.ZodType> } } })._zod.def
        .shape;
      if (!shape) return;
      const js = ctx.jsonSchema as { properties?: Record<string, Record<string, unknown>>; required?: string[] };
      for (const [key, field] of Object.entries(shape)) {
        if (documentedDefaults.has(field) && js.properties?.[key])
          js.properties[key]!.default = documentedDefaults.get(field);
        if (advertisedRequired.has(field)) {
          const required = new Set([...(js.required ?? []), key]);
          js.required = Object.keys(shape).filter((k) => required.has(k));
        }
        if (!unadvertised.has(field)) continue;
        delete js.properties?.[key];
        if (js.required) js.required = js.required.filter((k) => k !== key);
      }
    },
  }) as Record<string, unknown>;
  delete schema.$schema;
  // An object schema always says what is required, even nothing (as the seeds' schemas do).
  if (schema.type === "object" && !schema.required) schema.required = [];
  return orderKeys(schema) as Record<string, unknown>;
}

function orderKeys(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(orderKeys);
  if (!node || typeof node !== "object") return node;
  // Nested object schemas (array items with properties) come after the description.
  const nested = (v: unknown) => !!v && typeof v === "object" && "properties" in v;
  const rank = (k: string, v: unknown) =>
    k === "type" ? 0 : k === "description" ? 2 : k === "items" && nested(v) ? 3 : 1;
  const entries = Object.entries(node as Record<string, unknown>)
    // zod's int() bounds itself to safe integers; that says nothing to a model.
    .filter(
      ([k, v]) =>
        !((k === "maximum" && v === Number.MAX_SAFE_INTEGER) || (k === "minimum" && v === Number.MIN_SAFE_INTEGER)),
    )
    .map(([k, v]) => [k, k === "properties" ? orderProperties(v) : orderKeys(v)] as const)
    .sort((a, b) => rank(a[0], a[1]) - rank(b[0], b[1]));
  return Object.fromEntries(entries);
}

function orderProperties(props: unknown): unknown {
  if (!props || typeof props !== "object") return props;
  return Object.fromEntries(Object.entries(props as Record<string, unknown>).map(([k, v]) => [k, orderKeys(v)]));
}
