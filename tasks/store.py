"""The Parquet store: atomic batch commits, resume, recovery and DuckDB views.

Layout: ``<root>/<table>/<run_id>/<batch>.parquet``. A batch holds whole trials (every
attempt of each). Parts are written to a temporary name and renamed; the ``trials`` part
is written last and is the batch's commit marker, so a batch is visible exactly when
its trials part exists. Anything else (a temp file, a part whose batch has no trials
part) is debris of a killed run and is removed by :meth:`Store.recover`. A part that
cannot be read is moved, with the rest of its batch, to ``<root>/_quarantine/`` — its
trials count as not done and are simulated again, so nothing is lost or duplicated.
"""

from __future__ import annotations

import io
import posixpath
import uuid
from dataclasses import dataclass, field
from typing import Any

import duckdb
import fsspec
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from tasks.tables import ATTEMPT_TABLES, SCHEMAS, TABLE_ORDER

PART_SUFFIX = ".parquet"
TMP_SUFFIX = ".parquet.tmp"
SCORING_PREFIX = "scoring-"
"""A ``metrics`` part named ``scoring-<name>`` is a re-scoring (``evaflow score``): one file,
written atomically, committed by itself; its rows keep their attempts' batch ids."""


def _committed_part(table: str, batch: str, committed: set[str]) -> bool:
    return batch in committed or (table == "metrics" and batch.startswith(SCORING_PREFIX))


class StoreError(RuntimeError):
    """A problem with the stored data; the message names the file."""


@dataclass
class RecoveryReport:
    removed_temp: list[str] = field(default_factory=list)
    removed_orphans: list[str] = field(default_factory=list)
    quarantined: list[str] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        return not (self.removed_temp or self.removed_orphans or self.quarantined)


def new_batch_id() -> str:
    return uuid.uuid4().hex[:16]


