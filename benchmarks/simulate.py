"""Simulation benchmark: ``python -m benchmarks.simulate [--quick]``.

1. **Virtual clock speed**: the reference cascade and the scripted caller over real audio
   on records of the built-in pack; audio seconds simulated per wall second and per CPU
   second (this process and its children), and where the wall time went (TTS, STT,
   perturbation, agent), from the attempts' ``stage_seconds``.
2. **Real-time timing error vs concurrency** (1, 8, 32, 64 calls at once, spread over
   ``loops_for(n)`` processes of up to ``CALLS_PER_LOOP`` calls each): the harness
   calls the ``delay`` agent (:mod:`tasks.simulate.faults.fault_agents`), served from a separate
   process, which answers every caller turn after a known delay (0.8, 1.2 or 1.6 s) and
   reports the delay it achieved. Per turn: measured latency minus the injected delay and
   minus the agent's report (p50/p99 of the absolute error); per call: how late the
   harness sent its 20 ms frames (p50/p99 of the per-call p99) and how many frames went
   out more than one frame late (a jitter buffer would have dropped them).

Prints a table, writes ``benchmarks/results_simulate.json`` and returns its figures for
``python -m benchmarks``. The figures depend on the machine's load: run it on a quiet one.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
RESULTS = REPO_ROOT / "benchmarks" / "results_simulate.json"
DELAYS_S = [0.8, 1.2, 1.6]
CONCURRENCY = [1, 8, 32, 64]
CALLS_PER_LOOP = 32
STAGES = ("tts", "stt", "perturb", "vad", "agent")


def cpu_seconds() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def pack_scenarios(count: int) -> list[Any]:
    from scenarios.loader import load_scenario_dir

    scenarios = load_scenario_dir(REPO_ROOT / "scenarios" / "pack")
    return scenarios[:count]


def virtual_speed(count: int, cache: Path) -> dict[str, Any]:
    from tasks.simulate import simulate
    from tasks.simulate.config import SimulationConfig
    from tasks.trial import preload_trial_modules

    # What a run's Dask worker imports before its first trial (scipy.signal among them):
    # the figure is the simulation's speed, not the first call's imports.
    preload_trial_modules(audio=True)
    rows = []
    for scenario in pack_scenarios(count):
        config = SimulationConfig(mode="audio", clock="virtual", cache_dir=cache)
        cpu, wall = cpu_seconds(), time.perf_counter()
        record = simulate(scenario, config)
        rows.append(
            {
                "scenario": scenario.key,
                "status": record.status,
                "end_reason": record.end_reason,
                "audio_s": record.duration_s,
                "wall_s": time.perf_counter() - wall,
                "cpu_s": cpu_seconds() - cpu,
                "stages": dict(record.stage_seconds),
            }
        )
        print(
            f"  virtual {scenario.key}: {rows[-1]['audio_s']:.0f} s audio in "
            f"{rows[-1]['wall_s']:.1f} s ({record.end_reason})",
            flush=True,
        )
    audio = sum(r["audio_s"] for r in rows)
    wall = sum(r["wall_s"] for r in rows)
    cpu = sum(r["cpu_s"] for r in rows)
    stages = {s: round(sum(r["stages"].get(s, 0.0) for r in rows), 2) for s in STAGES}
    return {
        "attempts": rows,
        "audio_s": round(audio, 1),
        "wall_s": round(wall, 1),
        "cpu_s": round(cpu, 1),
        "audio_per_wall_s": round(audio / wall, 2) if wall else None,
        "audio_per_cpu_s": round(audio / cpu, 2) if cpu else None,
        "stage_wall_s": stages,
    }


def start_delay_agent() -> tuple[subprocess.Popen[str], str]:
    """The delay agent in its own process, so its work does not load the harness's loop."""
    code = "import benchmarks.simulate as b; b.serve_delay_agent()"
    process = subprocess.Popen(
        [sys.executable, "-c", code], cwd=REPO_ROOT, stdout=subprocess.PIPE, text=True
    )
    assert process.stdout is not None
    return process, process.stdout.readline().strip()


def serve_delay_agent() -> None:
    from tasks.simulate.faults.fault_agents import serve_fault_agent

    async def main() -> None:
        async with serve_fault_agent("delay", delays_s=DELAYS_S, reply_s=1.0) as url:
            # As the harness's calls do (tasks.simulate.clocks.quiet_heap): a full GC pass
            # over the start-up heap would stall all 64 streams this agent serves at once.
            gc.freeze()
            print(url, flush=True)
            await asyncio.Event().wait()

    asyncio.run(main())


