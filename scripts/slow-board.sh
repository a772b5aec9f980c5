#!/usr/bin/env bash
# The offline run under a CPU quota, as a stand-in for a slow board (bench/RESULTS.md, "A slow
# board's timing"): prints one JSON line of figures per run. Needs root (or a delegated cgroup).
#   scripts/slow-board.sh [percent of one core, default 10] [runs, default 3]
# Where systemd runs the machine, the same is: systemd-run --scope -p CPUQuota=10% <command>.
set -euo pipefail
cd "$(dirname "$0")/.."
pct="${1:-10}"
runs="${2:-3}"
period=100000
quota=$((period * pct / 100))
[ -f dist/app/cli.js ] || npm run --silent build
cmd=(node bench/slow-board/child.mjs)
if [ "$pct" -ge 100 ]; then
  for _ in $(seq "$runs"); do "${cmd[@]}" 2>&1 >/dev/null | grep '^{'; done
  exit 0
fi
if [ -f /sys/fs/cgroup/cgroup.controllers ]; then
  cg="/sys/fs/cgroup/nocturn-slow-board-$$"
  mkdir "$cg" && echo "$quota $period" > "$cg/cpu.max"
else
  cg="/sys/fs/cgroup/cpu/nocturn-slow-board-$$"
  mkdir "$cg" && echo "$period" > "$cg/cpu.cfs_period_us" && echo "$quota" > "$cg/cpu.cfs_quota_us"
fi
trap 'rmdir "$cg" 2>/dev/null || true' EXIT
for _ in $(seq "$runs"); do
  sh -c "echo \$\$ > $cg/cgroup.procs && exec ${cmd[*]}" 2>&1 >/dev/null | grep '^{' || true
done
