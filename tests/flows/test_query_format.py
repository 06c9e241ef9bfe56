"""``evaflow query`` prints SQL NULL as NULL (as DuckDB's shell does), never ``nan``."""

from __future__ import annotations

import duckdb
import pytest

from flows.commands import print_frame
from tests.flows.test_cli import evaflow

SQL = (
    "SELECT * FROM (VALUES (1, 0.25, 'a', DATE '2026-01-02'), (2, NULL, NULL, NULL)) "
    "AS t(n, latency_s, text, day) ORDER BY n"
)


def test_nulls_of_every_type_print_as_null(capsys: pytest.CaptureFixture[str]) -> None:
    frame = duckdb.sql(SQL).df()
    print_frame(frame, "table")
    printed = capsys.readouterr().out
    assert "nan" not in printed.lower() and "none" not in printed.lower()
    assert "NaT" not in printed
    last = [line for line in printed.splitlines() if line.lstrip("│| ").startswith("2 ")][0]
    assert last.count("NULL") == 3, printed
    assert "0.25" in printed and "2026-01-02" in printed


def test_the_query_command_prints_null(tmp_path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "d").mkdir()  # an empty store: query refuses a path that is not there
    done = evaflow(
        "query",
        "SELECT avg(x) AS avg_latency_s FROM (SELECT NULL::DOUBLE AS x)",
        "--store",
        str(tmp_path / "d"),
        cwd=tmp_path,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "NULL" in done.stdout and "nan" not in done.stdout
