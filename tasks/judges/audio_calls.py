"""How an audio judge is asked (spec 4.7), through LiteLLM.

1. The role's track, silence-trimmed (:func:`tasks.judges.audio.trim_silence`), is sent as
   an inline WAV (``input_audio``; LiteLLM makes it Gemini ``inlineData``) with the prompt.
2. The Gemini Files API (:mod:`tasks.llm_files`) instead, for a ``gemini/`` deployment:
   at once when the inline audio would pass Gemini's request limit, after the provider
   refused the inline payload as too large, or after the model answered that it got no
   audio (the top-level explanation, or every turn's, says "no audio"). The file is
   uploaded once, waited for until ACTIVE, sent as ``fileData`` and deleted at the end.
3. An answer whose ``turns`` is empty (or that still says "no audio") is asked again, up
   to ``retries`` more times, after ``2**attempt`` seconds (attempt 0 first: 1, 2, 4 s).

An answer that still reports no audio after the last try is an error, never a score of
what the model did not hear. Every call's usage is kept (each one is paid for).
"""

from __future__ import annotations

import base64
import re
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from tasks.judges.audio import read_wav, trim_silence, wav_bytes
from tasks.judges.parsing import extract_json_values
from tasks.llm_files import (
    UploadedFile,
    UploadPolicy,
    delete_file,
    file_part,
    supports_files,
    upload_file,
)
from tasks.llm_router import LLMCall, RouterPolicy, complete
from tasks.model_list import Deployment

# Gemini takes inline data while the whole request stays under 20 MB; larger media go
# through the Files API (https://ai.google.dev/gemini-api/docs/audio, "Input audio").
INLINE_LIMIT_BYTES = 20 * 1024 * 1024
EMPTY_TURNS_RETRIES = 6  # spec 4.7: up to six more tries after an empty 'turns'
WAV_MIME = "audio/wav"
_NO_AUDIO = re.compile(r"\bno audio\b", re.IGNORECASE)
# How providers word a refused inline payload (Gemini's 400 "Request payload size exceeds
# the limit", an HTTP 413 from a proxy).
_TOO_LARGE = re.compile(r"payload size|too large|request entity|\b413\b", re.IGNORECASE)
Verdict = Literal["ok", "empty", "no_audio"]


class JudgeAudio(BaseModel):
    """The WAV an audio judge sends: the track after silence trimming."""

    wav: bytes = Field(repr=False)
    seconds: float = Field(description="Length sent")
    original_seconds: float = Field(description="Length of the stored track")
    trimmed: bool = Field(description="Whether silence was cut (spec 4.7)")


def judge_audio(path: Path) -> JudgeAudio:
    """The track at ``path``, silence-trimmed, as WAV bytes (AudioReadError if unreadable)."""
    samples, rate = read_wav(path)
    kept, trimmed = trim_silence(samples, rate)
    return JudgeAudio(
        wav=wav_bytes(kept, rate),
        seconds=len(kept) / rate,
        original_seconds=len(samples) / rate,
        trimmed=trimmed,
    )


class AudioAnswer(BaseModel):
    """Every call made for one audio judgement, and how the audio went."""

    calls: list[LLMCall] = Field(default_factory=list)
    error: str | None = None
    source: Literal["inline", "file"] = "inline"
    notes: list[str] = Field(default_factory=list, description="Upload and delete problems")

    @property
    def text(self) -> str:
        return self.calls[-1].text if self.calls else ""


def answer_kind(text: str) -> Verdict:
    """``no_audio`` when the answer says it heard none, ``empty`` for an empty ``turns``."""
    answers = [v for v in extract_json_values(text) if isinstance(v, dict)]
    for answer in answers:
        if _NO_AUDIO.search(str(answer.get("explanation") or "")):
            return "no_audio"
        turns = answer.get("turns")
        if isinstance(turns, list) and turns:
            said = [str(t.get("explanation") or "") for t in turns if isinstance(t, dict)]
            if said and all(_NO_AUDIO.search(s) for s in said):
                return "no_audio"
    with_turns = [a for a in answers if "turns" in a]
    if with_turns and all(a["turns"] == [] for a in with_turns):
        return "empty"
    return "ok"


