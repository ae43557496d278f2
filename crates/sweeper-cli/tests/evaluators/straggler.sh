#!/bin/sh
# Reports at once but leaves a background job behind that would touch $1 later (its pid in
# $2) and that holds stdout open meanwhile.
(sleep 5; touch "$1") &
echo $! > "$2.tmp" && mv "$2.tmp" "$2"
echo '{"throughput": 3}'
