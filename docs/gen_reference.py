"""Generate docs/sql-reference.md and docs/img/orders.svg from the compiler itself.

    PYTHONPATH=. .venv/bin/python docs/gen_reference.py          # rewrite them
    PYTHONPATH=. .venv/bin/python docs/gen_reference.py --check  # exit 1 if stale

The function lists are read from the binders' own tables, and every construct of the
table below is compiled, so the page says what the compiler does: it cannot drift
(tests/test_docs.py runs --check).
"""

from __future__ import annotations

import sys
from pathlib import Path

from sqlglot import exp

from dbspc.compiler.circuit.picture import to_svg
from dbspc.compiler.compile import compile_sql
from dbspc.compiler.errors import DbspcError, collecting_extensions
from dbspc.compiler.frontend import bind_aggregate, bind_scalar, bind_window
from dbspc.compiler.frontend.script_split import split_script

DOCS = Path(__file__).resolve().parent
SCHEMA = """CREATE TABLE t (id INT, g STRING, x INT, d DECIMAL(10,2), s STRING, day DATE, at TIMESTAMP,
  wall TIMESTAMP_NTZ);
CREATE TABLE u (id INT, y INT);
"""
# (construct, a view using it): each is compiled to say supported or refused, and why.
CONSTRUCTS: list[tuple[str, str]] = [
    ("SELECT ... WHERE", "SELECT id, x FROM t WHERE x > 1"),
    ("inner JOIN", "SELECT t.id, u.y FROM t JOIN u ON t.id = u.id"),
    ("LEFT / RIGHT / FULL OUTER JOIN", "SELECT t.id, u.y FROM t FULL JOIN u ON t.id = u.id"),
    ("CROSS JOIN", "SELECT t.id, u.y FROM t CROSS JOIN u"),
    ("non-equi join", "SELECT t.id, u.y FROM t JOIN u ON t.x < u.y"),
    ("JOIN ... USING / NATURAL JOIN", "SELECT * FROM t LEFT JOIN u USING (id)"),
    ("GROUP BY with COUNT/SUM/AVG/MIN/MAX", "SELECT g, COUNT(*), SUM(x), AVG(d), MIN(s), MAX(day) FROM t GROUP BY g"),
    ("COUNT(DISTINCT ...)", "SELECT g, COUNT(DISTINCT x) AS n FROM t GROUP BY g"),
    ("HAVING", "SELECT g, SUM(x) AS s FROM t GROUP BY g HAVING SUM(x) > 10"),
    ("GROUPING SETS / ROLLUP / CUBE", "SELECT g, s, SUM(x) AS n FROM t GROUP BY ROLLUP (g, s)"),
    ("collect_list / collect_set", "SELECT g, collect_list(x) AS xs FROM t GROUP BY g"),
    ("DISTINCT", "SELECT DISTINCT g FROM t"),
    ("UNION / UNION ALL", "SELECT id FROM t UNION SELECT id FROM u"),
    ("INTERSECT / EXCEPT", "SELECT id FROM t EXCEPT SELECT id FROM u"),
    ("scalar subquery", "SELECT id, (SELECT MAX(y) FROM u) AS m FROM t"),
    ("correlated EXISTS / IN subquery", "SELECT id FROM t WHERE EXISTS (SELECT 1 FROM u WHERE u.id = t.id)"),
    ("subquery in FROM", "SELECT g, n FROM (SELECT g, COUNT(*) AS n FROM t GROUP BY g) q WHERE n > 1"),
    ("WITH (CTE)", "WITH c AS (SELECT id FROM t) SELECT id FROM c"),
    (
        "WITH RECURSIVE ... UNION ALL",
        "WITH RECURSIVE r(a) AS (SELECT id FROM t UNION ALL SELECT r.a + 1 FROM r WHERE r.a < 5) SELECT a FROM r",
    ),
    (
        "WITH RECURSIVE ... UNION",
        "WITH RECURSIVE r(a) AS (SELECT id FROM t UNION SELECT r.a + 1 FROM r WHERE r.a < 5) SELECT a FROM r",
    ),
    ("window: ROW_NUMBER / RANK", "SELECT id, ROW_NUMBER() OVER (PARTITION BY g ORDER BY x) AS rn FROM t"),
    ("window: running SUM", "SELECT id, SUM(x) OVER (PARTITION BY g ORDER BY id) AS run FROM t"),
    ("window: LAG / LEAD", "SELECT id, LAG(x) OVER (PARTITION BY g ORDER BY id) AS p FROM t"),
    ("ORDER BY ... LIMIT (top-k)", "SELECT id, x FROM t ORDER BY x DESC LIMIT 3"),
    ("LIMIT without ORDER BY", "SELECT id FROM t LIMIT 3"),
    ("CASE / COALESCE / NULLIF / IF", "SELECT CASE WHEN x > 1 THEN 'a' ELSE 'b' END AS c, COALESCE(x, 0) AS z FROM t"),
    ("CAST", "SELECT CAST(x AS BIGINT) AS b, CAST(s AS INT) AS i FROM t"),
    ("date arithmetic, date_trunc", "SELECT date_add(day, 1) AS n, date_trunc('MONTH', at) AS m FROM t"),
    (
        "TIMESTAMP_NTZ (a wall clock of no zone)",
        "SELECT hour(wall) AS h, wall + INTERVAL 1 DAY AS next, CAST(wall AS TIMESTAMP) AS instant FROM t",
    ),
    (
        "datetime patterns",
        "SELECT date_format(at, 'yyyy-MM-dd HH:mm') AS f, to_date(s, 'dd/MM/yyyy') AS d, months_between(at, day) AS m "
        "FROM t",
    ),
    ("string functions", "SELECT upper(s) AS u, substring(s, 1, 2) AS p, concat(s, g) AS c FROM t"),
    ("mathematical functions", "SELECT sqrt(d) AS r, ln(d) AS l, power(x, 2) AS p, pmod(x, 3) AS m FROM t"),
    ("TRY_ arithmetic", "SELECT try_divide(x, 0) AS q, try_add(x, 2147483647) AS s FROM t"),
    ("typeof, equal_null", "SELECT typeof(x) AS t, equal_null(x, 1) AS e FROM t"),
    (
        "bit_count; bit_and, bit_xor (and bit_or) per group",
        "SELECT g, bit_and(x) AS a, bit_xor(x) AS xo FROM t GROUP BY g",
    ),
    ("bitwise operators (also OR, written with a bar)", "SELECT x & 3 AS low, x ^ 1 AS flipped, ~x AS n FROM t"),
    (
        "bit shifts: shiftleft / << , shiftright / >>, shiftrightunsigned (integers)",
        "SELECT x << 2 AS l, shiftright(x, 1) AS r, shiftrightunsigned(x, 1) AS u FROM t",
    ),
    ("LIKE", "SELECT id FROM t WHERE s LIKE 'a%'"),
    ("RLIKE (Java regular expressions)", "SELECT id FROM t WHERE s RLIKE '^a'"),
    ("PIVOT", "SELECT * FROM t PIVOT (SUM(x) FOR g IN ('a', 'b'))"),
    ("LATERAL VIEW explode", "SELECT id, e FROM t LATERAL VIEW explode(array(x, x)) AS e"),
    ("non-deterministic functions (rand, now)", "SELECT id, rand() AS r FROM t"),
    ("approximate aggregates", "SELECT g, percentile_approx(x, 0.5) AS p FROM t GROUP BY g"),
    (
        "mode, ties decided (the lowest, or the highest)",
        "SELECT g, mode(x, true) AS lo, mode() WITHIN GROUP (ORDER BY x DESC) AS hi FROM t GROUP BY g",
    ),
    ("mode, any of the ties (Spark's default)", "SELECT g, mode(x) AS m FROM t GROUP BY g"),
    ("DECIMAL of more than 38 digits", "SELECT id, CAST(x AS DECIMAL(50, 2)) AS w FROM t"),
    ("a call without an argument it needs", "SELECT id, nvl2(x, 1) AS n FROM t"),
    ("a constant that raises, outside a conditional's branches", "SELECT id, make_date(2023, 2, 29) AS d FROM t"),
]


