/**
 * Speed of the dangerous-command detection on long input (a 100 kB heredoc, 5000 pipelines, a 50 kB
 * function name): the case that once backtracked for seconds. Speed is measured here, not asserted in tests.
 *   npx tsx scripts/bench/approval-detect.ts [N]
 */
import { detectDangerousCommand } from "../../tools/approval/detect.js";

const n = Number(process.argv[2] ?? 20);
const blob = "a".repeat(100_000);
const long = `cat > big.txt <<'EOF'\n${"echo hello | grep h; ".repeat(5000)}${blob}\nEOF\necho ${blob} | wc -c; ${"x".repeat(50_000)}(){ :; }`;

const times: number[] = [];
for (let i = 0; i < n; i++) {
  const t0 = performance.now();
  detectDangerousCommand(long);
  times.push(performance.now() - t0);
}
times.sort((a, b) => a - b);
const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))]!.toFixed(1);
process.stdout.write(
  `detectDangerousCommand on ${long.length} chars, ${n} runs: median ${at(0.5)} ms, p90 ${at(0.9)} ms, max ${at(1)} ms\n`,
);