def _percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, max(0, round(q / 100 * len(ordered)) - 1))], 2)


async def _calls(url: str, n: int, seconds: float, cache: Path) -> list[Any]:
    from tasks.simulate.clocks.realtime import simulate_realtime_async
    from tasks.simulate.config import SimulationConfig

    scenario = pack_scenarios(1)[0]
    config = SimulationConfig(
        agent=url, mode="audio", clock="realtime", max_duration_s=seconds, cache_dir=cache
    )
    return list(
        await asyncio.gather(*(simulate_realtime_async(scenario, config) for _ in range(n)))
    )


def loops_for(n: int) -> int:
    """Event loops (processes) for ``n`` concurrent calls: one loop paces at most
    ``CALLS_PER_LOOP`` (measured: the harness spends ~0.02 CPU s per call second, so one
    loop, which is one core at best, holds ~50 calls and must keep headroom), and no more
    loops than cores."""
    return max(1, min(os.cpu_count() or 1, -(-n // CALLS_PER_LOOP)))


def serve_calls(url: str, n: int, seconds: float, cache: str) -> None:
    """Child of :func:`spread_calls`: ``n`` calls on this process's loop, one JSON record a
    line on stdout."""
    for record in asyncio.run(_calls(url, n, seconds, Path(cache))):
        print(record.model_dump_json(), flush=True)


def spread_calls(url: str, n: int, seconds: float, cache: Path) -> list[Any]:
    """``n`` concurrent calls spread over :func:`loops_for` processes (the Dask workers of
    a run are processes too), all started together."""
    from tasks.records import AttemptRecord

    loops = loops_for(n)
    if loops == 1:
        return asyncio.run(_calls(url, n, seconds, cache))
    shares = [n // loops + (i < n % loops) for i in range(loops)]
    children = [
        subprocess.Popen(
            [
                sys.executable,
                "-c",
                "import sys, benchmarks.simulate as b; "
                "b.serve_calls(sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4])",
                url,
                str(share),
                str(seconds),
                str(cache),
            ],
            cwd=REPO_ROOT,
            stdout=subprocess.PIPE,
            text=True,
        )
        for share in shares
    ]
    records = []
    for child in children:
        out, _ = child.communicate()
        records += [AttemptRecord.model_validate_json(line) for line in out.splitlines() if line]
    return records


def timing_at(url: str, n: int, seconds: float, cache: Path) -> dict[str, Any]:
    records = spread_calls(url, n, seconds, cache)
    vs_injected, vs_reported, late_p50, late_p99, late_frames, frames = [], [], [], [], 0, 0
    for record in records:
        reports = [e for e in record.events if e.kind == "agent_timing"]
        answered = [t for t in record.turns if t.role == "assistant" and t.turn_id > 0]
        for index, turn in enumerate(answered):
            if turn.latency_s is None or turn.start_s is None:
                continue
            vs_injected.append(abs(turn.latency_s - DELAYS_S[index % len(DELAYS_S)]) * 1000)
            near = [e for e in reports if abs(e.t_s - turn.start_s) < 0.5]
            if near:
                reported = min(near, key=lambda e: abs(e.t_s - turn.start_s)).data["latency_ms"]
                vs_reported.append(abs(turn.latency_s * 1000 - float(reported)))
        pacing: dict[str, Any] = next((e.data for e in record.events if e.kind == "pacing"), {})
        if pacing:
            late_p50.append(pacing["late_p50_ms"])
            late_p99.append(pacing["late_p99_ms"])
            late_frames += pacing["late_frames"]
            frames += pacing["frames"]
    return {
        "calls": n,
        "loops": loops_for(n),
        "ok": sum(r.status == "ok" for r in records),
        "turns": len(vs_injected),
        "error_vs_injected_ms": {
            "p50": _percentile(vs_injected, 50),
            "p99": _percentile(vs_injected, 99),
        },
        "error_vs_reported_ms": {
            "p50": _percentile(vs_reported, 50),
            "p99": _percentile(vs_reported, 99),
        },
        "send_late_ms": {
            "p50": round(statistics.median(late_p50), 2) if late_p50 else None,
            "p99": _percentile(late_p99, 99),
        },
        "late_frames": late_frames,
        "frames": frames,
        "late_frame_share": round(late_frames / frames, 4) if frames else None,
    }


def realtime_timing(levels: list[int], seconds: float, cache: Path) -> list[dict[str, Any]]:
    process, url = start_delay_agent()
    rows = []
    try:
        for n in levels:
            started = time.perf_counter()
            row = timing_at(url, n, seconds, cache)
            row["wall_s"] = round(time.perf_counter() - started, 1)
            rows.append(row)
            print(f"  realtime x{n}: {row}", flush=True)
    finally:
        process.terminate()
        process.wait(timeout=10)
    return rows


def figures(virtual: dict[str, Any], realtime: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = [
        {
            "name": "virtual clock: audio s per wall s",
            "value": virtual["audio_per_wall_s"],
            "unit": "x",
        },
        {
            "name": "virtual clock: audio s per CPU s",
            "value": virtual["audio_per_cpu_s"],
            "unit": "x",
        },
    ]
    for stage, seconds in virtual["stage_wall_s"].items():
        share = seconds / virtual["wall_s"] * 100 if virtual["wall_s"] else None
        out.append({"name": f"virtual clock: wall share {stage}", "value": share, "unit": "%"})
    for row in realtime:
        n = row["calls"]
        out += [
            {
                "name": f"realtime x{n}: latency error vs injected p50",
                "value": row["error_vs_injected_ms"]["p50"],
                "unit": "ms",
            },
            {
                "name": f"realtime x{n}: latency error vs injected p99",
                "value": row["error_vs_injected_ms"]["p99"],
                "unit": "ms",
            },
            {
                "name": f"realtime x{n}: latency error vs agent report p99",
                "value": row["error_vs_reported_ms"]["p99"],
                "unit": "ms",
                "target": 20.0,
                "op": "<=",
            },
            {
                "name": f"realtime x{n}: frame send lateness p99",
                "value": row["send_late_ms"]["p99"],
                "unit": "ms",
            },
            {
                "name": f"realtime x{n}: frames > 20 ms late",
                "value": row["late_frame_share"],
                "unit": "share",
            },
        ]
    return out


def print_table(virtual: dict[str, Any], realtime: list[dict[str, Any]]) -> None:
    print(
        f"\nvirtual clock: {virtual['audio_s']} s of audio in {virtual['wall_s']} s wall, "
        f"{virtual['cpu_s']} s CPU -> {virtual['audio_per_wall_s']}x per wall s, "
        f"{virtual['audio_per_cpu_s']}x per CPU s; stage wall s {virtual['stage_wall_s']}"
    )
    header = (
        f"{'calls':>5} {'ok':>4} {'turns':>5} {'err/inj p50':>11} {'p99':>7} "
        f"{'err/rep p50':>11} {'p99':>7} {'late p50':>8} {'late p99':>8} {'>20ms':>7}"
    )
    print("\nreal-time clock (ms):\n" + header)
    for r in realtime:
        print(
            f"{r['calls']:>5} {r['ok']:>4} {r['turns']:>5} "
            f"{r['error_vs_injected_ms']['p50']!s:>11} {r['error_vs_injected_ms']['p99']!s:>7} "
            f"{r['error_vs_reported_ms']['p50']!s:>11} {r['error_vs_reported_ms']['p99']!s:>7} "
            f"{r['send_late_ms']['p50']!s:>8} {r['send_late_ms']['p99']!s:>8} "
            f"{r['late_frame_share']!s:>7}"
        )


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.simulate", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="1 record, 1 and 8 calls, 15 s")
    default_cache = Path(os.environ.get("EVAFLOW_CACHE", Path.home() / ".cache" / "evaflow"))
    parser.add_argument("--cache", type=Path, default=default_cache, help="LM cache")
    args = parser.parse_args(argv or [])
    quick = args.quick or os.environ.get("EVAFLOW_BENCH_QUICK") == "1"
    started = time.perf_counter()
    print("virtual clock ...", flush=True)
    virtual = virtual_speed(1 if quick else 3, args.cache)
    print("real-time clock ...", flush=True)
    levels = [1, 8] if quick else CONCURRENCY
    realtime = realtime_timing(levels, 15.0 if quick else 25.0, args.cache)
    print_table(virtual, realtime)
    result = {
        "virtual": virtual,
        "realtime": realtime,
        "delays_s": DELAYS_S,
        "cores": os.cpu_count(),
        "load_average": os.getloadavg(),
        "wall_s": round(time.perf_counter() - started, 1),
        "figures": figures(virtual, realtime),
    }
    RESULTS.write_text(json.dumps(result, indent=2), encoding="utf-8")
    print(f"\nwrote {RESULTS}")
    return {"figures": result["figures"]}


if __name__ == "__main__":
    main(sys.argv[1:])
