#!/usr/bin/env bash
# A single-node Slurm cluster on this machine for the Slurm end-to-end test (run as root): munged,
# slurmctld and slurmd on 127.0.0.1 under the machine's real hostname, select/cons_tres with this node's
# CPUs (2 in CI) and memory, one partition "debug". Idempotent: a cluster already up is left as it is.
# Needs Debian's slurm-wlm and munge (apt-get install slurm-wlm munge). Waits until `sinfo` shows the node
# idle (or mixed/allocated: up), else prints the daemons' logs and fails.
set -euo pipefail
export PATH="/usr/sbin:/sbin:$PATH"
host=$(hostname -s)
conf_dir=/etc/slurm
conf=$conf_dir/slurm.conf
log_dir=/var/log/slurm
mkdir -p "$conf_dir" "$log_dir" /var/spool/slurmctld /var/spool/slurmd /run/munge /var/lib/munge /var/log/munge

node_state() { sinfo -h -n "$host" -o %T 2>/dev/null | head -n1 | tr -d '*~#!%$@^-' || true; }
case "$(node_state)" in idle|mixed|allocated|completing) echo "start-slurm: already up ($host: $(node_state))"; exit 0 ;; esac

# The hostname must resolve to an address of this machine; 127.0.0.1 is enough for one node.
getent hosts "$host" >/dev/null || echo "127.0.0.1 $host" >>/etc/hosts

# munge: a key, then the daemon (as the munge user when it exists).
if [ ! -s /etc/munge/munge.key ]; then
  mkdir -p /etc/munge
  dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none
fi
if id munge >/dev/null 2>&1; then
  chown munge:munge /etc/munge /etc/munge/munge.key /run/munge /var/lib/munge /var/log/munge
  chmod 0700 /etc/munge; chmod 0400 /etc/munge/munge.key; chmod 0755 /run/munge
fi
if ! munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
  if id munge >/dev/null 2>&1; then runuser -u munge -- munged --force; else munged --force; fi
  for _ in $(seq 50); do munge -n 2>/dev/null | unmunge >/dev/null 2>&1 && break; sleep 0.1; done
  munge -n | unmunge >/dev/null || { echo "start-slurm: munged does not answer" >&2; exit 1; }
fi

# This node as slurmd sees it (CPUs, memory), declared a little under its real memory so it registers.
read -r cpus sockets cores threads mem < <(slurmd -C | awk '/^NodeName/ { for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] } print v["CPUs"], v["SocketsPerBoard"], v["CoresPerSocket"], v["ThreadsPerCore"], v["RealMemory"] }')
mem=$(( mem * 9 / 10 ))
cat >"$conf.new" <<CONF
# Written by scripts/start-slurm.sh: one node, this machine.
ClusterName=hermes
SlurmctldHost=${host}(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
ReturnToService=2
KillWait=30
JobRequeue=1
SchedulerType=sched/backfill
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
SlurmctldLogFile=${log_dir}/slurmctld.log
SlurmdLogFile=${log_dir}/slurmd.log
SlurmctldTimeout=30
SlurmdTimeout=30
MinJobAge=300
NodeName=${host} NodeAddr=127.0.0.1 CPUs=${cpus} Sockets=${sockets} CoresPerSocket=${cores} ThreadsPerCore=${threads} RealMemory=${mem} State=UNKNOWN
PartitionName=debug Nodes=${host} Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO
CONF
changed=1
if [ -f "$conf" ] && cmp -s "$conf" "$conf.new"; then changed=0; rm -f "$conf.new"; else mv "$conf.new" "$conf"; fi
# slurmd loads a cgroup plugin even with proctrack/linuxproc; 22.05 knows no "disabled": autodetect (v1 or v2),
# and IgnoreSystemd so it works in a container without systemd.
[ -f "$conf_dir/cgroup.conf" ] || printf 'CgroupPlugin=autodetect\nIgnoreSystemd=yes\n' >"$conf_dir/cgroup.conf"

running() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }
if [ "$changed" = 1 ]; then
  # A new configuration: restart whatever runs with the old one.
  for p in /run/slurmd.pid /run/slurmctld.pid; do running "$p" && kill "$(cat "$p")" && sleep 1 || true; done
fi
running /run/slurmctld.pid || slurmctld
for _ in $(seq 100); do scontrol ping 2>/dev/null | grep -q UP && break; sleep 0.2; done
running /run/slurmd.pid || slurmd

deadline=$(( $(date +%s) + 60 ))
while :; do
  s=$(node_state)
  case "$s" in
    idle|mixed|allocated) break ;;
    down|drained|draining|drain|fail) scontrol update nodename="$host" state=resume 2>/dev/null || true ;;
  esac
  if [ "$(date +%s)" -gt "$deadline" ]; then
    echo "start-slurm: node $host is '${s:-unknown}', not idle, after 60 s" >&2
    sinfo -N -l >&2 || true
    tail -n 30 "$log_dir/slurmctld.log" "$log_dir/slurmd.log" >&2 || true
    exit 1
  fi
  sleep 0.5
done
echo "start-slurm: up ($host: $(node_state); ${cpus} CPUs, ${mem} MB)"
