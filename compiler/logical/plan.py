"""The bound, typed logical plan: relational algebra over bags.

Every node knows its output fields. Scalars inside a node refer to the columns of the
node's input by position (for `Join`, the left columns then the right ones).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from dbspc.compiler.logical.aggregate import AggCall
from dbspc.compiler.logical.scalar import Scalar
from dbspc.compiler.types import SqlType


@dataclass(frozen=True, slots=True)
class Field:
    name: str
    type: SqlType


@dataclass(frozen=True, slots=True)
class Relation:
    fields: tuple[Field, ...]

    @property
    def types(self) -> tuple[SqlType, ...]:
        return tuple(f.type for f in self.fields)


@dataclass(frozen=True, slots=True)
class Scan(Relation):
    """A base table or an earlier view of the same program, by name."""

    name: str
    is_view: bool = False


@dataclass(frozen=True, slots=True)
class Filter(Relation):
    input: Relation
    predicate: Scalar


@dataclass(frozen=True, slots=True)
class Project(Relation):
    input: Relation
    exprs: tuple[Scalar, ...]


@dataclass(frozen=True, slots=True)
class Join(Relation):
    """Inner join on `left_keys[i] = right_keys[i]` (SQL `=`: NULL never matches).

    No keys is a cross join. Non-equi conditions become a Filter above the Join.
    """

    left: Relation
    right: Relation
    left_keys: tuple[int, ...]
    right_keys: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Aggregate(Relation):
    """GROUP BY `group` columns of the input; output is group columns then aggregates."""

    input: Relation
    group: tuple[int, ...]
    aggs: tuple[AggCall, ...]
    is_global: bool


@dataclass(frozen=True, slots=True)
class Distinct(Relation):
    input: Relation


@dataclass(frozen=True, slots=True)
class UnionAll(Relation):
    inputs: tuple[Relation, ...]


@dataclass(frozen=True, slots=True)
class Except(Relation):
    """Set difference: distinct rows of `left` that are not in `right` (NULLs equal).

    With `all` (EXCEPT ALL), bag difference: a row m times in left and n in right is in
    the result max(m − n, 0) times."""

    left: Relation
    right: Relation
    all: bool = False


@dataclass(frozen=True, slots=True)
class Minus(Relation):
    """Bag difference `left − right` as a Z-set sum; the binder only builds it where
    `right` is a sub-bag of `left` (outer and anti-joins), so the result stays positive."""

    left: Relation
    right: Relation


@dataclass(frozen=True, slots=True)
class Intersect(Relation):
    """Set intersection: distinct rows in both inputs (NULLs equal).

    With `all` (INTERSECT ALL), bag intersection: min(m, n) copies."""

    left: Relation
    right: Relation
    all: bool = False


@dataclass(frozen=True, slots=True)
class Values(Relation):
    """Constant rows: `rows` of Python values (SELECT without FROM reads one empty row)."""

    rows: tuple[tuple[object, ...], ...]


@dataclass(frozen=True, slots=True)
class OrderKey:
    """One ORDER BY key of a window: a column, its direction and where NULLs go."""

    index: int
    desc: bool
    nulls_first: bool

    def __str__(self) -> str:
        return f"#{self.index}{' desc' if self.desc else ''} nulls {'first' if self.nulls_first else 'last'}"


@dataclass(frozen=True, slots=True)
class Frame:
    """A window frame, offsets relative to the current row: `lo` None is UNBOUNDED
    PRECEDING, `hi` None is UNBOUNDED FOLLOWING, -n is n PRECEDING, +n n FOLLOWING.
    A RANGE frame's CURRENT ROW (0) takes in the peers; its other offsets are values in
    the physical unit of its one ORDER BY key (unscaled for a DECIMAL, days for a DATE,
    microseconds for a TIMESTAMP), in the key's direction."""

    rows: bool
    lo: int | float | None
    hi: int | float | None

    def __str__(self) -> str:
        def bound(b: int | float | None, end: str) -> str:
            if b is None:
                return f"unbounded {end}"
            if b == 0:
                return "current row"
            return f"{abs(b)} {'preceding' if b < 0 else 'following'}"

        return f"{'rows' if self.rows else 'range'} {bound(self.lo, 'preceding')}..{bound(self.hi, 'following')}"


