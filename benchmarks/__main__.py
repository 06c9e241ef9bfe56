"""``python -m benchmarks [--quick] [--only NAMES] [--check]``: run the benchmarks, print
the table.

Runs ``store`` (store and analysis at scale), ``run`` (orchestration overhead, Prefect
start-up, memory of a run), ``rescore`` (re-scoring and re-aggregating a stored run of
~1,000 text-mode attempts), ``simulate`` and ``voice`` (each in a child process through
its ``main()``; skipped with a note when the module or its ``main`` is missing). Writes
``benchmarks/results.json``.

Every group is stamped (``stamps`` in results.json; ``stamp`` in results_voice.json and
results_simulate.json) with the commit it ran on, whether the code it measures had
uncommitted changes (``dirty``) and whether the tree did (``tree_dirty``). With ``--only``
the groups not run keep their previous figures only while ``git diff --quiet <stamp> HEAD
-- <paths>`` says the code they measure is unchanged (the paths per group are
``benchmarks.stamps.GROUP_SOURCES``); a group whose code changed, that was measured on
uncommitted changes to it, or that has no stamp, moves to ``stale`` with the reason and is
no longer reported as a current figure. ``--check`` runs nothing: it re-checks the stamps
of the existing results against HEAD and marks the stale groups.
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

from benchmarks import rescore, run_overhead, store_scale  # noqa: F401 - they register themselves
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
    mark_side_file,
    not_measured,
    stamp_side_file,
    write_results,
)
from benchmarks.memory import run_child
from benchmarks.stamps import git_changed, make_stamp, sources

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
    if fresh:
        stamp_side_file(results, make_stamp(name))
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
    parser.add_argument(
        "--check",
        action="store_true",
        help="run nothing: re-check every stamp against HEAD and mark stale groups stale",
    )
    return parser.parse_args(argv)


def _stamp_after(name: str, stamp: dict[str, object]) -> dict[str, object]:
    """The stamp taken when ``name`` started, marked dirty if its code changed meanwhile
    (the tree is shared: a commit can land while a benchmark runs)."""
    end = make_stamp(name)
    if stamp["commit"] != end["commit"] and git_changed(str(stamp["commit"]), sources(name)):
        return {**stamp, "dirty": True, "note": f"its code changed while it ran ({end['commit']})"}
    return {**stamp, "dirty": bool(stamp["dirty"] or end["dirty"])}


def check(out: Path, side_files: dict[str, Path] | None = None) -> int:
    """``--check``: move the groups of ``out`` whose code changed since their stamp to
    ``stale``, and mark each group's own results file (``{group: path}``) the same way."""
    kept, extras = carried_over(out, set())
    try:
        data = json.loads(out.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        data = {}
    data.update(
        figures=[f.as_json() for f in kept],
        not_met=[f.name for f in kept if f.passed is False],
        checked_at=time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime()),
        **extras,
    )
    out.write_text(json.dumps(data, indent=2, default=str) + "\n", encoding="utf-8")
    for group, entry in sorted(extras.get("stale", {}).items()):
        print(f"{out.name}: {group}: stale: {entry['reason']}")
    for group in sorted(extras.get("stamps", {})):
        print(f"{out.name}: {group}: current")
    for name, side in (side_files or {}).items():
        if side.exists():
            reason = mark_side_file(side, name)
            print(f"{side.name}: {name}: {'stale: ' + reason if reason else 'current'}")
    return 0


def main(argv: list[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if args.check:
        return check(args.out, {name: side for name, (_, side) in EXTERNAL.items()})
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
    stamps: dict[str, dict[str, object]] = {}
    for name, bench in chosen:
        stamps[name] = make_stamp(name)
        load[name] = [round(x, 2) for x in os.getloadavg()]
        print(f"running {name} (load average {load[name][0]:.1f}) ...", flush=True)
        started = time.perf_counter()
        try:
            produced = bench(options)
        except Exception as exc:  # noqa: BLE001 - one broken benchmark must not stop the rest
            produced = [not_measured(name, name, f"{type(exc).__name__}: {exc}"[:200])]
        seconds[name] = time.perf_counter() - started
        stamps[name] = _stamp_after(name, stamps[name])
        figures += produced
        print(format_table(produced), flush=True)
    print("\n" + format_table(figures))
    kept, extras = carried_over(args.out, set(names)) if args.only else ([], {})
    path = write_results(
        figures + kept,
        options,
        args.out,
        stamps={**extras.get("stamps", {}), **stamps},
        benchmark_seconds={**extras.get("benchmark_seconds", {}), **seconds},
        load_average_at_start={**extras.get("load_average_at_start", {}), **load},
        **({"carried_over": extras["carried_over"]} if kept else {}),
        **({"stale": extras["stale"]} if extras.get("stale") else {}),
    )
    print(f"\nwrote {path}")
    for group, entry in sorted(extras.get("stale", {}).items()):
        print(f"stale, not carried over: {group}: {entry['reason']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
