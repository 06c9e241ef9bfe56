"""The ``llm`` judge: any OpenAI-compatible chat-completions endpoint.

Our own prompt per judged metric (``prompts.yaml``), temperature 0, the JSON answer parsed
by the metric with the spec's rules. HTTP, retries with backoff, usage accounting and
key handling are the shared client's (:mod:`tasks.llm_client`): transport failures,
408/409/425/429 and 5xx are retried, other 4xx come back as errors, and the API key (read
from the environment variable named in the parameters) is never stored and is scrubbed
from error texts. Audio judges send the silence-trimmed track as an ``input_audio`` part.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

import httpx
from pydantic import ConfigDict, Field, field_validator

from tasks.judges.audio import AudioReadError, read_wav, trim_silence, wav_base64
from tasks.judges.base import JUDGES, JudgeTask, JudgeVerdict, TokenUsage
from tasks.judges.models import AUDIO_METRICS, AUDIO_MODEL, judge_model, unknown_metrics
from tasks.judges.parsing import extract_json_values
from tasks.judges.prompts import render_messages, template
from tasks.judges.render import prompt_variables, template_key
from tasks.llm_client import ChatClient, ChatEndpoint, parse_endpoint_params
from tasks.model_list import Deployment, env_ref_name, first_deployment


class LLMJudgeParams(ChatEndpoint):
    """Parameters of the llm judge (``judge.params`` in the run config).

    The endpoint fields are the shared client's; the defaults follow the reference's judge
    client (spec 4.1: five retries, backoff capped at 60 s, 480 s request timeout)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    temperature: float | None = Field(
        default=0.0, ge=0.0, le=2.0, description="0: the same answer for the same evidence"
    )
    timeout_s: float = Field(default=480.0, gt=0, description="Per-request timeout")
    max_retries: int = Field(default=5, ge=0, le=20, description="Retries after the first try")
    backoff_cap_s: float = Field(default=60.0, ge=0, description="Longest retry delay")
    audio_model: str | None = Field(
        default=AUDIO_MODEL, description="Endpoint mode: the audio judges' model"
    )
    empty_turns_retries: int = Field(
        default=2, ge=0, le=6, description="Audio judges: re-asks when 'turns' comes back empty"
    )
    model_list: list[Deployment] | None = Field(
        default=None, description="LiteLLM model list; judges pick their model_name from it"
    )
    models: dict[str, str] = Field(
        default_factory=dict, description="metric -> model_name (default: the reference's)"
    )

    @field_validator("models")
    @classmethod
    def _judged_metrics(cls, value: dict[str, str]) -> dict[str, str]:
        if bad := unknown_metrics(value):
            raise ValueError(f"no LLM judge for {', '.join(bad)}")
        return value


_CLIENTS: dict[str, ChatClient] = {}
_CLIENTS_LOCK = threading.Lock()


def shared_client(params: ChatEndpoint) -> ChatClient:
    """One client (one keep-alive connection pool) per endpoint configuration and process:
    a judge is built for every metric of every attempt, a pool per judge would leak."""
    key = params.model_dump_json()
    with _CLIENTS_LOCK:
        client = _CLIENTS.get(key)
        if client is None:
            client = _CLIENTS[key] = ChatClient(params)
        return client


# Providers the chat-completions client reaches through a deployment's api_base.
OPENAI_COMPATIBLE = {"openai", "hosted_vllm", "openai_like", "custom_openai"}
OPENAI_BASE = "https://api.openai.com/v1"


def deployment_endpoint(params: LLMJudgeParams, deployment: Deployment) -> ChatEndpoint:
    """The chat endpoint of an OpenAI-compatible deployment (ValueError for any other)."""
    if deployment.provider not in OPENAI_COMPATIBLE:
        raise ValueError(
            f"model {deployment.model_name!r}: provider {deployment.provider!r} is not "
            "OpenAI-compatible"
        )
    lp = deployment.litellm_params
    base = lp.get("api_base") or OPENAI_BASE
    return ChatEndpoint(
        base_url=str(base),
        model=str(lp["model"]).split("/", 1)[-1] if "/" in lp["model"] else lp["model"],
        api_key_env=env_ref_name(lp.get("api_key")) or "OPENAI_API_KEY",
        temperature=params.temperature,
        timeout_s=params.timeout_s,
        max_retries=params.max_retries,
        backoff_cap_s=params.backoff_cap_s,
    )


