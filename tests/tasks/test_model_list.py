"""LiteLLM model lists in a run configuration: the reference's shape accepted as it is,
keys lifted into the environment and never held by the configuration."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tasks.config import JudgeSpec, load_config, merge_overrides, parse_config
from tasks.judges.models import DEFAULT_MODELS, judge_model, parse_assignments
from tasks.model_list import (
    Deployment,
    lift_secrets,
    lifted_name,
    missing_variables,
    parse_model_list_text,
    resolve_params,
)
from tasks.stage_providers import judge_provider
from tasks.systems.spec import ConfigError

SECRET = "sk-model-list-secret-5c1e"


def eva_list(key: str = "os.environ/OPENAI_API_KEY") -> list[dict[str, Any]]:
    """An EVA user's list: the reference's four judge model names."""
    return [
        {"model_name": "gpt-5.2", "litellm_params": {"model": "openai/gpt-5.2", "api_key": key}},
        {
            "model_name": "gpt-5.2-medium",
            "litellm_params": {"model": "openai/gpt-5.2", "reasoning_effort": "medium"},
        },
        {
            "model_name": "us.anthropic.claude-opus-4-6-v1",
            "litellm_params": {"model": "bedrock/us.anthropic.claude-opus-4-6-v1"},
            "model_info": {"note": "Bedrock"},
        },
        {
            "model_name": "gemini-3-flash-preview",
            "litellm_params": {"model": "vertex_ai/gemini-3-flash-preview"},
        },
    ]


@pytest.fixture
def lifted_env(monkeypatch: pytest.MonkeyPatch) -> str:
    """The variable entry 0's literal key is lifted to, restored after the test."""
    name = lifted_name(0, "gpt-5.2", "api_key")
    monkeypatch.setenv(name, "placeholder")
    return name


def test_literal_secrets_are_lifted_and_references_kept() -> None:
    entries, env = lift_secrets(eva_list(SECRET))
    assert env == {lifted_name(0, "gpt-5.2", "api_key"): SECRET}
    assert entries[0]["litellm_params"] == {
        "model": "openai/gpt-5.2",
        "api_key": f"os.environ/{lifted_name(0, 'gpt-5.2', 'api_key')}",
    }
    assert entries[1:] == eva_list()[1:]
    assert lift_secrets(eva_list())[1] == {}  # references are not secrets


def test_a_deployment_refuses_a_literal_secret_without_quoting_it() -> None:
    with pytest.raises(ValueError, match="api_key holds a literal secret") as info:
        Deployment.model_validate(eva_list(SECRET)[0])
    assert SECRET not in str(info.value)
    with pytest.raises(ValueError, match="'model'"):
        Deployment.model_validate({"model_name": "x", "litellm_params": {"api_base": "h"}})


def test_list_text_json_yaml_and_proxy_config() -> None:
    assert parse_model_list_text(json.dumps(eva_list()), "EVA_MODEL_LIST") == eva_list()
    proxy = "model_list:\n  - model_name: m\n    litellm_params: {model: openai/m}\n"
    assert parse_model_list_text(proxy, "f.yaml")[0]["model_name"] == "m"
    with pytest.raises(ConfigError, match="EVA_MODEL_LIST: model list is not JSON") as info:
        parse_model_list_text('[{"api_key": "' + SECRET + '",', "EVA_MODEL_LIST")
    assert SECRET not in str(info.value)
    with pytest.raises(ConfigError, match="non-empty list"):
        parse_model_list_text("{}", "EVA_MODEL_LIST")


def test_key_variables_per_provider() -> None:
    gpt, medium, opus, gemini = (Deployment.model_validate(e) for e in eva_list())
    assert missing_variables(gpt, {}) == ["OPENAI_API_KEY"]
    assert missing_variables(medium, {}) == ["OPENAI_API_KEY"]  # openai's default variable
    assert missing_variables(opus, {}) == ["AWS_SECRET_ACCESS_KEY or AWS_PROFILE"]
    assert missing_variables(opus, {"AWS_PROFILE": "p"}) == []
    assert missing_variables(gemini, {}) == ["GOOGLE_APPLICATION_CREDENTIALS"]
    local = Deployment(
        model_name="m", litellm_params={"model": "hosted_vllm/m", "api_base": "http://h/v1"}
    )
    assert missing_variables(local, {}) == []
    assert resolve_params(gpt, {"OPENAI_API_KEY": "k"})["api_key"] == "k"


