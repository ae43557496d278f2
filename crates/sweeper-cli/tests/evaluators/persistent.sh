#!/bin/sh
# A persistent test evaluator that starts in a blink: answers each candidate line with its
# pid and call count, and hangs on a candidate whose `action` parameter is "hang".
calls=0
while IFS= read -r line; do
    calls=$((calls + 1))
    case "$line" in
        *'"action":"hang"'*) sleep 60 ;;
    esac
    echo "{\"pid\": $$, \"calls\": $calls}"
done
