"""The constant expressions Spark evaluates when it plans a query, not per row.

Spark's optimizer folds every foldable expression into a literal (its ConstantFolding
rule) before the query reads a row. An expression that raises there fails the query,
whatever its input, even none: over an empty table `t`,

    SELECT k, make_date(2023, 2, 29) FROM t        -- DATETIME_FIELD_OUT_OF_BOUNDS
    SELECT k FROM t WHERE k > 0 AND 1 / 0 = 1      -- DIVIDE_BY_ZERO

fail in Spark 4 (ANSI), where dbspc, which evaluates expressions per row, would answer
nothing. Inside a conditional expression that is not itself constant (CASE, IF,
COALESCE, NULLIF, NVL, NANVL) a constant that raises is left for the rows to evaluate,
for its branch may never be taken: `CASE WHEN k > 0 THEN 1 / 0 END` fails only on a row
with k > 0. A constant conditional is evaluated as a whole, lazily: `COALESCE(1, 1 / 0)`
is 1.

Spark removes some constants before it folds, and those are not folded here either:

- the columns nobody reads (ColumnPruning comes first: the caller passes plans after
  `prune_columns`);
- constant GROUP BY keys (RemoveLiteralFromGroupExpressions);
- whatever reads only a LIMIT 0 (OptimizeLimitZero, then PropagateEmptyRelation);
- ELT's index out of range: Spark 4.0 leaves ELT to the rows (observed).

A constant column is put in place where it is read above, through projections, filters,
DISTINCT, windows and inner joins, before folding (Spark's CollapseProject and
FoldablePropagation): `SELECT x / 0 FROM (SELECT k, 1 AS x FROM t)` fails in Spark too.
What Spark folds only after other rewrites (a constant propagated from `k = 0` into
`10 / k`) is not found here: those still fail per row.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from dbspc.compiler.logical import plan as lp
from dbspc.compiler.logical.scalar import Call, Col, Lit, Scalar

# Spark's ConditionalExpressions (If, CaseWhen, Coalesce, NaNvl; NULLIF and NVL2 are
# rewritten into If, NVL and IFNULL into Coalesce) as the binder writes them.
CONDITIONAL = frozenset({"case", "coalesce", "nullif", "nanvl"})
# The message of the binder's error_if for ELT (bind_strings._elt).
_ELT_INDEX = "[INVALID_ARRAY_INDEX]"


def folded_constants(plans: Sequence[lp.Relation]) -> Iterator[Call]:
    """Each constant call (one reading no column) of the plans' filters and projections
    that Spark folds: the largest ones, outside any conditional that reads a column."""
    seen: set[int] = set()
    group_keys: dict[int, frozenset[int]] = {}  # a projection under an aggregate: its key columns
    known: dict[int, Known] = {}
    empty: dict[int, bool] = {}
    stack = list(plans)
    while stack:
        rel = stack.pop()
        if id(rel) in seen or _empty(rel, empty):  # (views share equal parts of their plans)
            continue
        seen.add(id(rel))
        if isinstance(rel, lp.Filter):
            yield from _largest_constants(_put(rel.predicate, _known(rel.input, known)))
        elif isinstance(rel, lp.Project):
            keys = group_keys.get(id(rel), frozenset())
            columns = _known(rel.input, known)
            for i, expr in enumerate(rel.exprs):
                if i not in keys:
                    yield from _largest_constants(_put(expr, columns))
        elif isinstance(rel, lp.Aggregate) and isinstance(rel.input, lp.Project):
            group_keys[id(rel.input)] = frozenset(rel.group)
        stack.extend(lp.children(rel))
        if isinstance(rel, lp.Fixpoint):
            stack.extend(rel.bodies)


# Per output column of a relation, the constant Spark puts in place of its reads, if any.
Known = tuple[Scalar | None, ...]
# A larger constant is not carried up (each read copies it: chains would grow geometrically).
_CARRIED_NODES = 32


def _known(rel: lp.Relation, memo: dict[int, Known]) -> Known:
    got = memo.get(id(rel))
    if got is not None:
        return got
    if isinstance(rel, lp.Project):
        inner = _known(rel.input, memo)
        out: Known = tuple(_carried(_put(e, inner)) for e in rel.exprs)
    elif isinstance(rel, (lp.Filter, lp.Distinct)):
        out = _known(rel.input, memo)
    elif isinstance(rel, lp.Window):
        out = _known(rel.input, memo) + (None,) * len(rel.calls)
    elif isinstance(rel, lp.Join):  # (inner: the binder writes outer joins with other nodes)
        out = _known(rel.left, memo) + _known(rel.right, memo)
    else:  # aggregates, set operations, scans: Spark carries nothing through them here
        out = (None,) * len(rel.fields)
    memo[id(rel)] = out
    return out


def _carried(expr: Scalar) -> Scalar | None:
    """`expr` if it is a constant to carry up: not a NULL (the padding of outer joins, in
    this plan; a NULL raises nowhere) and small."""
    if isinstance(expr, Lit):
        return None if expr.value is None else expr
    return expr if isinstance(expr, Call) and _size(expr, _CARRIED_NODES) <= _CARRIED_NODES else None


def _size(expr: Scalar, most: int) -> int:
    """Nodes of `expr`, counted up to past `most`; a column counts past it (not constant)."""
    if isinstance(expr, Col):
        return most + 1
    if not isinstance(expr, Call):
        return 1
    n = 1
    for arg in expr.args:
        n += _size(arg, most - n)
        if n > most:
            break
    return n


def _put(expr: Scalar, columns: Known) -> Scalar:
    """`expr` with the constants of the columns it reads in their place."""
    if isinstance(expr, Col):
        value = columns[expr.index] if expr.index < len(columns) else None
        return expr if value is None else value
    if isinstance(expr, Call) and any(c is not None for c in columns):
        args = tuple(_put(a, columns) for a in expr.args)
        if any(a is not b for a, b in zip(args, expr.args, strict=True)):
            return Call(expr.type, expr.fn, args)
    return expr


def _empty(rel: lp.Relation, memo: dict[int, bool]) -> bool:
    """Whether Spark knows `rel` has no rows before it folds: it reads a LIMIT 0 through
    operators that give no row from none (not a global aggregate, which gives one).
    `memo`: the answers so far (the walk asks again for every node below)."""
    got = memo.get(id(rel))
    if got is not None:
        return got
    if isinstance(rel, lp.Window) and rel.limit == 0:
        out = True
    elif isinstance(rel, (lp.Filter, lp.Project, lp.Distinct, lp.Window)):
        out = _empty(rel.input, memo)
    elif isinstance(rel, lp.Aggregate):
        out = not rel.is_global and _empty(rel.input, memo)
    elif isinstance(rel, (lp.Join, lp.Intersect)):
        out = _empty(rel.left, memo) or _empty(rel.right, memo)
    elif isinstance(rel, (lp.Except, lp.Minus)):
        out = _empty(rel.left, memo)
    elif isinstance(rel, lp.UnionAll):
        out = all(_empty(r, memo) for r in rel.inputs)
    else:
        out = False
    memo[id(rel)] = out
    return out


def _largest_constants(expr: Scalar) -> Iterator[Call]:
    found: list[Call] = []
    if _constant(expr, found) and isinstance(expr, Call):
        found.append(expr)
    return iter(found)


def _constant(expr: Scalar, found: list[Call]) -> bool:
    """Whether `expr` reads no column; if it reads one, its largest constant calls that
    Spark folds go to `found` (one walk, bottom up: deep expressions stay linear)."""
    if isinstance(expr, Col):
        return False
    if not isinstance(expr, Call):
        return True
    inner: list[Call] = []
    kinds = [_constant(arg, inner) for arg in expr.args]
    if expr.fn == "error_if" and isinstance(msg := expr.args[2], Lit) and str(msg.value).startswith(_ELT_INDEX):
        return False  # (left to the rows, constant or not)
    if all(kinds):
        return True
    if expr.fn in CONDITIONAL:  # (its branches are evaluated per row, where taken)
        return False
    found.extend(inner)
    found.extend(a for a, constant in zip(expr.args, kinds, strict=True) if constant and isinstance(a, Call))
    return False
