"""``python -m benchmarks [--quick] [--only NAMES]``: run the benchmarks, print the table.

Runs ``store`` (store and analysis at scale), ``run`` (orchestration overhead, Prefect
start-up, memory of a run) and the benchmarks other engineers own, ``simulate`` and
``voice`` (each in a child process through its ``main()``; skipped with a note when the
module or its ``main`` is missing). Writes ``benchmarks/results.json``; with ``--only`` the
groups not run keep their previous figures there (listed under ``carried_over``).
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import os
import sys
import time
from pathlib import Path

from benchmarks import run_overhead, store_scale  # noqa: F401 - they register themselves
from benchmarks.common import (
    BENCHMARKS,
    REPO_ROOT,
    RESULTS_PATH,
    BenchmarkFn,
    BenchOptions,
    Figure,
    carried_over,
    figures_from_json,
    format_table,
    free_disk_gb,
    not_measured,
    write_results,
)
from benchmarks.memory import run_child

QUICK_ENV = "EVAFLOW_BENCH_QUICK"
EXTERNAL = {
    "simulate": ("benchmarks.simulate", REPO_ROOT / "benchmarks" / "results_simulate.json"),
    "voice": ("benchmarks.voice", REPO_ROOT / "benchmarks" / "results_voice.json"),
}


def external_benchmark(name: str, options: BenchOptions) -> list[Figure]:
    """Another engineer's benchmark: call its ``main()`` in a child, fold in its figures."""
    module, results = EXTERNAL[name]
    if importlib.util.find_spec(module) is None:
        return [not_measured(name, f"{module}", "module not present yet")]
    try:
        has_main = callable(getattr(importlib.import_module(module), "main", None))
    except Exception as exc:  # noqa: BLE001 - a broken import is reported, not raised
        return [not_measured(name, module, f"import failed: {exc}"[:200])]
    if not has_main:
        return [not_measured(name, module, "module has no main()")]
    before = results.stat().st_mtime if results.exists() else None
    env = {QUICK_ENV: "1"} if options.quick else {}
    child = run_child(f"{module}:main", {}, env=env, stream=True)
    figures = figures_from_json(name, child.value) if child.ok else []
    fresh = results.exists() and results.stat().st_mtime != before
    if not figures and fresh:
        figures = figures_from_json(name, json.loads(results.read_text(encoding="utf-8")))
    if not child.ok:
        why = (child.error or "failed").strip().splitlines()[-1][:200]
        return [not_measured(name, f"{module}.main()", why), *figures]
    if not figures:
        where = results.name if fresh else "its own output"
        note = f"ran in {child.wall_s:.0f} s; figures not in the shared format, see {where}"
        return [Figure(group=name, name=f"{module}.main()", value=None, note=note)]
    return figures


def _external(name: str) -> BenchmarkFn:
    def bench(options: BenchOptions) -> list[Figure]:
        return external_benchmark(name, options)

    return bench


for _name in EXTERNAL:
    BENCHMARKS.add(_name, _external(_name))


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="scaled-down sizes (100k attempts)")
    parser.add_argument("--only", default=None, help=f"comma list of: {', '.join(BENCHMARKS)}")
    parser.add_argument("--repeats", type=int, default=5, help="timed repeats per figure")
    parser.add_argument("--scratch", type=Path, default=Path("/tmp"), help="synthetic stores")
    parser.add_argument("--keep", action="store_true", help="keep synthetic stores")
    parser.add_argument("--eva-root", type=Path, default=None, help="EVA checkout")
    parser.add_argument("--out", type=Path, default=RESULTS_PATH, help="results JSON")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    names = [n.strip() for n in args.only.split(",")] if args.only else list(BENCHMARKS)
    try:
        chosen = [(n, BENCHMARKS.get(n)) for n in names]
    except KeyError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    options = BenchOptions(
        quick=args.quick,
        repeats=args.repeats,
        scratch=args.scratch,
        keep=args.keep,
        eva_root=args.eva_root,
    )
    print(f"free disk in {args.scratch}: {free_disk_gb(args.scratch):.0f} GB", flush=True)
    figures: list[Figure] = []
    seconds: dict[str, float] = {}
    # Other work on the machine skews every figure: keep the load next to the numbers.
    load: dict[str, list[float]] = {}
    for name, bench in chosen:
        load[name] = [round(x, 2) for x in os.getloadavg()]
        print(f"running {name} (load average {load[name][0]:.1f}) ...", flush=True)
        started = time.perf_counter()
        try:
            produced = bench(options)
        except Exception as exc:  # noqa: BLE001 - one broken benchmark must not stop the rest
            produced = [not_measured(name, name, f"{type(exc).__name__}: {exc}"[:200])]
        seconds[name] = time.perf_counter() - started
        figures += produced
        print(format_table(produced), flush=True)
    print("\n" + format_table(figures))
    kept, extras = carried_over(args.out, set(names)) if args.only else ([], {})
    path = write_results(
        figures + kept,
        options,
        args.out,
        benchmark_seconds={**extras.get("benchmark_seconds", {}), **seconds},
        load_average_at_start={**extras.get("load_average_at_start", {}), **load},
        **({"carried_over": extras["carried_over"]} if kept else {}),
    )
    print(f"\nwrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
