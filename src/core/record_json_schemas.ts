/** JSON Schemas of the output records, generated from the zod schemas in records.ts (`npm run schemas`). */
import * as z from "zod";
import {
  ApprovalRecordSchema,
  DroppedRecordSchema,
  FailureRecordSchema,
  OutcomeSchema,
  TrajectoryEntrySchema,
} from "./records.js";
import { RlLineSchema } from "./rl_record.js";

const RECORDS = {
  trajectory: { schema: TrajectoryEntrySchema, title: "hermes-batch trajectory (a line of trajectories.jsonl)" },
  failure: { schema: FailureRecordSchema, title: "hermes-batch failure record (a line of failed.jsonl)" },
  dropped: { schema: DroppedRecordSchema, title: "hermes-batch dropped record (a line of dropped.jsonl)" },
  approval: {
    schema: ApprovalRecordSchema,
    title: "hermes-batch approval record (an element of a trajectory's approvals)",
  },
  outcome: { schema: OutcomeSchema, title: "hermes-batch task outcome" },
  rl: { schema: RlLineSchema(), title: "hermes-batch.rl/1 (a line of rl.jsonl, written by run --rl-capture)" },
} as const;

/** File name under docs/schemas/ → its exact text (2-space JSON, trailing newline). */
export function recordJsonSchemaFiles(): Record<string, string> {
  const files: Record<string, string> = {};
  for (const [name, { schema, title }] of Object.entries(RECORDS)) {
    const { $schema, ...rest } = z.toJSONSchema(schema, { target: "draft-2020-12", io: "output" });
    const json = { $schema, title, ...rest };
    files[`${name}.schema.json`] = JSON.stringify(json, null, 2) + "\n";
  }
  return files;
}
