#!/usr/bin/env bash
# Stops the test cluster of .ci/slurm/start.sh: slurmd and slurmctld, then munged, each by the
# pid in its pid file (nothing else is signalled); munged only with --all, as other users of
# munge may share it. Jobs still queued or running are cancelled first.
set -euo pipefail

dir=${SWEEPER_SLURM_DIR:-/var/tmp/sweeper-slurm}

stop() {
    local pidfile=$1 name=$2
    [[ -f $pidfile ]] || return 0
    local pid
    pid=$(cat "$pidfile")
    if kill -0 "$pid" 2>/dev/null; then
        kill -TERM "$pid"
        for _ in $(seq 1 200); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.1
        done
        if kill -0 "$pid" 2>/dev/null; then
            echo "stop.sh: $name ($pid) did not stop on SIGTERM; killing it" >&2
            kill -KILL "$pid" 2>/dev/null || true
        fi
    fi
    rm -f "$pidfile"
}

if [[ -f $dir/run/slurmctld.pid ]] && kill -0 "$(cat "$dir/run/slurmctld.pid")" 2>/dev/null; then
    SLURM_CONF=$dir/etc/slurm.conf squeue -h -o %i 2>/dev/null | xargs -r env SLURM_CONF="$dir/etc/slurm.conf" scancel || true
fi
stop "$dir/run/slurmd.pid" slurmd
stop "$dir/run/slurmctld.pid" slurmctld
if [[ ${1:-} == --all ]]; then
    stop /run/munge/munged.pid munged
fi
