/**
 * The Harbor-comparable figure of a run of Harbor tasks: the mean reward over every trial, a trial without a
 * reward (unscored, failed, dropped) counted as 0, as Harbor's Mean metric does. Beside it statistics.json
 * keeps our own pass rate over scored tasks, which leaves unscored ones out.
 */
export interface HarborMeanJson {
  trials: number;
  rewarded: number;
  mean_reward: number;
}

type Line = {
  metadata?: Record<string, unknown>;
  score?: { scorers?: { name: string; value: number | null }[] } | null;
};

function isHarborLine(line: Line): boolean {
  const m = line.metadata?.dataset_metadata;
  return typeof m === "object" && m !== null && "harbor" in m;
}

export class HarborMean {
  private trials = 0;
  private rewarded = 0;
  private sum = 0;

  add(line: Line): void {
    if (!isHarborLine(line)) return;
    this.trials++;
    const reward = line.score?.scorers?.find((s) => s.name === "harbor")?.value;
    if (typeof reward === "number" && Number.isFinite(reward)) {
      this.rewarded++;
      this.sum += reward;
    }
  }

  toJSON(): HarborMeanJson | undefined {
    if (this.trials === 0) return undefined;
    return {
      trials: this.trials,
      rewarded: this.rewarded,
      mean_reward: Math.round((this.sum / this.trials) * 1e6) / 1e6,
    };
  }
}
