/**
 * ATIF (Agent Trajectory Interchange Format) v1.7 as a zod schema, with the rules of Harbor's reference
 * pydantic models (`src/harbor/models/trajectories/*.py`, RFC 0001): unknown keys refused everywhere (custom
 * data goes in `extra`), step ids 1, 2, 3…, every `source_call_id` names a tool call of its own step, the
 * agent-only fields only on agent steps, no `metrics`/`reasoning_content` on an agent step with
 * `llm_call_count: 0`, timestamps in ISO 8601, resolvable subagent references and unique embedded ids.
 * Optional fields accept null, as the reference's `X | None` fields do.
 */
import * as z from "zod";

export const ATIF_SCHEMA_VERSION = "ATIF-v1.7";
const SCHEMA_VERSIONS = [
  "ATIF-v1.0",
  "ATIF-v1.1",
  "ATIF-v1.2",
  "ATIF-v1.3",
  "ATIF-v1.4",
  "ATIF-v1.5",
  "ATIF-v1.6",
  "ATIF-v1.7",
] as const;

const Extra = z.record(z.string(), z.unknown()).nullish();

// The extended calendar forms Python's datetime.fromisoformat accepts (the reference validator uses it): a
// date, optionally a time (T or space) to the hour, minute, second or fraction, and Z or an offset. Its basic
// (20260101) and week-date (2026-W01) forms are refused here: stricter, and never what this tool writes.
const ISO_8601 =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2})(?::(\d{2})(?::(\d{2})(?:[.,]\d{1,9})?)?)?(?:Z|[+-]\d{2}(?::?\d{2})?)?)?$/;

export function isIso8601(text: string): boolean {
  const m = ISO_8601.exec(text);
  if (!m) return false;
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth) return false;
  return m[4] === undefined || (Number(m[4]) < 24 && Number(m[5] ?? 0) < 60 && Number(m[6] ?? 0) < 60);
}

const ImageSourceSchema = z.strictObject({
  media_type: z.enum(["image/jpeg", "image/png", "image/gif", "image/webp"]),
  path: z.string(),
});

const ContentPartSchema = z
  .strictObject({ type: z.enum(["text", "image"]), text: z.string().nullish(), source: ImageSourceSchema.nullish() })
  .superRefine((part, ctx) => {
    const needs = part.type === "text" ? "text" : "source";
    const forbids = part.type === "text" ? "source" : "text";
    if (part[needs] == null)
      ctx.addIssue({ code: "custom", message: `'${needs}' is required when type='${part.type}'` });
    if (part[forbids] != null)
      ctx.addIssue({ code: "custom", message: `'${forbids}' is not allowed when type='${part.type}'` });
  });

const ContentSchema = z.union([z.string(), z.array(ContentPartSchema)]);

const ToolCallSchema = z.strictObject({
  tool_call_id: z.string(),
  function_name: z.string(),
  arguments: z.record(z.string(), z.unknown()),
  extra: Extra,
});

const SubagentTrajectoryRefSchema = z
  .strictObject({
    trajectory_id: z.string().nullish(),
    session_id: z.string().nullish(),
    trajectory_path: z.string().nullish(),
    extra: Extra,
  })
  .refine(
    (r) => r.trajectory_id != null || r.trajectory_path != null,
    "a subagent reference needs trajectory_id or trajectory_path (session_id alone does not resolve)",
  );

const ObservationResultSchema = z.strictObject({
  source_call_id: z.string().nullish(),
  content: ContentSchema.nullish(),
  subagent_trajectory_ref: z.array(SubagentTrajectoryRefSchema).nullish(),
  extra: Extra,
});

const ObservationSchema = z.strictObject({ results: z.array(ObservationResultSchema) });

const tokenCount = z.number().int();

const MetricsSchema = z.strictObject({
  prompt_tokens: tokenCount.nullish(),
  completion_tokens: tokenCount.nullish(),
  cached_tokens: tokenCount.nullish(),
  cost_usd: z.number().nullish(),
  prompt_token_ids: z.array(z.number().int()).nullish(),
  completion_token_ids: z.array(z.number().int()).nullish(),
  logprobs: z.array(z.number()).nullish(),
  extra: Extra,
});

const FinalMetricsSchema = z.strictObject({
  total_prompt_tokens: tokenCount.nullish(),
  total_completion_tokens: tokenCount.nullish(),
  total_cached_tokens: tokenCount.nullish(),
  total_cost_usd: z.number().nullish(),
  total_steps: z.number().int().nonnegative().nullish(),
  extra: Extra,
});

