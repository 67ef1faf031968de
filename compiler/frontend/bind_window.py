"""Bind window functions, QUALIFY and ORDER BY ... LIMIT (top-k) into the logical plan.

Window calls of a SELECT list (and of QUALIFY) are evaluated by `Window` nodes placed
between the FROM/WHERE/GROUP BY/HAVING result and the final projection; one node per
distinct PARTITION BY / ORDER BY, each appending its calls' columns. Their arguments,
partition and order expressions are first computed into extra columns by a Project, so
the Window node itself only names columns. The SELECT list then sees each window call
as a column (by its SQL text, like an aggregate after GROUP BY).

ORDER BY ... LIMIT k [OFFSET m] is a ROW_NUMBER() over the whole result filtered to
m < rn <= m + k: top-k is a window, maintained per changed partition like any other.
Semantics follow Spark 4 (checked with pyspark 4.3): NULLs sort first ascending and last
descending; with ORDER BY the default frame is RANGE UNBOUNDED PRECEDING .. CURRENT ROW
(ties included), without it the whole partition; ROW_NUMBER/RANK/DENSE_RANK are INT;
LAG/LEAD's default is cast to the argument's type.
"""

from __future__ import annotations

import re
from decimal import Decimal

from sqlglot import exp

from dbspc.compiler.errors import SqlError, UnsupportedSql
from dbspc.compiler.frontend.bind_arrays import refuse_array
from dbspc.compiler.frontend.bind_scalar import ScalarScope, bind_scalar
from dbspc.compiler.frontend.positions import span_of, written_name
from dbspc.compiler.frontend.type_rules import TypeMismatch, avg_type, coerce, sum_type
from dbspc.compiler.logical import plan as lp
from dbspc.compiler.logical.scalar import Call, Col, Lit, Scalar
from dbspc.compiler.types import BIGINT, DECIMAL_CONTEXT, DOUBLE, TIMESTAMP_KINDS, SqlType

INT = SqlType("INT")

_RANKING: dict[type[exp.Expression], str] = {exp.RowNumber: "row_number", exp.Rank: "rank", exp.DenseRank: "dense_rank"}
# functions of a row's place in its ordered partition (no frame): DOUBLE, or INT for ntile
_DISTRIBUTION: dict[type[exp.Expression], str] = {
    exp.PercentRank: "percent_rank",
    exp.CumeDist: "cume_dist",
    exp.Ntile: "ntile",
}
# the value of one row of the frame: the argument's type
_VALUES: dict[type[exp.Expression], str] = {
    exp.FirstValue: "first_value",
    exp.First: "first_value",
    exp.LastValue: "last_value",
    exp.Last: "last_value",
    exp.NthValue: "nth_value",
}
_AGGREGATES: dict[type[exp.Expression], str] = {
    exp.Sum: "sum",
    exp.Count: "count",
    exp.Avg: "avg",
    exp.Min: "min",
    exp.Max: "max",
}


def window_calls(nodes: list[exp.Expression]) -> list[exp.Window]:
    """The window calls in `nodes`, outermost first, not looking into subqueries."""
    found: list[exp.Window] = []

    def visit(n: exp.Expression) -> None:
        if isinstance(n, exp.Window):
            found.append(n)
            return
        if isinstance(n, (exp.Subquery, exp.Select)):
            return
        for child in n.iter_expressions():
            visit(child)

    for n in nodes:
        visit(n)
    return found


def refuse_windows_in(node: exp.Expression | None, clause: str) -> None:
    """Spark evaluates windows after WHERE, GROUP BY and HAVING: they cannot appear there."""
    if node is None:
        return
    for w in window_calls([node]):
        raise SqlError(f"window function {w.this.sql('spark')} is not allowed in {clause}", span_of(w))


def refuse_misplaced_windows(sel: exp.Select) -> None:
    """Spark evaluates windows after WHERE, GROUP BY and HAVING; QUALIFY filters on them."""
    refuse_windows_in(sel.args.get("where"), "WHERE; filter on it with QUALIFY")
    refuse_windows_in(sel.args.get("having"), "HAVING; filter on it with QUALIFY")
    refuse_windows_in(sel.args.get("group"), "GROUP BY")
    for join in sel.args.get("joins") or []:
        refuse_windows_in(join.args.get("on"), "ON")


