"""The benchmark harness: figures with targets, medians over repeats, a table, results.json.

A benchmark is a function ``(BenchOptions) -> list[Figure]`` registered in ``BENCHMARKS``;
``python -m benchmarks`` runs them, prints one table (value, target, pass/fail per figure)
and writes ``benchmarks/results.json``, each group stamped with the commit it ran on
(``benchmarks.stamps``). Figures are data: a benchmark that cannot run
returns a figure with ``value=None`` and a note saying why, it never aborts the others.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from benchmarks.stamps import ChangedFn, git_changed, split_stale, staleness
from evaflow_core.registry import Registry

REPO_ROOT = Path(__file__).resolve().parents[1]
RESULTS_PATH = REPO_ROOT / "benchmarks" / "results.json"
MB = 1024 * 1024

Comparison = Literal["<=", "<", ">=", ">"]


class BenchOptions(BaseModel):
    """How the harness was asked to run (shared by every benchmark)."""

    model_config = ConfigDict(frozen=True)
    quick: bool = Field(default=False, description="Scaled-down sizes for iteration")
    repeats: int = Field(default=5, ge=1, le=100, description="Timed repeats per figure")
    scratch: Path = Field(
        default=Path(tempfile.gettempdir()), description="Where synthetic stores go (deleted)"
    )
    keep: bool = Field(default=False, description="Keep synthetic stores for inspection")
    eva_root: Path | None = Field(default=None, description="EVA checkout for real runs")


class Figure(BaseModel):
    """One measured number, with its target when the issue sets one."""

    group: str = Field(description="Benchmark that produced it: store, run, simulate, voice")
    name: str = Field(description="What was measured")
    value: float | None = Field(description="Median of the samples; None if not measured")
    unit: str = Field(default="", description="s, ms, MB, x, %, rows ...")
    target: float | None = Field(default=None, description="Threshold set by the issue")
    op: Comparison | None = Field(default=None, description="value <op> target passes")
    samples: list[float] = Field(default_factory=list, description="Every repeat, in order")
    note: str = Field(default="", description="Conditions, sizes, or why it was not measured")

    @property
    def passed(self) -> bool | None:
        if self.target is None or self.op is None or self.value is None:
            return None
        checks: dict[str, Callable[[float, float], bool]] = {
            "<=": lambda a, b: a <= b,
            "<": lambda a, b: a < b,
            ">=": lambda a, b: a >= b,
            ">": lambda a, b: a > b,
        }
        return checks[self.op](self.value, self.target)

    def as_json(self) -> dict[str, Any]:
        return {**self.model_dump(mode="json"), "passed": self.passed}


BenchmarkFn = Callable[[BenchOptions], list[Figure]]
BENCHMARKS: Registry[BenchmarkFn] = Registry("benchmark")


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    """Wall seconds of one call and its result."""
    started = time.perf_counter()
    result = fn()
    return time.perf_counter() - started, result


def repeat_timed(
    fn: Callable[[], Any], repeats: int, warmup: int = 0
) -> tuple[float, list[float], Any]:
    """Median wall seconds over ``repeats`` calls after ``warmup`` untimed ones."""
    result = None
    for _ in range(warmup):
        result = fn()
    samples = []
    for _ in range(repeats):
        seconds, result = timed(fn)
        samples.append(seconds)
    return statistics.median(samples), samples, result


def not_measured(group: str, name: str, why: str, **target: Any) -> Figure:
    """A figure that could not be measured (the reason goes into the table)."""
    return Figure(group=group, name=name, value=None, note=f"not available: {why}", **target)


@contextmanager
def scratch_dir(options: BenchOptions, prefix: str) -> Iterator[Path]:
    """A fresh directory under the scratch root, removed afterwards unless ``keep``."""
    options.scratch.mkdir(parents=True, exist_ok=True)
    path = Path(tempfile.mkdtemp(prefix=prefix, dir=options.scratch))
    try:
        yield path
    finally:
        if not options.keep:
            shutil.rmtree(path, ignore_errors=True)


def free_disk_gb(path: Path) -> float:
    return shutil.disk_usage(path).free / 1024**3


def dir_size_mb(path: Path) -> float:
    total = sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
    return total / MB


def find_eva_root(explicit: Path | None = None) -> Path | None:
    """The EVA checkout: explicit, ``$EVAFLOW_EVA_ROOT``, or ``../shared/eva`` next to the repo."""
    env = os.environ.get("EVAFLOW_EVA_ROOT")
    candidates = [p for p in (explicit, Path(env) if env else None) if p is not None]
    candidates.append(REPO_ROOT.parent / "shared" / "eva")
    return next((p for p in candidates if (p / "data").is_dir()), None)


# --------------------------------------------------------------------------- output


def _format_value(value: float | None, unit: str) -> str:
    if value is None:
        return "-"
    if abs(value) >= 1000 or value == int(value):
        text = f"{value:,.0f}"
    elif abs(value) >= 10:
        text = f"{value:.1f}"
    else:
        text = f"{value:.3g}"
    return f"{text} {unit}".strip()


def _verdict(figure: Figure) -> str:
    return {True: "PASS", False: "FAIL", None: ""}[figure.passed]


def format_table(figures: list[Figure]) -> str:
    """A plain-text table (also readable when piped into a file or a report)."""
    header = ("benchmark", "figure", "value", "target", "result", "note")
    rows = [
        (
            f.group,
            f.name,
            _format_value(f.value, f.unit),
            f"{f.op} {_format_value(f.target, f.unit)}" if f.op and f.target is not None else "",
            _verdict(f),
            f.note,
        )
        for f in figures
    ]
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header) - 1)]
    lines = []
    for row in [header, *rows]:
        cells = [str(c).ljust(w) for c, w in zip(row[:-1], widths, strict=True)]
        lines.append("  ".join([*cells, str(row[-1])]).rstrip())
        if row is header:
            lines.append("  ".join("-" * w for w in widths) + "  ----")
    return "\n".join(lines)


def machine_info() -> dict[str, Any]:
    return {
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "machine": platform.machine(),
    }


def write_results(
    figures: list[Figure], options: BenchOptions, path: Path = RESULTS_PATH, **extra: Any
) -> Path:
    """results.json, written atomically (temporary file, then rename)."""
    payload = {
        "generated_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "options": options.model_dump(mode="json"),
        "machine": machine_info(),
        "figures": [f.as_json() for f in figures],
        "not_met": [f.name for f in figures if f.passed is False],
        **extra,
    }
    _write_json(path, payload)
    return path


def _write_json(path: Path, payload: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(payload, indent=2, default=str) + "\n", encoding="utf-8")
    tmp.replace(path)


def figures_from_json(group: str, data: Any) -> list[Figure]:
    """Figures from another benchmark's result: a list of figure-like dicts, or none.

    Accepts ``{"figures": [...]}`` or a bare list whose items have at least ``name`` and
    ``value`` (``unit``, ``target``, ``op``, ``note`` optional).
    """
    items = data.get("figures") if isinstance(data, dict) else data
    if not isinstance(items, list):
        return []
    figures = []
    for item in items:
        if not isinstance(item, dict) or "name" not in item or "value" not in item:
            continue
        known = {k: item[k] for k in ("unit", "target", "op", "note", "samples") if k in item}
        value = item["value"]
        try:
            figures.append(
                Figure(
                    group=str(item.get("group") or group),
                    name=str(item["name"]),
                    value=float(value) if value is not None else None,
                    **known,
                )
            )
        except (TypeError, ValueError):
            continue
    return figures


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def carried_over(
    path: Path, ran: set[str], changed: ChangedFn = git_changed
) -> tuple[list[Figure], dict[str, Any]]:
    """The figures in ``path`` of groups not in ``ran`` whose code is unchanged since their
    stamp, and the extras that go with them (``stamps``, ``carried_over``, ``stale``).

    ``--only`` re-runs some groups; the others keep their last figures only while they
    still describe HEAD (``benchmarks.stamps``). A group whose code changed, or that was
    never stamped, goes to ``stale`` with the reason and its old figures, out of
    ``figures`` and ``not_met``. Groups re-run now leave ``stale``.
    """
    data = _read_json(path)
    if not data:
        return [], {}
    old = [f for f in figures_from_json("", data) if f.group not in ran]
    stamps = data.get("stamps") or {}
    fresh, reasons = split_stale({g: stamps.get(g) for g in {f.group for f in old}}, changed)
    earlier = data.get("carried_over") or {}
    stale = {g: v for g, v in (data.get("stale") or {}).items() if g not in ran}
    for group, reason in sorted(reasons.items()):
        stale[group] = {
            "reason": reason,
            "stamp": stamps.get(group),
            "measured_at": earlier.get(group) or data.get("generated_at"),
            "figures": [f.as_json() for f in old if f.group == group],
        }
    kept = [f for f in old if f.group in fresh]
    extras: dict[str, Any] = {
        "stamps": fresh,
        "carried_over": {g: earlier.get(g) or data.get("generated_at") for g in sorted(fresh)},
        "stale": stale,
    }
    for key in ("benchmark_seconds", "load_average_at_start"):
        previous = data.get(key) or {}
        extras[key] = {g: previous[g] for g in fresh if g in previous}
    return kept, extras


def mark_side_file(path: Path, group: str, changed: ChangedFn = git_changed) -> str | None:
    """A group's own results file (e.g. ``results_voice.json``): record whether its ``stamp``
    still describes HEAD (``stale``: the reason, or removed when current). Returns it."""
    data = _read_json(path)
    if not data:
        return None
    reason = staleness(group, data.get("stamp"), changed)
    data.pop("stale", None)
    if reason is not None:
        data["stale"] = reason
    _write_json(path, data)
    return reason


def stamp_side_file(path: Path, stamp: dict[str, Any]) -> None:
    """Stamp a group's own results file just written by its run."""
    data = _read_json(path)
    if data:
        data.pop("stale", None)
        _write_json(path, {**data, "stamp": stamp})
