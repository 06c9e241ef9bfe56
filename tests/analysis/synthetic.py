"""A synthetic multi-system, multi-condition store, written through the real row builders.

Generative model (what the tests rely on, never specific numbers):
- ``steady``: its draws do not depend on the condition, so every perturbed delta is 0.
- ``fragile``: hears entities well when clean and badly under noise and accent.
- ``mixed``: a milder drop; one trial needs a retry, one trial's final attempt is invalid.
Task completion is more likely the more key entities a call got right. One attempt of
``steady`` carries caller/agent/mixed WAV audio; texts contain HTML special characters.
A second run (``TEXT_RUN``) is a text-mode run: no audio, no segments.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import wave
from typing import Any

import numpy as np

from tasks.composites import composites
from tasks.records import (
    AttemptRecord,
    EntityRecord,
    MetricScore,
    Segment,
    TimelineEvent,
    ToolCallRecord,
    TurnRecord,
)
from tasks.store import Store
from tasks.tables import (
    ATTEMPT_TABLES,
    entity_rows,
    event_rows,
    metric_rows,
    to_table,
    tool_call_rows,
    trial_row,
    turn_rows,
)

RUN = "synth"
TEXT_RUN = "synth-text"
SYSTEMS = ("steady", "fragile", "mixed")
CONDITIONS = ("clean", "noise", "accent")
DOMAINS = ("airline", "itsm")
SCENARIOS_PER_DOMAIN = 5
TRIALS = 3
ENTITY_P = {
    "steady": {"clean": 0.9, "noise": 0.9, "accent": 0.9},
    "fragile": {"clean": 0.95, "noise": 0.15, "accent": 0.35},
    "mixed": {"clean": 0.85, "noise": 0.6, "accent": 0.7},
}
AUDIO_ATTEMPT = "synth/steady/airline/S0/clean/t0/a1"
RETRY_KEY = ("mixed", "airline", "S1", "clean", 0)
INVALID_KEY = ("mixed", "itsm", "S2", "noise", 1)


def wav_bytes(seconds: float = 0.3, rate: int = 8000, freq: float = 440.0) -> bytes:
    t = np.arange(int(seconds * rate)) / rate
    samples = (0.3 * 32767 * np.sin(2 * math.pi * freq * t)).astype("<i2")
    buf = io.BytesIO()
    with wave.open(buf, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(samples.tobytes())
    return buf.getvalue()


def _rng(
    system: str, domain: str, scenario: str, condition: str, trial: int, attempt: int
) -> np.random.Generator:
    # steady's stream ignores the condition, so its perturbed runs repeat the clean ones.
    cond = "any" if system == "steady" else condition
    key = f"{system}|{domain}|{scenario}|{cond}|{trial}|{attempt}"
    return np.random.default_rng(int.from_bytes(hashlib.sha256(key.encode()).digest()[:4], "big"))


def _turns(rng: np.random.Generator, entities: list[EntityRecord], audio: bool) -> list[TurnRecord]:
    turns = [
        TurnRecord(
            turn_id=0,
            role="assistant",
            intended_text="Hello <Acme> & co, how can I help?",
            heard_text="hello acme and co how can i help",
            segments=[Segment(start_s=0.2, end_s=1.8)] if audio else [],
        )
    ]
    t = 2.4
    for i, ent in enumerate(entities, start=1):
        said = f"My code is {ent.expected}, thanks"
        heard = f"my code is {ent.heard}, thanks"
        dur = float(rng.uniform(1.0, 2.0))
        user_seg = [Segment(start_s=t, end_s=t + dur)] if audio else []
        latency = float(rng.uniform(-0.3, 1.4))  # negative: the agent barged in
        a_start = t + dur + latency
        a_dur = float(rng.uniform(1.0, 2.5))
        agent_seg = [Segment(start_s=a_start, end_s=a_start + a_dur)] if audio else []
        turns.append(
            TurnRecord(
                turn_id=i,
                role="user",
                intended_text=said,
                heard_text=heard,
                segments=user_seg,
                interrupted=audio and latency < 0,
            )
        )
        turns.append(
            TurnRecord(
                turn_id=i,
                role="assistant",
                intended_text=f"Got it: {ent.heard}. Fare is <$250> & taxes.",
                heard_text=f"got it {ent.heard} fare is 250 and taxes",
                segments=agent_seg,
                interrupts=audio and latency < 0,
                latency_s=latency if audio else None,
            )
        )
        t = a_start + a_dur + 0.6
    return turns


def _scores(rng: np.random.Generator, accuracy: float) -> list[MetricScore]:
    completed = float(rng.random() < 0.1 + 0.85 * accuracy)
    values = {
        "task_completion": completed,
        "faithfulness": float(rng.choice([0.0, 0.5, 1.0], p=[0.2, 0.2, 0.6])),
        "agent_speech_fidelity": float(rng.choice([1.0, 0.9], p=[0.8, 0.2])),
        "conversation_progression": float(rng.choice([0.0, 0.5, 1.0], p=[0.1, 0.3, 0.6])),
        "turn_taking": float(rng.uniform(0.55, 1.0)),
        "conciseness": float(rng.choice([0.5, 1.0])),
    }
    scores = [
        MetricScore(
            name=k,
            score=v,
            normalized_score=v,
            threshold=0.5,
            details={"explanation": f"synthetic <{k}>", "num_turns": 4},
        )
        for k, v in values.items()
    ]
    scores[4].sub_metrics = {"on_time_rate": MetricScore(name="on_time_rate", score=0.5)}
    return scores + [
        MetricScore(name=k, score=v, normalized_score=v, skipped=v is None)
        for k, v in composites({s.name: s for s in scores}).items()
    ]


def _attempt(
    system: str,
    domain: str,
    scenario: str,
    condition: str,
    trial: int,
    attempt: int,
    run: str,
    mode: str,
) -> tuple[AttemptRecord, list[MetricScore]]:
    rng = _rng(system, domain, scenario, condition, trial, attempt)
    audio = mode == "audio"
    p = ENTITY_P[system][condition]
    entities = []
    for i in range(4):
        code = "".join(rng.choice(list("ABCDEFGHJK23456789"), size=6))
        ok = bool(rng.random() < p) if audio else True
        heard = code if ok else code[:3] + "".join(rng.choice(list("XYZ"), size=3))
        entities.append(
            EntityRecord(turn_id=i + 1, type="code", expected=code, heard=heard, correct=ok)
        )
    turns = _turns(rng, entities, audio)
    accuracy = float(np.mean([e.correct for e in entities]))
    record = AttemptRecord(
        attempt_id=f"{run}/{system}/{domain}/{scenario}/{condition}/t{trial}/a{attempt}",
        run_id=run,
        system=system,
        scenario_id=scenario,
        domain=domain,
        condition=condition,
        trial=trial,
        attempt=attempt,
        mode="audio" if audio else "text",
        clock="virtual" if audio else "none",
        duration_s=turns[-1].end_s or 0.0,
        caller_ended=True,
        turns=turns,
        entities=entities,
        tool_calls=[
            ToolCallRecord(
                index=0,
                turn_id=1,
                tool_name="get_reservation",
                params={"confirmation_number": entities[0].heard},
                response={"status": "success", "note": "<ok> & done"},
                t_call_s=3.0,
                t_response_s=3.1,
            )
        ],
        events=[
            TimelineEvent(t_s=0.0, source="harness", kind="connected"),
            TimelineEvent(
                t_s=3.0, source="agent", kind="tool_call", data={"tool": "get_reservation"}
            ),
        ],
    )
    return record, _scores(rng, accuracy)


def _keys(run: str) -> list[tuple[str, str, str, str, int]]:
    if run == TEXT_RUN:
        return [
            ("steady", d, f"S{s}", "clean", t) for d in DOMAINS for s in range(2) for t in range(2)
        ]
    return [
        (sys_, d, f"S{s}", c, t)
        for sys_ in SYSTEMS
        for d in DOMAINS
        for s in range(SCENARIOS_PER_DOMAIN)
        for c in CONDITIONS
        for t in range(TRIALS)
    ]


def build_rows(run: str = RUN, mode: str = "audio") -> dict[str, list[dict[str, Any]]]:
    rows: dict[str, list[dict[str, Any]]] = {name: [] for name in ATTEMPT_TABLES}
    batch = "b0"
    for key in _keys(run):
        system, domain, scenario, condition, trial = key
        n_attempts = 2 if key in (RETRY_KEY, INVALID_KEY) else 1
        for attempt in range(1, n_attempts + 1):
            record, scores = _attempt(
                system, domain, scenario, condition, trial, attempt, run, mode
            )
            final = attempt == n_attempts
            valid = not (key == RETRY_KEY and attempt == 1) and key != INVALID_KEY
            verdict = {
                "valid": valid,
                "reason": None if valid else "conversation_valid_end",
                "failed_metrics": [] if valid else ["conversation_valid_end"],
            }
            record.status = "ok" if valid else "invalid"
            trial_key = "/".join(map(str, key))
            rows["trials"].append(trial_row(record, batch, trial_key, final, verdict))
            rows["turns"] += turn_rows(record, batch)
            rows["tool_calls"] += tool_call_rows(record, batch)
            rows["events"] += event_rows(record, batch)
            rows["entities"] += entity_rows(record, batch)
            rows["metrics"] += metric_rows(record, batch, scores)
            if record.attempt_id == AUDIO_ATTEMPT:
                rows["audio"] += [
                    {
                        "run_id": run,
                        "batch": batch,
                        "attempt_id": AUDIO_ATTEMPT,
                        "track": track,
                        "format": "wav",
                        "sample_rate": 8000,
                        "duration_s": 0.3,
                        "data": wav_bytes(freq=f),
                    }
                    for track, f in (("caller", 440.0), ("agent", 660.0), ("mixed", 550.0))
                ]
    return rows


def build_store(root: str) -> Store:
    """Write both runs (and their aggregates) into a store at ``root``."""
    from tasks.summary import summarize_run

    store = Store(root)
    for run, mode in ((RUN, "audio"), (TEXT_RUN, "text")):
        rows = build_rows(run, mode)
        store.write_batch(run, "b0", {k: to_table(k, v) for k, v in rows.items()})
        config = {
            "run_id": run,
            "mode": mode,
            "conditions": list(CONDITIONS),
            "trials": TRIALS,
            "note": "<synthetic> & test",
        }
        store.write_single(
            "runs",
            run,
            to_table(
                "runs",
                [
                    {
                        "run_id": run,
                        "batch": "run",
                        "created_at": "2026-01-01T00:00:00+00:00",
                        "evaflow_version": "0.1.0",
                        "config_json": json.dumps(config),
                        "specs_json": json.dumps({"systems": list(SYSTEMS)}),
                    }
                ],
            ),
            name="run",
        )
        summarize_run(store, run)
    return store
