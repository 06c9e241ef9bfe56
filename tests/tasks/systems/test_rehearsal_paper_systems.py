"""Issue 29, item 7: the EVA-Bench paper's twelve systems, side by side in ONE rehearsal run.

``run_benchmark`` with ``rehearse: true`` and the twelve catalogue names exactly as shipped
(the catalogue's own model ids, voices and parameters): the flow starts one stand-in per
provider protocol, points every component's host at them with placeholder keys, and runs
EVA ``airline/5.2.2`` (clean, one trial, real-time clock) through a real Pipecat bot per
system. The stand-ins hear only the audio or text each service sends (one recogniser over
the run's domains) and decide with the reference policy of the scenario they infer from the
request; every tool call goes through the trial's bridge. A system completes the record
only if its final DB hash equals the expected one.

This is also the end-to-end proof of each architecture's adapters (Pipecat's OpenAI
Realtime and Gemini Live services, the Gemini audio-in hybrid, Ultravox) and of how each is
scored: the run uses the default metric set, and every attempt is checked against the
reference's rules for its pipeline (EVA spec 4.1-4.3).

Each system must complete at least one EVA record (issue 29's bar). The stand-ins' ears are
honest PocketSphinx, which misses a spelled code now and then (measured 2026-12-06 over
four runs: 36/48 at the first call, 11/16 at later ones, before the ears' margins were
measured: tasks.systems.rehearsal_ears.SPAN_AFTER_S); a system that did not complete the record
gets another call in a further run (another seed), up to five calls, and how many
completed at the first call is printed: a measurement, not a target.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pandas as pd
import pytest

from flows.benchmark import run_benchmark
from tasks.config import BenchmarkConfig
from tasks.judges.inputs import TraceItem
from tasks.judges.offline.entities import CallerEntity
from tasks.judges.offline.speech_context import ContextRule
from tasks.metrics.base import DEFAULT_METRICS
from tasks.store import Store
from tasks.systems.catalogue import load_catalogue
from tasks.systems.pipecat_process import bot_python

RECORD = "airline/5.2.2"
RUNS = tuple(f"rehearsal-paper{suffix}" for suffix in ("", "-2", "-3", "-4", "-5"))
# Six calls at a time. Measured on 2 cores while the stand-ins' ears decoded in the run's
# process: three at a time a load average of 0.65 and 11/12 completed at the first call;
# six at a time 5/12 (PocketSphinx keeps the GIL while it decodes, stalling every call's
# frames). With the ears in worker processes (tasks.systems.rehearsal_ears, 2026-12-07):
# six at a time a load of 1.75 (peak 2.3), 12/12 completed at the first call and 259 s for
# the twelve, against 10/12 and 403-480 s for three at a time. Twelve calls in six slots
# leave no room for a regeneration (one was common until 2026-12-07: a caller sentence sent
# late in a burst was stored as 20 ms, see call_result.speech_spans), which
# then costs a third wave; seven slots hold two (2026-12-07, standalone: 12/12 at the first
# call, one regeneration, 202 s and a mean load of 1.77, peak 2.0; 265 s at six).
CONCURRENT_CALLS = 7
NOT_FOR_S2S = {"stt_wer", "speakability", "tts_fidelity"}  # EVA spec 4.6
NOT_FOR_AUDIO_LLM = {"stt_wer"}

pytestmark = pytest.mark.skipif(
    not bot_python().exists(), reason="the Pipecat environment is missing: run `make pipecat-env`"
)


def paper_systems() -> list[str]:
    catalogue = load_catalogue()
    return sorted(n for n in catalogue if catalogue.get(n).paper_id)


def config(
    eva_root: Path, store: Path, systems: list[str], run_id: str = RUNS[0], seed: int = 0
) -> BenchmarkConfig:
    return BenchmarkConfig.model_validate(
        {
            "store": str(store),
            "run_id": run_id,
            "seed": seed,
            "rehearse": True,
            "scenarios": {"eva_root": str(eva_root), "records": [RECORD]},
            "systems": systems,
            "conditions": ["clean"],
            "trials": 1,
            # A simulator or harness fault (the caller's speech misheard by the judge, a
            # harness behind its clock while bots start) regenerates the attempt, as in any
            # run, up to the default three attempts (the reference's max_rerun_attempts); an
            # agent's failure is kept and scored.
            "max_attempts": 3,
            "clock": "realtime",
            "max_duration_s": 240,
            "metrics": None,
            "report": False,
            "runner": {"kind": "threads", "workers": CONCURRENT_CALLS},
        }
    )


def outcome(store: Store, run_id: str) -> tuple[pd.DataFrame, list[str]]:
    """The run's final attempts (``done`` = valid and the expected DB) and a printable log."""
    trials = store.read("trials", run_id)
    finals = trials[trials["final"]].copy()
    finals["done"] = finals["valid"].astype(bool) & (
        finals["final_db_hash"] == finals["expected_db_hash"]
    )
    lines = [
        f"{r.system}: a{r.attempt} {r.status} {r.end_reason} valid={r.valid} "
        f"completed={r.done} {r.duration_s:.1f} s"
        for r in finals.sort_values("system").itertuples()
    ]
    calls = store.query(
        f"SELECT attempt_id, tool_name, params_json, status FROM tool_calls "
        f"WHERE run_id = '{run_id}'"
    )
    lines += [
        f"  {c.attempt_id.split('/')[1]} {c.tool_name} {c.params_json} {c.status}"
        for c in calls.itertuples()
    ]
    return finals, lines


