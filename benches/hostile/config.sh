#!/usr/bin/env bash
# Times `sweeper validate` on hostile configs (issue 30, item 4): deep nesting and long
# lists. Give one or more sweeper binaries to print their times side by side:
#
#   benches/hostile/config.sh OLD/sweeper target/release/sweeper
#
# Each case runs once per binary under `timeout` (LIMIT seconds, default 120); a case that
# hits it prints `>LIMIT`. The column also gives the exit status (1: refused config).
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 SWEEPER [SWEEPER...]" >&2; exit 2; }
limit=${LIMIT:-120}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

python3 - "$dir" <<'PY'
import sys
d = sys.argv[1]
def w(name, text):
    with open(f"{d}/{name}.yaml", "w") as f:
        f.write(text)
n = 100_000
w("brackets_1e5", "goal: {target: " + "[" * n + "]" * n + "}\n")
m = 50_000
w("maps_5e4", "{a: " * m + "1" + "}" * m + "\n")
w("block_lists_1e5", "- " * n + "x\n")
for c, tag in [(100_000, "1e5"), (1_000_000, "1e6")]:
    w(f"choices_{tag}", "search_space:\n  parameters:\n    p: {choices: ["
      + ", ".join(f"c{i}" for i in range(c)) + "]}\n")
PY

printf '%-16s %9s' case bytes
for bin in "$@"; do printf '  %24s' "$(basename "$(dirname "$bin")")/$(basename "$bin")"; done
echo
for f in brackets_1e5 maps_5e4 block_lists_1e5 choices_1e5 choices_1e6; do
  printf '%-16s %9s' "$f" "$(wc -c < "$dir/$f.yaml")"
  for bin in "$@"; do
    start=$(date +%s.%N)
    set +e
    timeout "$limit" "$bin" validate "$dir/$f.yaml" > /dev/null 2> "$dir/err"
    status=$?
    set -e
    end=$(date +%s.%N)
    if [ "$status" -eq 124 ]; then
      printf '  %24s' ">${limit} s"
    else
      printf '  %24s' "$(printf '%.2f s (exit %d)' "$(echo "$end - $start" | bc)" "$status")"
    fi
  done
  echo
done
