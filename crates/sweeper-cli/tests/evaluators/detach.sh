#!/bin/sh
# A one-shot evaluator that leaves a detached child behind: `setsid` puts the child in a
# session (and process group) of its own, where a group kill cannot reach it, and the
# child keeps stdout open. The child's pid goes to $1. With $2 = "hang" the evaluator then
# never answers; otherwise it prints its report and exits at once.
setsid sh -c 'echo $$ > "$1.tmp" && mv "$1.tmp" "$1"; exec sleep 30' detached "$1" &
while [ ! -e "$1" ]; do sleep 0.01; done
if [ "$2" = hang ]; then
    sleep 60
fi
echo '{"throughput": 5}'
