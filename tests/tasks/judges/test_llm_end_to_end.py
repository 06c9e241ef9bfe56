"""One audio attempt of the reference agent scored with ``--judge llm`` end to end: the
reference's judge assignments through LiteLLM, against a local chat-completions server
standing in for every provider (``tests.fake_llm``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tasks.config import JudgeSpec, ScenarioSource
from tasks.judges.models import AUDIO_METRICS, JUDGED_METRICS
from tasks.scoring import score_attempt
from tasks.sources import load_source
from tasks.trial import simulate_attempt_step
from tests.fake_llm import FakeChatServer, fake_llm_fixture, text_reply  # noqa: F401
from tests.tasks.judges.test_llm import KEY_VAR, STANDINS, reference_list
from tests.tasks.specs import trial_spec


def has_audio(body: dict[str, Any]) -> bool:
    content = body["messages"][-1]["content"]
    return isinstance(content, list) and any(p.get("type") == "input_audio" for p in content)


@pytest.mark.timeout(120)
def test_an_audio_attempt_is_scored_by_the_reference_judges(
    fake_llm: FakeChatServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv(KEY_VAR, "sk-e2e")
    fake_llm.fallback = text_reply(json.dumps({"rating": 3, "turns": []}))
    # No re-asking on the empty 'turns' of the canned answer (its waits are 2**n s).
    params = {"model_list": reference_list(fake_llm.base_url), "empty_turns_retries": 0}
    judge = JudgeSpec(name="llm", params=params)
    scenario = load_source(ScenarioSource(domains=["airline"]))[0]
    spec = trial_spec(
        judge=judge,
        metrics=list(JUDGED_METRICS),
        scenario_id=scenario.id,
        audio_dir=str(tmp_path),
    )
    record = simulate_attempt_step(spec, scenario, 1)
    assert record.audio, "the attempt has tracks for the audio judges"
    scores, _ = score_attempt(spec, scenario, record)
    judged = {s.name: s for s in scores if s.name in JUDGED_METRICS and s.judge == "llm"}
    asked = {m for m in JUDGED_METRICS if m in judged and judged[m].details.get("judge_usage")}
    assert {"faithfulness", "conversation_progression", "user_behavioral_fidelity"} <= asked
    assert set(AUDIO_METRICS) & asked, "an audio judge was asked"
    for name in asked:  # every call answered (no transport error), by its reference model
        assert not (judged[name].error or "").startswith("llm judge:"), judged[name].error
    by_model = {STANDINS[n]: n for n in STANDINS}
    models = {by_model[r.body["model"]] for r in fake_llm.requests}
    assert models == set(STANDINS)  # all four of the reference's judge models were used
    for request in fake_llm.requests:  # audio to the audio model, and only there
        audio_model = request.body["model"] == STANDINS["gemini-3-flash-preview"]
        assert has_audio(request.body) == audio_model
