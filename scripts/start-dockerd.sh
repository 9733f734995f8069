#!/usr/bin/env bash
# Starts the Docker engine for tests and CI if it is not already answering. Idempotent.
# --bridge=none / --iptables=false: no private-range bridge, containers default to network none,
# so test traffic never leaves loopback.
set -euo pipefail

LOG=${DOCKERD_LOG:-/tmp/dockerd.log}
WAIT_SEC=${DOCKERD_WAIT_SEC:-60}

if docker version >/dev/null 2>&1; then
  echo "dockerd: already running"
  exit 0
fi

if ! command -v dockerd >/dev/null 2>&1; then
  echo "dockerd: not installed (apt-get install -y docker.io)" >&2
  exit 1
fi

echo "dockerd: starting (log: $LOG)"
setsid nohup dockerd --bridge=none --iptables=false >>"$LOG" 2>&1 </dev/null &

for ((i = 0; i < WAIT_SEC * 2; i++)); do
  if docker version >/dev/null 2>&1; then
    echo "dockerd: ready after $((i / 2)) s"
    exit 0
  fi
  sleep 0.5
done

echo "dockerd: did not answer within ${WAIT_SEC} s; last lines of $LOG:" >&2
tail -n 20 "$LOG" >&2 || true
exit 1
