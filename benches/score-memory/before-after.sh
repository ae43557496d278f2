#!/usr/bin/env bash
# Two builds of `sweeper` side by side, one run: peak memory and wall time of the input
# paths issue 30 found quadratic or holding every row (items 4 and 5).
#
#   benches/score-memory/before-after.sh BEFORE_BIN_DIR AFTER_BIN_DIR [CASE...]
#
# CASE is any of: table ranks header plot (default: all). Each case runs the before binary,
# then the after binary, on the same generated files, and prints one line per command:
# label, then max RSS and wall time of each build. A run that exceeds ${TIMEOUT:-120} s is
# stopped and shown as `> TIMEOUT s`. Data goes to ${BEFORE_AFTER_DIR:-/tmp/before-after}
# (about 1.2 GB, made once). Needs /usr/bin/time (apt-get install time) and python3.
#
#   table   score's default table of a whole ranking, 2e6 rows (CSV and JSON Lines), against
#           the same ranking as CSV and a --top 10 table
#   ranks   front --ranks (a table of every row) on 1e6x3 and 1e7x3 .npy, against the front
#   header  front and score of a CSV of 1e5 and 1e6 columns (one row)
#   plot    plot --color-by a column of 40,000 distinct values
set -euo pipefail
before="$1/sweeper"
after="$2/sweeper"
shift 2
cases=("${@:-table ranks header plot}")
# shellcheck disable=SC2206
cases=(${cases[*]})
limit=${TIMEOUT:-120}
dir=${BEFORE_AFTER_DIR:-/tmp/before-after}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$dir"

# label, then the command's words with BIN where the binary goes
measure() {
    local label=$1
    shift
    local cells=()
    for bin in "$before" "$after"; do
        local words=() log
        for w in "$@"; do
            [ "$w" = BIN ] && w=$bin
            words+=("$w")
        done
        log=$(mktemp)
        local code=0
        timeout "$limit" /usr/bin/time -v "${words[@]}" > /dev/null 2> "$log" || code=$?
        if [ "$code" = 124 ]; then
            cells+=("-" "> ${limit} s")
        elif [ "$code" != 0 ]; then
            echo "FAILED ($code): ${words[*]}" >&2
            tail -5 "$log" >&2
            cells+=("failed" "-")
        else
            local kb wall
            kb=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$log")
            wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$log")
            cells+=("$(printf "%'d KB" "$kb")" "$wall")
        fi
        rm -f "$log"
    done
    printf '%-46s | %14s %9s | %14s %9s\n' "$label" "${cells[@]}"
}

printf '%-46s | %24s | %24s\n' "run" "before: max RSS, wall" "after: max RSS, wall"
for case in "${cases[@]}"; do
    case $case in
    table)
        n=2000000
        [ -f "$dir/r$n.csv" ] || python3 "$here/gen.py" "$n" "$dir/r$n"
        printf 'goal:\n  target: throughput\nsearch_space:\n  gpu_budget: 8\n' > "$dir/throughput.yaml"
        for fmt in csv jsonl; do
            f="$dir/r$n.$fmt"
            measure "score ranking, table, $fmt 2e6" BIN score --config "$dir/throughput.yaml" "$f"
            measure "score ranking, --format csv, $fmt 2e6" BIN score --config "$dir/throughput.yaml" "$f" --format csv
            measure "score ranking --top 10, table, $fmt 2e6" BIN score --config "$dir/throughput.yaml" "$f" --top 10
        done
        ;;
    ranks)
        for n in 1000000 10000000; do
            f="$dir/u$n-3.npy"
            [ -f "$f" ] || python3 - "$n" "$f" <<'PY'
import array, random, struct, sys
n, path = int(sys.argv[1]), sys.argv[2]
rng = random.Random(7)
header = "{'descr': '<f8', 'fortran_order': False, 'shape': (%d, 3), }" % n
header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
with open(path, "wb") as out:
    out.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
    chunk = 1 << 20
    for start in range(0, 3 * n, chunk):
        array.array("d", (rng.random() for _ in range(min(chunk, 3 * n - start)))).tofile(out)
PY
            o=(-o 0:max -o 1:max -o 2:max)
            measure "front, table, npy ${n}x3" BIN front "$f" "${o[@]}"
            measure "front --ranks, table, npy ${n}x3" BIN front "$f" "${o[@]}" --ranks
            measure "front --ranks, --format csv, npy ${n}x3" BIN front "$f" "${o[@]}" --ranks --format csv
        done
        ;;
    header)
        printf 'goal:\n  target: pareto\nsearch_space:\n  gpu_budget: 8\n' > "$dir/pareto.yaml"
        for n in 100000 1000000; do
            f="$dir/wide$n.csv"
            [ -f "$f" ] || python3 - "$n" "$f" <<'PY'
import sys
n, path = int(sys.argv[1]), sys.argv[2]
names = ["label_%d" % k for k in range(n)]
names += ["output_throughput_tok_s", "mean_output_token_throughput_per_user"]
with open(path, "w") as out:
    out.write(",".join(names) + "\n")
    out.write("x," * n + "5,1\n")
PY
            o=(-o output_throughput_tok_s:max -o mean_output_token_throughput_per_user:max)
            measure "front, CSV of $n columns" BIN front "$f" "${o[@]}"
            measure "score pareto, CSV of $n columns" BIN score --config "$dir/pareto.yaml" "$f" --format csv
        done
        ;;
    plot)
        n=40000
        f="$dir/colours$n.csv"
        [ -f "$f" ] || python3 - "$n" "$f" <<'PY'
import random, sys
n, path = int(sys.argv[1]), sys.argv[2]
rng = random.Random(5)
with open(path, "w") as out:
    out.write("x,y,name\n")
    for k in range(n):
        x = rng.random()
        out.write("%r,%r,run-%d\n" % (x, 1 - x + rng.random() * 0.1, k))
PY
        measure "plot --color-by, $n distinct values" BIN plot "$f" -o x:max -o y:max \
            --color-by name --out "$dir/colours.svg"
        ;;
    *)
        echo "unknown case: $case (table ranks header plot)" >&2
        exit 2
        ;;
    esac
done
