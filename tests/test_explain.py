"""`dbspc explain`: a verdict per view from the operators' declared cost growth, JSON
for tools, and --strict failing a view whose cost per change grows with the data."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from dbspc.cli import main

REPO = Path(__file__).resolve().parent.parent
VIEWS = """CREATE TABLE t (a INT, g INT, f DOUBLE);
CREATE TABLE u (b INT);
CREATE VIEW sums AS SELECT g, SUM(a) AS s FROM t GROUP BY g;
CREATE VIEW tops AS SELECT g, MAX(f) AS m FROM t GROUP BY g;
CREATE VIEW int_tops AS SELECT g, MAX(a) AS m FROM t GROUP BY g;
CREATE VIEW pairs AS SELECT a, b FROM t CROSS JOIN u;
"""


def run(args: list[str]) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, args)
    return result.exit_code, result.stdout, result.stderr


def test_verdicts_per_view(tmp_path: Path) -> None:
    path = tmp_path / "v.sql"
    path.write_text(VIEWS)
    code, out, _ = run(["explain", str(path)])
    assert code == 0
    verdicts = {line.split(":")[0]: line for line in out.splitlines() if line.startswith("view ")}
    assert verdicts["view sums"] == "view sums: cost follows the change"
    assert "may re-read a changed group" in verdicts["view tops"] and "aggregate_incremental" in verdicts["view tops"]
    assert "when its MIN or MAX is deleted" in verdicts["view tops"]
    assert "cost grows with the data" in verdicts["view pairs"] and "cross join" in verdicts["view pairs"]
    assert "state: value multiset and emitted rows per group (MIN/MAX)" in out  # each operator's state and cost
    # MIN/MAX over values ordered as integers keep them in order per group: never a re-read
    assert verdicts["view int_tops"] == "view int_tops: cost follows the change"
    assert "the values in order" in out


def test_json_and_strict(tmp_path: Path) -> None:
    path = tmp_path / "v.sql"
    path.write_text(VIEWS)
    code, out, _ = run(["explain", "--format", "json", str(path)])
    report = {v["name"]: v for v in json.loads(out)["views"]}
    assert code == 0 and {n: v["grows"] for n, v in report.items()} == {
        "sums": "change",
        "tops": "group",
        "int_tops": "change",
        "pairs": "state",
    }
    assert any(o["kind"] == "aggregate_incremental" and o["grows"] == "change" for o in report["sums"]["operators"])
    code, _, err = run(["explain", "--strict", str(path)])
    assert code == 2 and "view pairs: cost grows with the data" in err
    assert "view tops: operator" in err and "may re-read a changed group" in err
    assert "view sums" not in err and "view int_tops" not in err
    # A join + SUM view passes: its cost follows the change alone.
    path.write_text(
        "CREATE TABLE t (a INT, g INT);\nCREATE TABLE u (g INT, name STRING);\n"
        "CREATE VIEW per_name AS SELECT u.name, SUM(t.a) AS s FROM t JOIN u ON t.g = u.g GROUP BY u.name;\n"
    )
    assert run(["explain", "--strict", str(path)])[0] == 0
    code, _, err = run(["explain", str(tmp_path / "missing.sql")])
    assert code != 0 and "missing.sql" in err


def test_version() -> None:
    code, out, _ = run(["--version"])
    assert code == 0 and out.startswith("dbspc, version ")
