/**
 * The format id of rl.jsonl lines, apart from their zod schemas (rl_record.ts): the worker writes it on every
 * line and would otherwise build the schemas, which only `export` and the reader need, at start-up.
 */
export const RL_SCHEMA_ID = "hermes-batch.rl/1";