# The widest bounded ROWS frame over which a FLOAT or DOUBLE SUM or AVG is maintained: it
# is added row by row, as Spark adds a sliding frame (runtime/kernels/window.py).
SLIDING_FLOAT_WIDTH = 64


@dataclass(frozen=True, slots=True)
class WindowCall:
    """One window function: `fn` is row_number, rank, dense_rank, percent_rank, cume_dist,
    ntile (`offset` buckets), lag (lead is a lag by a negative offset), first_value,
    last_value or nth_value (the `offset`-th row) of `frame`, or an aggregate (sum, count,
    count_star, avg, min, max) over `frame`. `arg` and `default` are input columns;
    `ignore_nulls` (first_value, last_value) skips NULLs."""

    fn: str
    type: SqlType
    arg: int | None = None
    offset: int = 1
    default: int | None = None
    frame: Frame | None = None
    ignore_nulls: bool = False

    def __str__(self) -> str:
        parts = [f"#{self.arg}"] if self.arg is not None else []
        if self.fn in ("lag", "ntile", "nth_value"):
            parts.append(str(self.offset))
            if self.default is not None:
                parts.append(f"#{self.default}")
        text = f"{self.fn}({', '.join(parts)})" + (" IGNORE NULLS" if self.ignore_nulls else "")
        return f"{text} {self.frame}" if self.frame is not None else text


@dataclass(frozen=True, slots=True)
class Window(Relation):
    """Window functions over one PARTITION BY / ORDER BY: the input's columns, then one
    column per call. Rows of a partition are ordered by `order`, then by all columns, so
    that ROW_NUMBER over ties (nondeterministic in SQL) is a function of the partition."""

    input: Relation
    partition: tuple[int, ...]
    order: tuple[OrderKey, ...]
    calls: tuple[WindowCall, ...]
    # Only the rows whose ROW_NUMBER in their partition is at most `limit` (a top-k).
    limit: int | None = None


def children(rel: Relation) -> list[Relation]:
    """The input relations of a plan node (a Fixpoint's bodies are not inputs)."""
    if isinstance(rel, (Filter, Project, Aggregate, Distinct, Window)):
        return [rel.input]
    if isinstance(rel, (Join, Except, Intersect, Minus)):
        return [rel.left, rel.right]
    if isinstance(rel, UnionAll):
        return list(rel.inputs)
    return []


@dataclass(frozen=True, slots=True)
class View:
    """A named view of the program and its plan."""

    name: str
    plan: Relation
    # writes the view's query as SQL (for the oracles); on demand, as only they read it
    # and generating it costs about as much as binding a small query
    write_sql: Callable[[], str] = field(compare=False, repr=False)
    # the column names as Spark shows them, where they differ from the plan's (lower-case)
    # names: an alias or a CREATE VIEW column keeps the case it is written in
    shown: tuple[str, ...] = ()

    @property
    def sql(self) -> str:
        return self.write_sql()

    @property
    def columns(self) -> tuple[str, ...]:
        return self.shown or tuple(f.name for f in self.plan.fields)


@dataclass(frozen=True, slots=True)
class RecursiveRef(Relation):
    """Inside a recursive WITH: the previous iterate of the group's CTE `index`."""

    name: str
    index: int


@dataclass(frozen=True, slots=True)
class Fixpoint(Relation):
    """The least fixpoint of a group of mutually recursive CTEs (DBSP §5).

    `bodies[k]` defines CTE `names[k]` in terms of `RecursiveRef`s to the group; the
    group is evaluated as the Kleene sequence X_i = bodies(X_{i-1}) from X_{-1} = 0,
    which for UNION is the least fixpoint of Datalog (Thm 5.4). This relation is the
    value of CTE `output`; every reference to the group shares one scope.
    """

    names: tuple[str, ...]
    bodies: tuple[Relation, ...]
    output: int
    # `MAX RECURSION LEVEL n` (Spark 4.1+): levels 0..n-1 may produce rows.
    max_level: int | None = None
