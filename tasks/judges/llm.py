"""The ``llm`` judge: any OpenAI-compatible chat-completions endpoint.

Our own prompt per judged metric (``prompts.yaml``), temperature 0, the JSON answer parsed
by the metric with the spec's rules. Transport failures, 408/429 and 5xx are retried with
exponential backoff (``base * 2**attempt`` capped, +-20 % jitter); other 4xx are returned as
errors. The API key is read from the environment variable named in the parameters and is
never stored. Audio judges send the silence-trimmed track as an ``input_audio`` part.
"""

from __future__ import annotations

import os
import random
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

import httpx
from pydantic import BaseModel, ConfigDict, Field

from tasks.judges.audio import AudioReadError, read_wav, trim_silence, wav_base64
from tasks.judges.base import JUDGES, JudgeTask, JudgeVerdict, TokenUsage
from tasks.judges.parsing import extract_json_values
from tasks.judges.prompts import render_messages, template
from tasks.judges.render import prompt_variables, template_key

RETRY_STATUS = {408, 409, 425, 429, 500, 502, 503, 504}


class LLMJudgeParams(BaseModel):
    """Parameters of the llm judge (``judge.params`` in the run config)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    base_url: str = Field(default="http://127.0.0.1:8000/v1", description="Endpoint incl. /v1")
    model: str = Field(default="gpt-4o-mini", description="Model for text judges")
    audio_model: str | None = Field(default=None, description="Model for audio judges")
    api_key_env: str | None = Field(
        default=None, description="Name of the env var holding the API key (none: no auth)"
    )
    temperature: float = Field(default=0.0, ge=0.0, le=2.0)
    max_tokens: int | None = Field(default=None, ge=1)
    timeout_s: float = Field(default=480.0, gt=0, description="Per-request timeout")
    max_retries: int = Field(default=5, ge=0, le=20, description="Retries after the first try")
    backoff_base_s: float = Field(default=1.0, ge=0)
    backoff_cap_s: float = Field(default=60.0, ge=0)
    jitter: float = Field(default=0.2, ge=0, le=1, description="Relative +- jitter of backoff")
    empty_turns_retries: int = Field(
        default=2, ge=0, le=6, description="Audio judges: re-asks when 'turns' comes back empty"
    )
    extra_body: dict[str, Any] = Field(default_factory=dict, description="Merged into requests")


class CallResult(BaseModel):
    text: str = ""
    error: str | None = None
    usage: TokenUsage


AUDIO_METRICS = {"agent_speech_fidelity", "user_speech_fidelity", "tts_fidelity"}


class LLMJudge:
    """Chat-completions judge. ``transport`` and ``sleep`` exist for tests."""

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
            params if isinstance(params, LLMJudgeParams) else LLMJudgeParams(**dict(params or {}))
        )
        self._transport = transport
        self._sleep = sleep
        self._rng = rng or random.Random()

    def prompt_hash(self, metric: str) -> str:
        return template(metric).hash

    def evaluate(self, task: JudgeTask) -> JudgeVerdict:
        key = template_key(task)
        verdict = JudgeVerdict(
            judge=self.name,
            metric=task.metric,
            prompt_hash=template(key).hash,
            model=self._model(task),
        )
        try:
            messages = self._messages(task, key)
        except (AudioReadError, KeyError, TypeError) as exc:
            verdict.error = str(exc)
            return verdict
        retries_left = self.params.empty_turns_retries if task.metric in AUDIO_METRICS else 0
        while True:
            result = self._call(messages, verdict.model or self.params.model)
            verdict.usage.append(result.usage)
            verdict.raw_text, verdict.error = result.text, result.error
            if result.error or retries_left <= 0 or not _empty_turns(result.text):
                return verdict
            retries_left -= 1
            self._sleep(self._backoff(len(verdict.usage)))

    def _model(self, task: JudgeTask) -> str:
        if task.metric in AUDIO_METRICS and self.params.audio_model:
            return self.params.audio_model
        return self.params.model

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

    def _headers(self) -> dict[str, str]:
        env = self.params.api_key_env
        if not env:
            return {}
        key = os.environ.get(env)
        if not key:
            raise RuntimeError(f"llm judge: environment variable {env} (api_key_env) is not set")
        return {"Authorization": f"Bearer {key}"}

    def _backoff(self, attempt: int) -> float:
        delay = min(self.params.backoff_cap_s, self.params.backoff_base_s * 2 ** (attempt - 1))
        return max(0.0, delay * (1 + self._rng.uniform(-self.params.jitter, self.params.jitter)))

    def _call(self, messages: list[dict[str, Any]], model: str) -> CallResult:
        body: dict[str, Any] = {
            "model": model,
            "messages": messages,
            "temperature": self.params.temperature,
            **self.params.extra_body,
        }
        if self.params.max_tokens:
            body["max_tokens"] = self.params.max_tokens
        url = self.params.base_url.rstrip("/") + "/chat/completions"
        started = time.perf_counter()
        usage = TokenUsage(model=model, attempts=0)
        error: str | None = None
        try:
            headers = self._headers()
        except RuntimeError as exc:
            return CallResult(error=str(exc), usage=usage)
        with httpx.Client(timeout=self.params.timeout_s, transport=self._transport) as client:
            for attempt in range(1, self.params.max_retries + 2):
                usage.attempts = attempt
                try:
                    response = client.post(url, json=body, headers=headers)
                except (httpx.TimeoutException, httpx.TransportError) as exc:
                    error = f"{type(exc).__name__}: {exc}"
                else:
                    if response.status_code < 400:
                        return _result(response, usage, started)
                    error = f"HTTP {response.status_code}: {response.text[:300]}"
                    if response.status_code not in RETRY_STATUS:
                        break
                if attempt <= self.params.max_retries:
                    self._sleep(self._backoff(attempt))
        usage.latency_s = time.perf_counter() - started
        usage.timestamp = datetime.now(UTC).isoformat()
        return CallResult(
            error=f"llm judge request failed after {usage.attempts} attempt(s): {error}",
            usage=usage,
        )


def _result(response: httpx.Response, usage: TokenUsage, started: float) -> CallResult:
    usage.latency_s = time.perf_counter() - started
    usage.timestamp = datetime.now(UTC).isoformat()
    try:
        payload = response.json()
        text = payload["choices"][0]["message"]["content"] or ""
    except (ValueError, KeyError, IndexError, TypeError) as exc:
        return CallResult(error=f"malformed chat-completions response: {exc!r}", usage=usage)
    counts = payload.get("usage") or {}
    usage.input_tokens = int(counts.get("prompt_tokens") or 0)
    usage.output_tokens = int(counts.get("completion_tokens") or 0)
    return CallResult(text=text if isinstance(text, str) else str(text), usage=usage)


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
