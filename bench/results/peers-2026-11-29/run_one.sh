#!/bin/bash
# one timed benchmark: the command, the time and load before and after
echo "=== $(date -u +%H:%M:%S) $(uptime | sed 's/.*load/load/') :: $*"
"$@" 2>&1
echo "=== rc=$? $(date -u +%H:%M:%S) $(uptime | sed 's/.*load/load/')"