def refuse_window_in_recursion(name: str, cte: exp.CTE, body: lp.Relation) -> None:
    """A window over the recursive relation is not monotone (a new row renumbers its
    partition), so the recursion has no least fixpoint to compute incrementally (DBSP
    §5 needs a monotone body). Windows over data the recursion does not read are fine:
    lowering hoists them out of the loop."""

    def reads_ref(rel: lp.Relation) -> bool:
        if isinstance(rel, lp.RecursiveRef):
            return True
        return any(reads_ref(c) for c in lp.children(rel))

    def visit(rel: lp.Relation) -> None:
        if isinstance(rel, lp.Window) and reads_ref(rel.input):
            raise UnsupportedSql(
                f"recursive CTE '{name}' applies a window function or ORDER BY ... LIMIT to itself; "
                "they are not monotone and cannot be part of a recursion",
                span_of(cte),
            )
        for c in lp.children(rel):
            visit(c)

    visit(body)


def bind_windows(rel: lp.Relation, scope: ScalarScope, nodes: list[exp.Window]) -> tuple[lp.Relation, ScalarScope]:
    """Window nodes computing `nodes` above `rel`, and the scope in which the SELECT list
    sees each call (by its SQL text) and still every column `scope` saw."""
    replacements = dict(scope.replacements)
    by_spec: dict[str, list[exp.Window]] = {}
    for w in nodes:
        if w.sql() in replacements:
            continue
        _check_window(w)
        by_spec.setdefault(_spec_key(w), []).append(w)
        replacements[w.sql()] = Col(INT, -1)  # placeholder: dedups equal calls
    for group in by_spec.values():
        rel, cols = _bind_group(rel, scope, group)
        for w, col in zip(group, cols, strict=True):
            replacements[w.sql()] = col
    return rel, ScalarScope(scope.columns, scope.semantics, replacements, scope.only_replacements, scope.context)


def _spec_key(w: exp.Window) -> str:
    parts = [p.sql() for p in w.args.get("partition_by") or []]
    order = w.args.get("order")
    return repr((parts, order.sql() if order is not None else ""))


def _check_window(w: exp.Window) -> None:
    if isinstance(w.this, exp.Identifier) or w.args.get("alias") is not None:
        raise UnsupportedSql("named windows (WINDOW w AS ...) are not supported; spell the window out", span_of(w))
    fn = w.this
    if isinstance(fn, (exp.IgnoreNulls, exp.RespectNulls)):
        if not isinstance(fn.this, (exp.FirstValue, exp.First, exp.LastValue, exp.Last)):
            raise UnsupportedSql(
                "IGNORE NULLS / RESPECT NULLS is supported with FIRST_VALUE and LAST_VALUE only", span_of(w)
            )
        fn = fn.this
    assert isinstance(fn, exp.Expression)
    if not isinstance(fn, (*_RANKING, *_DISTRIBUTION, *_VALUES, *_AGGREGATES, exp.Lag, exp.Lead)):
        raise UnsupportedSql(
            f"window function {written_name(fn.this if isinstance(fn, exp.WithinGroup) else fn)} is not supported; "
            "supported: ROW_NUMBER, RANK, DENSE_RANK, "
            "PERCENT_RANK, CUME_DIST, NTILE, LAG, LEAD, FIRST_VALUE, LAST_VALUE, NTH_VALUE, SUM, COUNT, AVG, MIN, MAX",
            span_of(w),
        )
    if isinstance(fn, exp.AggFunc) and isinstance(fn.this, exp.Distinct):
        raise UnsupportedSql("DISTINCT aggregates over a window are not supported", span_of(w))
    if type(fn) in _VALUES and w.args.get("order") is None:
        # Spark takes the partition in whatever order its rows arrive: not a function of the data
        raise UnsupportedSql(
            f"{written_name(fn)} over a window without ORDER BY depends on the order rows arrive in; "
            "add an ORDER BY to the window",
            span_of(w),
        )
    if isinstance(fn, (*_RANKING, *_DISTRIBUTION, exp.Lag, exp.Lead)) and w.args.get("order") is None:
        raise SqlError(f"window function {fn.sql('spark')} requires an ORDER BY in its window", span_of(w))


