/** Numbers in a verifier's reward file that overflow when summed: a reward is a finite number or none. */
import { describe, expect, it } from "vitest";
import { readRewardFiles } from "../src/score/harbor_reward.js";

describe("reward.json", () => {
  it("the mean of huge rewards is their mean, not Infinity (a pass whose reward JSON writes as null)", () => {
    const r = readRewardFiles(JSON.stringify({ a: 1e308, b: 1e308 }), undefined);
    expect(r.reward).toBe(1e308);
    expect(Number.isFinite(r.reward)).toBe(true);
    // Mixed signs still average exactly as before.
    expect(readRewardFiles(JSON.stringify({ a: 1, b: 0, c: 0.5 }), undefined).reward).toBeCloseTo(0.5);
    expect(readRewardFiles(JSON.stringify({ a: -1e308, b: 1e308 }), undefined).reward).toBe(0);
  });
});
