"""What a Gemini API request's ``contents`` say, as an OpenAI chat history the brain reads.

``contents`` (https://ai.google.dev/api/caching#Content): ``role`` ``user`` / ``model``,
``parts`` with ``text``, ``inlineData`` {``mimeType``, ``data``}, ``fileData``
{``mimeType``, ``fileUri``} (a file uploaded through the Files API), ``functionCall``
{``id``, ``name``, ``args``} and ``functionResponse`` {``id``, ``name``, ``response``}; the
``systemInstruction`` is a ``Content`` too. Audio parts are heard: decoded (WAV, or raw
16-bit PCM ``audio/pcm`` / ``audio/L16`` with ``;rate=``) and transcribed by the recogniser
the stand-in was given, with its code grammar after the model's own request to spell
something; :attr:`Heard.audio` keeps each clip's transcript apart from the prompt's text.
Errors are the API's ``google.rpc.Status`` shape.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import threading
import wave
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

import numpy as np

from perturbations.audio import Clip
from tasks.systems.standins.gemini_live import b64bytes
from tasks.voice.stt import Expectation, Recognizer


class ApiError(Exception):
    """A ``google.rpc.Status`` error answer."""

    def __init__(self, code: int, status: str, message: str, reason: str | None = None) -> None:
        super().__init__(message)
        self.code, self.status, self.message, self.reason = code, status, message, reason

    def body(self) -> dict[str, Any]:
        error: dict[str, Any] = {"code": self.code, "message": self.message, "status": self.status}
        if self.reason:
            error["details"] = [
                {
                    "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                    "reason": self.reason,
                    "domain": "googleapis.com",
                    "metadata": {"service": "generativelanguage.googleapis.com"},
                }
            ]
        return {"error": error}


def check_key(key: str) -> None:
    """The API's answers to a missing, invalid or over-quota key (``reject`` and
    ``ratelimit``: the fault keys every HTTP stand-in shares, tasks.systems.standins.httpserver)."""
    if not key:
        raise ApiError(403, "PERMISSION_DENIED", "Method doesn't allow unregistered callers.")
    if key == "reject":
        raise ApiError(
            400,
            "INVALID_ARGUMENT",
            "API key not valid. Please pass a valid API key.",
            "API_KEY_INVALID",
        )
    if key == "ratelimit":
        raise ApiError(429, "RESOURCE_EXHAUSTED", "Resource has been exhausted (e.g. check quota).")


def decode_inline_audio(mime: str, data: bytes) -> Clip:
    """An ``inlineData`` audio blob as a mono clip: WAV (rate from its header) or raw
    little-endian 16-bit PCM (``audio/pcm`` / ``audio/L16``, ``rate=`` parameter)."""
    kind = mime.split(";")[0].strip().lower()
    if kind in ("audio/wav", "audio/x-wav", "audio/wave"):
        with wave.open(io.BytesIO(data)) as wav:
            if wav.getsampwidth() != 2:
                raise ApiError(400, "INVALID_ARGUMENT", "only 16-bit WAV is supported here")
            pcm = np.frombuffer(wav.readframes(wav.getnframes()), "<i2")
            channels, rate = wav.getnchannels(), wav.getframerate()
        if channels > 1:
            pcm = pcm.reshape(-1, channels).mean(axis=1).astype(np.int16)
        return Clip.from_int16(pcm, rate)
    if kind in ("audio/pcm", "audio/l16"):
        match = re.search(r"rate=(\d+)", mime)
        return Clip.from_int16(np.frombuffer(data, "<i2"), int(match.group(1)) if match else 16000)
    raise ApiError(400, "INVALID_ARGUMENT", f"audio {mime!r} is not decoded by this stand-in")


@dataclass
class HeardAudio:
    """One audio part of a request, as decoded and transcribed."""

    source: Literal["inline", "file"]
    mime: str
    seconds: float
    text: str


@dataclass
class Heard:
    """The chat history a request's ``contents`` amount to, and the caller audio in it."""

    messages: list[dict[str, Any]] = field(default_factory=list)
    audio_s: float = 0.0
    audio: list[HeardAudio] = field(default_factory=list)


class StoredMedia(Protocol):
    """What a ``fileData`` part resolves to (:class:`tasks.systems.standins.gemini_files.
    StoredFile`)."""

    mime: str
    data: bytes


class Files(Protocol):
    def resolve(self, uri: str) -> StoredMedia: ...


def expectation(messages: list[dict[str, Any]]) -> Expectation:
    said = [m for m in messages if m["role"] == "assistant" and m.get("content")]
    return "code" if said and "spell" in str(said[-1]["content"]).lower() else None