def _bind_group(rel: lp.Relation, scope: ScalarScope, group: list[exp.Window]) -> tuple[lp.Relation, list[Col]]:
    """One Window node for calls sharing PARTITION BY and ORDER BY."""
    n_in = len(rel.fields)
    extra: list[Scalar] = []

    def column(node: exp.Expression) -> int:
        e = bind_scalar(node, scope)
        refuse_array(e.type, "a window key", node)
        return column_of(e)

    def column_of(e: Scalar) -> int:
        if isinstance(e, Col) and e.index < n_in:
            return e.index
        if e in extra:
            return n_in + extra.index(e)
        extra.append(e)
        return n_in + len(extra) - 1

    first = group[0]
    scope.context = "a window specification"
    partition = tuple(column(p) for p in first.args.get("partition_by") or [])
    order_node = first.args.get("order")
    order: list[lp.OrderKey] = []
    order_types: list[SqlType] = []
    for o in order_node.expressions if order_node is not None else []:
        desc = bool(o.args.get("desc"))
        nulls_first = o.args.get("nulls_first")
        index = column(o.this)
        order.append(lp.OrderKey(index, desc, bool(nulls_first) if nulls_first is not None else not desc))
        order_types.append(rel.fields[index].type if index < n_in else extra[index - n_in].type)
    scope.context = "a window function's argument"
    calls = [_bind_call(w, scope, column_of, order_types) for w in group]
    pre: lp.Relation = rel
    if extra:
        exprs = tuple(Col(f.type, i) for i, f in enumerate(rel.fields)) + tuple(extra)
        fields = rel.fields + tuple(lp.Field(f"w{i}", e.type) for i, e in enumerate(extra))
        pre = lp.Project(fields, rel, exprs)
    n_pre = len(pre.fields)
    fields = pre.fields + tuple(lp.Field(f"win{j}", c.type) for j, c in enumerate(calls))
    out = lp.Window(fields, pre, partition, tuple(order), tuple(calls))
    cols = [Col(c.type, n_pre + j) for j, c in enumerate(calls)]
    return out, cols


