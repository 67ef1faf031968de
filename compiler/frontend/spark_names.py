"""Spark's own names for unaliased SELECT items (`SELECT sum(amount) FROM t` is `sum(amount)`).

Spark names such an item by `toPrettySQL` of the *analyzed* expression (ResolveAliases):
function names as Spark registers them (`SUM(x)` is `sum(x)`, `count(*)` is `count(1)`,
`sqrt(x)` is `SQRT(x)`), the arguments it fills in (`round(x)` is `round(x, 0)`), every
operator in parentheses (`(a + b)`, `(NOT (x = 1))` for `x <> 1`), string literals
without quotes, implicit casts left out, a window with its sort directions, NULLS
placement and frame spelt out, an uncorrelated subquery as `scalarsubquery()`, and a
top-level CAST of a column named by the column. tests/test_view_names.py pins about 300
names, and tests/test_spark_names.py checks them against Spark 4.

Where Spark's name depends on what only analysis knows (types: `dt + 1` is
`date_add(dt, 1)`, `x > 1.5` on an integer x is `(x > 1)`; the outer columns a correlated
subquery reads: `scalarsubquery(x)`), or on a form not listed here, `pretty_name` returns
None and the item keeps sqlglot's deterministic `_col_<i>` (its position in the SELECT
list). The plan's names are lower case like every dbspc name; with `keep_case` (for the
names a view shows, shown_names.py) columns keep the case the query spells, as Spark's do
(`Sum(Amount)` is `sum(Amount)`). A unary plus is lost by sqlglot (Spark: `(+ a)`,
dbspc: `a`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from decimal import Decimal, InvalidOperation

import numpy as np
from sqlglot import exp

from dbspc.compiler.frontend.positions import call_name, span_of

# Functions Spark names `name(arg, ...)` with the name as called, lower-cased, and the
# arguments as written (sqlglot keeps them in call order for these).
_PLAIN = frozenset(
    (
        "sum avg mean max min count collect_list collect_set stddev std stddev_pop stddev_samp variance "
        "var_pop var_samp median first any_value bool_and bool_or every some count_if max_by min_by "
        "upper lower ucase lcase length char_length character_length concat concat_ws "
        "coalesce nullif ifnull nvl nvl2 abs sign ln mod pow ceiling greatest least instr initcap "
        "left right repeat reverse ltrim rtrim trim year month day dayofmonth dayofweek hour minute second "
        "quarter dayofyear weekofyear unix_seconds timestamp_seconds date_add add_months last_day datediff to_date "
        "array_contains array_size size "
        "substring_index split_part elt translate startswith endswith contains ascii chr char btrim octet_length "
        "bit_length space "
        "pmod isnan nanvl rint factorial zeroifnull nullifzero negative "
        "try_add try_subtract try_multiply try_divide try_mod "
        "make_date next_day weekday dayname monthname unix_date date_from_unix_date "
        "unix_millis unix_micros timestamp_millis timestamp_micros date_part make_timestamp "
        "try_to_date try_to_timestamp typeof equal_null bit_count bit_and bit_or bit_xor"
    ).split()
)
# Ranking window functions by name as called, with the expression sqlglot parses, and as Spark prints them.
_RANKING: dict[str, type[exp.Expression]] = {"row_number": exp.RowNumber, "rank": exp.Rank, "dense_rank": exp.DenseRank}
_RANKING_NAMES = {"row_number": "row_number()", "rank": "RANK()", "dense_rank": "DENSE_RANK()"}
# Spark prints these in upper case (their expressions' own pretty names).
_UPPER = frozenset(
    (
        "sqrt exp log10 power ceil floor cbrt expm1 log log2 log1p signum sin cos tan asin acos atan atan2 "
        "sinh cosh tanh asinh acosh atanh cot sec csc degrees radians hypot pi e"
    ).split()
)
# Arguments Spark fills in when the call leaves them out: name -> (arity written, default).
_DEFAULTS = {
    "sort_array": (1, "true"),
    "round": (1, "0"),
    "bround": (1, "0"),
    "lpad": (2, " "),
    "rpad": (2, " "),
    "regexp_extract": (2, "1"),
    "regexp_replace": (3, "1"),
    "split": (2, "-1"),
    "substring": (2, "2147483647"),
    "substr": (2, "2147483647"),
    "months_between": (2, "true"),
    "percentile": (2, "1"),  # the frequency
}
_FULL_ARITY = {
    "sort_array": 2,
    "substring": 3,
    "substr": 3,
    "round": 2,
    "bround": 2,
    "lpad": 3,
    "rpad": 3,
    "regexp_extract": 3,
    "regexp_replace": 4,
    "split": 3,
    "replace": 3,
    "months_between": 3,
}
_RENAMED = {"array_agg": "collect_list"}
# Functions named plainly only when called with exactly this many arguments (sqlglot
# rewrites the others: TO_DATE's format, TRIM's characters).
_ARITY = {"to_date": 1, "trim": 1, "ltrim": 1, "rtrim": 1}
# Functions that take no arguments and are named with empty parentheses however called.
_NILADIC = {exp.CurrentDate: "current_date()", exp.CurrentTimestamp: "current_timestamp()"}

_OPERATORS: dict[type[exp.Expression], str] = {
    exp.Add: "+",
    exp.Sub: "-",
    exp.Mul: "*",
    exp.Div: "/",
    exp.Mod: "%",
    exp.IntDiv: "div",
    exp.EQ: "=",
    exp.GT: ">",
    exp.GTE: ">=",
    exp.LT: "<",
    exp.LTE: "<=",
    exp.NullSafeEQ: "<=>",
    exp.And: "AND",
    exp.Or: "OR",
    exp.BitwiseAnd: "&",
    exp.BitwiseOr: "|",
    exp.BitwiseXor: "^",
}
_NEGATED: dict[type[exp.Expression], str] = {
    exp.NEQ: "=",
    exp.NullSafeNEQ: "<=>",
}  # Spark's parser writes them as NOT (a = b)
_ORDERING = (exp.GT, exp.GTE, exp.LT, exp.LTE)

_T = exp.DataType.Type
_CAST_TYPES = {
    _T.TINYINT: "TINYINT",
    _T.SMALLINT: "SMALLINT",
    _T.INT: "INT",
    _T.BIGINT: "BIGINT",
    _T.FLOAT: "FLOAT",
    _T.DOUBLE: "DOUBLE",
    _T.BOOLEAN: "BOOLEAN",
    _T.DATE: "DATE",
    _T.TIMESTAMP: "TIMESTAMP",
    _T.TIMESTAMPNTZ: "TIMESTAMP_NTZ",
    _T.TEXT: "STRING",
    _T.VARCHAR: "STRING",
    _T.CHAR: "STRING",
}
# Functions whose result may be a DATE or TIMESTAMP: `+` and `-` on one are named by
# Spark after the date function they become, which needs the types.
_DATETIME_FUNCS = frozenset(
    "current_date current_timestamp now to_date to_timestamp date_add date_sub add_months last_day "
    "date_trunc trunc make_date timestamp date next_day date_from_unix_date timestamp_millis timestamp_micros "
    "make_timestamp".split()
)
# Functions whose result has the type of their arguments.
_PASS_THROUGH = frozenset("coalesce nullif ifnull nvl nvl2 if greatest least min max first any_value".split())


_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_TIMESTAMP = re.compile(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}")


class _Unnamed(Exception):
    """The expression has no name this module can give exactly as Spark would."""


def pretty_name(
    node: exp.Expression,
    datetime_column: Callable[[str], bool],
    relations: Mapping[str, frozenset[str]],
    keep_case: bool = False,
) -> str | None:
    """Spark's name for the unaliased SELECT item `node`, or None (keep `_col_<i>`).

    `datetime_column(name)` says whether a column of that name may be a DATE or TIMESTAMP
    (then `+` and `-` on it are not named); `relations` holds the columns of each table
    and view, to tell an uncorrelated subquery (Spark: `scalarsubquery()`) from one that
    reads outer columns (Spark lists them: `scalarsubquery(x)`; not named here). With
    `keep_case`, columns keep the case the query writes them in, as Spark shows them."""
    core = unparen(node)
    if isinstance(core, (exp.Cast, exp.TryCast)) and isinstance(unparen(core.this), exp.Column):
        name = unparen(core.this).name  # Spark names a CAST of a column (only at the top) by it
        return name if keep_case else name.lower()
    try:
        return _Printer(datetime_column, relations, keep_case).pretty(node)
    except _Unnamed:
        return None


class _Printer:
    def __init__(
        self, datetime_column: Callable[[str], bool], relations: Mapping[str, frozenset[str]], keep_case: bool = False
    ) -> None:
        self.datetime_column = datetime_column
        self.relations = relations
        self.keep_case = keep_case

    def pretty(self, node: exp.Expression) -> str:
        if isinstance(node, exp.Paren):
            return self.pretty(node.this)
        if isinstance(node, exp.Column):
            if not isinstance(node.this, exp.Identifier):
                raise _Unnamed
            return node.name if self.keep_case else node.name.lower()
        if isinstance(node, (exp.Literal, exp.Boolean, exp.Null)):
            return _literal(node)
        if isinstance(node, exp.Neg):
            inner = node.this
            if isinstance(inner, exp.Literal) and not inner.is_string:
                return _negated_number(inner)  # Spark's parser folds `-1` into the literal
            if (typed := _typed_number(inner, negated=True)) is not None:
                return typed  # and `-1.5D`
            return f"(- {self.pretty(inner)})"
        if isinstance(node, exp.Not):
            inner = unparen(node.this)
            if isinstance(inner, exp.Is) and isinstance(inner.expression, exp.Null):
                return f"({self.pretty(inner.this)} IS NOT NULL)"
            if isinstance(inner, (exp.Like, exp.ILike)):
                return f"(NOT {self._like(inner)})"
            return f"(NOT {self.pretty(inner)})"
        if isinstance(node, exp.Is):
            if not isinstance(node.expression, exp.Null):
                raise _Unnamed
            return f"({self.pretty(node.this)} IS NULL)"
        if isinstance(node, exp.Mod) and call_name(node) == "mod":
            return f"mod({self.pretty(node.this)}, {self.pretty(node.expression)})"
        if type(node) in _OPERATORS:
            return self._binary(node, _OPERATORS[type(node)])
        if type(node) in _NEGATED:
            return f"(NOT {self._binary(node, _NEGATED[type(node)])})"
        if isinstance(node, exp.DPipe):
            return f"concat({self.pretty(node.this)}, {self.pretty(node.expression)})"
        if isinstance(node, exp.BitwiseNot):
            return f"~{self.pretty(node.this)}"
        if isinstance(node, exp.Subquery):
            self._uncorrelated(node.this)
            return "scalarsubquery()"
        if isinstance(node, exp.Exists):
            self._uncorrelated(node.this)
            return "exists()"
        if isinstance(node, exp.In) and node.args.get("query") is not None:
            query = node.args["query"]
            self._uncorrelated(query.this if isinstance(query, exp.Subquery) else query)
            return f"({self.pretty(node.this)} IN (listquery()))"
        if isinstance(node, exp.In):
            if node.args.get("unnest") is not None or not node.expressions:
                raise _Unnamed
            items = ", ".join(self.pretty(e) for e in node.expressions)
            return f"({self.pretty(node.this)} IN ({items}))"
        if isinstance(node, exp.Between):
            low, high = self.pretty(node.args["low"]), self.pretty(node.args["high"])
            return f"between({self.pretty(node.this)}, {low}, {high})"
        if isinstance(node, (exp.Like, exp.ILike)):
            return self._like(node)
        if isinstance(node, exp.RegexpLike):
            # Spark prints `s RLIKE p` and `s REGEXP p` as RLIKE(s, p), regexp_like(s, p) as
            # REGEXP_LIKE(s, p) (seen in Spark 4.3)
            written = str(call_name(node) or "").upper()
            if written not in ("RLIKE", "REGEXP", "REGEXP_LIKE"):
                raise _Unnamed
            shown = "REGEXP_LIKE" if written == "REGEXP_LIKE" else "RLIKE"
            return f"{shown}({self.pretty(node.this)}, {self.pretty(node.expression)})"
        if isinstance(node, exp.Case):
            return self._case(node)
        if isinstance(node, (exp.Cast, exp.TryCast)):
            return self._cast(node)
        if isinstance(node, exp.Filter):
            where = node.expression
            if not isinstance(where, exp.Where):
                raise _Unnamed
            return f"{self.pretty(node.this)} FILTER (WHERE {self.pretty(where.this)})"
        if isinstance(node, exp.Window):
            return self._window(node)
        if isinstance(node, exp.Func):
            return self._function(node)
        raise _Unnamed

    def _window(self, node: exp.Window) -> str:
        """`f() OVER (...)` as Spark prints the resolved window: every sort key with its
        direction and NULLS placement, and the frame, the default one spelt out."""
        if node.args.get("alias") is not None or node.args.get("first") is not None:
            raise _Unnamed  # OVER w, KEEP (FIRST ...)
        func = node.this
        order = node.args.get("order")
        keys = order.expressions if order is not None else []
        spec = node.args.get("spec")
        name = func.name.lower() if isinstance(func, exp.Anonymous) else call_name(func)
        if name in _RANKING and isinstance(func, _RANKING[name]) and keys and spec is None:
            shown, frame = _RANKING_NAMES[name], "ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW"
        elif name in ("lag", "lead") and isinstance(func, (exp.Lag, exp.Lead)) and keys and spec is None:
            offset, default = func.args.get("offset"), func.args.get("default")
            n = int(_integer(offset)) if offset is not None else 1
            value = self.pretty(default) if default is not None else "NULL"
            shown = f"{name}({self.pretty(func.this)}, {n}, {value})"
            k = -n if name == "lag" else n
            frame = f"ROWS BETWEEN {k} FOLLOWING AND {k} FOLLOWING"
        elif isinstance(func, exp.AggFunc):
            shown = self._function(func)
            if spec is not None:
                frame = _frame(spec)
            elif keys:
                frame = "RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW"
            else:
                frame = "ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING"
        else:
            raise _Unnamed
        parts = []
        partition = node.args.get("partition_by") or []
        if partition:
            parts.append("PARTITION BY " + ", ".join(self.pretty(p) for p in partition))
        if keys:
            parts.append("ORDER BY " + ", ".join(self._sort_key(k) for k in keys))
        parts.append(frame)
        return f"{shown} OVER ({' '.join(parts)})"

    def _sort_key(self, key: exp.Expression) -> str:
        if not isinstance(key, exp.Ordered):
            raise _Unnamed
        desc = bool(key.args.get("desc"))
        nulls_first = key.args.get("nulls_first")
        if nulls_first is None:
            nulls_first = not desc  # Spark: NULLs are the smallest values
        return f"{self.pretty(key.this)} {'DESC' if desc else 'ASC'} NULLS {'FIRST' if nulls_first else 'LAST'}"

    def _uncorrelated(self, query: exp.Expression) -> None:
        """Refuse (as unnamed) a subquery that may read an outer column: one SELECT whose
        FROM items are all tables or views and whose every column is one of theirs."""
        if not isinstance(query, exp.Select) or query.args.get("with_") is not None:
            raise _Unnamed
        if any(sel is not query for sel in query.find_all(exp.Select)):
            raise _Unnamed
        from_ = query.args.get("from_")
        items = ([from_.this] if from_ is not None else []) + [j.this for j in query.args.get("joins") or []]
        held: dict[str, frozenset[str]] = {}
        for item in items:
            if not isinstance(item, exp.Table) or item.name.lower() not in self.relations:
                raise _Unnamed
            held[item.alias_or_name.lower()] = self.relations[item.name.lower()]
        every = frozenset().union(*held.values())
        for col in query.find_all(exp.Column):
            table, name = col.table.lower(), col.name.lower()
            if (table and name not in held.get(table, frozenset())) or (not table and name not in every):
                raise _Unnamed

    def _binary(self, node: exp.Expression, op: str) -> str:
        left, right = node.this, node.expression
        if isinstance(node, _ORDERING) and (_fractional_decimal(left) or _fractional_decimal(right)):
            raise _Unnamed  # Spark names `int_col > 1.5` as `(int_col > 1)`: it depends on the types
        if isinstance(node, (exp.Add, exp.Sub)) and (self._may_be_datetime(left) or self._may_be_datetime(right)):
            raise _Unnamed
        return f"({self.pretty(left)} {op} {self.pretty(right)})"

    def _like(self, node: exp.Like | exp.ILike) -> str:
        if node.args.get("escape") is not None:
            raise _Unnamed
        if isinstance(node, exp.ILike):  # Spark prints ILIKE as a call
            like = f"ilike({self.pretty(node.this)}, {self.pretty(node.expression)})"
        else:
            like = f"{self.pretty(node.this)} LIKE {self.pretty(node.expression)}"
        return f"(NOT {like})" if node.args.get("negate") else like

    def _case(self, node: exp.Case) -> str:
        operand = node.this
        parts = ["CASE"]
        for branch in node.args.get("ifs") or []:
            cond = self.pretty(branch.this)
            if operand is not None:  # Spark rewrites CASE x WHEN v into CASE WHEN (x = v)
                cond = f"({self.pretty(operand)} = {cond})"
            parts.append(f"WHEN {cond} THEN {self.pretty(branch.args['true'])}")
        default = node.args.get("default")
        if default is not None:
            parts.append(f"ELSE {self.pretty(default)}")
        return " ".join([*parts, "END"])

    def _cast(self, node: exp.Cast) -> str:
        if (typed := _typed_number(node)) is not None:
            return typed
        called = call_name(node)
        inner = unparen(node.this)
        if called in ("date", "timestamp", "timestamp_ntz") and isinstance(inner, exp.Literal) and inner.is_string:
            pattern = _DATE if called == "date" else _TIMESTAMP
            if not pattern.fullmatch(inner.this):
                raise _Unnamed  # Spark prints the value normalized (DATE '2024-1-5' is DATE '2024-01-05')
            return f"{called.upper()} '{inner.this}'"
        explicit_try = bool(node.args.get("safe"))
        if called != ("try_cast" if explicit_try else "cast"):
            raise _Unnamed  # `x::INT`, `1L`, DATE '...': Spark names them differently
        to = node.args["to"]
        if to.this == _T.DECIMAL:
            params = [p.name for p in to.expressions]
            if len(params) > 2 or not all(p.isdigit() for p in params):
                raise _Unnamed
            precision, scale = (params + ["10", "0"][len(params) :])[:2]
            type_name = f"DECIMAL({precision},{scale})"
        elif to.this in _CAST_TYPES:
            type_name = _CAST_TYPES[to.this]
        else:
            raise _Unnamed
        word = "TRY_CAST" if explicit_try else "CAST"
        return f"{word}({self.pretty(inner)} AS {type_name})"

    def _function(self, node: exp.Func) -> str:
        for cls, fixed in _NILADIC.items():
            if isinstance(node, cls) and not node.args.get("this"):
                return fixed
        name = node.name.lower() if isinstance(node, exp.Anonymous) else call_name(node)
        if isinstance(node, exp.Trim) and name in (None, "trim", "ltrim", "rtrim"):
            return self._trim(node)  # sqlglot keeps no name for TRIM(LEADING ... FROM s)
        if name is None:
            raise _Unnamed
        if isinstance(node, exp.Count) and isinstance(node.this, exp.Star):
            return "count(1)"
        if isinstance(node, exp.TsOrDsAdd) and name == "date_sub":
            days = node.expression  # sqlglot writes date_sub(d, n) as date_add(d, n * -1)
            if not (isinstance(days, exp.Mul) and span_of(days.expression) is None):
                raise _Unnamed
            return f"date_sub({self.pretty(node.this)}, {self.pretty(days.this)})"
        if isinstance(node, exp.TimestampTrunc) and name == "date_trunc":
            unit = (node._meta or {}).get("unit_text")
            if unit is None:
                raise _Unnamed
            return f"date_trunc({unit}, {self.pretty(node.this)})"  # the unit as written, unquoted
        if isinstance(node, exp.DateTrunc) and name == "trunc":
            unit = (node._meta or {}).get("unit_text")
            if unit is None:
                raise _Unnamed
            return f"trunc({self.pretty(node.this)}, {unit})"
        if isinstance(node, exp.TimeToStr) and name == "date_format":
            return self._date_format(node)
        to_unix = isinstance(node, exp.StrToUnix) and name in ("unix_timestamp", "to_unix_timestamp")
        from_unix = isinstance(node, exp.UnixToStr) and name == "from_unixtime"
        if (to_unix or from_unix) and node.this is not None:
            fmt = node.args.get("format")
            written = (node._meta or {}).get("format_text")
            if not isinstance(written, str):
                if fmt is not None and span_of(fmt) is not None:
                    raise _Unnamed
                # left out (sqlglot may write its own default in): Spark fills in its default
                written = "NULL" if isinstance(fmt, exp.Null) else "yyyy-MM-dd HH:mm:ss"
            return f"{name}({self.pretty(node.this)}, {written})"
        if isinstance(node, (exp.TsOrDsToDate, exp.StrToTime)) and name in ("to_date", "to_timestamp"):
            written = (node._meta or {}).get("format_text")
            if isinstance(written, str):
                return f"{name}({self.pretty(node.this)}, {written})"
        if isinstance(node, exp.Anonymous) and name == "datepart" and len(node.expressions) == 2:
            field, source = node.expressions  # Spark prints datepart as EXTRACT
            return f"datepart({self.pretty(field)} FROM {self.pretty(source)})"
        if isinstance(node, exp.If) and name == "if":
            args = [node.this, node.args.get("true"), node.args.get("false")]
            if any(a is None for a in args):
                raise _Unnamed
            return f"(IF({', '.join(self.pretty(a) for a in args if a is not None)}))"
        args = _written_args(node)
        if name == "log" and len(args) == 1:
            return f"LOG(E(), {self.pretty(args[0])})"  # Spark fills in the base
        if name in ("isnull", "isnotnull") and len(args) == 1:  # Spark's IsNull and IsNotNull
            return f"({self.pretty(args[0])} IS {'NULL' if name == 'isnull' else 'NOT NULL'})"
        if name in _DEFAULTS and len(args) == _DEFAULTS[name][0]:
            shown = [self._argument(a) for a in args] + [_DEFAULTS[name][1]]  # percentile(DISTINCT x, p, 1)
        elif name in _FULL_ARITY and len(args) == _FULL_ARITY[name]:
            shown = [self.pretty(a) for a in args]
        elif name in _ARITY and len(args) != _ARITY[name]:
            raise _Unnamed
        elif name in _PLAIN or name in _UPPER or name in _RENAMED:
            shown = [self._argument(a) for a in args]
        else:
            raise _Unnamed
        name = name.upper() if name in _UPPER else _RENAMED.get(name, name)
        return f"{name}({', '.join(shown)})"

    def _trim(self, node: exp.Trim) -> str:
        """`trim(s)`, `ltrim(s)`, `rtrim(s)` (also for TRIM(LEADING FROM s)), and with
        characters `TRIM(BOTH chars FROM s)`, however written (Spark's `ltrim(chars, s)`
        is `TRIM(LEADING chars FROM s)`)."""
        position = str(node.args.get("position") or "").upper()
        source, chars = node.this, node.args.get("expression")
        if chars is None:
            shown = {"LEADING": "ltrim", "TRAILING": "rtrim"}.get(position, "trim")
            return f"{shown}({self.pretty(source)})"
        return f"TRIM({position or 'BOTH'} {self.pretty(chars)} FROM {self.pretty(source)})"

    def _date_format(self, node: exp.TimeToStr) -> str:
        """date_format(x, pattern): the pattern as written (sqlglot rewrites it), without
        the cast sqlglot wraps around x."""
        inner = node.this
        if isinstance(inner, exp.TimeStrToTime) and call_name(inner) is None:
            inner = inner.this
        fmt = node.args.get("format")
        written = (node._meta or {}).get("format_text")
        if isinstance(fmt, exp.Null):
            written = "NULL"
        if not isinstance(written, str):
            raise _Unnamed
        return f"date_format({self.pretty(inner)}, {written})"

    def _argument(self, arg: exp.Expression) -> str:
        if isinstance(arg, exp.Distinct):
            if arg.args.get("on") is not None:
                raise _Unnamed
            return "DISTINCT " + ", ".join(self.pretty(e) for e in arg.expressions)
        return self.pretty(arg)

    def _may_be_datetime(self, node: exp.Expression) -> bool:
        """Whether `node` may be a DATE or TIMESTAMP, from the names alone (conservative)."""
        node = unparen(node)
        if isinstance(node, exp.Column):
            return self.datetime_column(node.name.lower())
        if isinstance(node, (exp.Literal, exp.Boolean, exp.Null)):
            return False
        if isinstance(node, (exp.Cast, exp.TryCast)):
            to = node.args["to"].this
            return to not in _CAST_TYPES or to in (_T.DATE, _T.TIMESTAMP, _T.TIMESTAMPNTZ)
        if isinstance(node, exp.Interval):
            return True
        if isinstance(node, exp.Window):
            return self._may_be_datetime(node.this)
        if isinstance(node, exp.Subquery) and isinstance(node.this, exp.Select) and len(node.this.expressions) == 1:
            return self._may_be_datetime(node.this.expressions[0])
        if isinstance(node, (exp.Add, exp.Sub, exp.Neg, exp.Paren, exp.Case, exp.If)):
            return any(self._may_be_datetime(c) for c in node.iter_expressions())
        if isinstance(node, exp.Func):
            name = node.name.lower() if isinstance(node, exp.Anonymous) else call_name(node)
            if name is None or name in _DATETIME_FUNCS:
                return True
            if name in _PASS_THROUGH:
                return any(self._may_be_datetime(c) for c in node.iter_expressions())
            return False
        return not isinstance(node, (exp.Binary, exp.Not, exp.Predicate))


def _frame(spec: exp.Expression) -> str:
    kind = str(spec.args.get("kind") or "").upper()
    if kind not in ("ROWS", "RANGE") or spec.args.get("exclude") is not None:
        raise _Unnamed
    start = _bound(spec.args.get("start"), spec.args.get("start_side"))
    end = _bound(spec.args.get("end"), spec.args.get("end_side")) if spec.args.get("end") is not None else "CURRENT ROW"
    return f"{kind} BETWEEN {start} AND {end}"


def _bound(value: object, side: object) -> str:
    """One end of a frame: UNBOUNDED PRECEDING, CURRENT ROW or `n PRECEDING` (integer n)."""
    side_text = str(side or "").upper()
    if isinstance(value, str):
        text = value.upper()
        if text == "CURRENT ROW":
            return text
        if text == "UNBOUNDED" and side_text in ("PRECEDING", "FOLLOWING"):
            return f"UNBOUNDED {side_text}"
        raise _Unnamed
    if isinstance(value, exp.Expression) and side_text in ("PRECEDING", "FOLLOWING"):
        return f"{_integer(value)} {side_text}"
    raise _Unnamed


def _integer(node: exp.Expression) -> str:
    if isinstance(node, exp.Literal) and not node.is_string and node.this.isdigit():
        return str(int(node.this))
    raise _Unnamed


def _written_args(node: exp.Func) -> list[exp.Expression]:
    """The call's arguments in call order, without the ones sqlglot adds (they carry no
    source position) and unwrapping the TO_DATE it puts around date arguments."""
    out: list[exp.Expression] = []
    for key in node.arg_types:
        value = node.args.get(key)
        values = value if isinstance(value, list) else [value]
        for v in values:
            if not isinstance(v, exp.Expression) or span_of(v) is None:
                continue
            if isinstance(v, exp.TsOrDsToDate) and call_name(v) is None and v.args.get("format") is None:
                v = v.this
            out.append(v)
    return out


def unparen(node: exp.Expression) -> exp.Expression:
    """The expression inside any number of parentheses."""
    while isinstance(node, exp.Paren):
        node = node.this
    return node


def _fractional_decimal(node: exp.Expression) -> bool:
    node = unparen(node.this if isinstance(node, exp.Neg) else node)
    if not (isinstance(node, exp.Literal) and not node.is_string):
        return False
    text = node.this.lower()
    return "." in text and "e" not in text and Decimal(text) != Decimal(text).to_integral_value()


def _literal(node: exp.Expression) -> str:
    if isinstance(node, exp.Null):
        return "NULL"
    if isinstance(node, exp.Boolean):
        return "true" if node.this else "false"
    assert isinstance(node, exp.Literal)
    if node.is_string:
        return node.this  # Spark prints a string literal's value, unquoted
    return _number(node.this)


def _number(text: str) -> str:
    """A numeric literal as Spark prints its value: an integer or a DECIMAL as written
    (DECIMAL keeps its scale: 1.50), a literal with an exponent as Java prints the DOUBLE."""
    lowered = text.lower()
    if lowered.isdigit():
        return str(int(lowered))
    if "e" in lowered:
        try:
            return _java_double(float(lowered))
        except ValueError:
            raise _Unnamed from None
    whole, _, frac = lowered.partition(".")
    if not (whole.isdigit() or whole == "") or not frac.isdigit():
        raise _Unnamed  # `1.` and suffixed literals (1D, 1BD): not named
    return f"{int(whole or '0')}.{frac}"


# Spark's numeric literal suffixes, by the type sqlglot casts the literal to
_INTEGER_SUFFIXES = (_T.BIGINT, _T.SMALLINT, _T.TINYINT)


def _typed_number(node: exp.Expression, negated: bool = False) -> str | None:
    """A suffixed literal (`10L`, `3S`, `1Y`, `1.5D`, `2.5F`), which sqlglot reads
    as a cast of the plain literal, as Spark names it: the value's own toString (`1.5`,
    `1D` is `1.0`), the minus folded in. None if `node` is not one; _Unnamed if Spark's
    text for the value is not certain."""
    if not isinstance(node, (exp.Cast, exp.TryCast)) or not (node._meta or {}).get("suffix"):
        return None  # the suffix is recorded by program._record_source_names
    text = str(node.this.this)
    kind = node.args["to"].this
    sign = "-" if negated else ""
    if kind in _INTEGER_SUFFIXES and text.isdigit():
        return str(int(sign + text))
    if kind == _T.DOUBLE:
        return _java_double(float(sign + text))
    if kind == _T.FLOAT:
        return _java_float(sign + text)
    raise _Unnamed  # 1.5BD: sqlglot keeps no position on it


def _java_float(text: str) -> str:
    """Java's Float.toString for the FLOAT nearest `text`, where it is plain (1e-3 to 1e7)
    and the shortest digits that read back are certain."""
    value = np.float32(text)
    if not np.isfinite(value) or value == 0 or not 1e-3 <= abs(float(value)) < 1e7:
        raise _Unnamed
    shown = np.format_float_positional(value, unique=True, trim="0")
    return shown if "." in shown else shown + ".0"


def _negated_number(node: exp.Literal) -> str:
    text = _number(node.this)
    try:
        zero = Decimal(text) == 0
    except InvalidOperation:
        raise _Unnamed from None
    return text if zero else "-" + text


def _java_double(value: float) -> str:
    """Java's Double.toString: plain between 1e-3 and 1e7, else d.dddE[-]n."""
    if value != value or value in (float("inf"), float("-inf")):
        raise _Unnamed
    if value == 0:
        return "-0.0" if math.copysign(1.0, value) < 0 else "0.0"
    if 1e-3 <= abs(value) < 1e7:
        return repr(value)
    sign, digits, exponent = Decimal(repr(value)).as_tuple()
    assert isinstance(exponent, int)
    text = "".join(map(str, digits)).rstrip("0") or "0"
    power = len(digits) - 1 + exponent
    mantissa = text[0] + "." + (text[1:] or "0")
    return f"{'-' if sign else ''}{mantissa}E{power}"
