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
from pydantic import ConfigDict, Field

from tasks.judges.audio import AudioReadError, read_wav, trim_silence, wav_base64
from tasks.judges.base import JUDGES, JudgeTask, JudgeVerdict, TokenUsage
from tasks.judges.parsing import extract_json_values
from tasks.judges.prompts import render_messages, template
from tasks.judges.render import prompt_variables, template_key
from tasks.llm_client import ChatClient, ChatEndpoint, ChatResult, parse_endpoint_params


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
    audio_model: str | None = Field(default=None, description="Model for audio judges")
    empty_turns_retries: int = Field(
        default=2, ge=0, le=6, description="Audio judges: re-asks when 'turns' comes back empty"
    )


_CLIENTS: dict[str, ChatClient] = {}
_CLIENTS_LOCK = threading.Lock()


def shared_client(params: LLMJudgeParams) -> ChatClient:
    """One client (one keep-alive connection pool) per endpoint configuration and process:
    a judge is built for every metric of every attempt, a pool per judge would leak."""
    key = params.model_dump_json()
    with _CLIENTS_LOCK:
        client = _CLIENTS.get(key)
        if client is None:
            client = _CLIENTS[key] = ChatClient(params)
        return client


AUDIO_METRICS = {"agent_speech_fidelity", "user_speech_fidelity", "tts_fidelity"}


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
            verdict.usage.append(TokenUsage.model_validate(result.usage.model_dump()))
            verdict.raw_text, verdict.error = result.text, _judge_error(result.error)
            if result.error or retries_left <= 0 or not _empty_turns(result.text):
                return verdict
            retries_left -= 1
            self._sleep(self.client.backoff(len(verdict.usage)))

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

    def _call(self, messages: list[dict[str, Any]], model: str) -> ChatResult:
        """One judge request through the shared client (never raises for HTTP trouble)."""
        return self.client.complete(messages, model=model)


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