@pytest.mark.solo  # seven real-time calls at a time: `make test` runs it alone
@pytest.mark.timeout(1200)
def test_the_twelve_paper_systems_complete_an_eva_record_in_one_rehearsal(
    eva_root: Path, tmp_path: Path
) -> None:
    systems = paper_systems()
    assert len(systems) == 12, systems
    store = Store(str(tmp_path / "store"))
    started = time.perf_counter()
    summary = run_benchmark(config(eva_root, tmp_path / "store", systems))
    first, lines = outcome(store, RUNS[0])
    finals = [first]
    assert bool(store.read("runs", RUNS[0])["rehearsal"].iloc[0]), "not stored as a rehearsal"
    assert first["rehearsal"].all() and summary.attempts >= 12
    assert sorted(first["system"]) == systems, "\n".join(lines)
    completed = set(first.loc[first["done"], "system"])
    for again, run_id in enumerate(RUNS[1:], start=1):
        left = [s for s in systems if s not in completed]
        if not left:
            break
        run_benchmark(config(eva_root, tmp_path / "store", left, run_id, seed=again))
        more, more_lines = outcome(store, run_id)
        finals.append(more)
        completed |= set(more.loc[more["done"], "system"])
        lines += [f"run {again + 1}:", *more_lines]
    report = "\n".join(lines) + (
        f"\ncompleted at the first call: {int(first['done'].sum())}/12"
        f"\nwall {time.perf_counter() - started:.1f} s"
    )
    print(report)
    trials = store.query("SELECT status FROM trials WHERE final")
    assert not trials["status"].isin(["agent_error", "infra_error"]).any(), report
    assert completed == set(systems), f"never completed: {set(systems) - completed}\n{report}"
    # A trial that kept no valid attempt is not judged (validation rows only, by design).
    s2s_judged = 0
    for row in pd.concat(finals).itertuples():
        if row.valid:
            judged = check_scored_as_its_pipeline(
                store, row.attempt_id, row.pipeline, row.system, row.done
            )
            s2s_judged += judged if row.pipeline == "s2s" and row.done else 0
    # The audio-native rule judged entities of the speech-to-speech calls, not vacuously
    # (per call it depends on the caller's ears: see check_scored_as_its_pipeline).
    assert s2s_judged > 0, report


