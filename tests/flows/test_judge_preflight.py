"""``evaflow run --judge llm`` as a user runs it: the model list comes from a file, the run
config or ``EVA_MODEL_LIST``; a missing list, model or key stops the run before any trial
with one line naming the judge and what is missing; the stored run holds no key.

In-process through ``flows.cli.main``; the flow, Prefect and store writes are tripwires
(as in ``test_bad_input``), so a case that gets past preflight fails here.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from flows.cli import main
from tasks.model_list import lifted_name
from tests.fake_llm import FakeChatServer, fake_llm_fixture, text_reply  # noqa: F401

KEY_VAR = "EVAFLOW_TEST_JUDGE_KEY_41"
SECRET = "sk-judge-preflight-secret-9e0b"


def entries(key: str = f"os.environ/{KEY_VAR}", *, opus: bool = True) -> list[dict[str, Any]]:
    names = ["gpt-5.2", "gpt-5.2-medium", "gemini-3-flash-preview"]
    if opus:
        names.append("us.anthropic.claude-opus-4-6-v1")
    return [
        {"model_name": n, "litellm_params": {"model": f"openai/{n}", "api_key": key}} for n in names
    ]


class Started(AssertionError):
    """Preflight let a bad judge configuration through."""


def _trip(what: str) -> Any:
    def trip(*_: Any, **__: Any) -> None:
        raise Started(f"reached {what}")

    return trip


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    import flows.cli
    import flows.env
    from tasks.store import Store

    monkeypatch.setattr(flows.cli, "execute", _trip("the flow (Prefect)"))
    monkeypatch.setattr(flows.env, "configure_prefect", _trip("Prefect"))
    monkeypatch.setattr(Store, "_write_atomic", _trip("a store write"))
    monkeypatch.setenv("EVAFLOW_SYSTEMS_PATH", "")
    monkeypatch.delenv("EVA_MODEL_LIST", raising=False)
    monkeypatch.delenv(KEY_VAR, raising=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _list_file(root: Path, items: list[dict[str, Any]]) -> str:
    path = root / "models.json"
    path.write_text(json.dumps(items))
    return str(path)


def one_error_line(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    code = main(argv)
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2, f"exit {code}: {err}"
    assert len(err) == 1 and err[0].startswith("error: "), err
    return err[0]


def test_no_model_list_names_where_to_put_one(
    cli: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    line = one_error_line(["run", "--judge", "llm"], capsys)
    assert "EVA_MODEL_LIST" in line and "--model-list" in line


def test_missing_key_names_the_judges_and_the_variable(
    cli: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    models = _list_file(cli, entries())
    line = one_error_line(["run", "--judge", "llm", "--model-list", models], capsys)
    assert f"environment variable {KEY_VAR} is not set" in line
    assert "faithfulness (us.anthropic.claude-opus-4-6-v1)" in line
    assert "agent_speech_fidelity (gemini-3-flash-preview)" in line


def test_missing_key_from_eva_model_list(
    cli: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EVA_MODEL_LIST", json.dumps(entries()))
    line = one_error_line(["run", "--judge", "llm", "--mode", "text"], capsys)
    assert KEY_VAR in line and "user_behavioral_fidelity (gpt-5.2-medium)" in line
    assert "speech_fidelity" not in line  # text mode: the audio judges have nothing to hear


def test_judge_model_not_in_the_list(
    cli: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KEY_VAR, "k")
    models = _list_file(cli, entries(opus=False))
    line = one_error_line(["run", "--judge", "llm", "--model-list", models], capsys)
    assert "judge faithfulness: model 'us.anthropic.claude-opus-4-6-v1' is not in" in line
    assert "--judge-model faithfulness=NAME" in line
    # The override the message suggests is what makes the run pass preflight.
    argv = ["run", "--model-list", models, "--judge-model", "faithfulness=gpt-5.2", "--check"]
    assert main(argv) == 0, capsys.readouterr().err


def test_judge_model_override_in_the_run_config(
    cli: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KEY_VAR, "k")
    config = cli / "run.yaml"
    judge = {"name": "llm", "params": {"models": {"conversation_progression": "nope"}}}
    config.write_text(json.dumps({"judge": judge, "model_list": entries()}))
    line = one_error_line(["run", "--config", str(config)], capsys)
    assert "judge conversation_progression: model 'nope'" in line
    fixed = ["run", "--config", str(config), "--judge-model", "conversation_progression=gpt-5.2"]
    assert main([*fixed, "--check"]) == 0, capsys.readouterr().err


def test_judge_model_needs_the_llm_judge(cli: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["run", "--judge", "offline", "--judge-model", "faithfulness=gpt-5.2"]
    assert "--judge-model" in one_error_line(argv, capsys)


def test_stored_run_row_holds_no_key(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """What ``run`` stores (the runs row: config_json, specs_json) with a literal key in
    ``EVA_MODEL_LIST``: the key's environment reference, never the key."""
    from flows.benchmark import _write_run_row
    from tasks.config import parse_config
    from tasks.store import Store

    for i, entry in enumerate(entries(SECRET)):  # the lifted keys: restored after the test
        monkeypatch.setenv(lifted_name(i, entry["model_name"], "api_key"), "placeholder")
    lifted = lifted_name(0, "gpt-5.2", "api_key")
    monkeypatch.setenv("EVA_MODEL_LIST", json.dumps(entries(SECRET)))
    raw = {"judge": {"name": "llm"}, "store": str(tmp_path / "store"), "run_id": "r1"}
    import os

    config = parse_config(raw, "command line", os.environ)
    _write_run_row(Store(config.store), config)
    stored = Store(config.store).read("runs", "r1")
    text = stored.to_json()
    assert SECRET not in text and f"os.environ/{lifted}" in json.loads(text)["config_json"]["0"]
    assert os.environ[lifted] == SECRET


