/**
 * A Harbor verifier's verdict: /logs/verifier/reward.json (a flat object of numbers, booleans or numeric strings) wins over reward.txt (one
 * number), as in Harbor's verifier.py; missing, empty, unparsable or timed out → no reward, with the reason.
 * The `harbor` scorer turns it into a score: value = the reward, passed = value ≥ the run's threshold.
 */
import * as z from "zod";

export interface HarborVerdict {
  /** The task's reward (`reward` of reward.json, else the mean of its numbers), or null with `reason`. */
  reward: number | null;
  /** Every number reward.json named (or {reward} from reward.txt). */
  rewards?: Record<string, number>;
  reason: string;
  /** Which file the reward came from. */
  source?: "reward.json" | "reward.txt";
  /** --harbor-pass-threshold. */
  threshold: number;
  timed_out?: boolean;
  /** The tail of /logs/verifier/test-stdout.txt. */
  output_tail?: string;
}

/**
 * Harbor reads reward.json into pydantic's `dict[str, float | int]`, whose lax mode takes `true`/`false` as 1/0 and a
 * numeric string as its number (a test.sh that dumps Python's `passed` bool writes `{"reward": true}`): so here.
 */
const RewardValue = z.union([
  z.number().finite(),
  z.boolean().transform(Number),
  z
    .string()
    .regex(/^\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*$/)
    .transform(Number)
    .pipe(z.number().finite()),
]);
const RewardJsonSchema = z.record(z.string(), RewardValue);

/** What the two files hold (undefined = absent) → the verdict's reward fields. */
export function readRewardFiles(
  json: string | undefined,
  txt: string | undefined,
): Pick<HarborVerdict, "reward" | "rewards" | "reason" | "source"> {
  if (json !== undefined) {
    if (json.trim() === "") return { reward: null, reason: "reward.json is empty" };
    let parsed: unknown;
    try {
      parsed = JSON.parse(json);
    } catch {
      return { reward: null, reason: "reward.json is not JSON" };
    }
    const r = RewardJsonSchema.safeParse(parsed);
    if (!r.success || Object.keys(r.data).length === 0)
      return { reward: null, reason: "reward.json is not a non-empty object of numbers" };
    const values = Object.values(r.data);
    // Two rewards of 1e308 sum to Infinity: then each is divided first, so the mean is 1e308 and not Infinity (a
    // pass whose reward JSON writes as null, and that Harbor's mean counts as 0).
    const sum = values.reduce((a, b) => a + b, 0);
    const reward =
      r.data.reward ?? (Number.isFinite(sum) ? sum / values.length : values.reduce((a, b) => a + b / values.length, 0));
    return { reward, rewards: r.data, reason: `reward ${reward} (reward.json)`, source: "reward.json" };
  }
  if (txt !== undefined) {
    if (txt.trim() === "") return { reward: null, reason: "reward.txt is empty" };
    const reward = Number(txt.trim());
    if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(txt.trim()) || !Number.isFinite(reward))
      return { reward: null, reason: "reward.txt is not a number" };
    return { reward, rewards: { reward }, reason: `reward ${reward} (reward.txt)`, source: "reward.txt" };
  }
  return { reward: null, reason: "the verifier wrote no reward (neither /logs/verifier/reward.json nor reward.txt)" };
}