# sqlglot's internal names of some functions, as Spark SQL spells them; None: an operator.
_SPARK_NAMES: dict[str, str | None] = {
    "and": None,
    "or": None,
    "case": None,
    "str_position": "locate / instr / position",
    "pad": "lpad / rpad",
    "ts_or_ds_add": "date_add",
    "ts_or_ds_to_date": "to_date",
    "timestamp_trunc": "date_trunc",
    "day_of_month": "dayofmonth",
    "day_of_week": "dayofweek",
    "day_of_year": "dayofyear",
    "week_of_year": "weekofyear",
    "str_to_unix": "unix_timestamp / to_unix_timestamp (of a TIMESTAMP, a DATE or a string by a pattern)",
    "unix_to_str": "from_unixtime (default format)",
    "try_cast": "try_cast",
    "safe_add": "try_add",
    "safe_subtract": "try_subtract",
    "safe_multiply": "try_multiply",
    "safe_divide": "try_divide",
    "log": "log / log10 / log2",
    "power": "power / pow",
    "sign": "sign / signum",
    "is_nan": "isnan",
    "regexp_split": "split",
    "starts_with": "startswith",
    "ends_with": "endswith",
    "chr": "chr / char",
    "time_to_str": "date_format (a constant pattern: compiler/logical/datetime_pattern.py)",
    "str_to_time": "to_timestamp (a constant pattern)",
    "timestamp_from_parts": "make_timestamp",
}


