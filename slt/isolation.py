"""Process isolation: a file runs in a child process, so that a query that exhausts memory
(polars aborts the process under the child's address-space cap) or runs past the per-record
timeout costs one error, not the run. The child reports each event as a JSON line; when it
dies, the record it was on counts as an error and a new child resumes after it, replaying the
statements before it (each one a `replay` event: the timeout is per record there too). A statement
that timed out is tried once more (a shared machine stalls); one that still fails leaves the
tables it writes blocked in the new child, so that later queries over them count as errors,
never as wrong results of a database that missed a change."""

from __future__ import annotations

import ctypes
import dataclasses
import json
import os
import resource
import select
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

from dbspc.slt.incremental import Limits
from dbspc.slt.records import parse_test

ROOT = Path(__file__).resolve().parent.parent
# what a child runs: `serve` with its parameters as one JSON argument
_CHILD = "import dbspc.slt.isolation; dbspc.slt.isolation.serve()"

Take = Callable[[dict[str, Any]], None]


def _child_setup(memory_mb: int) -> Callable[[], None]:
    def setup() -> None:
        """In the child before it starts: cap its memory, and have it die with its parent (Linux)."""
        cap = memory_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
        try:
            ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass

    return setup


def run_isolated(path: str, take: Take, limit: int | None, shard: tuple[int, int], limits: Limits) -> None:
    """Run the file in child processes, passing each counted event to `take`."""
    start, queries = 0, 0
    crashed: list[int] = []
    lost: dict[str, str] = {}  # a crashed statement's index: why its process died
    retried: set[int] = set()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    while True:
        params = {
            "path": os.path.abspath(path),  # the child runs in the repository's folder
            "start": start,
            "skip": crashed,
            "lost": lost,
            "limit": None if limit is None else limit - queries,
            "shard": list(shard),
            "limits": dataclasses.asdict(limits),
        }
        cmd = [sys.executable, "-c", _CHILD, json.dumps(params)]
        with tempfile.TemporaryFile() as stderr:
            child = subprocess.Popen(
                cmd, stdout=subprocess.PIPE, stderr=stderr, cwd=ROOT, env=env, preexec_fn=_child_setup(limits.memory_mb)
            )
            current, done, timed_out = None, False, False
            assert child.stdout is not None
            try:
                for line in _lines(child.stdout, limits.record_timeout):
                    if line is None:
                        timed_out = True
                        break
                    event = json.loads(line)
                    if event["event"] in ("start", "replay"):
                        current = event["index"]
                    elif event["event"] == "done":
                        done = True
                    else:
                        queries += event["event"] == "outcome" and event.get("query", False)
                        take(event)
            finally:
                if child.poll() is None and not done:
                    child.kill()
                code = child.wait()
            if done:
                break
            stderr.seek(0)
            tail = [s for s in stderr.read().decode(errors="replace").splitlines() if s.strip()]
        if current is None:
            raise RuntimeError(f"{path}: the test runner failed: {' | '.join(tail[-5:])}")
        records = parse_test(Path(path).read_text())
        rec = records[current]
        if timed_out and rec.kind == "statement" and current not in retried and current >= start:
            retried.add(current)  # (its first try counted nothing)
            start = current
            continue
        if timed_out:
            reason = f"timeout: a record ran over {limits.record_timeout:.0f}s"
        else:
            died = f"signal {-code}" if code < 0 else f"exit code {code}"
            said = [s for s in tail if not s.startswith((" ", "stack backtrace", "note:", "skipping backtrace"))]
            oom = [s for s in said if "memory allocation of" in s or "MemoryError" in s]
            last = f"out of memory (cap {limits.memory_mb} MB): {oom[0]}" if oom else said[-1] if said else ""
            reason = f"crashed ({died}): {last[:120]}"
        if rec.kind == "query" or shard[0] == 0:  # shard 0 alone counts statements
            take({"event": "outcome", "line": rec.line, "sql": rec.sql, "status": "error", "reason": reason})
        queries += rec.kind == "query"
        crashed.append(current)
        if rec.kind == "statement":
            lost[str(current)] = reason
        start = max(start, current + 1)  # (a record replayed before `start` was counted already)


def _lines(stream: IO[bytes], timeout: float) -> Iterator[str | None]:
    """The stream's lines; None when no line came for `timeout` seconds."""
    fd = stream.fileno()
    buffer = b""
    while True:
        while b"\n" in buffer:
            line, buffer = buffer.split(b"\n", 1)
            yield line.decode()
        ready, _, _ = select.select([fd], [], [], timeout)
        if not ready:
            yield None
            return
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            return
        buffer += chunk


def serve() -> None:
    """A child process's work: run the file from `start`, writing each event as a JSON line."""
    from dbspc.slt.runner import FileRunner  # the runner imports this module

    params = json.loads(sys.argv[1])
    out = sys.stdout

    def send(event: dict[str, Any]) -> None:
        out.write(json.dumps(event) + "\n")
        out.flush()

    k, n = params["shard"]
    limits = Limits(**params["limits"])
    runner = FileRunner(params["path"], limit=params["limit"], sink=send, shard=(k, n), limits=limits)
    lost = {int(index): reason for index, reason in params.get("lost", {}).items()}
    runner.run(params["start"], frozenset(params["skip"]), lost)
    send({"event": "done"})
