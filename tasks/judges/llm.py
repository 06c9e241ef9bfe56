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

Audio judges follow spec 4.7 (:mod:`tasks.judges.audio_calls`): the silence-trimmed track
as an inline WAV (``input_audio``: LiteLLM passes it to OpenAI and turns it into inline
data for Gemini), the Gemini Files API when the inline audio is too large, refused or not
heard, and the question asked again after an empty ``turns``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from tasks.judges.audio import AudioReadError
from tasks.judges.audio_calls import (
    EMPTY_TURNS_RETRIES,
    INLINE_LIMIT_BYTES,
    AudioAnswer,
    AudioAsk,
    JudgeAudio,
    ask_audio,
    judge_audio,
)
from tasks.judges.base import JUDGES, JudgeTask, JudgeVerdict, TokenUsage
from tasks.judges.models import (
    AUDIO_METRICS,
    AUDIO_MODEL,
    default_params,
    judge_model,
    unknown_metrics,
)
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
        default=EMPTY_TURNS_RETRIES,
        ge=0,
        le=EMPTY_TURNS_RETRIES,
        description="Audio judges: re-asks when 'turns' comes back empty (spec 4.7: 6)",
    )
    inline_audio_limit_bytes: int = Field(
        default=INLINE_LIMIT_BYTES,
        ge=1,
        description="Audio judges: larger inline audio (base64) goes through the Files API",
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
            system, user = render_messages(key, prompt_variables(task))
            audio = None
            if task.metric in AUDIO_METRICS and task.audio is not None:
                audio = judge_audio(task.audio.path)
        except (AudioReadError, KeyError, TypeError) as exc:
            verdict.error = f"llm judge: {exc}"
            return verdict
        params = self.request_params(task.metric)
        if audio is not None:
            return self._listen(verdict, deployment, system, user, audio, params)
        messages = [{"role": "system", "content": system}] if system else []
        messages.append({"role": "user", "content": user})
        call = complete(self.deployments, name, messages, params, self.policy)
        verdict.usage.append(token_usage(call, deployment))
        verdict.raw_text = call.text
        verdict.error = None if call.error is None else f"llm judge: {call.error}"
        return verdict

    def _listen(
        self,
        verdict: JudgeVerdict,
        deployment: Deployment,
        system: str,
        user: str,
        audio: JudgeAudio,
        params: dict[str, Any],
    ) -> JudgeVerdict:
        """An audio judgement (spec 4.7): every call's usage, the last answer."""
        ask = AudioAsk(
            model_list=self.deployments,
            deployment=deployment,
            system=system,
            user=user,
            audio=audio,
            params=params,
            policy=self.policy,
            retries=self.params.empty_turns_retries,
            inline_limit_bytes=self.params.inline_audio_limit_bytes,
        )
        answer = ask_audio(ask, self._sleep)
        verdict.usage = [token_usage(call, deployment) for call in answer.calls]
        verdict.raw_text = answer.text
        verdict.error = None if answer.error is None else f"llm judge: {answer.error}"
        verdict.extra["audio"] = audio_details(audio, answer)
        return verdict


def audio_details(audio: JudgeAudio, answer: AudioAnswer) -> dict[str, Any]:
    """What the audio judge was sent, stored with the score."""
    return {
        "source": answer.source,
        "seconds_sent": round(audio.seconds, 3),
        "seconds_stored": round(audio.original_seconds, 3),
        "trimmed": audio.trimmed,
        "wav_bytes": len(audio.wav),
        "calls": len(answer.calls),
        "notes": answer.notes,
    }


def token_usage(call: LLMCall, deployment: Deployment) -> TokenUsage:
    """The stored usage row: ``model`` is the deployment's provider model (what the price
    table and the costs view key on), ``model_name`` the list's name for it."""
    model = str(deployment.litellm_params["model"])
    return TokenUsage(
        model=model.split("/", 1)[1] if "/" in model else model,
        model_name=call.model_name,
        input_tokens=call.input_tokens,
        output_tokens=call.output_tokens,
        input_audio_tokens=call.input_audio_tokens,
        cached_input_tokens=call.cached_input_tokens,
        cost_usd=call.cost_usd,
        latency_s=call.latency_s,
        timestamp=call.timestamp,
    )


@JUDGES.register("llm")
def make_llm_judge(params: Mapping[str, Any]) -> LLMJudge:
    return LLMJudge(params)