class Listener:
    """Audio parts heard by the recogniser, each clip once per expectation."""

    def __init__(
        self,
        recognizer: Recognizer,
        expect: Callable[[list[dict[str, Any]]], Expectation] = expectation,
    ) -> None:
        self.recognizer = recognizer
        self.expect = expect
        self.heard: dict[tuple[str, Expectation], str] = {}
        self.lock = threading.Lock()

    def hear(self, mime: str, data: bytes, expect: Expectation) -> tuple[str, float]:
        clip = decode_inline_audio(mime, data)
        key = (hashlib.sha256(data).hexdigest(), expect)
        with self.lock:
            if key not in self.heard:
                self.heard[key] = self.recognizer.recognize(clip, expect)
            return self.heard[key], clip.duration_s


def to_chat(
    request: dict[str, Any],
    ears: Listener,
    files: Files | None = None,
    hear_inline: bool = True,
) -> Heard:
    """``contents`` (+ ``systemInstruction``) as an OpenAI chat-completions history.
    ``files`` resolves ``fileData`` parts (none: they are refused); ``hear_inline=False``
    ignores inline audio, as Gemini sometimes does with a large inline payload."""
    out = Heard()
    system = request.get("systemInstruction") or {}
    prompt = " ".join(str(p.get("text") or "") for p in system.get("parts") or []).strip()
    if prompt:
        out.messages.append({"role": "system", "content": prompt})
    names: dict[str, str] = {}  # call id -> name, to pair responses sent without an id
    for content in request.get("contents") or []:
        texts: list[str] = []
        calls: list[dict[str, Any]] = []
        for part in content.get("parts") or []:
            if part.get("thought"):
                continue
            if part.get("text") is not None:
                # Pipecat restates the system prompt as a trailing user turn when no turn
                # is plain text (audio-only user turns): an instruction, not the caller.
                if str(part["text"]).strip() != prompt or content.get("role") == "model":
                    texts.append(str(part["text"]))
            elif part.get("inlineData") or part.get("fileData"):
                said = _hear_part(part, ears, files, hear_inline, out)
                if said is not None:
                    texts.append(said)
            elif part.get("functionCall"):
                call = part["functionCall"]
                call_id = str(call.get("id") or f"call_{len(names) + 1}")
                names[call_id] = str(call.get("name"))
                arguments = json.dumps(call.get("args") or {}, ensure_ascii=False)
                calls.append(
                    {
                        "id": call_id,
                        "type": "function",
                        "function": {"name": call.get("name"), "arguments": arguments},
                    }
                )
            elif part.get("functionResponse"):
                response = part["functionResponse"]
                call_id = str(response.get("id") or _unanswered(out.messages, names, response))
                result = json.dumps(response.get("response") or {}, ensure_ascii=False)
                out.messages.append({"role": "tool", "tool_call_id": call_id, "content": result})
        text = " ".join(t.strip() for t in texts if t.strip())
        if content.get("role") == "model":
            message: dict[str, Any] = {"role": "assistant", "content": text or None}
            if calls:
                message["tool_calls"] = calls
            if text or calls:
                out.messages.append(message)
        elif text:
            out.messages.append({"role": "user", "content": text})
    return out


def _hear_part(
    part: dict[str, Any], ears: Listener, files: Files | None, hear_inline: bool, out: Heard
) -> str | None:
    """What an ``inlineData`` or ``fileData`` part says (None: not heard)."""
    source: Literal["inline", "file"]
    if part.get("inlineData"):
        blob = part["inlineData"]
        mime, data, source = str(blob.get("mimeType")), b64bytes(blob["data"]), "inline"
        if not hear_inline and mime.lower().startswith("audio/"):
            return None
    else:
        if files is None:
            raise ApiError(400, "INVALID_ARGUMENT", "fileData is not served by this stand-in")
        stored = files.resolve(str(part["fileData"].get("fileUri") or ""))
        mime = str(part["fileData"].get("mimeType") or stored.mime)
        data, source = stored.data, "file"
    said, seconds = ears.hear(mime, data, ears.expect(out.messages))
    out.audio_s += seconds
    out.audio.append(HeardAudio(source, mime, seconds, said))
    return said


def _unanswered(
    messages: list[dict[str, Any]], names: dict[str, str], response: dict[str, Any]
) -> str:
    answered = {m["tool_call_id"] for m in messages if m["role"] == "tool"}
    pending = [i for i, n in names.items() if i not in answered and n == response.get("name")]
    return pending[0] if pending else str(response.get("name"))
