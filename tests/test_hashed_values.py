"""SQL types and calls keep their hash (a circuit hash-conses operators that hold dozens of
each), and a pickled one is rebuilt by its constructor: a string's hash differs between
processes, so a hash carried in the pickle would miss every dict in the receiving one
(Spark's executors, the slt runner's children)."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from pathlib import Path

from dbspc.compiler.logical.scalar import Call, Col, Lit
from dbspc.compiler.types import INT, STRING, SqlType, decimal

ROOT = Path(__file__).resolve().parent.parent


def _values() -> list[object]:
    return [
        decimal(10, 2),
        SqlType("STRING", length=5, fixed=True),
        SqlType("ARRAY", element=STRING),
        Call(INT, "add", (Col(INT, 0), Lit(INT, 1))),
    ]


def test_equal_values_hash_equal_and_round_trip() -> None:
    for value in _values():
        again = pickle.loads(pickle.dumps(value))
        assert again == value and hash(again) == hash(value)
    # CHAR/VARCHAR lengths are not compared, so they do not enter the hash either
    assert hash(SqlType("STRING", length=5)) == hash(STRING)


def test_a_value_pickled_in_another_process_finds_its_equal_here() -> None:
    code = (
        "import pickle, sys; from tests.test_hashed_values import _values; "
        "sys.stdout.buffer.write(pickle.dumps(_values()))"
    )
    env = {**os.environ, "PYTHONHASHSEED": "12345", "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, check=True, cwd=ROOT).stdout
    table = {value: i for i, value in enumerate(_values())}
    assert [table.get(value) for value in pickle.loads(out)] == list(range(len(table)))