class LLMJudge:
    """Chat-completions judge. ``transport``, ``sleep`` and ``rng`` exist for tests."""

    name = "llm"

    def __init__(
        self,
        params: Mapping[str, Any] | LLMJudgeParams | None = None,
        *,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
        rng: random.Random | None = None,
    ) -> None:
        self.params = (
            params
            if isinstance(params, LLMJudgeParams)
            else parse_endpoint_params(LLMJudgeParams, params, "llm judge")
        )
        self._sleep = sleep
        self._clients: dict[str, ChatClient] = {}
        if transport is None and sleep is time.sleep and rng is None:
            self.client = shared_client(self.params)
        else:
            self.client = ChatClient(self.params, transport=transport, sleep=sleep, rng=rng)

    def prompt_hash(self, metric: str) -> str:
        return template(metric).hash

    def evaluate(self, task: JudgeTask) -> JudgeVerdict:
        key = template_key(task)
        verdict = JudgeVerdict(
            judge=self.name,
            metric=task.metric,
            prompt_hash=template(key).hash,
            model=self.model_name(task.metric),
        )
        try:
            client, model = self._route(task.metric)
            messages = self._messages(task, key)
        except (AudioReadError, KeyError, TypeError, ValueError) as exc:
            verdict.error = _judge_error(str(exc))
            return verdict
        retries_left = self.params.empty_turns_retries if task.metric in AUDIO_METRICS else 0
        while True:
            result = client.complete(messages, model=model)
            verdict.usage.append(TokenUsage.model_validate(result.usage.model_dump()))
            verdict.raw_text, verdict.error = result.text, _judge_error(result.error)
            if result.error or retries_left <= 0 or not _empty_turns(result.text):
                return verdict
            retries_left -= 1
            self._sleep(client.backoff(len(verdict.usage)))

    def model_name(self, metric: str) -> str:
        """The model judging ``metric``: a model list's model_name, or the endpoint's model."""
        if self.params.model_list is not None:
            return judge_model(metric, self.params.models)
        if metric in self.params.models:
            return self.params.models[metric]
        if metric in AUDIO_METRICS and self.params.audio_model:
            return self.params.audio_model
        return self.params.model

    def _route(self, metric: str) -> tuple[ChatClient, str]:
        """(client, model sent) of ``metric``'s judge; ValueError when the list lacks it."""
        name = self.model_name(metric)
        if self.params.model_list is None:
            return self.client, name
        deployment = first_deployment(self.params.model_list, name)
        if deployment is None:
            raise ValueError(f"{metric}: model {name!r} is not in the model list")
        endpoint = deployment_endpoint(self.params, deployment)
        if self._sleep is time.sleep:
            return shared_client(endpoint), endpoint.model
        client = self._clients.get(name)  # a test's sleep: a client of this judge's own
        if client is None:
            client = self._clients[name] = ChatClient(endpoint, sleep=self._sleep)
        return client, endpoint.model

    def _messages(self, task: JudgeTask, key: str) -> list[dict[str, Any]]:
        system, user = render_messages(key, prompt_variables(task))
        content: Any = user
        if task.metric in AUDIO_METRICS and task.audio is not None:
            samples, rate = read_wav(task.audio.path)
            trimmed, _ = trim_silence(samples, rate)
            content = [
                {"type": "text", "text": user},
                {
                    "type": "input_audio",
                    "input_audio": {"data": wav_base64(trimmed, rate), "format": "wav"},
                },
            ]
        messages: list[dict[str, Any]] = []
        if system:
            messages.append({"role": "system", "content": system})
        messages.append({"role": "user", "content": content})
        return messages


def _judge_error(error: str | None) -> str | None:
    """The client's error, said as the judge's (the key is already scrubbed from it)."""
    return None if error is None else f"llm judge: {error}"


def _empty_turns(text: str) -> bool:
    values = [v for v in extract_json_values(text) if isinstance(v, dict)]
    return (
        bool(values)
        and all(v.get("turns") == [] for v in values if "turns" in v)
        and any("turns" in v for v in values)
    )


@JUDGES.register("llm")
def make_llm_judge(params: Mapping[str, Any]) -> LLMJudge:
    return LLMJudge(params)
