# Copied from shared/peers/bench_pg_ivm.py and changed in one place (and the docstring note
# on it): `orders_frame` draws the amounts as cents, exactly as dbspc's fixed
# bench/join_groupby.py does (cast to Decimal(10, 2) before dividing by 100, then back to
# Decimal(10, 2)). The original copies the old bench's `cast(pl.Decimal(10, 0)) / 100`, which
# under polars 2.1 gives whole numbers 0..100; with the bench fixed, the peer must draw cents
# too so that the rows stay identical to dbspc's. Everything else (set-up, steps, timing,
# output) is unchanged, long lines included, so that a diff against the shared script shows
# only that change:
# ruff: noqa: E501
"""Peer benchmark: pg_ivm (incrementally maintained materialized views in PostgreSQL) on the
workload of dbspc's bench/join_groupby.py, row for row.

Workload (the same generator as bench/join_groupby.py, same seed 7, so the same rows):
  customers(id INT PRIMARY KEY, region INT)          100,000 rows, region uniform over 1,000
  orders(id BIGINT PRIMARY KEY, customer_id INT, amount NUMERIC(10,2))   N rows,
        customer_id uniform over the customers
  view: SELECT c.region, COUNT(*) AS n, SUM(o.amount) AS total
        FROM orders o JOIN customers c ON o.customer_id = c.id GROUP BY c.region
  steps of 1,000 order rows: 500 deletes of present rows (by id) and 500 inserts of new ids.
  Steps 1-20 are exactly dbspc's steps (same polars sampling, same seeds); later phases
  continue the same sequence (steps 21-40, ...).

  Amounts are cents (0.00..99.99), drawn as bench/join_groupby.py's fixed orders_frame does.

Per size, with only the primary keys, then again after adding an index on orders.customer_id:
  load      COPY both tables (primary keys declared up front), then VACUUM ANALYZE
  recompute the query in plain PostgreSQL, median of 5 after one warm-up (JIT on, as by
            default, and off)
  create    SELECT pgivm.create_immv('revenue', <query>)
  IMMV      20 steps, each one transaction: BEGIN; DELETE ... WHERE id = ANY(...);
            INSERT ... SELECT FROM unnest(...); COMMIT -- timed from BEGIN to COMMIT returned,
            the IMMV is maintained inside (one AFTER trigger run per statement)
  check     IMMV contents == the query recomputed (exact, numeric compared as Decimal)
  refresh   SELECT pgivm.refresh_immv('revenue', true), median of 3
  plain     DROP the IMMV, 20 more steps of the same shape on the same tables (no triggers)

Set-up used (Debian 12, PostgreSQL 15 from Debian, as root):
  apt-get install postgresql-server-dev-15
  git archive v1.15 of github.com/sraoss/pg_ivm into $SCRATCH/pgivm/src
  cd $SCRATCH/pgivm/src && make USE_PGXS=1 && make USE_PGXS=1 install
  su postgres -c "/usr/lib/postgresql/15/bin/initdb -D $SCRATCH/pgivm/data -U postgres --auth=trust"
  append to $SCRATCH/pgivm/data/postgresql.conf:
      listen_addresses = ''   port = 54331   unix_socket_directories = '$SCRATCH/pgivm/sock'
      shared_preload_libraries = 'pg_ivm'   shared_buffers = 2GB   work_mem = 64MB
      maintenance_work_mem = 512MB   max_wal_size = 16GB   checkpoint_timeout = 30min
      synchronous_commit = off        (fsync stays on)
  su postgres -c "/usr/lib/postgresql/15/bin/pg_ctl -D $SCRATCH/pgivm/data -l $SCRATCH/pgivm/pg.log start"
  psql -h $SCRATCH/pgivm/sock -p 54331 -U postgres -c "CREATE EXTENSION pg_ivm"
  python3 -m venv $SCRATCH/pgivm/venv && $SCRATCH/pgivm/venv/bin/pip install "psycopg[binary]" numpy==2.4.6 polars==2.1.0

Run (one benchmark at a time on a shared machine):
  flock $SCRATCH/bench.lock $SCRATCH/pgivm/venv/bin/python bench_pg_ivm.py \
      --dsn "host=$SCRATCH/pgivm/sock port=54331 user=postgres dbname=postgres" \
      --sizes 1000000 10000000 --steps 20 [--sync-commit on] [--json out.json]
  Feature check only (which view shapes create_immv accepts; accepted ones are then checked
  against the query after a few inserts/deletes/updates):
  $SCRATCH/pgivm/venv/bin/python bench_pg_ivm.py --dsn "..." --features
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import numpy as np
import polars as pl
import psycopg

CUSTOMERS = 100_000
REGIONS = 1_000
CHANGE = 1_000
QUERY = (
    "SELECT c.region, COUNT(*) AS n, SUM(o.amount) AS total "
    "FROM orders o JOIN customers c ON o.customer_id = c.id GROUP BY c.region"
)


def orders_frame(ids: np.ndarray, rng: np.random.Generator) -> pl.DataFrame:
    # the same draws, in the same order, as bench/join_groupby.py's orders_frame
    return pl.DataFrame(
        {
            "id": ids.astype(np.int64),
            "customer_id": rng.integers(0, CUSTOMERS, len(ids)).astype(np.int32),
            "amount": (pl.Series(rng.integers(0, 10_000, len(ids))).cast(pl.Decimal(10, 2)) / 100).cast(
                pl.Decimal(10, 2)
            ),
        }
    )


def make_data(n: int, nsteps: int, seed: int = 7):
    """Customers, initial orders, and `nsteps` steps as ready-to-send SQL array literals."""
    rng = np.random.default_rng(seed)
    customers = pl.DataFrame(
        {"id": np.arange(CUSTOMERS, dtype=np.int32), "region": rng.integers(0, REGIONS, CUSTOMERS).astype(np.int32)}
    )
    orders = orders_frame(np.arange(n), rng)
    live, next_id, plan = orders, n, []
    for _ in range(nsteps):
        k = CHANGE // 2
        gone = live.sample(k, seed=int(rng.integers(1 << 30)))
        new = orders_frame(np.arange(next_id, next_id + k), rng)
        next_id += k
        arr = lambda s: "{" + ",".join(str(v) for v in s.to_list()) + "}"  # noqa: E731
        plan.append((arr(gone["id"]), arr(new["id"]), arr(new["customer_id"]), arr(new["amount"])))
        live = pl.concat([live.join(gone.select("id"), on="id", how="anti"), new])
    return customers, orders, plan


def copy_frame(cur: psycopg.Cursor, table: str, df: pl.DataFrame) -> None:
    data = df.write_csv(include_header=False).encode()
    with cur.copy(f"COPY {table} ({', '.join(df.columns)}) FROM STDIN (FORMAT csv)") as cp:
        for i in range(0, len(data), 1 << 22):
            cp.write(data[i : i + (1 << 22)])


def run_steps(conn: psycopg.Connection, plan: list[tuple[str, str, str, str]]) -> list[float]:
    times = []
    for gone, ids, cust, amt in plan:
        t = time.perf_counter()
        with conn.transaction():
            conn.execute("DELETE FROM orders WHERE id = ANY(%s::bigint[])", (gone,))
            conn.execute(
                "INSERT INTO orders (id, customer_id, amount) "
                "SELECT * FROM unnest(%s::bigint[], %s::int[], %s::numeric[])",
                (ids, cust, amt),
            )
        times.append((time.perf_counter() - t) * 1e3)
    return times


def stats(ms: list[float]) -> dict[str, float]:
    s = sorted(ms)
    # p90 picked as in bench/join_groupby.py
    return {"median": statistics.median(s), "p90": s[int(0.9 * (len(s) - 1))], "max": s[-1], "min": s[0]}


def timed(cur: psycopg.Cursor, sql: str, reps: int, warm: bool = True) -> tuple[list[float], list]:
    if warm:
        cur.execute(sql)
        cur.fetchall()
    out, rows = [], []
    for _ in range(reps):
        t = time.perf_counter()
        cur.execute(sql)
        rows = cur.fetchall()
        out.append((time.perf_counter() - t) * 1e3)
    return out, rows


def triggers_on_orders(cur: psycopg.Cursor) -> int:
    cur.execute("SELECT count(*) FROM pg_trigger WHERE tgrelid = 'orders'::regclass")
    return cur.fetchone()[0]


def phase(conn, cur, plan_ivm, plan_plain, label: str, log) -> dict:
    r: dict = {"indexes": label}
    cur.execute("SET jit = on")
    rec, expected = timed(cur, QUERY, 5)
    r["recompute_ms"] = statistics.median(rec)
    cur.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + QUERY)
    r["recompute_used_jit"] = "JIT" in cur.fetchone()[0][0]
    cur.execute("SET jit = off")
    rec_nojit, _ = timed(cur, QUERY, 5)
    r["recompute_nojit_ms"] = statistics.median(rec_nojit)
    cur.execute("RESET jit")

    t = time.perf_counter()
    cur.execute("SELECT pgivm.create_immv('revenue', %s)", (QUERY,))
    r["create_immv_s"] = time.perf_counter() - t
    r["immv_triggers_on_orders"] = triggers_on_orders(cur)
    ivm = run_steps(conn, plan_ivm)
    r["ivm_steps_ms"] = ivm
    r["ivm"] = stats(ivm)
    log(f"  [{label}] IMMV steps: median {r['ivm']['median']:.1f} ms  p90 {r['ivm']['p90']:.1f} ms")

    cur.execute("SELECT region, n, total FROM revenue")
    got = sorted(cur.fetchall())
    cur.execute(QUERY)
    expected = sorted(cur.fetchall())
    r["immv_rows"] = len(got)
    r["immv_equals_query"] = got == expected
    r["checksum"] = {"groups": len(expected), "sum_n": sum(x[1] for x in expected), "sum_total": str(sum(x[2] for x in expected))}
    log(f"  [{label}] IMMV == query: {r['immv_equals_query']} ({len(got)} rows) {r['checksum']}")

    ref = []
    for _ in range(3):
        t = time.perf_counter()
        cur.execute("SELECT pgivm.refresh_immv('revenue', true)")
        ref.append((time.perf_counter() - t) * 1e3)
    r["refresh_immv_ms"] = statistics.median(ref)
    cur.execute("SELECT region, n, total FROM revenue")
    r["after_refresh_equal"] = sorted(cur.fetchall()) == expected

    cur.execute("DROP TABLE revenue")
    r["plain_triggers_on_orders"] = triggers_on_orders(cur)
    plain = run_steps(conn, plan_plain)
    r["plain_steps_ms"] = plain
    r["plain"] = stats(plain)
    log(f"  [{label}] plain steps: median {r['plain']['median']:.1f} ms  p90 {r['plain']['p90']:.1f} ms")
    return r


def run_size(dsn: str, n: int, steps: int, sync_commit: str, log) -> dict:
    t = time.perf_counter()
    customers, orders, plan = make_data(n, 4 * steps)
    log(f"{n:,}: generated data and {4 * steps} steps in {time.perf_counter() - t:.1f} s")
    out: dict = {"rows": n, "steps": steps, "synchronous_commit": sync_commit}
    with psycopg.connect(dsn, autocommit=True) as conn, conn.cursor() as cur:
        cur.execute(f"SET synchronous_commit = {sync_commit}")
        cur.execute("DROP TABLE IF EXISTS revenue, orders, customers CASCADE")
        cur.execute("CREATE TABLE customers (id INT PRIMARY KEY, region INT NOT NULL)")
        cur.execute("CREATE TABLE orders (id BIGINT PRIMARY KEY, customer_id INT NOT NULL, amount NUMERIC(10,2) NOT NULL)")
        t = time.perf_counter()
        copy_frame(cur, "customers", customers)
        copy_frame(cur, "orders", orders)
        out["copy_s"] = time.perf_counter() - t
        cur.execute("VACUUM ANALYZE customers")
        cur.execute("VACUUM ANALYZE orders")
        out["load_s"] = time.perf_counter() - t
        log(f"  load (COPY {out['copy_s']:.1f} s, + VACUUM ANALYZE) {out['load_s']:.1f} s")
        del orders

        out["pk_only"] = phase(conn, cur, plan[0:steps], plan[steps : 2 * steps], "PKs", log)

        t = time.perf_counter()
        cur.execute("CREATE INDEX orders_customer_id ON orders (customer_id)")
        out["create_index_s"] = time.perf_counter() - t
        cur.execute("VACUUM ANALYZE orders")
        out["pk_and_fk_index"] = phase(conn, cur, plan[2 * steps : 3 * steps], plan[3 * steps :], "PKs+idx", log)
        cur.execute("SELECT pg_total_relation_size('orders'), pg_relation_size('orders')")
        out["orders_total_bytes"], out["orders_heap_bytes"] = cur.fetchone()
        cur.execute("DROP TABLE IF EXISTS revenue, orders, customers CASCADE")
    return out


# ---------------------------------------------------------------------------------------------
# --features: which view shapes create_immv accepts, on tiny tables; for each accepted one, a
# few inserts/deletes/updates follow and the IMMV is compared with the query (EXCEPT ALL).

FEATURE_SETUP = """
DROP TABLE IF EXISTS ft1, ft2, fedges CASCADE;
CREATE TABLE ft1 (id INT PRIMARY KEY, a INT, g INT);
CREATE TABLE ft2 (id INT PRIMARY KEY, t1_id INT, b INT);
CREATE TABLE fedges (src INT, dst INT, PRIMARY KEY (src, dst));
INSERT INTO ft1 SELECT i, i % 7, i % 3 FROM generate_series(1, 20) i;
INSERT INTO ft2 SELECT i, i % 25, i % 5 FROM generate_series(1, 30) i;
INSERT INTO fedges VALUES (1,2),(2,3),(3,4),(4,5);
"""
FEATURE_DML = """
INSERT INTO ft1 SELECT i, i % 7, i % 3 FROM generate_series(21, 26) i;
DELETE FROM ft1 WHERE id IN (2, 5, 9);
UPDATE ft1 SET a = a + 3, g = (g + 1) % 3 WHERE id % 4 = 0;
INSERT INTO ft2 SELECT i, i % 27, i % 5 FROM generate_series(31, 40) i;
DELETE FROM ft2 WHERE id IN (1, 7, 12);
UPDATE ft2 SET b = b + 1, t1_id = t1_id + 1 WHERE id % 6 = 0;
INSERT INTO fedges VALUES (5,6),(6,1);
DELETE FROM fedges WHERE src = 2;
"""
FEATURES = [
    ("inner join", "SELECT x.id, y.id AS id2, x.a, y.b FROM ft1 x JOIN ft2 y ON y.t1_id = x.id"),
    ("LEFT OUTER JOIN", "SELECT x.id, y.id AS id2, x.a, y.b FROM ft1 x LEFT JOIN ft2 y ON y.t1_id = x.id"),
    # pg_ivm requires the join columns in the target list of an outer-join view
    ("LEFT OUTER JOIN, join keys in SELECT", "SELECT x.id, y.id AS id2, y.t1_id, x.a, y.b FROM ft1 x LEFT JOIN ft2 y ON y.t1_id = x.id"),
    ("FULL OUTER JOIN", "SELECT x.id, y.id AS id2, x.a, y.b FROM ft1 x FULL JOIN ft2 y ON y.t1_id = x.id"),
    ("FULL OUTER JOIN, join keys in SELECT", "SELECT x.id, y.id AS id2, y.t1_id, x.a, y.b FROM ft1 x FULL JOIN ft2 y ON y.t1_id = x.id"),
    ("GROUP BY + COUNT/SUM/AVG/MIN/MAX",
     "SELECT g, COUNT(*) AS n, SUM(a) AS s, AVG(a) AS av, MIN(a) AS mi, MAX(a) AS ma FROM ft1 GROUP BY g"),
    ("join + GROUP BY (the bench view's shape)",
     "SELECT x.g, COUNT(*) AS n, SUM(y.b) AS s FROM ft2 y JOIN ft1 x ON y.t1_id = x.id GROUP BY x.g"),
    ("LEFT JOIN + GROUP BY", "SELECT x.g, COUNT(y.id) AS n FROM ft1 x LEFT JOIN ft2 y ON y.t1_id = x.id GROUP BY x.g"),
    ("COUNT(DISTINCT)", "SELECT g, COUNT(DISTINCT a) AS n FROM ft1 GROUP BY g"),
    ("HAVING", "SELECT g, COUNT(*) AS n FROM ft1 GROUP BY g HAVING COUNT(*) > 6"),
    ("DISTINCT", "SELECT DISTINCT g, a FROM ft1"),
    ("IN (subquery)", "SELECT id, a FROM ft1 WHERE id IN (SELECT t1_id FROM ft2)"),
    ("EXISTS (subquery)", "SELECT id, a FROM ft1 WHERE EXISTS (SELECT 1 FROM ft2 WHERE ft2.t1_id = ft1.id)"),
    ("NOT EXISTS (subquery)", "SELECT id, a FROM ft1 WHERE NOT EXISTS (SELECT 1 FROM ft2 WHERE ft2.t1_id = ft1.id)"),
    ("scalar subquery in SELECT", "SELECT id, (SELECT MAX(b) FROM ft2 WHERE ft2.t1_id = ft1.id) AS mb FROM ft1"),
    ("window function", "SELECT id, SUM(a) OVER (PARTITION BY g) AS s FROM ft1"),
    ("ORDER BY ... LIMIT", "SELECT id, a FROM ft1 ORDER BY a, id LIMIT 3"),
    ("UNION", "SELECT id FROM ft1 UNION SELECT t1_id FROM ft2"),
    ("UNION ALL", "SELECT id FROM ft1 UNION ALL SELECT t1_id FROM ft2"),
    ("EXCEPT", "SELECT id FROM ft1 EXCEPT SELECT t1_id FROM ft2"),
    ("WITH (non-recursive CTE)",
     "WITH x AS (SELECT id, a FROM ft1 WHERE a > 1) SELECT x.id, x.a, y.b FROM x JOIN ft2 y ON y.t1_id = x.id"),
    ("WITH RECURSIVE (transitive closure)",
     "WITH RECURSIVE r(s, d) AS (SELECT src, dst FROM fedges UNION SELECT r.s, e.dst FROM r JOIN fedges e ON r.d = e.src) "
     "SELECT s, d FROM r"),
    ("CASE", "SELECT id, CASE WHEN a > 3 THEN 'hi' ELSE 'lo' END AS c FROM ft1"),
    ("SUM(CASE ...) + GROUP BY", "SELECT g, SUM(CASE WHEN a > 3 THEN 1 ELSE 0 END) AS hi FROM ft1 GROUP BY g"),
    ("self-join", "SELECT x.id, y.id AS id2 FROM ft1 x JOIN ft1 y ON x.g = y.g AND x.id < y.id"),
]


def features(dsn: str) -> list[dict]:
    out = []
    with psycopg.connect(dsn, autocommit=True) as conn:
        for name, q in FEATURES:
            conn.execute(FEATURE_SETUP)
            row: dict = {"feature": name, "query": q}
            try:
                conn.execute("SELECT pgivm.create_immv('fv', %s)", (q,))
                row["accepted"] = True
            except psycopg.Error as e:
                row["accepted"] = False
                row["error"] = str(e.diag.message_primary or e).strip()
                out.append(row)
                continue
            try:
                conn.execute(FEATURE_DML)
                cols = ", ".join(f'"{d.name}"' for d in conn.execute(q + " LIMIT 0").description)
                diff = conn.execute(
                    f"SELECT count(*) FROM ((SELECT {cols} FROM fv EXCEPT ALL ({q})) "
                    f"UNION ALL (({q}) EXCEPT ALL SELECT {cols} FROM fv)) d"
                ).fetchone()[0]
                row["correct_after_dml"] = diff == 0
            except psycopg.Error as e:
                row["correct_after_dml"] = False
                row["error"] = "maintenance failed: " + str(e.diag.message_primary or e).strip()
            conn.execute("DROP TABLE IF EXISTS fv")
            out.append(row)
        conn.execute("DROP TABLE IF EXISTS ft1, ft2, fedges, fv CASCADE")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dsn", required=True)
    ap.add_argument("--sizes", type=int, nargs="+", default=[1_000_000, 10_000_000])
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--sync-commit", default="off", choices=["on", "off"])
    ap.add_argument("--json")
    ap.add_argument("--features", action="store_true", help="only the feature check on tiny tables")
    a = ap.parse_args()
    log = lambda s: print(s, flush=True)  # noqa: E731
    if a.features:
        rows = features(a.dsn)
        print("| view | create_immv | maintained correctly after DML | error |")
        print("|---|---|---|---|")
        for r in rows:
            ok = "yes" if r.get("correct_after_dml") else ("NO" if r["accepted"] else "")
            print(f"| {r['feature']} | {'✔' if r['accepted'] else '✖'} | {ok} | {r.get('error', '')} |")
        if a.json:
            with open(a.json, "w") as f:
                json.dump(rows, f, indent=1)
        return
    with psycopg.connect(a.dsn) as c:
        ver = c.execute("SELECT extversion FROM pg_extension WHERE extname = 'pg_ivm'").fetchone()
        pgv = c.execute("SHOW server_version").fetchone()[0]
    log(f"PostgreSQL {pgv}, pg_ivm {ver[0] if ver else '(not installed)'}, synchronous_commit={a.sync_commit}")
    results = [run_size(a.dsn, n, a.steps, a.sync_commit, log) for n in a.sizes]
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1, default=str)
    print(f"\nchange per step: {CHANGE} rows (500 deletes + 500 inserts), {a.steps} steps per phase")
    print(
        "| orders | indexes | load (s) | create_immv (s) | IMMV step median / p90 (ms) | plain step median / p90 (ms) "
        "| maintenance (ms) | PG recompute (ms) | no JIT (ms) | refresh_immv (ms) | IMMV == query |"
    )
    print("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for r in results:
        for key in ("pk_only", "pk_and_fk_index"):
            p = r[key]
            print(
                f"| {r['rows']:,} | {p['indexes']} | {r['load_s']:.1f} | {p['create_immv_s']:.1f} "
                f"| {p['ivm']['median']:.1f} / {p['ivm']['p90']:.1f} | {p['plain']['median']:.1f} / {p['plain']['p90']:.1f} "
                f"| {p['ivm']['median'] - p['plain']['median']:.1f} | {p['recompute_ms']:.0f} | {p['recompute_nojit_ms']:.0f} "
                f"| {p['refresh_immv_ms']:.0f} | {p['immv_equals_query'] and p['after_refresh_equal']} |"
            )


if __name__ == "__main__":
    main()
