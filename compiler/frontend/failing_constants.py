"""Refusing a view that Spark cannot answer: one of its constants raises when folded.

Spark evaluates a view's constant expressions when it plans the query
(compiler/logical/constant_folding.py), so `SELECT k, 1 / 0 FROM t` fails every query of
the view, over any rows or none. dbspc evaluates expressions per row and would answer
such a view while no row reaches the constant. Instead the view is refused where it is
defined, with Spark's error and the constant as written.

The constants are evaluated with the runtime's own kernels (the one definition of each
function's errors), so compile time and run time cannot disagree on what raises.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from sqlglot import exp

from dbspc.compiler.errors import DbspcError, Span, SqlError
from dbspc.compiler.frontend.positions import SQLGLOT_FAILURES, span_of
from dbspc.compiler.logical import plan as lp
from dbspc.compiler.logical.constant_folding import folded_constants
from dbspc.compiler.logical.prune_columns import prune_columns
from dbspc.compiler.logical.scalar import Scalar

# A constant written as SQL, bound alone (`SELECT <it>`) in the view's program.
BindAlone = Callable[[exp.Expression], lp.Relation]


def refuse_failing_constants(
    name: str, plan: lp.Relation, query: exp.Expression, dialect: str, bind_alone: BindAlone
) -> None:
    """SqlError if a constant Spark folds in view `name` (its bound `plan`, its `query` as
    parsed) raises; positioned at the constant where it is found in the text."""
    from dbspc.runtime.expressions import constant_error  # (the runtime's kernels judge)

    for constant in folded_constants(prune_columns([plan])):
        error = constant_error(constant)
        if error is None:
            continue
        where, written = _written(query, dialect, error, bind_alone, constant_error)
        if written is None:  # (made of constant columns read above their projection)
            raise SqlError(
                f"view '{name}' fails in Spark whatever its rows: an expression of constants in it raises {error}; "
                "Spark puts constant columns in place of their reads and evaluates constants when it plans "
                "the query, before it reads a row"
            )
        raise SqlError(
            f"view '{name}' fails in Spark whatever its rows: its constant {written} raises {error}; "
            "Spark evaluates constants when it plans the query, before it reads a row",
            where,
        )


def _written(
    query: exp.Expression,
    dialect: str,
    error: str,
    bind_alone: BindAlone,
    constant_error: Callable[[Scalar], str | None],
) -> tuple[Span | None, str | None]:
    """The first constant of the text that raises `error` when bound and evaluated alone:
    its position and its SQL. (None, None) if none does (the failing constant was made
    by the binder out of several pieces of the text)."""
    for node in _constants_written(query):
        try:
            alone = bind_alone(node.copy())
        except (DbspcError, *SQLGLOT_FAILURES):
            continue
        if any(constant_error(c) == error for c in folded_constants([alone])):
            return span_of(node), node.sql(dialect)
    return None, None


# What computes a value (an alias, a parenthesis or an ORDER BY item only wraps one).
_COMPUTES = (exp.Func, exp.Binary, exp.Unary, exp.Case, exp.Cast, exp.In, exp.Between)
_WRAPS = (exp.Alias, exp.Paren, exp.Ordered)
_READS = (exp.Column, exp.Star, exp.Select, exp.Subquery, exp.AggFunc, exp.Window, exp.Placeholder)


def _constants_written(query: exp.Expression) -> Iterator[exp.Expression]:
    """The largest subexpressions of `query` that compute a value from constants alone,
    in the order of the text."""
    stack = [query]
    while stack:
        node = stack.pop()
        if isinstance(node, _COMPUTES) and not isinstance(node, _WRAPS) and node.find(*_READS) is None:
            yield node
            continue
        stack.extend(reversed(list(node.iter_expressions())))
