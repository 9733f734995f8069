#!/usr/bin/env bash
# The CPU one test file costs, alone: the vitest process tree (user+sys of vitest and every child it waited for:
# the CLIs, sandboxes, MCP servers) and the Docker engine's daemons (dockerd and containerd, with the children they
# waited for: dockerd's re-executions for archive copies). Not counted: containerd-shim and the containers' own
# processes (reparented away from both trees). Rounds alternate over the files given, so load drifts hit all alike.
#   bash scripts/bench/test-file-cpu.sh [--rounds N] test/a.test.ts [test/b.test.ts …]
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds=1
if [[ "${1:-}" == "--rounds" ]]; then rounds=$2; shift 2; fi
[[ $# -gt 0 ]] || { echo "usage: $0 [--rounds N] test/FILE.test.ts…" >&2; exit 2; }
ticks=$(getconf CLK_TCK)
# "PID TICKS" per daemon: a daemon started or gone between two readings (another engine's) is left out of the delta.
daemon_ticks() {
  local p
  for p in $(pgrep -x dockerd || true) $(pgrep -x containerd || true); do
    awk -v p="$p" '{print p, $14+$15+$16+$17}' "/proc/$p/stat" 2>/dev/null || true
  done
}
ticks_delta() { awk 'NR==FNR { a[$1] = $2; next } ($1 in a) { d += $2 - a[$1] } END { print d + 0 }' "$1" "$2"; }
timef=$(mktemp)
trap 'rm -f "$timef" "$timef.d0" "$timef.d1"' EXIT
printf '%-44s %6s %8s %8s %8s %s\n' file wall vitest engine total result
for ((r = 1; r <= rounds; r++)); do
  for f in "$@"; do
    log=$(mktemp /tmp/test-file-cpu.XXXXXX.log)
    daemon_ticks >"$timef.d0"
    if /usr/bin/time -o "$timef" -f "%e %U %S" npx vitest run "$f" >"$log" 2>&1; then res=passed; else res="FAILED ($log)"; fi
    daemon_ticks >"$timef.d1"
    read -r wall user sys < <(tail -1 "$timef")
    awk -v f="$f" -v w="$wall" -v u="$user" -v s="$sys" -v d="$(ticks_delta "$timef.d0" "$timef.d1")" -v t="$ticks" -v res="$res" \
      'BEGIN { printf "%-44s %6.1f %8.1f %8.1f %8.1f %s\n", f, w, u + s, d / t, u + s + d / t, res }'
  done
done
