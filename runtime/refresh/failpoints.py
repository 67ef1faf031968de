"""Crash injection for the exactly-once tests: die (like kill -9) at the n-th failpoint.

Every step of a refresh that has an effect on disk is preceded or followed by a named
`failpoint`. With `DBSPC_CRASH_AFTER=n` in the environment the process ends with
`os._exit` at the n-th failpoint it passes: no exception handler, `finally` block or
atexit hook runs, exactly as after `kill -9`. The crash tests run a job once without it
to count the failpoints (`passed()`), then pick n at random in that range, so every
point of the protocol gets hit. Without the variable a failpoint is one int compare.
"""

from __future__ import annotations

import os
import sys
import threading

ENV = "DBSPC_CRASH_AFTER"
EXIT_CODE = 137  # what a shell reports for a process killed by SIGKILL

_limit = int(os.environ.get(ENV, "0") or 0)
_passed = 0
_count = threading.Lock()  # sinks write bucket files from several threads


def failpoint(name: str) -> None:
    """Count this point; at the configured count, end the process at once."""
    global _passed
    with _count:
        _passed += 1
        now = _passed
    if _limit and now >= _limit:
        sys.stderr.write(f"dbspc: crash injected at failpoint {_passed} ({name})\n")
        sys.stderr.flush()
        os._exit(EXIT_CODE)


def passed() -> int:
    """How many failpoints this process has passed."""
    return _passed
