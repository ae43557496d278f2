#!/usr/bin/env bash
# What watching many Slurm jobs costs the driver: a sweep of JOBS candidates, all submitted
# held (`sbatch --hold`, so they stay PENDING), watched for WINDOW seconds, then Ctrl-C.
#
#   benches/slurm-poll/run.sh BIN_DIR [JOBS [WINDOW [POLL_SECONDS]]]   (default 500 60 5)
#
# BIN_DIR holds a release `sweeper` (e.g. target/release); the Slurm of .ci/slurm/start.sh
# (or any cluster that accepts held jobs) must be up. An `squeue` wrapper on the driver's
# PATH logs every call with the number of job ids it asked about. Prints: the submission
# time, squeue calls and polls in the window (one call per poll is the claim), the
# driver's own CPU time and share of one core over the window (from /proc/PID/stat, so
# the squeue children are apart), the children's CPU time, the driver's threads and RSS,
# and how long the Ctrl-C took to cancel every job.
set -euo pipefail
bin="$(cd "$1" && pwd)/sweeper"
jobs=${2:-500}
window=${3:-60}
poll=${4:-5}
dir=$(mktemp -d /tmp/slurm-poll.XXXXXX)
mkdir -p "$dir/bin"
real_squeue=$(command -v squeue)
cat >"$dir/bin/squeue" <<EOF
#!/bin/sh
# one line per call: time, and how many ids --jobs named
n=\$(printf '%s\n' "\$@" | sed -n 's/^--jobs=//p' | tr ',' '\n' | grep -c .)
echo "\$(date +%s.%N) \$n" >> '$dir/squeue.log'
exec '$real_squeue' "\$@"
EOF
chmod +x "$dir/bin/squeue"
cat >"$dir/c.yaml" <<EOF
search_space:
  gpu_budget: 8
  used_gpus: [tp]
  parameters:
    tp: {values: [1]}
    i: {int: [1, $jobs]}
evaluator:
  command: [/bin/true]
  slurm: {job_name: sweeper-poll-bench, poll_seconds: $poll, sbatch_args: [--hold]}
sweep: {algorithm: grid, max_rounds: 1, candidates_per_round: $jobs, parallel_evals: $jobs}
EOF
cd "$dir"
t0=$(date +%s.%N)
PATH="$dir/bin:$PATH" "$bin" run c.yaml --out o --no-progress >/dev/null 2>"$dir/stderr" &
pid=$!
until [[ -f o/journal.jsonl ]] && [[ $(grep -c '"kind":"started"' o/journal.jsonl) -ge $jobs ]]; do
    kill -0 "$pid" 2>/dev/null || { cat "$dir/stderr"; exit 1; }
    sleep 0.2
done
t1=$(date +%s.%N)
pending=$(squeue -h -n sweeper-poll-bench -t PENDING | wc -l)
ticks=$(getconf CLK_TCK)
cpu() { awk '{print $14 + $15, $16 + $17}' "/proc/$pid/stat"; }
read -r own0 kids0 < <(cpu)
calls0=$(wc -l <"$dir/squeue.log")
w0=$(date +%s.%N)
sleep "$window"
read -r own1 kids1 < <(cpu)
w1=$(date +%s.%N)
calls1=$(wc -l <"$dir/squeue.log")
threads=$(awk '/^Threads/ {print $2}' "/proc/$pid/status")
rss=$(awk '/^VmRSS/ {print $2}' "/proc/$pid/status")
ids=$(tail -n 1 "$dir/squeue.log" | awk '{print $2}')
c0=$(date +%s.%N)
kill -INT "$pid"
wait "$pid" || true
c1=$(date +%s.%N)
left=$(squeue -h -n sweeper-poll-bench -t PENDING,RUNNING | wc -l)
elapsed=$(echo "$w1 - $w0" | bc -l)
own=$(echo "($own1 - $own0) / $ticks" | bc -l)
kids=$(echo "($kids1 - $kids0) / $ticks" | bc -l)
printf 'jobs %d (%d pending and held), poll_seconds %s, window %.1f s\n' "$jobs" "$pending" "$poll" "$elapsed"
printf 'submission of all jobs: %.1f s\n' "$(echo "$t1 - $t0" | bc -l)"
printf 'squeue calls in the window: %d (%.2f per poll interval), each asking about %s job ids\n' \
    "$((calls1 - calls0))" "$(echo "($calls1 - $calls0) * $poll / $elapsed" | bc -l)" "$ids"
printf 'driver CPU in the window: %.2f s = %.2f %% of one core\n' "$own" "$(echo "100 * $own / $elapsed" | bc -l)"
printf 'squeue children CPU in the window: %.2f s = %.2f %% of one core\n' "$kids" "$(echo "100 * $kids / $elapsed" | bc -l)"
printf 'driver threads %d, RSS %d KB\n' "$threads" "$rss"
printf 'Ctrl-C to exit, every job cancelled: %.2f s; jobs left queued: %d\n' "$(echo "$c1 - $c0" | bc -l)" "$left"
grep -o 'cancelled [0-9]* Slurm jobs' "$dir/stderr" || true
rm -rf "$dir"
