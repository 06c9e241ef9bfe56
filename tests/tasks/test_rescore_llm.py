"""Runs judged by the reference's judge models on the providers' stand-ins (issue 31).

* A text run whose faithfulness judge is rate-limited throughout: each attempt stores a
  faithfulness error with the provider's reason (the other judges score);
  ``evaflow score RUN --failed-only`` then judges exactly those metrics again, once the
  provider answers, and nothing else.
* The session's offline audio run (tests/tasks/conftest.py) judged again with
  ``evaflow score RUN --judge llm --model-list FILE``: the speech-fidelity judges hear every
  kept attempt's stored tracks (Gemini stand-in), faithfulness is Claude's (Anthropic
  stand-in), the other text judges GPT-5.2's (OpenAI stand-in)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from flows.cli import main
from tasks.config import BenchmarkConfig, SystemSpec
from tasks.sources import load_source
from tasks.store import Store
from tasks.trial import expand_trials, run_trial
from tasks.writer import BatchWriter
from tests.tasks.conftest import AUDIO_RUN
from tests.tasks.judges.standins import model_list, placeholder_keys  # noqa: F401

RUN = "judged-by-standins"
OPUS_KEY = "EVAFLOW_TEST_OPUS_KEY"


@pytest.fixture(scope="module")
def standins(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    from tasks.config import ScenarioSource
    from tasks.systems.rehearsal_ears import EARS, rehearsal_corpus
    from tasks.systems.standins.anthropic import FakeAnthropic
    from tasks.systems.standins.gemini import FakeGemini
    from tasks.systems.standins.judge import JudgeBrain
    from tasks.systems.standins.openai_http import FakeOpenAIHTTP
    from tasks.voice.stt import Recognizer

    # A rehearsal's ears: one LM over the run's domain (the agent side's sentences, never a
    # scenario's caller lines). The general LM heard the same tracks 4x slower (21 s per
    # 70 s track, 2026-12-07), which made this the suite's most expensive judging.
    airline = load_source(ScenarioSource(domains=["airline"], limit=1))
    ears = Recognizer(EARS, rehearsal_corpus(airline), tmp_path_factory.mktemp("lm"))
    with (
        FakeOpenAIHTTP(JudgeBrain()) as openai,
        FakeAnthropic(JudgeBrain()) as claude,
        FakeGemini(JudgeBrain(), ears) as gemini,
    ):
        yield {"openai": openai, "anthropic": claude, "gemini": gemini}


def judged_run(root: Path, standins: dict[str, Any]) -> Store:
    entries = model_list(
        openai=standins["openai"].base_url, anthropic=standins["anthropic"].base_url
    )
    for entry in entries:
        if entry["litellm_params"]["model"].startswith("anthropic/"):
            entry["litellm_params"]["api_key"] = f"os.environ/{OPUS_KEY}"
    config = BenchmarkConfig.model_validate(
        {
            "run_id": RUN,
            "store": str(root),
            "systems": [SystemSpec(name="text", agent="text")],
            "mode": "text",
            "scenarios": {"domains": ["airline"], "limit": 1},
            "conditions": ["clean"],
            "trials": 2,
            "judge": {"name": "llm", "params": {"max_retries": 0}},
            "model_list": entries,
        }
    )
    from flows.benchmark import _write_run_row

    store = Store(config.store)
    _write_run_row(store, config)
    scenarios = {s.key: s for s in load_source(config.scenarios)}
    writer = BatchWriter(store, RUN, batch_size=4)
    for spec in expand_trials(config, list(scenarios.values()), None):
        writer.add(run_trial(spec, scenarios[spec.scenario_key]))
    writer.flush()
    return store


def latest(store: Store) -> pd.DataFrame:
    frame = store.query(
        "SELECT attempt_id, metric, score, error, judge, scoring FROM metrics WHERE parent IS NULL",
        [RUN],
    )
    return frame.set_index(["attempt_id", "metric"]).sort_index()


@pytest.mark.usefixtures("placeholder_keys")
def test_rate_limited_judgements_are_errors_and_failed_only_redoes_them(
    tmp_path: Path,
    standins: dict[str, Any],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv(OPUS_KEY, "ratelimit")  # the Anthropic stand-in answers 429
    store = judged_run(tmp_path / "data", standins)
    before = latest(store)
    judged = before[before["judge"] == "llm"]
    errored = judged[judged["error"].notna()]
    assert set(errored.index.get_level_values("metric")) == {"faithfulness"}
    assert errored["error"].str.contains("RateLimitError").all()  # the reason, not a silent 0
    assert len(errored) == 2 and len(judged) > len(errored)  # the other judges scored
    asked = {name: len(standins[name].requests) for name in ("openai", "anthropic")}

    monkeypatch.setenv(OPUS_KEY, "sk-ant-placeholder")  # the provider answers again
    from tasks.llm_router import _ROUTERS

    _ROUTERS.clear()  # `evaflow score` is a new process: its Router reads the key afresh
    argv = ["score", RUN, "--store", str(tmp_path / "data"), "--failed-only", "--json"]
    assert main(argv) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["attempts"] == 2
    new = store.read("metrics", RUN)
    new = new[(new["scoring"] == report["name"]) & new["parent"].isna()]
    redone = set(new["metric"])
    others = set(judged.index.get_level_values("metric")) - {"faithfulness"}
    # Only faithfulness was judged again (with the composites it moves).
    assert "faithfulness" in redone and not redone & others
    assert len(standins["anthropic"].requests) - asked["anthropic"] == 2
    assert len(standins["openai"].requests) == asked["openai"]
    after = latest(store)
    faithfulness = after.xs("faithfulness", level="metric")
    assert faithfulness["error"].isna().all() and (faithfulness["score"] == 3.0).all()
    assert (faithfulness["scoring"] == report["name"]).all()


@pytest.mark.usefixtures("placeholder_keys")
def test_an_audio_run_judged_again_by_the_llm_judges_hears_its_tracks(
    audio_run: Store,
    tmp_path: Path,
    standins: dict[str, Any],
    capsys: pytest.CaptureFixture[str],
) -> None:
    store = audio_run  # this test's own copy of the session's offline audio run
    kept = set(store.read("trials", AUDIO_RUN).query("final and valid")["attempt_id"])
    assert kept
    entries = model_list(
        openai=standins["openai"].base_url,
        anthropic=standins["anthropic"].base_url,
        gemini=standins["gemini"].base_url,
    )
    listed = tmp_path / "models.yaml"
    listed.write_text(json.dumps({"model_list": entries}))
    heard_before = len(standins["gemini"].log)
    argv = ["score", AUDIO_RUN, "--store", store.root, "--judge", "llm",
            "--model-list", str(listed), "--name", "llm", "--json"]  # fmt: skip
    assert main(argv) == 0, capsys.readouterr().err
    rows = store.read("metrics", AUDIO_RUN)
    rows = rows[(rows["scoring"] == "llm") & rows["parent"].isna() & (rows["judge"] == "llm")]
    errors = rows.loc[rows["error"].notna(), ["metric", "error"]].to_dict("records")
    assert errors == [], errors  # every judge answered, the audio ones having heard audio
    for metric in ("agent_speech_fidelity", "user_speech_fidelity", "faithfulness"):
        judged = rows[rows["metric"] == metric]
        assert set(judged["attempt_id"]) == kept and len(judged) == len(kept), metric
    for _, row in rows[rows["metric"].str.endswith("_speech_fidelity")].iterrows():
        where = (row["attempt_id"], row["metric"])
        details = json.loads(row["details_json"])
        audio = details["judge_extra"]["audio"]
        assert audio["source"] == "inline" and audio["seconds_sent"] > 1.0, (where, audio)
        assert details["judge_usage"][0]["model"] == "gemini-3-flash-preview", where
        assert details["judge_usage"][0]["input_audio_tokens"] > 32, where
    heard = [a for entry in standins["gemini"].log[heard_before:] for a in entry["audio"]]
    # Each kept attempt's two tracks: the assistant's for the one judge, the user's for the other.
    assert len(heard) == 2 * len(kept) and all(a.seconds > 1.0 and a.text for a in heard)
    for details_json in rows.loc[rows["metric"] == "faithfulness", "details_json"]:
        faithful = json.loads(details_json)
        assert faithful["judge_usage"][0]["model"] == "claude-opus-4-6"
