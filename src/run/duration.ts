/** "850 ms", "12.3 s", "4 min 05 s", "2 h 03 min": a wall time a person reads at a glance. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(1)} s`;
  const totalSec = Math.round(s);
  const min = Math.floor(totalSec / 60);
  if (min < 60) return `${min} min ${String(totalSec % 60).padStart(2, "0")} s`;
  return `${Math.floor(min / 60)} h ${String(min % 60).padStart(2, "0")} min`;
}
