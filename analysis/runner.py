"""Run analyses over stored runs: load once, run each, write tables; failures are data."""

from __future__ import annotations

import json
import math
import traceback
from pathlib import Path
from typing import Any

from analysis import (  # noqa: F401
    ci_vs_k,
    consistency,
    cost_vs_eva,
    key_entities,
    noise_floor,
    robustness,
    sensitivity,
)
from analysis.base import ANALYSES, GROUPS, AnalysisResult, finish
from analysis.data import RunData, load_run_data
from analysis.published import analyze_published
from tasks.store import Store

PUBLISHED = "published"


def selection(which: str) -> list[str]:
    """Analysis names for a CLI choice: ``all``, a group, or one registered name."""
    if which == "all":
        return ANALYSES.names()
    if which in GROUPS:
        return list(GROUPS[which])
    ANALYSES.get(which)  # raises, listing the valid names
    return [which]


def choices() -> list[str]:
    return ["all", PUBLISHED, *sorted(set(GROUPS) | set(ANALYSES.names()))]


def default_out_dir(store: Store, runs: list[str]) -> Path:
    """``<store>/analysis/<runs>`` for a local store, else ``./evaflow-analysis/<runs>``."""
    label = "+".join(runs) if runs else "published"
    base = Path(store.root) if store.local else Path("evaflow-analysis")
    return (base / "analysis" / label) if store.local else base / label


def run_one(
    name: str, data: RunData, out_dir: Path, params: dict[str, Any] | None = None
) -> AnalysisResult:
    """One analysis; an exception becomes an ``error`` result naming the analysis."""
    try:
        result = ANALYSES.get(name)(data, out_dir, dict(params or {}))
    except Exception as exc:  # noqa: BLE001 - one broken analysis must not stop the rest
        detail = traceback.format_exception_only(type(exc), exc)[-1].strip()
        return AnalysisResult(name=name, status="error", message=f"{name}: {detail}")
    return finish(result, out_dir)


def run_analyses(
    store: Store,
    runs: list[str],
    which: str = "all",
    out_dir: Path | None = None,
    params: dict[str, dict[str, Any]] | None = None,
) -> list[AnalysisResult]:
    """Run the selected analyses on ``runs``; writes tables, figures and ``summary.json``."""
    names = selection(which)
    out = out_dir or default_out_dir(store, runs)
    data = load_run_data(store, runs)
    results = [run_one(name, data, out, (params or {}).get(name)) for name in names]
    write_summary(results, out)
    return results


def run_published(
    stats: Path,
    out_dir: Path | None = None,
    store: Store | None = None,
    runs: list[str] | None = None,
    systems: list[str] | None = None,
) -> AnalysisResult:
    """Redraw the published figures and check the claims; place ``runs`` on the front."""
    out = out_dir or (
        default_out_dir(store, runs or []) if store else Path("evaflow-analysis") / PUBLISHED
    )
    overlay = load_run_data(store, runs) if store is not None and runs else None
    result = finish(analyze_published(stats, out, overlay, systems), out)
    write_summary([result], out)
    return result


def json_safe(value: Any) -> Any:
    """NaN and infinities become null, so the output is strict JSON (browsers reject NaN)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(v) for v in value]
    return value


def result_json(result: AnalysisResult) -> dict[str, Any]:
    """The JSON-ready summary of a result (paths, status, headline numbers; no tables)."""
    return json_safe(result.model_dump(mode="json"))  # type: ignore[no-any-return]


def write_summary(results: list[AnalysisResult], out_dir: Path) -> Path:
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / "summary.json"
    payload = [result_json(r) for r in results]
    path.write_text(json.dumps(payload, indent=2, default=str, allow_nan=False), encoding="utf-8")
    return path