class Store:
    """A directory (local path or fsspec URL) of Parquet tables partitioned by run."""

    def __init__(self, root: str) -> None:
        self.root = str(root).rstrip("/")
        self.fs, self._base = fsspec.core.url_to_fs(self.root)
        protocols = self.fs.protocol if isinstance(self.fs.protocol, tuple) else (self.fs.protocol,)
        self.protocol = protocols[0]
        self.local = "file" in protocols or "local" in protocols

    # -- paths ---------------------------------------------------------------
    def _dir(self, table: str, run_id: str) -> str:
        safe_run = _safe_component(run_id, "run id")
        return posixpath.join(self._base, table, safe_run)

    def _part(self, table: str, run_id: str, batch: str) -> str:
        return posixpath.join(
            self._dir(table, run_id), f"{_safe_component(batch, 'batch')}{PART_SUFFIX}"
        )

    def _ls(self, path: str) -> list[str]:
        try:
            return sorted(self.fs.ls(path, detail=False))
        except FileNotFoundError:
            return []

    def run_ids(self) -> list[str]:
        """Runs with at least one committed batch (or a runs row)."""
        ids = {posixpath.basename(p) for p in self._ls(posixpath.join(self._base, "trials"))}
        ids |= {posixpath.basename(p) for p in self._ls(posixpath.join(self._base, "runs"))}
        return sorted(ids)

    # -- writing -------------------------------------------------------------
    def _write_atomic(self, path: str, table: pa.Table) -> None:
        self.fs.makedirs(posixpath.dirname(path), exist_ok=True)
        tmp = path[: -len(PART_SUFFIX)] + f".{uuid.uuid4().hex[:6]}{TMP_SUFFIX}"
        buf = io.BytesIO()
        pq.write_table(table, buf, compression="zstd")
        with self.fs.open(tmp, "wb") as fh:
            fh.write(buf.getvalue())
        self.fs.mv(tmp, path)

    def write_batch(self, run_id: str, batch: str, tables: dict[str, pa.Table]) -> None:
        """Write every table's part of one batch; ``trials`` last (the commit)."""
        if "trials" not in tables:
            raise ValueError("a batch must contain a trials table (it is the commit marker)")
        for name in TABLE_ORDER:
            if name in tables and name != "runs":
                self._write_atomic(self._part(name, run_id, batch), tables[name])

    def write_single(self, table: str, run_id: str, data: pa.Table, name: str = "current") -> None:
        """Replace a per-run table that is rewritten whole (``runs``, ``aggregates``)."""
        self._write_atomic(self._part(table, run_id, name), data)

    # -- reading / resume ----------------------------------------------------
    def parts(self, table: str, run_id: str) -> list[str]:
        return [p for p in self._ls(self._dir(table, run_id)) if p.endswith(PART_SUFFIX)]

    def committed_batches(self, run_id: str) -> set[str]:
        return {posixpath.basename(p)[: -len(PART_SUFFIX)] for p in self.parts("trials", run_id)}

    def completed_trial_keys(self, run_id: str) -> set[str]:
        keys: set[str] = set()
        for path in self.parts("trials", run_id):
            keys.update(
                self._read_part(path, columns=["trial_key"]).column("trial_key").to_pylist()
            )
        return keys

    def _read_part(self, path: str, columns: list[str] | None = None) -> pa.Table:
        try:
            with self.fs.open(path, "rb") as fh:
                return pq.read_table(fh, columns=columns)
        except Exception as exc:  # noqa: BLE001 - any decode failure means a corrupt part
            raise StoreError(
                f"corrupt or unreadable Parquet file {self._url(path)}: {exc}"
            ) from exc

    def _url(self, path: str) -> str:
        return path if self.local else f"{self.protocol}://{path}"

    def recover(self, run_id: str) -> RecoveryReport:
        """Remove debris of a killed run and quarantine unreadable batches."""
        report = RecoveryReport()
        all_tables = set(SCHEMAS)  # the attempt tables and the per-run ones
        for table in sorted(all_tables):
            for path in self._ls(self._dir(table, run_id)):
                if path.endswith(TMP_SUFFIX):
                    self.fs.rm(path)
                    report.removed_temp.append(path)
        bad_batches: set[str] = set()
        for table in sorted(all_tables):
            for path in self.parts(table, run_id):
                try:
                    with self.fs.open(path, "rb") as fh:
                        pq.read_metadata(fh)
                except Exception:  # noqa: BLE001
                    bad_batches.add(posixpath.basename(path)[: -len(PART_SUFFIX)])
        for batch in sorted(bad_batches):
            for table in sorted(all_tables):
                path = self._part(table, run_id, batch)
                if self.fs.exists(path):
                    dest = posixpath.join(
                        self._base, "_quarantine", run_id, table, posixpath.basename(path)
                    )
                    self.fs.makedirs(posixpath.dirname(dest), exist_ok=True)
                    self.fs.mv(path, dest)
                    report.quarantined.append(path)
        committed = self.committed_batches(run_id)
        for table in ATTEMPT_TABLES:
            if table == "trials":
                continue
            for path in self.parts(table, run_id):
                if not _committed_part(
                    table, posixpath.basename(path)[: -len(PART_SUFFIX)], committed
                ):
                    self.fs.rm(path)
                    report.removed_orphans.append(path)
        return report

    def verify(self, run_ids: list[str] | None = None) -> list[str]:
        """Problems found (one line each, naming the file); empty when every part is readable."""
        problems = []
        for run_id in run_ids or self.run_ids():
            for table in SCHEMAS:
                for path in self.parts(table, run_id):
                    try:
                        with self.fs.open(path, "rb") as fh:
                            pq.read_metadata(fh)
                    except Exception as exc:  # noqa: BLE001
                        problems.append(f"{self._url(path)}: not a readable Parquet file ({exc})")
        return problems

    def read(self, table: str, run_id: str) -> pd.DataFrame:
        """One table of one run (committed batches only) as a DataFrame."""
        committed = self.committed_batches(run_id)
        frames = []
        for path in self.parts(table, run_id):
            batch = posixpath.basename(path)[: -len(PART_SUFFIX)]
            if table in ATTEMPT_TABLES and not _committed_part(table, batch, committed):
                continue
            frames.append(self._read_part(path))
        if not frames:
            return SCHEMAS[table].empty_table().to_pandas()
        # The empty schema table first: a column added since a run was written reads as null.
        frames.insert(0, SCHEMAS[table].empty_table())
        return pa.concat_tables(frames, promote_options="default").to_pandas()

    # -- SQL -----------------------------------------------------------------
    def connect(
        self, run_ids: list[str] | None = None, scoring: str | None = None
    ) -> duckdb.DuckDBPyConnection:
        """A DuckDB connection with one view per table over the committed data; ``metrics``
        shows each metric's latest scoring, or as of the named ``scoring``
        (:mod:`tasks.scorings`; every scoring's rows are in ``metrics_all``)."""
        con = duckdb.connect()
        runs = run_ids or self.run_ids()
        if not self.local:
            con.register_filesystem(self.fs)
        listed: dict[str, list[str]] = {}
        for table in SCHEMAS:
            files = listed[table] = [p for run in runs for p in self.parts(table, run)]
            con.register(f"_empty_{table}", SCHEMAS[table].empty_table())
            if not files:
                con.execute(f"CREATE VIEW {table}_all AS SELECT * FROM _empty_{table}")
            else:
                if not self.local:
                    files = [self._url(p) for p in files]
                listing = ", ".join("'" + f.replace("'", "''") + "'" for f in files)
                # By name with the empty schema table, so a column added since a run was
                # written reads as null.
                con.execute(
                    f"CREATE VIEW {table}_all AS SELECT * FROM _empty_{table} UNION ALL BY NAME "
                    f"SELECT * FROM read_parquet([{listing}], union_by_name=true)"
                )
        con.execute("CREATE VIEW trials AS SELECT * FROM trials_all")
        for table in SCHEMAS:
            if table == "trials":
                continue
            if table in ATTEMPT_TABLES:
                rows = f"SELECT * FROM {table}_all WHERE batch IN (SELECT batch FROM trials_all)"
                if table == "metrics" and (scoring is not None or _rescored(listed[table])):
                    from tasks.scorings import latest_metrics_sql

                    rows = latest_metrics_sql(rows, scoring)
                con.execute(f"CREATE VIEW {table} AS {rows}")
            else:
                con.execute(f"CREATE VIEW {table} AS SELECT * FROM {table}_all")
        from tasks.costs.views import register_cost_views

        register_cost_views(con)  # prices, usage, costs (over the views above)
        return con

    def query(self, sql: str, run_ids: list[str] | None = None) -> pd.DataFrame:
        con = None
        try:
            con = self.connect(run_ids)
            return con.execute(sql).df()
        except duckdb.Error as exc:
            problems = self.verify(run_ids)
            hint = ("\n" + "\n".join(problems)) if problems else ""
            raise StoreError(f"query failed: {exc}{hint}") from exc
        finally:
            if con is not None:
                con.close()


def _rescored(metric_parts: list[str]) -> bool:
    """Whether any of the listed metrics parts is a re-scoring. Without one each metric has
    one scoring, the run's own, so ``metrics`` needs no latest-scoring window: over 10 M
    rows that window made every metric query 4-9x slower (benchmarks, store group)."""
    return any(posixpath.basename(p).startswith(SCORING_PREFIX) for p in metric_parts)


def _safe_component(value: str, what: str) -> str:
    """Reject path components that could escape the store (ids come from user input)."""
    if not value or value in (".", "..") or "/" in value or "\\" in value or "\x00" in value:
        raise StoreError(f"invalid {what} {value!r}: must be a plain name without '/' or '..'")
    return value


def rows_to_tables(rows: dict[str, list[dict[str, Any]]]) -> dict[str, pa.Table]:
    from tasks.tables import to_table

    return {name: to_table(name, table_rows) for name, table_rows in rows.items()}
