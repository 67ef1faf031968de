"""Benchmark: the cost of one DECIMAL operator over a batch, per 1,000 rows.

    .venv/bin/python bench/decimal_ops.py [--rows 1000] [--batches 20]

Each case evaluates one expression (`a / b`, `a * b`, `a + b`, CAST) over --batches
different batches of --rows random values, with the runtime's own evaluate (the value
and its overflow check), and prints the CPU time per batch. The narrow types run as one
polars expression; products and quotients whose exact result may pass polars' 128 bits
run on the operands' unscaled integers (runtime/decimal_arithmetic.py). To compare two
versions, run it in both trees on the same machine, one after the other.
"""

from __future__ import annotations

import argparse
import random
import time
from decimal import Decimal

from dbspc.compiler.dialect import semantics_of
from dbspc.compiler.frontend.type_rules import arithmetic_type
from dbspc.compiler.logical.scalar import Call, Col, Scalar
from dbspc.compiler.types import DOUBLE, SqlType, decimal
from dbspc.runtime.expressions import evaluate
from dbspc.runtime.zset import ZSet

CASES: list[tuple[str, str, SqlType, SqlType]] = [
    ("div", "/", decimal(10, 2), decimal(10, 0)),
    ("div", "/", decimal(38, 18), decimal(38, 18)),
    ("mul", "*", decimal(10, 2), decimal(10, 2)),
    ("mul", "*", decimal(38, 18), decimal(38, 18)),
    ("add", "+", decimal(38, 18), decimal(38, 18)),
    ("cast", "", DOUBLE, decimal(10, 2)),
]


def _value(t: SqlType, rng: random.Random) -> object:
    if t == DOUBLE:
        return rng.randint(1, 10**6) / 1000
    return Decimal(rng.randint(1, 10**6)).scaleb(-(t.scale or 0))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=1000)
    parser.add_argument("--batches", type=int, default=20)
    args = parser.parse_args()
    rng = random.Random(1)
    print(f"| operation | operand types | ms per batch of {args.rows:,} rows (CPU) |")
    print("|---|---|---:|")
    for fn, symbol, ta, tb in CASES:
        expr: Scalar
        if fn == "cast":
            expr = Call(tb, "cast", (Col(ta, 0),))
            types = [ta, ta]
        else:
            t = arithmetic_type(symbol, ta, tb, semantics_of("spark"))
            expr = Call(t, fn, (Col(ta, 0), Col(tb, 1)))
            types = [ta, tb]
        batches = [
            ZSet.from_rows([(_value(types[0], rng), _value(types[1], rng)) for _ in range(args.rows)], types).frame
            for _ in range(args.batches)
        ]
        evaluate(batches[0], [expr], "bench")  # compile once
        start = time.process_time()
        for frame in batches:
            evaluate(frame, [expr], "bench")
        per_batch = (time.process_time() - start) / len(batches) * 1e3
        shown = f"{ta} {symbol or 'AS'} {tb}"
        print(f"| {fn} | {shown} | {per_batch:.2f} |")


if __name__ == "__main__":
    main()