def _bind_call(w: exp.Window, scope: ScalarScope, column_of: object, order_types: list[SqlType]) -> lp.WindowCall:
    assert callable(column_of)
    fn = w.this
    ignore_nulls = isinstance(fn, exp.IgnoreNulls)
    if isinstance(fn, (exp.IgnoreNulls, exp.RespectNulls)):
        fn = fn.this
    if type(fn) in _RANKING or type(fn) in _DISTRIBUTION:
        if w.args.get("spec") is not None:
            raise SqlError(f"{fn.sql('spark')} does not take a window frame", span_of(w))
        if type(fn) in _RANKING:
            return lp.WindowCall(_RANKING[type(fn)], INT)
        if isinstance(fn, exp.Ntile):
            return lp.WindowCall("ntile", INT, offset=_positive_literal(fn, fn.this, "the number of buckets"))
        return lp.WindowCall(_DISTRIBUTION[type(fn)], DOUBLE)
    if type(fn) in _VALUES:
        arg = bind_scalar(fn.this, scope)
        refuse_array(arg.type, "a window function argument", fn)
        if arg.type.kind == "NULL":
            raise SqlError(f"{fn.sql('spark')} of an untyped NULL", span_of(fn))
        name = _VALUES[type(fn)]
        nth = _positive_literal(fn, fn.args.get("offset"), "the row number") if name == "nth_value" else 1
        skip = fn.args.get("from_first")  # sqlglot's name for Spark's nth_value(x, n, ignoreNulls)
        if skip is not None and not (isinstance(skip, exp.Boolean) and not skip.this):
            raise UnsupportedSql(f"{written_name(fn)} ignoring NULLs is not supported", span_of(w))
        frame = _frame(w, order_types)
        return lp.WindowCall(name, arg.type, column_of(arg), nth, frame=frame, ignore_nulls=ignore_nulls)
    if isinstance(fn, (exp.Lag, exp.Lead)):
        arg = bind_scalar(fn.this, scope)
        refuse_array(arg.type, "a window function argument", fn)
        offset = 1
        if fn.args.get("offset") is not None:
            off = bind_scalar(fn.args["offset"], scope)
            if not isinstance(off, Lit) or not isinstance(off.value, int) or isinstance(off.value, bool):
                raise SqlError("the offset of LAG/LEAD must be an integer literal", span_of(fn.args["offset"]))
            offset = off.value
        default: int | None = None
        if fn.args.get("default") is not None:
            d = bind_scalar(fn.args["default"], scope)
            try:
                d = coerce(d, arg.type) if not isinstance(d, Lit) or d.value is not None else Lit(arg.type, None)
            except TypeMismatch as e:
                raise SqlError(f"{e} in the default of {fn.sql('spark')}", span_of(fn.args["default"])) from None
            if d.type != arg.type:
                d = Call(arg.type, "cast", (d,))
            default = column_of(d)
        if arg.type.kind == "NULL":
            raise SqlError(f"{fn.sql('spark')} of an untyped NULL", span_of(fn))
        sign = 1 if isinstance(fn, exp.Lag) else -1
        return lp.WindowCall("lag", arg.type, column_of(arg), sign * offset, default)
    name = _AGGREGATES[type(fn)]
    frame = _frame(w, order_types)
    inner = fn.this
    if name == "count" and (inner is None or isinstance(inner, exp.Star)):
        return lp.WindowCall("count_star", BIGINT, None, frame=frame)
    arg = bind_scalar(inner, scope)
    refuse_array(arg.type, "a window function argument", fn)
    try:
        t = {"count": BIGINT, "sum": None, "avg": None}.get(name) or (
            sum_type(arg.type) if name == "sum" else avg_type(arg.type) if name == "avg" else arg.type
        )
    except TypeMismatch as e:
        raise SqlError(str(e), span_of(fn)) from None
    if name in ("sum", "avg") and arg.type.kind == "NULL":
        arg = coerce(arg, t)
    starts_at_partition = frame is None or frame.lo is None
    bounded_rows = frame is not None and frame.rows and frame.lo is not None and frame.hi is not None
    if name in ("sum", "avg") and arg.type.kind in ("FLOAT", "DOUBLE") and not starts_at_partition:
        assert frame is not None
        narrow = bounded_rows and frame.hi - frame.lo < lp.SLIDING_FLOAT_WIDTH  # type: ignore[operator]
        if not narrow:
            raise UnsupportedSql(
                f"{name.upper()} of a floating-point value over a frame that does not start at UNBOUNDED "
                f"PRECEDING is supported over ROWS frames of at most {lp.SLIDING_FLOAT_WIDTH} rows only (Spark "
                "adds each frame afresh, and a difference of running sums would round otherwise)",
                span_of(w),
            )
    if name in ("min", "max") and frame is not None and frame.lo is not None and frame.hi is not None:
        if not frame.rows:
            raise UnsupportedSql(
                f"{name.upper()} over a RANGE frame bounded at both ends is not supported; "
                "use a ROWS frame, or UNBOUNDED PRECEDING or UNBOUNDED FOLLOWING",
                span_of(w),
            )
    return lp.WindowCall(name, t, column_of(arg), frame=frame)


def _positive_literal(fn: exp.Expression, node: exp.Expression | None, what: str) -> int:
    """NTILE's and NTH_VALUE's constant argument, a positive integer (Spark's rule)."""
    value = node.this if isinstance(node, exp.Literal) and not node.is_string else None
    if value is None or not str(value).isdigit() or int(value) <= 0:
        raise SqlError(f"{what} of {written_name(fn)} must be a positive integer literal", span_of(node or fn))
    return int(value)


def _frame(w: exp.Window, order_types: list[SqlType]) -> lp.Frame | None:
    spec = w.args.get("spec")
    if spec is None:
        return None  # Spark's default: RANGE UNBOUNDED PRECEDING .. CURRENT ROW, or the partition
    rows = (spec.args.get("kind") or "").upper() == "ROWS"
    if not order_types:
        raise UnsupportedSql("a window frame without ORDER BY is not supported", span_of(spec))
    lo = _bound(spec, "start", rows, order_types)
    hi = _bound(spec, "end", rows, order_types)
    if not rows and lo is not None and hi is not None and lo > hi:
        raise SqlError("the lower bound of a RANGE window frame must not exceed its upper bound", span_of(spec))
    # Spark refuses a ROWS frame whose two offsets are inverted (1 FOLLOWING AND 1
    # PRECEDING) but takes CURRENT ROW AND 1 PRECEDING, an empty frame.
    offsets = not any(isinstance(spec.args.get(w), str) for w in ("start", "end"))
    if rows and offsets and lo is not None and hi is not None and lo > hi:
        raise SqlError("the lower bound of a ROWS window frame must not exceed its upper bound", span_of(spec))
    return lp.Frame(rows, lo, hi)