def test_env_model_list_for_llm_judge_never_stores_the_key(lifted_env: str) -> None:
    environ = {"EVA_MODEL_LIST": json.dumps(eva_list(SECRET))}
    config = parse_config({"judge": {"name": "llm"}}, "command line", environ)
    assert config.model_list is not None and len(config.model_list) == 4
    assert SECRET not in config.model_dump_json()
    assert SECRET not in config.judge.model_dump_json()
    assert config.judge.params["model_list"][0]["litellm_params"]["api_key"] == (
        f"os.environ/{lifted_env}"
    )
    import os

    assert os.environ[lifted_env] == SECRET  # where the judge reads it (workers inherit it)
    # Re-validating the stored configuration gives the same configuration (resumable).
    again = type(config).model_validate_json(config.model_dump_json())
    assert again.fingerprint() == config.fingerprint()


def test_env_model_list_is_ignored_by_offline_runs_and_by_endpoint_judges() -> None:
    environ = {"EVA_MODEL_LIST": json.dumps(eva_list())}
    assert parse_config({}, "cli", environ).model_list is None
    endpoint = {"judge": {"name": "llm", "params": {"base_url": "http://h/v1"}}}
    assert parse_config(endpoint, "cli", environ).model_list is None


def test_config_file_list_wins_over_env_and_errors_do_not_echo_it(
    tmp_path: Any, lifted_env: str
) -> None:
    path = tmp_path / "run.yaml"
    path.write_text(json.dumps({"judge": {"name": "llm"}, "model_list": eva_list()[:1]}))
    environ = {"EVA_MODEL_LIST": json.dumps(eva_list())}
    assert [d.model_name for d in load_config(path, {}, environ).model_list or []] == ["gpt-5.2"]
    bad = [{"model_name": "x", "litellm_params": {"api_key": SECRET}}]  # no 'model'
    path.write_text(json.dumps({"judge": {"name": "llm"}, "model_list": bad}))
    with pytest.raises(ConfigError, match="model_list.0.litellm_params") as info:
        load_config(path, {}, environ)
    assert SECRET not in str(info.value)


def test_command_line_judge_keeps_the_config_files_params() -> None:
    raw = {"judge": {"name": "llm", "params": {"models": {"conciseness": "a"}, "timeout_s": 9}}}
    over = {"judge": {"name": "llm", "params": {"models": {"faithfulness": "b"}}}}
    assert merge_overrides(raw, over)["judge"] == {
        "name": "llm",
        "params": {"models": {"conciseness": "a", "faithfulness": "b"}, "timeout_s": 9},
    }


def test_reference_assignments_and_overrides() -> None:
    # EVA spec 4.1 "Judge models / parameters".
    assert judge_model("faithfulness") == "us.anthropic.claude-opus-4-6-v1"
    assert judge_model("user_behavioral_fidelity") == "gpt-5.2-medium"
    assert judge_model("agent_speech_fidelity") == "gemini-3-flash-preview"
    assert {DEFAULT_MODELS[m] for m in ("conciseness", "conversation_progression")} == {"gpt-5.2"}
    assert judge_model("faithfulness", {"faithfulness": "gpt-5.2"}) == "gpt-5.2"
    assert parse_assignments(["faithfulness=gpt-5.2"]) == {"faithfulness": "gpt-5.2"}
    with pytest.raises(ValueError, match="METRIC=MODEL_NAME"):
        parse_assignments(["faithfulness"])
    with pytest.raises(ValueError, match="bogus has no LLM judge"):
        parse_assignments(["bogus=gpt-5.2"])


def test_judge_provider_of_a_model_list() -> None:
    spec = JudgeSpec(name="llm", params={"model_list": eva_list()})
    assert judge_provider(spec) == "bedrock+openai+vertex_ai"


@pytest.mark.parametrize("where", ["systems.0", "caller"])
def test_an_llm_component_list_must_reference_its_keys(where: str) -> None:
    """An agent's or caller's own list is stored with the run: a literal key is refused
    (naming the field, never the value); references pass."""
    entry = {"model_name": "m", "litellm_params": {"model": "openai/m", "api_key": SECRET}}
    params = {"model": "m", "model_list": [entry]}
    raw: dict[str, Any] = (
        {"systems": [{"name": "mine", "agent": "llm", "params": params}]}
        if where == "systems.0"
        else {"caller": {"name": "llm", "params": params}}
    )
    field = f"'{where}.params.model_list.0.litellm_params.api_key'"
    with pytest.raises(ConfigError, match=field) as info:
        parse_config(raw, "run.yaml")
    assert SECRET not in str(info.value)
    entry["litellm_params"]["api_key"] = "os.environ/MY_KEY"
    config = parse_config(raw, "run.yaml")
    assert SECRET not in config.model_dump_json()
