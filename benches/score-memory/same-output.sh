#!/usr/bin/env bash
# Checks that two builds of `sweeper` print the same bytes (stdout, stderr, exit code) for
# `score` and `front` on the rows of gen.py, in every input format (CSV, JSON Lines, a JSON
# array, standard input) and every output format (table, csv, json).
#
#   benches/score-memory/same-output.sh BEFORE_BIN_DIR AFTER_BIN_DIR [ROWS]   (default 10000)
#
# Prints one line per differing run and exits 1 if any differ.
set -euo pipefail
before="$1/sweeper"
after="$2/sweeper"
n=${3:-10000}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
python3 "$here/gen.py" "$n" "$dir/r"
# The same rows as JSON arrays.
python3 - "$dir/r" <<'PY'
import sys
stem = sys.argv[1]
for src, dst in [(".jsonl", ".json"), (".flat.jsonl", ".flat.json")]:
    rows = [line.strip() for line in open(stem + src) if line.strip()]
    with open(stem + dst, "w") as out:
        out.write("[\n" + ",\n".join(rows) + "\n]\n")
PY
for goal in "pareto" "throughput" "e2e_latency"; do
    printf 'goal:\n  target: %s\nsearch_space:\n  gpu_budget: 8\n' "$goal" > "$dir/$goal.yaml"
done
serving="$root/examples/serving"
runs=()
for input in r.jsonl r.csv r.json; do
    f="$dir/$input"
    for format in table csv json; do
        runs+=("score --config $dir/pareto.yaml $f --format $format")
        runs+=("score --config $dir/throughput.yaml $f --top 10 --format $format")
    done
    runs+=("score --config $dir/throughput.yaml $f --format csv")
    runs+=("score --config $dir/throughput.yaml $f --format json")
    runs+=("score --config $dir/throughput.yaml $f")
    runs+=("score --config $dir/throughput.yaml $f --show tp,nope,used_gpus")
    runs+=("score --config $dir/e2e_latency.yaml $f --top 50 --format csv")
done
for input in r.csv r.flat.jsonl r.flat.json; do
    f="$dir/$input"
    xy="-o output_throughput_tok_s:max -o mean_output_token_throughput_per_user:max"
    for format in table csv json; do
        runs+=("front $f $xy --format $format")
    done
    runs+=("front $f $xy --ranks --format csv")
    runs+=("front $f $xy --ranks")
    runs+=("front $f $xy --hypervolume 0,0 --format json")
done
for config in pareto.yaml throughput-per-gpu.yaml; do
    for format in table csv json; do
        runs+=("score --config $serving/$config $serving/agentx_qwen3.5-397b-fp8_mi355x_sglang.csv --format $format")
    done
done
# Faulty inputs: the errors (and the notes before them) must be the same too.
python3 - "$dir" <<'PY'
import sys
d = sys.argv[1]
bad = {
    "nan.csv": b"# c\nused_gpus,mean_e2e_latency_ms\n1,5\n\n1,nan\n",
    "ragged.csv": b"used_gpus,gpu_hours\n1,2\n1\n",
    "text.csv": b"used_gpus,gpu_hours\n1,two\n",
    "twice.csv": b"a,b,a\n1,2,3\n",
    "utf8.csv": b"used_gpus,note\n1,ok\n2,\xff\n",
    "empty.csv": b"# nothing\n",
    "header.csv": b"used_gpus,gpu_hours\n",
    "bool.jsonl": b"{\"report\": {}}\n{\"report\": {\"gpu_hours\": true}}\n",
    "cut.jsonl": b"{\"report\": {}}\n{\"report\": \n",
    "key.jsonl": b"{\"report\": {}, \"trial\": 3}\n",
    "utf8.jsonl": b"{\"report\": {}}\n{\"report\": {}, \"x\": 1}\n{\"report\": {\"m\": \"\xe2\x82\"}}\n",
    "blank.jsonl": b"\n\n",
    "array.json": b"[{\"report\": {}}, {\"report\": {}, \"x\": 1}]",
    "cut.json": b"[{\"report\": {}}, {\"report\": {}, \"x\": 1}",
    "object.json": b"{\"a\": 1,\n \"b\": 2}\n",
    "flat-missing.jsonl": b"{\"x\": 1, \"y\": 2}\n{\"x\": 1}\n{\"x\": 1, \"y\": \n",
    "flat-nan.json": b"[{\"x\": 1, \"y\": \"NaN\"}]",
    "bom.csv": b"\xef\xbb\xbfx,y\n1,2\n3,4\n",
    "bom.jsonl": b"\xef\xbb\xbf{\"x\": 1, \"y\": 2}\n",
}
for name, data in bad.items():
    open(f"{d}/bad-{name}", "wb").write(data)
PY
for f in "$dir"/bad-*; do
    runs+=("score --config $dir/e2e_latency.yaml $f --format csv")
    runs+=("front $f -o x:max -o y:max --format csv")
done
differ=0
k=0
compare() { # label, then the command's words; stdin from $stdin_file when set
    local label=$1
    shift
    k=$((k + 1))
    for which in before after; do
        local bin=$before
        [ "$which" = after ] && bin=$after
        local code=0
        if [ -n "${stdin_file:-}" ]; then
            "$bin" "$@" < "$stdin_file" > "$dir/$which.out" 2> "$dir/$which.err" || code=$?
        else
            "$bin" "$@" > "$dir/$which.out" 2> "$dir/$which.err" || code=$?
        fi
        # the temporary paths are the same for both builds; only the binary differs
        echo "$code" > "$dir/$which.code"
    done
    if ! cmp -s "$dir/before.out" "$dir/after.out" || ! cmp -s "$dir/before.err" "$dir/after.err" \
        || ! cmp -s "$dir/before.code" "$dir/after.code"; then
        echo "DIFFERENT: $label"
        differ=1
    fi
}
for r in "${runs[@]}"; do
    # shellcheck disable=SC2086
    compare "$r" $r
done
stdin_file="$dir/r.csv" compare "score - (csv on stdin)" score --config "$dir/pareto.yaml" - --format csv
stdin_file="$dir/r.jsonl" compare "score - (jsonl on stdin)" score --config "$dir/throughput.yaml" - --top 10 --format json
stdin_file="$dir/r.flat.jsonl" compare "front - (jsonl on stdin)" front - -o output_throughput_tok_s:max \
    -o mean_output_token_throughput_per_user:max --format csv
echo "$k runs compared on $n rows; $([ $differ = 0 ] && echo 'all the same' || echo 'some differ')"
exit $differ