def check_scored_as_its_pipeline(
    store: Store, attempt_id: str, pipeline: str, system: str, completed: bool
) -> int:
    """Issue 29 item 4: the default metric set on a real attempt leaves out the metrics the
    reference does not run for its pipeline; an audio-native attempt's agent speech fidelity
    judges the entities of the caller's turns and the tool responses the agent speaks
    (spec 4.3); a speech-to-speech adapter's usage reaches the store. Returns how many
    entities the audio-native rule judged."""
    architecture = load_catalogue().get(system).architecture
    assert pipeline == {"cascade": "cascade", "hybrid": "audio_llm", "s2s": "s2s"}[architecture]
    where = f"WHERE attempt_id = '{attempt_id}'"
    metrics = store.query(f"SELECT metric, details_json, error FROM metrics {where}")
    names = set(metrics["metric"])
    # Every metric had what it judges: the bot reported what its STT heard and what its
    # model meant to say (agent_text), so no metric found the trace or transcript empty.
    failed = metrics[metrics["error"].notna()]
    assert failed.empty, (system, dict(zip(failed["metric"], failed["error"], strict=True)))
    spoken = store.query(f"SELECT role, intended_text, heard_text, interrupts FROM turns {where}")
    # An agent turn that only carries on the audio of a response the caller cut into has
    # no text of its own (the text came with the turn it began in).
    agent = spoken[(spoken["role"] == "assistant") & ~spoken["interrupts"].astype(bool)]
    said = agent["intended_text"].fillna("").str.strip().astype(bool)
    if "realtime" in load_catalogue().get(system).components:
        # Ultravox reports its words as it speaks them, so a long answer's text is complete
        # (and filed, by arrival) only once the caller may have begun her next turn.
        assert pipeline == "s2s" or said.mean() >= 0.5, (system, agent)
    elif pipeline != "s2s":  # an s2s model is judged on its audio, never on a text
        assert said.all(), (system, agent)
    if pipeline == "cascade":
        caller = spoken[spoken["role"] == "user"]
        assert caller["heard_text"].fillna("").str.strip().astype(bool).any(), (system, caller)
    left_out = {"cascade": set(), "audio_llm": NOT_FOR_AUDIO_LLM, "s2s": NOT_FOR_S2S}[pipeline]
    assert left_out.isdisjoint(names), (system, names & left_out)
    assert set(DEFAULT_METRICS) - left_out <= names, (system, set(DEFAULT_METRICS) - names)
    if pipeline == "cascade":
        return 0
    details = metrics.set_index("metric").loc["agent_speech_fidelity", "details_json"]
    fidelity = json.loads(details)
    assert fidelity["judge_extra"]["entities_from"] == "context", (system, fidelity)
    judged = [
        CallerEntity.model_validate(e)
        for row in json.loads(fidelity["judge_response"])["turns"]
        for e in row.get("entities", [])
    ]
    turns = store.query(f"SELECT turn_id, role, intended_text FROM turns {where}")
    calls = store.query(f"SELECT turn_id, response_json FROM tool_calls {where}")
    trace = [
        TraceItem(kind="user", turn_id=int(t.turn_id), text=t.intended_text)
        for t in turns.itertuples()
        if t.role == "user"
    ] + [
        TraceItem(
            kind="tool_response", turn_id=int(c.turn_id), response=json.loads(c.response_json)
        )
        for c in calls.itertuples()
    ]
    in_context = ContextRule(trace).keep
    assert all(in_context(e) for e in judged), (system, judged)
    # A completed call read the reservation back (codes, names, dates): entities to judge.
    # An audio-in LLM's turns are its own text; an s2s model's are the caller's ears'
    # transcript of its audio, which can miss a spelled readback (2026-12-07: a completed
    # gpt-realtime-mini call heard "your reservation y p the for me ..."): for s2s the
    # test requires judged entities over the run's completed s2s calls instead.
    assert judged or not completed or pipeline == "s2s", (system, fidelity)
    if pipeline == "s2s":
        usage = store.query(f"SELECT data_json FROM events {where} AND kind = 'usage'")
        events = [json.loads(d) for d in usage["data_json"]]
        assert events and sum(e["output_tokens"] for e in events) > 0, system
        assert sum(e["output_audio_s"] for e in events) > 1.0, system
    return len(judged)