def test_bad_judge_params_name_the_field_not_the_value(
    cli: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = cli / "run.yaml"
    config.write_text(json.dumps({"judge": {"name": "llm", "params": {"timeout_s": SECRET}}}))
    line = one_error_line(["run", "--config", str(config)], capsys)
    assert "judge.params" in line and "timeout_s" in line and SECRET not in line


def test_judges_validate_with_the_llm_judge_prints_agreement(
    cli: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    eva_root: Path,
    fake_llm: FakeChatServer,
) -> None:
    """``evaflow judges validate --judge llm`` on the human-labelled faithfulness set, the
    list from ``EVA_MODEL_LIST`` at a local stand-in: every row reaches the faithfulness
    model and the agreement is printed. The stand-in always answers 3, so the accuracy is
    the share of human 3s (the set has other ratings too: strictly between 0 and 1)."""
    dims = [
        "fabricating_tool_parameters",
        "misrepresenting_tool_result",
        "violating_policies",
        "failing_to_disambiguate",
        "hallucination",
    ]
    answer = {"dimensions": {d: {"rating": 3, "flagged": False} for d in dims}, "rating": 3}
    fake_llm.fallback = text_reply(json.dumps(answer))
    items = entries()
    for item in items:
        item["litellm_params"]["api_base"] = fake_llm.base_url
    monkeypatch.setenv("EVA_MODEL_LIST", json.dumps(items))
    argv = ["judges", "validate", "--set", str(eva_root / "judge_validation"), "--judge", "llm"]
    argv += ["--metric", "faithfulness"]
    assert "EVAFLOW_TEST_JUDGE_KEY_41" in one_error_line(argv, capsys)  # no key yet
    assert not fake_llm.requests
    monkeypatch.setenv(KEY_VAR, "sk-validate")
    assert main([*argv, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)["metrics"]["faithfulness"]
    models = {r.body["model"] for r in fake_llm.requests}
    assert models == {["openai", "us.anthropic.claude-opus-4-6-v1"][1]}
    rows = [json.loads(line) for line in (eva_root / "judge_validation/faithfulness.jsonl").open()]
    assert len(fake_llm.requests) == len(rows) and report["errors"] == 0
    assert report["n"] > 0 and 0.0 < report["accuracy"] < 1.0
