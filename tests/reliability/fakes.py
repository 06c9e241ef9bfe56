"""A deterministic fake trial: 1-3 attempts with turns, tool calls, entities, audio files
and metric scores (composites included), all drawn from the trial's seed, so a run and
its resumed copy must store identical tables."""

from __future__ import annotations

import random
import wave
from pathlib import Path

import numpy as np

from scenarios.models import AgentConfig, Scenario
from tasks.records import (
    AttemptRecord,
    AudioRef,
    EntityRecord,
    MetricScore,
    Segment,
    TimelineEvent,
    ToolCallRecord,
    TurnRecord,
)
from tasks.trial import AttemptResult, TrialResult, TrialSpec, audio_dir_for


def tiny_scenarios(n_per_domain: int = 2) -> list[Scenario]:
    """Minimal scenarios: the store and the writer only need ids and domains."""
    return [
        Scenario(
            id=f"{i}.1",
            domain=domain,  # type: ignore[arg-type]
            current_date_time="2026-03-17 10:45 CST",
            user_goal={},
            user_config={},
            initial_db={},
            expected_db={},
            agent=AgentConfig(id=f"{domain}_agent"),
        )
        for domain in ("airline", "itsm")
        for i in range(1, n_per_domain + 1)
    ]


def _wav(path: Path, rng: random.Random, seconds: float = 0.05, rate: int = 8000) -> float:
    path.parent.mkdir(parents=True, exist_ok=True)
    samples = np.array([rng.randint(-3000, 3000) for _ in range(int(seconds * rate))], np.int16)
    with wave.open(str(path), "wb") as fh:
        fh.setnchannels(1)
        fh.setsampwidth(2)
        fh.setframerate(rate)
        fh.writeframes(samples.tobytes())
    return seconds


def _scores(rng: random.Random) -> list[MetricScore]:
    from tasks.scoring import composite_scores

    def level() -> float:
        return rng.choice([0.0, 0.5, 1.0])

    turn = MetricScore(name="turn_taking", score=round(rng.uniform(0.5, 1.0), 3))
    turn.normalized_score = turn.score
    turn.sub_metrics = {"late": MetricScore(name="late", score=float(rng.randint(0, 3)))}
    scores = [
        MetricScore(name="task_completion", score=float(rng.random() < 0.6)),
        MetricScore(name="faithfulness", score=level(), normalized_score=level()),
        MetricScore(name="agent_speech_fidelity", score=round(rng.uniform(0.9, 1.0), 3)),
        MetricScore(name="conversation_progression", score=level()),
        MetricScore(name="conciseness", score=level()),
        turn,
    ]
    return [*scores, *composite_scores(scores)]


def _turns(spec: TrialSpec, n_turns: int) -> list[TurnRecord]:
    return [
        TurnRecord(
            turn_id=(i + 1) // 2,
            role="assistant" if i % 2 == 0 else "user",
            intended_text=f"turn {i} of {spec.trial_key}",
            heard_text=f"turn {i} heard",
            segments=[Segment(start_s=i * 3.0, end_s=i * 3.0 + 2.0)],
            latency_s=0.8 if i % 2 == 0 else None,
        )
        for i in range(n_turns)
    ]


def _audio(spec: TrialSpec, attempt: int, rng: random.Random) -> list[AudioRef]:
    """One real WAV in the attempt's scratch folder, as the simulator leaves it."""
    folder = audio_dir_for(spec, attempt)
    if folder is None:
        return []
    seconds = _wav(folder / "mixed.wav", rng)
    path = str(folder / "mixed.wav")
    return [AudioRef(track="mixed", path=path, sample_rate=8000, duration_s=seconds)]


def _attempt(spec: TrialSpec, attempt: int, rng: random.Random, valid: bool) -> AttemptResult:
    n_turns = rng.randint(2, 6)
    call = ToolCallRecord(
        index=0,
        turn_id=1,
        tool_name="get_reservation",
        params={"confirmation_number": "ZK3FFW"},
        response={"status": "success"},
        t_call_s=3.1,
        t_response_s=3.2,
    )
    entity = EntityRecord(
        turn_id=1, type="code", expected="ZK3FFW", heard="ZK3FFW", correct=rng.random() < 0.8
    )
    record = AttemptRecord(
        attempt_id=spec.attempt_id(attempt),
        run_id=spec.run_id,
        system=spec.system.name,
        scenario_id=spec.scenario_id,
        domain=spec.domain,
        condition=spec.condition,
        trial=spec.trial,
        attempt=attempt,
        mode="audio",
        status="ok" if valid else "invalid",
        duration_s=n_turns * 3.0,
        wall_s=round(rng.uniform(0.1, 1.0), 3),
        turns=_turns(spec, n_turns),
        tool_calls=[call],
        events=[TimelineEvent(t_s=0.0, source="harness", kind="start")],
        entities=[entity],
        audio=_audio(spec, attempt, rng),
        stage_seconds={"tts": 0.1, "stt": 0.2},
    )
    validation = {
        "valid": valid,
        "reason": "ok" if valid else "validation_failed",
        "should_retry": not valid,
        "failed_metrics": [] if valid else ["user_behavioral_fidelity"],
    }
    return AttemptResult(record=record, scores=_scores(rng), validation=validation)


def fake_trial(spec: TrialSpec, scenario: Scenario) -> TrialResult:
    """A deterministic trial (from the trial seed): 1-3 attempts, turns, audio, scores."""
    rng = random.Random(spec.seed)
    attempts = []
    for number in range(1, spec.max_attempts + 1):
        valid = rng.random() < 0.7 or number == spec.max_attempts and rng.random() < 0.5
        attempts.append(_attempt(spec, number, rng, valid))
        if valid:
            break
    return TrialResult(spec=spec, attempts=attempts)
