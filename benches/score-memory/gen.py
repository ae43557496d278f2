"""Seeded report rows for run.sh: N rows as nested JSON Lines, CSV and flat JSON Lines."""

import json
import random
import sys

n, stem = int(sys.argv[1]), sys.argv[2]
rng = random.Random(13)
with open(stem + ".jsonl", "w") as jl, open(stem + ".csv", "w") as csv, open(
    stem + ".flat.jsonl", "w"
) as flat:
    csv.write("tp,used_gpus,output_throughput_tok_s,mean_output_token_throughput_per_user,"
              "gpu_hours,duration_ms\n")
    for _ in range(n):
        tp = rng.choice([1, 2, 4, 8])
        gpus = tp * rng.choice([1, 2])
        tput = round(rng.uniform(10, 5000), 1)
        user = round(rng.uniform(5, 200), 1)
        dur = rng.choice([600000, 1800000, 3600000])
        hours = gpus * dur / 3600000
        jl.write(json.dumps({"config": {"tp": tp, "used_gpus": gpus},
                             "report": {"output_throughput_tok_s": tput,
                                        "mean_output_token_throughput_per_user": user,
                                        "gpu_hours": hours, "duration_ms": dur}}) + "\n")
        csv.write(f"{tp},{gpus},{tput},{user},{hours},{dur}\n")
        flat.write(json.dumps({"output_throughput_tok_s": tput,
                               "mean_output_token_throughput_per_user": user}) + "\n")
