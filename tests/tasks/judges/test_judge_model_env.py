"""``JUDGE_MODEL`` (EVA spec 4.1): the model of every text judge, never of an audio judge,
below the command line's ``--judge-model`` and the run config's ``judge.params.models``
and above the reference's defaults; resolved where a command reads its options, so the
stored run records which model judged."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from tasks.config import load_config, parse_config
from tasks.judge_checks import llm_judge_params, llm_judge_problems
from tasks.judges import LLMJudge
from tasks.judges.models import (
    AUDIO_METRICS,
    DEFAULT_MODELS,
    ENV_JUDGE_MODEL,
    JUDGED_METRICS,
    TEXT_METRICS,
)
from tests.flows.test_judge_preflight import cli, entries, one_error_line  # noqa: F401

LIST = [
    {"model_name": n, "litellm_params": {"model": f"openai/{n}", "api_base": "http://x/v1"}}
    for n in ["mine", "cli-model", "file-model", *sorted(set(DEFAULT_MODELS.values()))]
]


def chosen(params: dict[str, Any]) -> dict[str, str]:
    """The model each judged metric gets from these llm judge params."""
    judge = LLMJudge(params)
    return {m: judge.model_name(m) for m in JUDGED_METRICS}


def llm_config(models: dict[str, str] | None = None) -> dict[str, Any]:
    params: dict[str, Any] = {"model_list": LIST}
    if models:
        params["models"] = models
    return {"judge": {"name": "llm", "params": params}}


def test_judge_model_assigns_every_text_judge_and_no_audio_judge() -> None:
    config = parse_config(llm_config(), environ={ENV_JUDGE_MODEL: "mine"})
    got = chosen(config.judge.params)
    assert {m: got[m] for m in TEXT_METRICS} == dict.fromkeys(TEXT_METRICS, "mine")
    assert {m: got[m] for m in AUDIO_METRICS} == {m: DEFAULT_MODELS[m] for m in AUDIO_METRICS}
    assert config.judge.params["models"] == dict.fromkeys(TEXT_METRICS, "mine")  # recorded


@pytest.mark.parametrize("environ", [{}, {ENV_JUDGE_MODEL: "  "}])
def test_without_it_the_reference_defaults_stand(environ: dict[str, str]) -> None:
    config = parse_config(llm_config(), environ=environ)
    assert chosen(config.judge.params) == DEFAULT_MODELS
    assert "models" not in config.judge.params


def test_command_line_over_run_config_over_env_over_default(tmp_path: Path) -> None:
    path = tmp_path / "run.yaml"
    models = {"faithfulness": "file-model", "conciseness": "file-model"}
    path.write_text(yaml.safe_dump(llm_config(models)))
    from_cli = {"judge": {"name": "llm", "params": {"models": {"faithfulness": "cli-model"}}}}
    config = load_config(path, from_cli, environ={ENV_JUDGE_MODEL: "mine"})
    got = chosen(config.judge.params)
    assert got["faithfulness"] == "cli-model"  # the command line
    assert got["conciseness"] == "file-model"  # the run config
    assert got["speakability"] == got["user_behavioral_fidelity"] == "mine"  # JUDGE_MODEL
    assert got["agent_speech_fidelity"] == DEFAULT_MODELS["agent_speech_fidelity"]


def test_offline_and_endpoint_judges_are_left_alone() -> None:
    offline = parse_config({"judge": {"name": "offline"}}, environ={ENV_JUDGE_MODEL: "mine"})
    assert offline.judge.params == {}
    endpoint = {"judge": {"name": "llm", "params": {"base_url": "http://x/v1", "model": "m"}}}
    config = parse_config(endpoint, environ={ENV_JUDGE_MODEL: "mine"})
    assert "models" not in config.judge.params


def test_score_and_validate_resolve_it_below_the_stored_and_given_assignments() -> None:
    stored = {"model_list": LIST, "models": {"conciseness": "file-model"}}
    params = llm_judge_params(
        stored, None, {"faithfulness": "cli-model"}, {ENV_JUDGE_MODEL: "mine"}
    )
    got = chosen(params)
    assert (got["faithfulness"], got["conciseness"], got["speakability"]) == (
        "cli-model",
        "file-model",
        "mine",
    )
    assert got["tts_fidelity"] == DEFAULT_MODELS["tts_fidelity"]


def test_preflight_says_the_missing_model_came_from_judge_model() -> None:
    params = llm_judge_params({"model_list": LIST}, None, {}, {ENV_JUDGE_MODEL: "absent"})
    (line,) = llm_judge_problems(
        params, ["faithfulness", "conciseness"], {ENV_JUDGE_MODEL: "absent"}
    )
    assert "model 'absent' (from JUDGE_MODEL) is not in the model list" in line
    assert line.startswith("judge faithfulness, conciseness:")


def test_evaflow_run_stops_before_any_trial_naming_judge_model(
    cli: Path,  # noqa: F811 - the fixture
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    path = cli / "models.json"
    path.write_text(json.dumps(entries("os.environ/EVAFLOW_TEST_JUDGE_KEY_41")))
    monkeypatch.setenv("EVAFLOW_TEST_JUDGE_KEY_41", "sk-test")
    monkeypatch.setenv(ENV_JUDGE_MODEL, "not-listed")
    argv = ["run", "--judge", "llm", "--model-list", str(path), "--judge-model",
            "faithfulness=gpt-5.2"]  # fmt: skip
    line = one_error_line(argv, capsys)
    judges = line.split(": model ")[0].split("judge ", 1)[1].split(", ")
    # Every text judge the run uses, except the one --judge-model assigned; no audio judge.
    assert judges == ["conversation_progression", "conciseness", "speakability",
                      "transcription_accuracy_key_entities", "user_behavioral_fidelity"]  # fmt: skip
    assert "'not-listed' (from JUDGE_MODEL) is not in the model list" in line