def _names(classes: object) -> list[str]:
    out = set()
    for cls in classes:  # type: ignore[attr-defined]
        if isinstance(cls, type) and issubclass(cls, exp.Func):
            name = cls.sql_names()[0].lower()
            shown = _SPARK_NAMES.get(name, name)
            if shown is not None:
                out.add(shown)
    return sorted(out)


def _verdict(sql: str) -> tuple[str, str]:
    try:
        _, extensions = collecting_extensions(lambda: compile_sql(SCHEMA + f"CREATE VIEW v AS {sql};", "spark", True))
    except DbspcError as e:
        return "refused", e.message.replace("|", "\\|")
    return ("extension", extensions[0].message.replace("|", "\\|")) if extensions else ("supported", "")


def reference() -> str:
    lines = [
        "# SQL reference",
        "",
        "Generated by `docs/gen_reference.py` from the compiler itself: each construct below was",
        "compiled by this version of dbspc (Spark SQL dialect), and the function lists are the",
        "binders' own tables. A refused construct is refused with a positioned error naming it,",
        "never answered wrongly. A construct Spark SQL itself refuses but dbspc evaluates is said",
        "so, here and as a positioned warning when a view uses it.",
        "",
        "| construct | example | dbspc |",
        "|---|---|---|",
    ]
    for construct, sql in CONSTRUCTS:
        verdict, why = _verdict(sql)
        shown = {"supported": "supported", "extension": f"supported, beyond Spark: {why}"}.get(
            verdict, f"refused: {why}"
        )
        lines.append(f"| {construct} | `{sql}` | {shown} |")
    scalar = (
        _names([*bind_scalar._BINDERS, *bind_scalar._FUNCTION_RULES])
        + sorted(bind_scalar._ANONYMOUS_BINDERS)
        + sorted(bind_scalar._ANONYMOUS_RULES)
    )
    aggregates = sorted({*bind_aggregate.CORE.values()})
    windows = sorted({*bind_window._RANKING.values(), *bind_window._AGGREGATES.values()})
    lines += [
        "",
        "## Scalar functions",
        "",
        ", ".join(f"`{n}`" for n in sorted(set(scalar))),
        "",
        "Operators: arithmetic (`+ - * / div %`, with Spark's ANSI overflow and division-by-zero",
        "errors), comparisons, `<=>`, `AND OR NOT`, `IS [NOT] NULL`, `IN`, `BETWEEN`, `LIKE`, `ILIKE`, `||`.",
        "",
        "A row raises such an error only where Spark evaluates the failing part for it: not in a",
        "branch of CASE, COALESCE, AND or OR that is not taken, nor in an operand after a NULL one",
        "(the divisor of `/`, `div` and `%` comes first), but always in a part that occurs twice in",
        "one SELECT list or WHERE. An integer `+` or `*` chain adds its constants last",
        "(`i + 2147483647 + j` is `(i + j) + 2147483647`), as Spark's optimizer reorders it.",
        "",
        "The transcendental functions (exp, ln, log, power, cbrt, the trigonometric and hyperbolic",
        "functions, hypot) are computed by the C library, whose results are correctly rounded in",
        "almost all cases; Spark's come from Java's StrictMath and JIT intrinsics, and differ from",
        "them in the last binary digit on a few inputs in a thousand. sqrt, degrees, radians, rint,",
        "sign and all decimal and integer arithmetic are exact. These functions follow Spark's",
        "rules only: under --dialect sqlite, postgres or duckdb they are refused.",
        "",
        "## Aggregate functions",
        "",
        ", ".join(f"`{n}`" for n in aggregates) + " (and `DISTINCT` forms, `FILTER (WHERE ...)`).",
        "",
        "## Window functions",
        "",
        ", ".join(f"`{n}`" for n in windows) + ".",
        "",
    ]
    return "\n".join(lines)


def picture() -> str:
    text = split_script((DOCS.parent / "examples" / "orders.sql").read_text()).program
    return to_svg(compile_sql(text, "spark", True).circuit)


def main(argv: list[str]) -> int:
    outputs = {DOCS / "sql-reference.md": reference(), DOCS / "img" / "orders.svg": picture()}
    stale = [p for p, text in outputs.items() if not p.exists() or p.read_text() != text]
    if "--check" in argv:
        for p in stale:
            print(f"{p} is stale: run docs/gen_reference.py", file=sys.stderr)
        return 1 if stale else 0
    for p, text in outputs.items():
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
