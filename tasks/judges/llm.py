"""The ``llm`` judge: the reference's judge models, called through LiteLLM.

Our own prompt per judged metric (``prompts.yaml``), the JSON answer parsed by the metric
with the spec's rules. Each metric's judge is a ``model_name`` of the run's LiteLLM model
list (:mod:`tasks.judges.models`: the reference's assignments unless overridden), called
with the reference's request parameters through :mod:`tasks.llm_router`, which owns the
client: retries, timeouts, usage and cost are LiteLLM's, and a failed call comes back as
an error (a metric error with its reason), never an exception.

Without a model list the parameters may name one OpenAI-compatible endpoint
(``base_url``, ``model``, ``api_key_env``: a local vLLM or Ollama server, a LiteLLM
proxy); it is called through LiteLLM too, as a list of its own.

Audio judges send the silence-trimmed track (spec 4.7) as an ``input_audio`` part, which
LiteLLM passes to OpenAI and turns into inline data for Gemini; an answer whose
``turns`` is empty is asked again after 2**n seconds.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from tasks.judges.audio import AudioReadError, read_wav, trim_silence, wav_base64
from tasks.judges.base import JUDGES, JudgeTask, JudgeVerdict, TokenUsage
from tasks.judges.models import (
    AUDIO_METRICS,
    AUDIO_MODEL,
    default_params,
    judge_model,
    unknown_metrics,
)
from tasks.judges.parsing import extract_json_values
from tasks.judges.prompts import render_messages, template
from tasks.judges.render import prompt_variables, template_key
from tasks.llm_chat import DEFAULT_BASE_URL, endpoint_deployment, parse_params
from tasks.llm_router import LLMCall, RouterPolicy, complete
from tasks.model_list import Deployment, first_deployment


class LLMJudgeParams(BaseModel):
    """Parameters of the llm judge (``judge.params`` in the run config)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    model_list: list[Deployment] | None = Field(
        default=None, description="LiteLLM model list; each judge picks a model_name from it"
    )
    models: dict[str, str] = Field(
        default_factory=dict, description="metric -> model_name (default: the reference's)"
    )
    judge_params: dict[str, dict[str, Any]] = Field(
        default_factory=dict,
        description="metric -> request params merged over the reference's (model list mode)",
    )
    base_url: str = Field(default=DEFAULT_BASE_URL, description="Endpoint mode: incl. /v1")
    model: str = Field(default="gpt-4o-mini", description="Endpoint mode: the text judges")
    audio_model: str = Field(default=AUDIO_MODEL, description="Endpoint mode: audio judges")
    api_key_env: str | None = Field(
        default=None, description="Endpoint mode: the env var holding the key (none: no auth)"
    )
    temperature: float | None = Field(
        default=0.0, ge=0.0, le=2.0, description="Endpoint mode: sampling temperature"
    )
    max_tokens: int | None = Field(default=None, ge=1, description="Endpoint mode: token cap")
    extra_body: dict[str, Any] = Field(
        default_factory=dict, description="Endpoint mode: merged into every request body"
    )
    timeout_s: float = Field(default=480.0, gt=0, description="Per-request timeout (LiteLLM)")
    max_retries: int = Field(default=5, ge=0, le=20, description="LiteLLM's retries")
    empty_turns_retries: int = Field(
        default=2, ge=0, le=6, description="Audio judges: re-asks when 'turns' comes back empty"
    )

    @field_validator("models", "judge_params")
    @classmethod
    def _judged_metrics(cls, value: dict[str, Any]) -> dict[str, Any]:
        if bad := unknown_metrics(value):
            raise ValueError(f"no LLM judge for {', '.join(bad)}")
        return value


class JudgeParamsError(ValueError):
    """Bad judge parameters (names the fields, never echoes their values: one may be a key)."""


def parse_judge_params(raw: Any) -> LLMJudgeParams:
    return parse_params(LLMJudgeParams, raw, "llm judge", JudgeParamsError)


def endpoint_deployments(params: LLMJudgeParams) -> list[Deployment]:
    """Endpoint mode as a model list: every model the judges may ask, at ``base_url``."""
    names = dict.fromkeys([params.model, params.audio_model, *params.models.values()])
    return [endpoint_deployment(name, params.base_url, params.api_key_env) for name in names]


class LLMJudge:
    """LiteLLM judge. ``sleep`` exists for tests (the waits before re-asking)."""

    name = "llm"

    def __init__(
        self,
        params: Mapping[str, Any] | LLMJudgeParams | None = None,
        *,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.params = params if isinstance(params, LLMJudgeParams) else parse_judge_params(params)
        self._sleep = sleep
        listed = self.params.model_list
        self.deployments = listed if listed is not None else endpoint_deployments(self.params)
        self.policy = RouterPolicy(
            num_retries=self.params.max_retries, timeout_s=self.params.timeout_s
        )

    def prompt_hash(self, metric: str) -> str:
        return template(metric).hash

    def model_name(self, metric: str) -> str:
        """The model judging ``metric``: a model list's model_name, or the endpoint's model."""
        if self.params.model_list is not None:
            return judge_model(metric, self.params.models)
        if metric in self.params.models:
            return self.params.models[metric]
        return self.params.audio_model if metric in AUDIO_METRICS else self.params.model

    def request_params(self, metric: str) -> dict[str, Any]:
        """The reference's parameters of ``metric``'s judge (model list), or the endpoint's."""
        if self.params.model_list is not None:
            return {**default_params(metric), **self.params.judge_params.get(metric, {})}
        found: dict[str, Any] = {}
        if self.params.temperature is not None:
            found["temperature"] = self.params.temperature
        if self.params.max_tokens:
            found["max_tokens"] = self.params.max_tokens
        if self.params.extra_body:
            found["extra_body"] = dict(self.params.extra_body)
        return found

    def evaluate(self, task: JudgeTask) -> JudgeVerdict:
        key = template_key(task)
        name = self.model_name(task.metric)
        verdict = JudgeVerdict(
            judge=self.name, metric=task.metric, prompt_hash=template(key).hash, model=name
        )
        deployment = first_deployment(self.deployments, name)
        if deployment is None:
            verdict.error = f"llm judge: {task.metric}: model {name!r} is not in the model list"
            return verdict
        try:
            messages = self._messages(task, key)
        except (AudioReadError, KeyError, TypeError) as exc:
            verdict.error = f"llm judge: {exc}"
            return verdict
        params = self.request_params(task.metric)
        retries_left = self.params.empty_turns_retries if task.metric in AUDIO_METRICS else 0
        while True:
            call = complete(self.deployments, name, messages, params, self.policy)
            verdict.usage.append(token_usage(call, deployment))
            verdict.raw_text = call.text
            verdict.error = None if call.error is None else f"llm judge: {call.error}"
            if call.error or retries_left <= 0 or not _empty_turns(call.text):
                return verdict
            retries_left -= 1
            # Spec 4.7: an empty 'turns' list is asked again after 2**attempt seconds.
            self._sleep(float(2 ** len(verdict.usage)))

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


def token_usage(call: LLMCall, deployment: Deployment) -> TokenUsage:
    """The stored usage row: ``model`` is the deployment's provider model (what the price
    table and the costs view key on), ``model_name`` the list's name for it."""
    model = str(deployment.litellm_params["model"])
    return TokenUsage(
        model=model.split("/", 1)[1] if "/" in model else model,
        model_name=call.model_name,
        input_tokens=call.input_tokens,
        output_tokens=call.output_tokens,
        cost_usd=call.cost_usd,
        latency_s=call.latency_s,
        timestamp=call.timestamp,
    )


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
