"""An LLM component's model parameters (:mod:`tasks.llm_chat`): an endpoint or a model list
entry as a LiteLLM deployment, errors that never echo a value, and the one parser the
``llm`` agent, the ``llm`` caller and the ``llm`` judge share."""

from __future__ import annotations

from typing import Any

import pytest

from tasks.judges.llm import JudgeParamsError, LLMJudgeParams, parse_judge_params
from tasks.llm_chat import (
    NO_KEY,
    ChatEndpoint,
    ChatModel,
    EndpointParamsError,
    endpoint_deployment,
    parse_params,
)
from tests.fake_llm import FakeChatServer, fake_llm_fixture, text_reply  # noqa: F401

SECRET = "sk-chat-params-secret-value"


def listed(name: str = "house", model: str = "anthropic/claude-haiku-4-5") -> dict[str, Any]:
    return {"model_name": name, "litellm_params": {"model": model, "api_key": "os.environ/K"}}


def test_an_endpoint_is_an_openai_deployment_at_its_base_url() -> None:
    endpoint = ChatEndpoint(base_url="http://h:1/v1", model="Qwen/Qwen3.5-27B", api_key_env="K")
    (deployment,) = endpoint.deployments()
    assert deployment.model_name == "Qwen/Qwen3.5-27B"
    assert deployment.litellm_params == {
        "model": "openai/Qwen/Qwen3.5-27B",
        "api_base": "http://h:1/v1",
        "api_key": "os.environ/K",
    }
    keyless = endpoint_deployment("m", "http://h:1/v1", None)
    assert keyless.litellm_params["api_key"] == NO_KEY


def test_request_params_and_policy_come_from_the_endpoint() -> None:
    endpoint = ChatEndpoint(temperature=None, max_tokens=9, timeout_s=5, max_retries=1)
    assert endpoint.request_params() == {"max_tokens": 9}
    assert (endpoint.policy().num_retries, endpoint.policy().timeout_s) == (1, 5.0)
    with_body = ChatEndpoint(extra_body={"top_p": 0.5})
    assert with_body.request_params() == {"temperature": 0.0, "extra_body": {"top_p": 0.5}}


def test_a_model_list_entry_names_provider_and_key() -> None:
    endpoint = ChatEndpoint(model="house", model_list=[listed()])  # type: ignore[list-item]
    model = ChatModel(endpoint)
    assert model.model == "claude-haiku-4-5"  # what usage rows and prices key on
    assert model.api_base is None
    assert [d.model_name for d in endpoint.deployments()] == ["house"]


@pytest.mark.parametrize(
    ("raw", "says"),
    [
        ({"model": "other", "model_list": [listed()]}, "'other' is not in the model list"),
        ({"model": "house", "model_list": [listed()], "base_url": "http://h/v1"}, "base_url"),
        ({"model": "house", "model_list": [listed()], "api_key_env": "K"}, "api_key_env"),
    ],
)
def test_a_model_list_and_an_endpoint_do_not_mix(raw: dict[str, Any], says: str) -> None:
    with pytest.raises(EndpointParamsError, match=says):
        parse_params(ChatEndpoint, raw, "llm agent")


def test_bad_params_name_fields_and_leave_values_out() -> None:
    with pytest.raises(EndpointParamsError) as info:
        parse_params(ChatEndpoint, {"api_key": SECRET, "timeout_s": -1}, "my component")
    text = str(info.value)
    assert text.startswith("my component params:")
    assert "api_key" in text and "timeout_s" in text and "api_key_env" in text
    assert SECRET not in text and "-1" not in text
    assert parse_params(ChatEndpoint, None, "x") == ChatEndpoint()


def test_a_literal_key_in_a_model_list_is_refused_without_echo() -> None:
    entry = {"model_name": "m", "litellm_params": {"model": "openai/m", "api_key": SECRET}}
    with pytest.raises(EndpointParamsError, match="literal secret") as info:
        parse_params(ChatEndpoint, {"model": "m", "model_list": [entry]}, "llm caller")
    assert SECRET not in str(info.value)


def test_the_llm_judge_parses_with_the_same_parser() -> None:
    with pytest.raises(JudgeParamsError, match=r"^llm judge params: temperature") as info:
        parse_judge_params({"temperature": SECRET})
    assert SECRET not in str(info.value)
    assert isinstance(parse_judge_params(None), LLMJudgeParams)


def test_a_chat_model_calls_its_endpoint(fake_llm: FakeChatServer) -> None:
    fake_llm.push(text_reply("Hi there."))
    model = ChatModel(ChatEndpoint(base_url=fake_llm.base_url, model="m"), {"seed": 4})
    call = model.complete([{"role": "user", "content": "hi"}])
    assert call.error is None and call.text == "Hi there."
    assert fake_llm.requests[0].body["seed"] == 4 and model.api_base == fake_llm.base_url
