#!/usr/bin/env bash
# Peak memory of `sweeper score` against `sweeper front` on the same rows.
#
#   benches/score-memory/run.sh BIN_DIR [ROWS...]      (default rows: 100000 1000000)
#
# BIN_DIR holds a release `sweeper` (e.g. target/release). Generates seeded JSON Lines and
# CSV reports once per row count under ${SCORE_MEMORY_DIR:-/tmp/score-memory}, then prints one
# line per run: format, rows, command, max RSS (KB), bytes per row, wall seconds.
# Needs /usr/bin/time (apt-get install time) and python3.
set -euo pipefail
bin="$1/sweeper"
shift
rows=("${@:-100000 1000000}")
# shellcheck disable=SC2206
rows=(${rows[*]})
dir=${SCORE_MEMORY_DIR:-/tmp/score-memory}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$dir"
cat > "$dir/pareto.yaml" <<'YAML'
goal:
  target: pareto
search_space:
  gpu_budget: 8
YAML
cat > "$dir/throughput.yaml" <<'YAML'
goal:
  target: throughput
search_space:
  gpu_budget: 8
YAML
measure() { # label rows file command...
    local label=$1 n=$2
    shift 2
    local log
    log=$(mktemp)
    /usr/bin/time -v "$@" > /dev/null 2> "$log" || { cat "$log"; exit 1; }
    local kb wall
    kb=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$log")
    wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$log")
    printf '%-28s %9d %10d KB %8.0f B/row %10s\n' "$label" "$n" "$kb" "$(echo "$kb*1024/$n" | bc -l)" "$wall"
    rm -f "$log"
}
for n in "${rows[@]}"; do
    [ -f "$dir/r$n.jsonl" ] || python3 "$here/gen.py" "$n" "$dir/r$n"
    for fmt in jsonl csv; do
        f="$dir/r$n.$fmt"
        measure "score pareto $fmt" "$n" "$bin" score --config "$dir/pareto.yaml" "$f" --format csv
        measure "score throughput --top 10 $fmt" "$n" "$bin" score --config "$dir/throughput.yaml" "$f" --top 10 --format csv
    done
    measure "front csv" "$n" "$bin" front -o output_throughput_tok_s:max \
        -o mean_output_token_throughput_per_user:max "$dir/r$n.csv" --format csv
    measure "front flat jsonl" "$n" "$bin" front -o output_throughput_tok_s:max \
        -o mean_output_token_throughput_per_user:max "$dir/r$n.flat.jsonl" --format csv
done
