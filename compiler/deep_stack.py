"""Deeply nested SQL (generated queries reach thousands of levels) on a deep stack.

The parser, the binder and the expression compiler recurse once per nesting level, which
Python's default limits stop at a few hundred levels. `deep` retries a call that hit
the limit in a worker thread with a large stack and a high recursion limit; the call must
be free of side effects until it returns (compiles are, and a step commits its state only
at the end). Past that depth the user gets a clear error, not a traceback.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from typing import TypeVar

from dbspc.compiler.errors import SqlError

T = TypeVar("T")

_STACK_BYTES = 1 << 30  # 1 GiB of address space; pages are used only as deep as needed
_RECURSION_LIMIT = 400_000


def deep(fn: Callable[[], T]) -> T:
    """fn(), retried on a deep stack if it exceeded Python's recursion limit."""
    try:
        return fn()
    except RecursionError:
        pass
    result: list[T] = []
    error: list[BaseException] = []

    def target() -> None:
        old = sys.getrecursionlimit()
        sys.setrecursionlimit(_RECURSION_LIMIT)
        try:
            result.append(fn())
        except RecursionError:
            error.append(SqlError("the query nests too deeply (more than tens of thousands of levels)"))
        except BaseException as e:  # re-raised in the caller's thread
            error.append(e)
        finally:
            sys.setrecursionlimit(old)

    previous = threading.stack_size(_STACK_BYTES)
    try:
        worker = threading.Thread(target=target, name="dbspc-deep-stack")
        worker.start()
    finally:
        threading.stack_size(previous)
    worker.join()
    if error:
        raise error[0]
    return result[0]
