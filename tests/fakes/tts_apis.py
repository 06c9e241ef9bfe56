"""Local fakes of three hosted TTS APIs (HTTP), for tests: OpenAI, ElevenLabs, Cartesia.

Each is a real HTTP server on 127.0.0.1 (stdlib ``http.server`` in a daemon thread) that
checks a request as the provider's published reference defines it and answers with real
speech: eSpeak NG (``tasks.voice.tts.synthesize``) of the requested text, resampled to the
requested rate and encoded as asked, so a caller voiced through a fake is heard by a real
recogniser.

* OpenAI ``POST /v1/audio/speech`` (API reference ``CreateSpeechRequest``; the ``openai``
  SDK's ``audio.speech.create``): ``Authorization: Bearer``; ``model``, ``input`` (at most
  4096 characters) and ``voice`` (a built-in name or ``{"id": ...}``) required;
  ``response_format`` one of mp3/opus/aac/flac/wav/pcm (default mp3), ``speed`` 0.25-4.0.
  ``pcm`` is raw 24 kHz 16-bit mono little-endian. Errors are the API's
  ``{"error": {"message", "type", "param", "code"}}`` (401 ``invalid_api_key``).
* ElevenLabs ``POST /v1/text-to-speech/{voice_id}`` (the ``elevenlabs`` SDK's
  ``text_to_speech.convert``): header ``xi-api-key``, query ``output_format`` (default
  ``mp3_44100_128``), JSON ``text`` required, ``model_id``, ``voice_settings.speed``.
  401 is ``{"detail": {"status": "invalid_api_key", "message": "Invalid API key"}}``, a
  body error 422 ``{"detail": [{"type", "loc", "msg"}]}`` (its FastAPI validation shape).
* Cartesia ``POST /tts/bytes`` (API reference; the ``cartesia`` SDK's ``tts.bytes``):
  ``Cartesia-Version`` (a version date) required, ``X-API-Key`` or ``Authorization:
  Bearer`` (older versions document the first, newer ones and the 4.x SDK the second), JSON
  ``model_id``, ``transcript``, ``voice: {mode: "id", id}``, ``output_format: {container,
  encoding, sample_rate}``. Its reference publishes no error body; the fake answers
  ``{"error": message}``.

Fake limits (answered 400 with a message saying so, never silently): only PCM/WAV output
(no mp3/opus/aac/flac encoder here), Cartesia only ``container: raw``.
"""

from __future__ import annotations

import functools
import io
import json
import re
import threading
import wave
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from perturbations.audio import Clip, VoiceSpec
from tasks.voice.telephony import resample
from tasks.voice.tts import synthesize

# eSpeak voices the fakes speak with; a provider voice name picks one deterministically.
_ESPEAK_VOICES = [("en-us+klatt5", 70), ("en-us+klatt3", 50), ("en-us+klatt4", 60)]


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]  # lower-case names
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body.decode("utf-8"))


@dataclass(frozen=True)
class Response:
    status: int
    body: bytes
    content_type: str = "application/json"
    headers: dict[str, str] = field(default_factory=dict)

    @classmethod
    def of_json(cls, status: int, data: Any) -> Response:
        return cls(status, json.dumps(data).encode())


Answer = Callable[[Request], Response]


def speak(text: str, voice_name: str, speed: float, rate: int) -> Clip:
    """eSpeak speech of ``text`` in a voice picked by name, at ``speed``, resampled."""
    espeak_voice, pitch = _ESPEAK_VOICES[zlib.crc32(voice_name.encode()) % len(_ESPEAK_VOICES)]
    wpm = int(min(450, max(80, round(165 * speed))))
    clip = synthesize(text, VoiceSpec(voice=espeak_voice, pitch=pitch, rate_wpm=wpm))
    return resample(clip, rate)


def pcm16(clip: Clip) -> bytes:
    return clip.to_int16().astype("<i2").tobytes()