def _bound(spec: exp.Expression, which: str, rows: bool, order_types: list[SqlType]) -> int | float | None:
    value = spec.args.get(which)
    side = (spec.args.get(f"{which}_side") or "").upper()
    text = value.upper() if isinstance(value, str) else None
    if text == "UNBOUNDED":
        if (which == "start") != (side == "PRECEDING"):
            raise SqlError(f"UNBOUNDED {side} cannot be the {which} of a window frame", span_of(spec))
        return None
    if text == "CURRENT ROW":
        return 0
    if not rows:
        n = _range_offset(spec, value, order_types)
        return -n if side == "PRECEDING" else n
    if not isinstance(value, exp.Literal) or value.is_string or not value.this.isdigit():
        raise UnsupportedSql("a ROWS frame bound must be an integer literal", span_of(spec))
    n = int(value.this)
    return -n if side == "PRECEDING" else n


_NUMBER = re.compile(r"\d+(\.\d*)?([eE][-+]?\d+)?|\.\d+([eE][-+]?\d+)?")  # as sqlglot reads a number
_MICROS = {"DAY": 86_400_000_000, "HOUR": 3_600_000_000, "MINUTE": 60_000_000, "SECOND": 1_000_000}


def _range_offset(spec: exp.Expression, value: object, order_types: list[SqlType]) -> int | float:
    """A RANGE frame's value offset in the physical unit of the (single) ORDER BY key:
    the number itself, unscaled for a DECIMAL, days for a DATE, microseconds for a
    TIMESTAMP (Spark: value offsets need exactly one ORDER BY key of a numeric, DATE or
    TIMESTAMP type, and an INTERVAL for the latter two)."""
    if len(order_types) != 1:
        raise SqlError("a RANGE window frame with value offsets needs exactly one ORDER BY expression", span_of(spec))
    key = order_types[0]
    if isinstance(value, exp.Interval):
        unit = value.args.get("unit")
        name = (unit.name if unit is not None else "").upper().rstrip("S")
        amount = value.this
        if not isinstance(amount, exp.Literal) or not amount.name.isdigit():
            raise UnsupportedSql(
                "a RANGE frame INTERVAL must be a non-negative integer count of one unit", span_of(spec)
            )
        n = int(amount.name)
        if key.kind == "DATE" and name in ("DAY", "WEEK"):
            return n * (7 if name == "WEEK" else 1)
        if key.kind in TIMESTAMP_KINDS and name in (*_MICROS, "WEEK"):
            return n * (7 * _MICROS["DAY"] if name == "WEEK" else _MICROS[name])
        if key.is_temporal:
            raise UnsupportedSql(
                f"RANGE frame offsets in {name or 'that unit'} over a {key.kind} key are not supported "
                "(DATE: DAY or WEEK; TIMESTAMP: WEEK, DAY, HOUR, MINUTE, SECOND)",
                span_of(spec),
            )
        raise SqlError(
            f"a RANGE frame INTERVAL offset needs a DATE or TIMESTAMP ORDER BY key, not {key}", span_of(spec)
        )
    if not isinstance(value, exp.Literal) or value.is_string or not _NUMBER.fullmatch(value.name):
        raise UnsupportedSql("a RANGE frame offset must be a non-negative number or INTERVAL literal", span_of(spec))
    if key.is_temporal:
        raise UnsupportedSql(
            f"a RANGE frame over a {key.kind} key takes INTERVAL offsets (e.g. INTERVAL 1 DAY PRECEDING)",
            span_of(spec),
        )
    if not key.is_numeric:
        raise SqlError(
            f"a RANGE frame with value offsets needs a numeric, DATE or TIMESTAMP key, not {key}", span_of(spec)
        )
    number = Decimal(str(value.this))
    if key.is_float:
        return float(number)
    scale = (key.scale or 0) if key.is_decimal else 0
    unscaled = number.scaleb(scale, context=DECIMAL_CONTEXT)
    if unscaled != unscaled.to_integral_value():
        raise UnsupportedSql(
            f"RANGE frame offset {value.this} has more decimal places than the ORDER BY key's type {key}", span_of(spec)
        )
    if key.is_decimal and (key.precision or 0) > 18:
        raise UnsupportedSql("RANGE frame value offsets over a DECIMAL key of precision above 18", span_of(spec))
    return int(unscaled)