const AgentSchema = z.strictObject({
  name: z.string(),
  version: z.string(),
  model_name: z.string().nullish(),
  tool_definitions: z.array(z.record(z.string(), z.unknown())).nullish(),
  extra: Extra,
});

const AGENT_ONLY_FIELDS = ["model_name", "reasoning_effort", "reasoning_content", "tool_calls", "metrics"] as const;

const StepSchema = z
  .strictObject({
    step_id: z.number().int().min(1),
    timestamp: z.string().refine(isIso8601, "not an ISO 8601 timestamp").nullish(),
    source: z.enum(["system", "user", "agent"]),
    model_name: z.string().nullish(),
    reasoning_effort: z.union([z.string(), z.number()]).nullish(),
    message: ContentSchema,
    reasoning_content: z.string().nullish(),
    tool_calls: z.array(ToolCallSchema).nullish(),
    observation: ObservationSchema.nullish(),
    metrics: MetricsSchema.nullish(),
    is_copied_context: z.boolean().nullish(),
    llm_call_count: z.number().int().nonnegative().nullish(),
    extra: Extra,
  })
  .superRefine((step, ctx) => {
    if (step.source !== "agent") {
      for (const field of AGENT_ONLY_FIELDS) {
        if (step[field] != null)
          ctx.addIssue({
            code: "custom",
            path: [field],
            message: `only agent steps may have '${field}' (source is '${step.source}')`,
          });
      }
    } else if (step.llm_call_count === 0) {
      for (const field of ["metrics", "reasoning_content"] as const) {
        if (step[field] != null)
          ctx.addIssue({
            code: "custom",
            path: [field],
            message: `'${field}' must be absent when llm_call_count is 0 (a deterministic dispatch)`,
          });
      }
    }
  });

export type AtifStep = z.infer<typeof StepSchema>;

const TrajectoryBaseSchema = z.strictObject({
  schema_version: z.enum(SCHEMA_VERSIONS),
  session_id: z.string().nullish(),
  trajectory_id: z.string().nullish(),
  agent: AgentSchema,
  steps: z.array(StepSchema).min(1),
  notes: z.string().nullish(),
  final_metrics: FinalMetricsSchema.nullish(),
  continued_trajectory_ref: z.string().nullish(),
  extra: Extra,
});

export type AtifTrajectory = z.infer<typeof TrajectoryBaseSchema> & { subagent_trajectories?: AtifTrajectory[] | null };

const TrajectoryObjectSchema = TrajectoryBaseSchema.extend({
  subagent_trajectories: z.array(z.lazy((): z.ZodType<AtifTrajectory> => AtifTrajectorySchema)).nullish(),
});

type TrajectoryObject = z.infer<typeof TrajectoryObjectSchema>;

function checkTrajectory(t: TrajectoryObject, ctx: z.core.$RefinementCtx<TrajectoryObject>): void {
  t.steps.forEach((step, i) => {
    if (step.step_id !== i + 1)
      ctx.addIssue({
        code: "custom",
        path: ["steps", i, "step_id"],
        message: `expected ${i + 1} (sequential from 1), got ${step.step_id}`,
      });
    const ids = new Set((step.tool_calls ?? []).map((c) => c.tool_call_id));
    (step.observation?.results ?? []).forEach((r, j) => {
      if (r.source_call_id != null && !ids.has(r.source_call_id)) {
        ctx.addIssue({
          code: "custom",
          path: ["steps", i, "observation", "results", j, "source_call_id"],
          message: `'${r.source_call_id}' names no tool call of step ${step.step_id}`,
        });
      }
    });
  });
  const seen = new Set<string>();
  (t.subagent_trajectories ?? []).forEach((sub, i) => {
    if (sub.trajectory_id == null)
      ctx.addIssue({
        code: "custom",
        path: ["subagent_trajectories", i, "trajectory_id"],
        message: "required for an embedded subagent",
      });
    else if (seen.has(sub.trajectory_id))
      ctx.addIssue({
        code: "custom",
        path: ["subagent_trajectories", i, "trajectory_id"],
        message: `'${sub.trajectory_id}' is not unique`,
      });
    else seen.add(sub.trajectory_id);
  });
}

export const AtifTrajectorySchema: z.ZodType<AtifTrajectory> = TrajectoryObjectSchema.superRefine(checkTrajectory);

/** The first few problems of a document that failed the schema, as one line. */
export function describeAtifIssues(error: z.ZodError, max = 3): string {
  const more = error.issues.length > max ? `; … ${error.issues.length - max} more` : "";
  return (
    error.issues
      .slice(0, max)
      .map((i) => (i.path.length ? `${i.path.join(".")}: ${i.message}` : i.message))
      .join("; ") + more
  );
}