def wav16(clip: Clip) -> bytes:
    out = io.BytesIO()
    with wave.open(out, "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(clip.rate)
        wav.writeframes(pcm16(clip))
    return out.getvalue()


# ----------------------------------------------------------------------------- OpenAI

OPENAI_VOICES = {
    "alloy", "ash", "ballad", "coral", "echo", "fable", "onyx", "nova", "sage", "shimmer",
    "verse", "marin", "cedar",
}  # fmt: skip
OPENAI_FORMATS = {"mp3", "opus", "aac", "flac", "wav", "pcm"}
OPENAI_PCM_RATE = 24000


def _openai_error(
    status: int, message: str, param: str | None = None, code: str | None = None
) -> Response:
    error = {"message": message, "type": "invalid_request_error", "param": param, "code": code}
    return Response.of_json(status, {"error": error})


def openai_rate_limited(retry_after_s: int = 0) -> Response:
    """A 429 as the API sends it when a rate limit is hit (for ``FakeTtsServer.queued``)."""
    error = {
        "message": "Rate limit reached for requests. Please try again later.",
        "type": "requests",
        "param": None,
        "code": "rate_limit_exceeded",
    }
    response = Response.of_json(429, {"error": error})
    return Response(429, response.body, headers={"Retry-After": str(retry_after_s)})


def _openai_auth(request: Request, key: str) -> Response | None:
    auth = request.headers.get("authorization", "")
    if not auth.startswith("Bearer ") or not auth[7:].strip():
        return _openai_error(401, "You didn't provide an API key. Use Authorization: Bearer.")
    given = auth[7:].strip()
    if given != key:
        masked = f"{given[:3]}***{given[-4:]}" if len(given) > 8 else "***"
        message = (
            f"Incorrect API key provided: {masked}. You can find your API key at "
            "https://platform.openai.com/account/api-keys."
        )
        return _openai_error(401, message, code="invalid_api_key")
    return None


def _openai_check(body: Any) -> Response | None:
    if not isinstance(body, dict):
        return _openai_error(400, "We could not parse the JSON body of your request.")
    for name in ("model", "input", "voice"):
        if name not in body:
            missing = f"Missing required parameter: '{name}'."
            return _openai_error(400, missing, name, "missing_required_parameter")
    if not isinstance(body["input"], str) or not 0 < len(body["input"]) <= 4096:
        return _openai_error(400, "'input' must be a string of 1 to 4096 characters.", "input")
    voice = body["voice"]
    if not (voice in OPENAI_VOICES or (isinstance(voice, dict) and voice.get("id"))):
        return _openai_error(400, f"Invalid value for 'voice': {voice!r}.", "voice")
    if body.get("response_format", "mp3") not in OPENAI_FORMATS:
        return _openai_error(400, "Invalid value for 'response_format'.", "response_format")
    speed = body.get("speed", 1.0)
    if not isinstance(speed, int | float) or not 0.25 <= speed <= 4.0:
        return _openai_error(400, f"Invalid 'speed': {speed!r}; expected 0.25 to 4.0.", "speed")
    return None


def openai_answer(key: str) -> Answer:
    def answer(request: Request) -> Response:
        if request.method != "POST" or request.path != "/v1/audio/speech":
            return _openai_error(404, f"Invalid URL ({request.method} {request.path})")
        denied = _openai_auth(request, key)
        if denied is not None:
            return denied
        try:
            body = request.json()
        except ValueError:
            body = None
        invalid = _openai_check(body)
        if invalid is not None:
            return invalid
        fmt = body.get("response_format", "mp3")
        if fmt not in ("pcm", "wav"):
            return _openai_error(400, f"fake limit: only pcm and wav are served, not {fmt}")
        voice = body["voice"] if isinstance(body["voice"], str) else body["voice"]["id"]
        clip = speak(body["input"], voice, float(body.get("speed", 1.0)), OPENAI_PCM_RATE)
        if fmt == "wav":
            return Response(200, wav16(clip), "audio/wav")
        return Response(200, pcm16(clip), "audio/pcm")

    return answer


# ----------------------------------------------------------------------------- ElevenLabs

ELEVENLABS_PCM = re.compile(r"^pcm_(8000|16000|22050|24000|44100|48000)$")
ELEVENLABS_OTHER = re.compile(r"^(mp3_\d+_\d+|opus_\d+_\d+|ulaw_8000|alaw_8000|wav_\d+)$")
_VOICE_PATH = re.compile(r"^/v1/text-to-speech/([^/]+)$")


def _elevenlabs_invalid(loc: list[str], msg: str, kind: str) -> Response:
    return Response.of_json(422, {"detail": [{"type": kind, "loc": loc, "msg": msg}]})


def _elevenlabs_check(request: Request) -> Response | dict[str, Any]:
    """The validated body, or the error response."""
    fmt = request.query.get("output_format", "mp3_44100_128")
    if not (ELEVENLABS_PCM.match(fmt) or ELEVENLABS_OTHER.match(fmt)):
        return _elevenlabs_invalid(["query", "output_format"], f"invalid {fmt!r}", "enum")
    try:
        body = request.json()
    except ValueError:
        return _elevenlabs_invalid(["body"], "JSON decode error", "json_invalid")
    if not isinstance(body, dict) or not isinstance(body.get("text"), str):
        return _elevenlabs_invalid(["body", "text"], "Field required", "missing")
    speed = (body.get("voice_settings") or {}).get("speed", 1.0)
    if not isinstance(speed, int | float):
        return _elevenlabs_invalid(["body", "voice_settings", "speed"], "not a number", "float")
    return body


def elevenlabs_answer(key: str) -> Answer:
    def answer(request: Request) -> Response:
        match = _VOICE_PATH.match(request.path)
        if request.method != "POST" or match is None:
            return Response.of_json(404, {"detail": "Not Found"})
        if request.headers.get("xi-api-key") != key:
            detail = {"status": "invalid_api_key", "message": "Invalid API key"}
            return Response.of_json(401, {"detail": detail})
        body = _elevenlabs_check(request)
        if isinstance(body, Response):
            return body
        fmt = request.query.get("output_format", "mp3_44100_128")
        pcm = ELEVENLABS_PCM.match(fmt)
        if pcm is None:
            message = f"fake limit: only pcm_* output is served, not {fmt}"
            return Response.of_json(400, {"detail": {"status": "fake_limit", "message": message}})
        speed = float((body.get("voice_settings") or {}).get("speed", 1.0))
        clip = speak(body["text"], match.group(1), speed, int(pcm.group(1)))
        return Response(200, pcm16(clip), "audio/pcm")

    return answer


# ----------------------------------------------------------------------------- Cartesia

# API versions are dates (2024-06-10, 2024-11-13, 2025-04-16, ... ; the cartesia 4.2.0 SDK
# sends 2026-08-14): the fake takes any date from the first on rather than a list that ages.
FIRST_CARTESIA_VERSION = "2024-06-10"
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
CARTESIA_ENCODINGS = {"pcm_s16le", "pcm_f32le", "pcm_mulaw", "pcm_alaw"}


def _cartesia_error(status: int, message: str) -> Response:
    return Response.of_json(status, {"error": message})


def _cartesia_check(body: Any) -> str | None:
    """What is wrong with a /tts/bytes body, or None."""
    if not isinstance(body, dict):
        return "request body must be a JSON object"
    for name in ("model_id", "transcript", "voice", "output_format"):
        if name not in body:
            return f"missing required field: {name}"
    voice = body["voice"]
    if not isinstance(voice, dict) or voice.get("mode") != "id" or not voice.get("id"):
        return "voice must be {mode: 'id', id: VOICE_ID}"
    out = body["output_format"]
    if not isinstance(out, dict) or out.get("container") not in ("raw", "wav", "mp3"):
        return "output_format.container must be raw, wav or mp3"
    if out["container"] != "mp3" and out.get("encoding") not in CARTESIA_ENCODINGS:
        return f"output_format.encoding must be one of {sorted(CARTESIA_ENCODINGS)}"
    if not isinstance(out.get("sample_rate"), int) or out["sample_rate"] <= 0:
        return "output_format.sample_rate must be a positive integer"
    return None


def cartesia_answer(key: str) -> Answer:
    def answer(request: Request) -> Response:
        if request.method != "POST" or request.path != "/tts/bytes":
            return _cartesia_error(404, "not found")
        version = request.headers.get("cartesia-version", "")
        if not (_DATE.match(version) and version >= FIRST_CARTESIA_VERSION):
            message = f"Cartesia-Version must be an API version date, not {version!r}"
            return _cartesia_error(400, message)
        bearer = request.headers.get("authorization", "").removeprefix("Bearer ").strip()
        if key not in (request.headers.get("x-api-key"), bearer):
            return _cartesia_error(401, "Invalid API key")
        try:
            body = request.json()
        except ValueError:
            body = None
        problem = _cartesia_check(body)
        if problem is not None:
            return _cartesia_error(400, problem)
        out = body["output_format"]
        if out["container"] != "raw" or out["encoding"] not in ("pcm_s16le", "pcm_f32le"):
            return _cartesia_error(400, "fake limit: only raw pcm_s16le/pcm_f32le is served")
        clip = speak(body["transcript"], body["voice"]["id"], 1.0, out["sample_rate"])
        if out["encoding"] == "pcm_f32le":
            return Response(200, clip.samples.astype("<f4").tobytes(), "audio/pcm")
        return Response(200, pcm16(clip), "audio/pcm")

    return answer


# ----------------------------------------------------------------------------- server


@dataclass
class FakeTtsServer:
    """An HTTP server on 127.0.0.1 (free port) answering with ``answer``; records requests.

    ``url`` is the base URL to put in ``*_BASE_URL`` (``prefix`` appended, e.g. ``/v1``
    for OpenAI, whose SDK's base URL includes it)."""

    answer: Answer
    prefix: str = ""
    requests: list[Request] = field(default_factory=list)
    # Answers given before ``answer`` is asked, first one first (rate limits, outages).
    queued: list[Response] = field(default_factory=list)
    _server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        assert self._server is not None, "server not started"
        return f"http://127.0.0.1:{self._server.server_address[1]}{self.prefix}"

    def __enter__(self) -> FakeTtsServer:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        # A short poll interval: shutdown() waits up to one interval.
        serve = functools.partial(self._server.serve_forever, poll_interval=0.05)
        threading.Thread(target=serve, daemon=True, name="tts-fake").start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
                self._serve()

            def do_GET(self) -> None:  # noqa: N802
                self._serve()

            def _serve(self) -> None:
                parts = urlsplit(self.path)
                length = int(self.headers.get("Content-Length") or 0)
                request = Request(
                    method=self.command,
                    path=parts.path,
                    query={k: v[-1] for k, v in parse_qs(parts.query).items()},
                    headers={k.lower(): v for k, v in self.headers.items()},
                    body=self.rfile.read(length),
                )
                fake.requests.append(request)
                response = fake.queued.pop(0) if fake.queued else fake.answer(request)
                self.send_response(response.status)
                self.send_header("Content-Type", response.content_type)
                for name, value in response.headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(response.body)))
                self.end_headers()
                self.wfile.write(response.body)

            def log_message(self, format: str, *args: Any) -> None:  # quiet test output
                pass

        return Handler


def openai_fake(key: str) -> FakeTtsServer:
    return FakeTtsServer(openai_answer(key), prefix="/v1")


def elevenlabs_fake(key: str) -> FakeTtsServer:
    return FakeTtsServer(elevenlabs_answer(key))


def cartesia_fake(key: str) -> FakeTtsServer:
    return FakeTtsServer(cartesia_answer(key))