# -- ORDER BY ... LIMIT --------------------------------------------------------------------


def bind_top_k(sel: exp.Select, out: lp.Relation, names: list[str], dialect: str) -> lp.Relation:
    """ORDER BY ... LIMIT k [OFFSET m] over the SELECT's result `out`: the rows whose
    ROW_NUMBER in that order is in (m, m + k]. Without LIMIT, ORDER BY is accepted and
    means nothing (a view is a bag); LIMIT or OFFSET without ORDER BY is refused (which
    rows it keeps is not determined)."""
    limit = sel.args.get("limit")
    offset = sel.args.get("offset")
    order = sel.args.get("order")
    if limit is None and offset is None:
        return out
    if order is None:
        node = limit if limit is not None else offset
        what = "LIMIT" if limit is not None else "OFFSET"
        raise UnsupportedSql(f"{what} without ORDER BY is nondeterministic; add an ORDER BY", span_of(node))
    k = _count(limit, "LIMIT") if limit is not None else None
    m = _count(offset, "OFFSET") if offset is not None else 0
    keys: list[lp.OrderKey] = []
    for o in order.expressions:
        index = _output_column(o.this, out, names)
        refuse_array(out.fields[index].type, "an ORDER BY key", o)
        desc = bool(o.args.get("desc"))
        nulls_first = o.args.get("nulls_first")
        keys.append(lp.OrderKey(index, desc, bool(nulls_first) if nulls_first is not None else not desc))
    n = len(out.fields)
    fields = (*out.fields, lp.Field("rn", INT))
    limit = m + k if k is not None else None
    win = lp.Window(fields, out, (), tuple(keys), (lp.WindowCall("row_number", INT),), limit)
    rn = Col(INT, n)
    conds: list[Scalar] = []
    if m:
        conds.append(Call(SqlType("BOOLEAN"), "gt", (rn, Lit(INT, m))))
    if k is not None:
        conds.append(Call(SqlType("BOOLEAN"), "le", (rn, Lit(INT, m + k))))
    pred = conds[0] if len(conds) == 1 else Call(SqlType("BOOLEAN"), "and", tuple(conds))
    kept = lp.Filter(fields, win, pred)
    return lp.Project(out.fields, kept, tuple(Col(f.type, i) for i, f in enumerate(out.fields)))


def _count(node: exp.Expression, what: str) -> int:
    value = node.args.get("expression")
    if not isinstance(value, exp.Literal) or value.is_string or not value.this.isdigit():
        raise UnsupportedSql(f"{what} must be a non-negative integer literal", span_of(node))
    return int(value.this)


def _output_column(node: exp.Expression, out: lp.Relation, names: list[str]) -> int:
    """An ORDER BY key of a top-k: an output column by name or by position."""
    if isinstance(node, exp.Literal) and not node.is_string and node.this.isdigit():
        pos = int(node.this)
        if not 1 <= pos <= len(names):
            raise SqlError(f"ORDER BY position {pos} is not in the select list", span_of(node))
        return pos - 1
    if isinstance(node, exp.Column):
        matches = [i for i, n in enumerate(names) if n == node.name.lower()]
        if len(matches) == 1:
            return matches[0]
        if len(matches) > 1:
            raise SqlError(f"ORDER BY column '{node.name}' is ambiguous", span_of(node))
    shown = node.name if isinstance(node, exp.Column) else node.sql("spark")
    raise UnsupportedSql(f"ORDER BY ... LIMIT must order by selected columns; '{shown}' is not one", span_of(node))
