/**
 * Group statistics and advantages over the samples of one task (its epochs): reward minus the group's
 * mean, divided by the group's std (+1e-6) unless `mean` is asked for. Only scored samples a trainer may use
 * (`train` not `excluded`, a reward) count; a group whose rewards are all equal is flagged `zero_variance`
 * (most trainers drop it: it carries no signal) and its advantages are 0.
 */
import type { RlLine } from "../../core/rl_record.js";

export type AdvantageMode = "grpo" | "mean";

const STD_EPSILON = 1e-6;

const counts = (l: RlLine): l is RlLine & { reward: number } => l.train !== "excluded" && l.reward !== null;

/** Fills `group` and `advantage` of every line (in place), grouped by `group_id`. */
export function applyGroupAdvantages(lines: RlLine[], mode: AdvantageMode): void {
  const groups = new Map<string, RlLine[]>();
  for (const l of lines) {
    const g = groups.get(l.group_id);
    if (g) g.push(l);
    else groups.set(l.group_id, [l]);
  }
  for (const members of groups.values()) {
    const scored = members.filter(counts);
    const n = scored.length;
    const mean = n ? scored.reduce((a, l) => a + l.reward, 0) / n : null;
    const std = mean === null ? null : Math.sqrt(scored.reduce((a, l) => a + (l.reward - mean) ** 2, 0) / n);
    const zeroVariance = std === null || std === 0;
    for (const l of members) {
      l.group = { size: members.length, scored: n, mean, std, zero_variance: zeroVariance };
      if (!counts(l) || mean === null) l.advantage = l.train === "excluded" ? null : 0;
      else if (zeroVariance) l.advantage = 0;
      else l.advantage = mode === "mean" ? l.reward - mean : (l.reward - mean) / (std! + STD_EPSILON);
    }
  }
}
