#!/usr/bin/env bash
# Starts a single-node Slurm on localhost for sweeper's Slurm tests: munged, slurmctld and
# slurmd, one node offering 8 GPUs as GRES (character devices made with mknod, so that
# slurmd counts them), no accounting daemon. Runs as root on a Debian-like machine; installs
# slurm-wlm and munge with apt-get when they are missing. Idempotent: a cluster already up
# with the same config is left running; a changed config restarts the daemons.
#
#   .ci/slurm/start.sh          # start (or check) the cluster, print sinfo
#   .ci/slurm/stop.sh [--all]   # stop slurmd and slurmctld (and munged with --all)
#
# Everything lives under $SWEEPER_SLURM_DIR (default /var/tmp/sweeper-slurm): the config,
# the state and spool directories, the logs, the pid files and the fake GPU devices.
# /etc/slurm/slurm.conf is made a link to the config when no slurm.conf is there, so that
# sbatch, squeue and friends find it from any shell; when another slurm.conf exists it is
# left alone and the script says to export SLURM_CONF instead.
set -euo pipefail

dir=${SWEEPER_SLURM_DIR:-/var/tmp/sweeper-slurm}
gpus=8
# CPUs the node offers. Jobs of the tests sleep; declaring more CPUs than the machine has
# (SlurmdParameters=config_overrides) keeps CPUs from being what makes a job wait, so that
# only GPUs do.
cpus=${SWEEPER_SLURM_CPUS:-32}

if [[ $(id -u) -ne 0 ]]; then
    echo "start.sh: run as root (it starts slurmd and munged)" >&2
    exit 2
fi

if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null \
    || ! command -v sbatch >/dev/null; then
    echo "start.sh: installing slurm-wlm and munge" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y --no-install-recommends slurm-wlm munge >/dev/null \
        || { apt-get update >/dev/null && apt-get install -y --no-install-recommends slurm-wlm munge >/dev/null; }
fi

alive() { [[ -f $1 ]] && kill -0 "$(cat "$1")" 2>/dev/null; }

host=$(hostname -s)
mkdir -p "$dir"/{etc,state,spool,log,run,dev}

# Fake GPUs: slurmd checks that every File= of gres.conf exists and counts only character
# devices; the major/minor of /dev/null will do, no job opens them.
for i in $(seq 0 $((gpus - 1))); do
    [[ -c $dir/dev/gpu$i ]] || { rm -f "$dir/dev/gpu$i"; mknod "$dir/dev/gpu$i" c 1 3; }
done

conf=$dir/etc/slurm.conf
new=$(mktemp)
cat >"$new" <<EOF
# Written by sweeper's .ci/slurm/start.sh: a one-node test cluster, not for production.
ClusterName=sweeper-ci
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/run/slurmctld.pid
SlurmdPidFile=$dir/run/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
# No cgroups: processes are tracked by parent pid, tasks are not bound.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
GresTypes=gpu
SlurmdParameters=config_overrides
# No slurmdbd: sacct has nothing to read, so sweeper reads scontrol and squeue. A finished
# job stays visible to scontrol/squeue for MinJobAge seconds: long enough for a test that
# kills its driver and resumes it later.
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
MinJobAge=3600
MpiDefault=none
ReturnToService=2
SchedulerType=sched/backfill
# Kill a job's processes soon after a time limit or a scancel.
KillWait=2
InactiveLimit=0
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=1000 Gres=gpu:$gpus State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
gres=$(mktemp)
echo "Name=gpu File=$dir/dev/gpu[0-$((gpus - 1))]" >"$gres"

changed=0
cmp -s "$new" "$conf" || changed=1
cmp -s "$gres" "$dir/etc/gres.conf" || changed=1
if [[ $changed -eq 1 ]] && alive "$dir/run/slurmctld.pid"; then
    echo "start.sh: the config changed: restarting the daemons" >&2
    "$(dirname "$0")/stop.sh"
fi
mv "$new" "$conf"
mv "$gres" "$dir/etc/gres.conf"
chmod 644 "$conf" "$dir/etc/gres.conf"

if [[ -e /etc/slurm/slurm.conf || -L /etc/slurm/slurm.conf ]]; then
    if [[ $(readlink -f /etc/slurm/slurm.conf) != "$(readlink -f "$conf")" ]]; then
        echo "start.sh: /etc/slurm/slurm.conf is another cluster's; use: export SLURM_CONF=$conf" >&2
    fi
else
    mkdir -p /etc/slurm
    ln -s "$conf" /etc/slurm/slurm.conf
fi
export SLURM_CONF=$conf

# munged runs as the munge user (it refuses a key that is not its own).
munge_pid=/run/munge/munged.pid
if ! alive "$munge_pid"; then
    mkdir -p /run/munge
    chown munge:munge /run/munge
    chmod 755 /run/munge
    if [[ ! -s /etc/munge/munge.key ]]; then
        (umask 077 && dd if=/dev/urandom of=/etc/munge/munge.key bs=128 count=1 status=none)
        chown munge:munge /etc/munge/munge.key
    fi
    runuser -u munge -- munged
fi

if ! alive "$dir/run/slurmctld.pid"; then
    # -c: a clean start (no jobs from a previous cluster); -i: ignore state files' errors
    slurmctld -c -i
fi
if ! alive "$dir/run/slurmd.pid"; then
    slurmd -N "$host"
fi

# Up when the node is idle (or already running jobs: an idempotent re-run).
for _ in $(seq 1 120); do
    state=$(sinfo -h -N -o '%T' 2>/dev/null | head -n1 || true)
    case $state in
        idle | mixed | allocated) break ;;
        *drain* | *down*)
            # a node left down by an earlier run: bring it back
            scontrol update nodename="$host" state=resume 2>/dev/null || true
            ;;
    esac
    sleep 0.5
done
case $state in
    idle | mixed | allocated) ;;
    *)
        echo "start.sh: the node did not come up (state '${state:-none}'); logs in $dir/log:" >&2
        tail -n 20 "$dir/log/slurmctld.log" "$dir/log/slurmd.log" >&2 || true
        exit 1
        ;;
esac
sinfo -N -o '%N %T %c %G'
