#!/bin/sh
# Starts a background job that would touch $1 later, records its pid in $2, then hangs:
# only a kill of the whole process group stops the background job.
(sleep 5; touch "$1") &
echo $! > "$2.tmp" && mv "$2.tmp" "$2"
sleep 60