class AudioAsk(BaseModel):
    """One audio judgement's request: the model, the prompt, the audio and the limits."""

    model_config = {"arbitrary_types_allowed": True}
    model_list: list[Deployment]
    deployment: Deployment
    system: str
    user: str
    audio: JudgeAudio
    params: dict[str, Any] = Field(default_factory=dict)
    policy: RouterPolicy = Field(default_factory=RouterPolicy)
    retries: int = EMPTY_TURNS_RETRIES
    inline_limit_bytes: int = INLINE_LIMIT_BYTES
    upload: UploadPolicy = Field(default_factory=UploadPolicy)

    def messages(self, part: Mapping[str, Any]) -> list[dict[str, Any]]:
        content = [{"type": "text", "text": self.user}, dict(part)]
        system = [{"role": "system", "content": self.system}] if self.system else []
        return [*system, {"role": "user", "content": content}]

    def inline_part(self) -> dict[str, Any]:
        data = base64.b64encode(self.audio.wav).decode("ascii")
        return {"type": "input_audio", "input_audio": {"data": data, "format": "wav"}}


def ask_audio(ask: AudioAsk, sleep: Callable[[float], None] = time.sleep) -> AudioAnswer:
    """Spec 4.7's exchange for one judgement (never raises)."""
    out = AudioAnswer()
    uploaded: UploadedFile | None = None
    part = ask.inline_part()
    try:
        if _can_upload(ask, uploaded) and len(part["input_audio"]["data"]) > ask.inline_limit_bytes:
            uploaded = _upload(ask, sleep, out)
            if uploaded.file_id is None:
                out.error = f"inline audio too large and {uploaded.error}"
                return out
            part = file_part(uploaded.file_id, WAV_MIME)
        attempt = 0
        while True:
            messages = ask.messages(part)
            call = complete(ask.model_list, ask.deployment.model_name, messages, ask.params,
                            ask.policy)  # fmt: skip
            out.calls.append(call)
            if call.error is not None:
                if not (_can_upload(ask, uploaded) and _TOO_LARGE.search(call.error)):
                    out.error = call.error
                    return out
                uploaded = _upload(ask, sleep, out)  # a refusal is no flake: no wait
                if uploaded.file_id is None:
                    out.error = f"{call.error}; {uploaded.error}"
                    return out
                part = file_part(uploaded.file_id, WAV_MIME)
                continue
            kind = answer_kind(call.text)
            if kind == "ok" or attempt == ask.retries:
                if kind == "no_audio":
                    out.error = f"the model reported no audio in {len(out.calls)} answers"
                return out
            if kind == "no_audio" and _can_upload(ask, uploaded):
                uploaded = _upload(ask, sleep, out)  # failed: noted, inline tries go on
                if uploaded.file_id is not None:
                    part = file_part(uploaded.file_id, WAV_MIME)
            sleep(float(2**attempt))
            attempt += 1
    finally:
        if uploaded is not None and uploaded.file_id is not None:
            problem = delete_file(ask.deployment, uploaded.file_id, ask.policy.timeout_s)
            if problem:
                out.notes.append(problem)


def _can_upload(ask: AudioAsk, uploaded: UploadedFile | None) -> bool:
    """Whether the Files API is still an option (a gemini deployment, not tried yet)."""
    return uploaded is None and supports_files(ask.deployment)


def _upload(ask: AudioAsk, sleep: Callable[[float], None], out: AudioAnswer) -> UploadedFile:
    uploaded = upload_file(
        ask.deployment, ask.audio.wav, WAV_MIME, "judge-audio.wav", ask.upload, sleep
    )
    if uploaded.error:
        out.notes.append(uploaded.error)
    else:
        out.source = "file"
    return uploaded
