"""A local fake of the Gemini Live API (``BidiGenerateContent`` over WebSocket), for tests.

Message names and shapes follow the published schema: the Live API reference
(https://ai.google.dev/api/live: ``BidiGenerateContentSetup`` / ``setupComplete``,
``BidiGenerateContentRealtimeInput`` with ``audio`` (or the older ``mediaChunks``) blobs
of ``audio/pcm;rate=16000``, ``BidiGenerateContentClientContent`` ``turns`` +
``turnComplete``, ``BidiGenerateContentToolResponse`` ``functionResponses``;
``BidiGenerateContentServerContent`` with ``modelTurn.parts[].inlineData`` audio of
``audio/pcm;rate=24000``, ``inputTranscription`` / ``outputTranscription``,
``generationComplete``, ``turnComplete``, ``interrupted``; ``toolCall.functionCalls``;
``usageMetadata`` with ``promptTokenCount``, ``responseTokenCount``, ``totalTokenCount``
and per-modality ``promptTokensDetails`` / ``responseTokensDetails``) and the
``google-genai`` SDK types that parse them (``google.genai.types.LiveServerMessage``,
``LiveClientMessage``; JSON keys camelCase as the SDK's ``_live_converters`` writes them).
The endpoint path is the SDK's:
``/ws/google.ai.generativelanguage.{v1beta|v1alpha}.GenerativeService.BidiGenerateContent``
with the API key as ``?key=`` (or ``x-goog-api-key``).

The SDK always connects with ``wss://`` when it has an API key (it rewrites the base
URL's scheme), so the fake serves TLS with a throwaway self-signed certificate for
127.0.0.1 (:func:`self_signed`); clients trust it through ``SSL_CERT_FILE`` (which the SDK
reads for its WebSocket SSL context) or an ``ssl`` context of their own.

The fake listens (VAD turns on the 16 kHz input, PocketSphinx), decides with the brain and
answers with eSpeak speech at 24 kHz, paced at real time after a head start; caller speech
while it is answering stops the answer with ``serverContent.interrupted``. Audio tokens are
counted at 32 per second (Gemini's token counting guide for audio); text at ~4 chars a token.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import datetime
import ipaddress
import json
import os
import re
import ssl
from pathlib import Path
from typing import Any

from websockets.asyncio.server import ServerConnection
from websockets.exceptions import ConnectionClosed

from tasks.systems.standins.audio import (
    Brain,
    Dialogue,
    Ears,
    ServerThread,
    TurnEvent,
    chunks,
    decode_audio,
    encode_audio,
    paced,
    speak,
    text_tokens,
)
from tasks.voice.stt import Recognizer

IN_RATE = 16000
OUT_RATE = 24000
AUDIO_TOKENS_PER_S = 32
PATH = re.compile(
    r"^/ws/google\.ai\.generativelanguage\.v1(alpha|beta)\.GenerativeService\.BidiGenerateContent"
)
# Fields of the client messages whose value is a ``google.protobuf.Struct`` (user data).
STRUCT_FIELDS = frozenset({"response", "args", "parametersJsonSchema", "responseJsonSchema"})
# ``map<string, Schema>`` fields: the keys are the client's names, the values messages.
MAP_FIELDS = frozenset({"properties"})


def _camel(key: str) -> str:
    head, *rest = key.split("_")
    return head + "".join(p[:1].upper() + p[1:] for p in rest)


def camel(value: Any) -> Any:
    """Protobuf JSON accepts both spellings of a field name; normalise the client's field
    names to camelCase. Only field names: the keys of a ``google.protobuf.Struct`` (a
    tool's ``response``, a call's ``args``, a JSON schema) and of a map (a schema's
    ``properties``) are the client's data, which the real API keeps as sent (a tool result's
    ``error_type`` is not ``errorType`` to the model that reads it)."""
    if isinstance(value, list):
        return [camel(v) for v in value]
    if not isinstance(value, dict):
        return value
    out: dict[str, Any] = {}
    for key, item in value.items():
        name = _camel(key)
        if name in STRUCT_FIELDS:
            out[name] = item
        elif name in MAP_FIELDS and isinstance(item, dict):
            out[name] = {k: camel(v) for k, v in item.items()}
        else:
            out[name] = camel(item)
    return out


def b64bytes(data: str) -> bytes:
    """Protobuf JSON bytes: standard or URL-safe base64, padding optional (the SDK sends
    URL-safe)."""
    return base64.urlsafe_b64decode(
        data.replace("+", "-").replace("/", "_") + "=" * (-len(data) % 4)
    )


def _rate(mime: str, default: int) -> int:
    match = re.search(r"rate=(\d+)", mime or "")
    return int(match.group(1)) if match else default


class LiveSession:
    """One ``BidiGenerateContent`` stream."""

    def __init__(self, ws: ServerConnection, brain: Brain, recognizer: Recognizer) -> None:
        self.ws = ws
        self.dialogue = Dialogue(brain)
        self.ears = Ears(recognizer)
        self.setup: dict[str, Any] = {}
        self.answer: asyncio.Task[None] | None = None
        self.tasks: set[asyncio.Task[None]] = set()
        self.usage_log: list[dict[str, Any]] = []
        self.instruction = ""
        # Caller turns enter the history in the order they were spoken, however long
        # each one's decoding takes (asyncio.Lock wakes its waiters first come, first served).
        self.hearing = asyncio.Lock()

    async def send(self, message: dict[str, Any]) -> None:
        await self.ws.send(json.dumps(message))

    async def run(self) -> None:
        try:
            first = camel(json.loads(await self.ws.recv()))
            if "setup" not in first:
                await self.ws.close(1007, "first message must be setup")
                return
            self.setup = first["setup"]
            instruction = self.setup.get("systemInstruction") or {}
            parts = instruction.get("parts") or [] if isinstance(instruction, dict) else []
            self.instruction = " ".join(str(p.get("text") or "") for p in parts)
            self.dialogue.instruct(self.instruction)
            await self.send({"setupComplete": {}})
            async for raw in self.ws:
                await self.handle(camel(json.loads(raw)))
        except ConnectionClosed:
            pass
        finally:
            for task in [*self.tasks, self.answer]:
                if task is not None:
                    task.cancel()

    def _spawn(self, coro: Any) -> asyncio.Task[None]:
        task = asyncio.create_task(coro)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        return task

    async def handle(self, message: dict[str, Any]) -> None:
        if "realtimeInput" in message:
            data = message["realtimeInput"]
            blobs = [data["audio"]] if data.get("audio") else list(data.get("mediaChunks") or [])
            for blob in blobs:
                rate = _rate(str(blob.get("mimeType")), IN_RATE)
                clip = decode_audio(b64bytes(blob["data"]), "pcm16", rate)
                for turn in self.ears.feed(clip):
                    await self.on_turn(turn)
            if data.get("text") is not None:
                self.user_text(str(data["text"]))
                self.start_answer()
        elif "clientContent" in message:
            content = message["clientContent"]
            for turn in content.get("turns") or []:
                text = " ".join(str(p.get("text") or "") for p in turn.get("parts") or [])
                if turn.get("role") == "model":
                    self.dialogue.messages.append({"role": "assistant", "content": text})
                else:
                    self.user_text(text)
            if content.get("turnComplete"):
                self.start_answer()
        elif "toolResponse" in message:
            for response in message["toolResponse"].get("functionResponses") or []:
                output = response.get("response")
                self.dialogue.tool_result(str(response.get("id")), json.dumps(output))
            if not self.dialogue.pending_tool_calls():
                self.start_answer()
        else:
            await self.ws.close(1007, f"unknown client message {sorted(message)}")

    def user_text(self, text: str) -> None:
        """A user text turn, unless it only asks the model to begin: Pipecat seeds a
        context that holds nothing but the system prompt as a user turn repeating that
        prompt (plus a blank turn on 2.5 models, a blank ``realtimeInput.text`` nudge on
        3.x) to make the model speak first. The instruction is already the model's, and
        taking it for the caller's words would skip the greeting and answer a call
        nobody has made yet."""
        said = text.strip()
        if said and said != self.instruction.strip():
            self.dialogue.user(text)

    async def on_turn(self, turn: TurnEvent) -> None:
        if turn.kind == "start":
            if self.answer is not None and not self.answer.done():
                self.answer.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await self.answer
                await self.send({"serverContent": {"interrupted": True}})
            return
        self._spawn(self.hear(turn))

    async def hear(self, turn: TurnEvent) -> None:
        assert turn.clip is not None
        async with self.hearing:
            text = await self.ears.transcribe(turn.clip, self.dialogue.expectation())
            if self.setup.get("inputAudioTranscription") is not None:
                await self.send({"serverContent": {"inputTranscription": {"text": text}}})
            self.dialogue.user(text, turn.clip.duration_s)
        self.start_answer()

    def start_answer(self) -> None:
        if self.answer is not None and not self.answer.done():
            return  # one model turn at a time; the history already holds the new input
        self.answer = asyncio.create_task(self.respond())

    async def respond(self) -> None:
        message = await self.dialogue.reply()
        calls = message.get("tool_calls") or []
        if calls:
            usage = self.usage(0.0, " ".join(c["function"]["arguments"] for c in calls))
            await self.send(
                {
                    "usageMetadata": usage,
                    "toolCall": {
                        "functionCalls": [
                            {
                                "id": c["id"],
                                "name": c["function"]["name"],
                                "args": json.loads(c["function"]["arguments"] or "{}"),
                            }
                            for c in calls
                        ]
                    },
                }
            )
            return
        text = str(message.get("content") or "")
        clip = await speak(text) if text.strip() else None
        await self.send({"serverContent": {"outputTranscription": {"text": text}}})

        async def send_audio(piece: Any) -> None:
            data = base64.b64encode(encode_audio(piece, "pcm16", OUT_RATE)).decode()
            inline = {"mimeType": f"audio/pcm;rate={OUT_RATE}", "data": data}
            await self.send({"serverContent": {"modelTurn": {"parts": [{"inlineData": inline}]}}})

        if clip is not None:
            await paced(chunks(clip), send_audio)
        await self.send({"serverContent": {"generationComplete": True}})
        usage = self.usage(clip.duration_s if clip is not None else 0.0, text)
        await self.send({"serverContent": {"turnComplete": True}, "usageMetadata": usage})

    def usage(self, spoken_s: float, text: str) -> dict[str, Any]:
        prompt_text = self.dialogue.context_text_tokens()
        prompt_audio = round(self.dialogue.input_audio_s * AUDIO_TOKENS_PER_S)
        out_text = text_tokens(text)
        out_audio = round(spoken_s * AUDIO_TOKENS_PER_S)
        usage = {
            "promptTokenCount": prompt_text + prompt_audio,
            "responseTokenCount": out_text + out_audio,
            "totalTokenCount": prompt_text + prompt_audio + out_text + out_audio,
            "promptTokensDetails": [
                {"modality": "TEXT", "tokenCount": prompt_text},
                {"modality": "AUDIO", "tokenCount": prompt_audio},
            ],
            "responseTokensDetails": [
                {"modality": "TEXT", "tokenCount": out_text},
                {"modality": "AUDIO", "tokenCount": out_audio},
            ],
        }
        self.usage_log.append(usage)
        return usage


def self_signed(directory: Path) -> tuple[Path, Path]:
    """A throwaway certificate (and key) for 127.0.0.1, valid for a day."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    # A subject of its own: a trust bundle holding several stand-ins' certificates (a
    # rehearsal's SSL_CERT_FILE) is looked up by subject, and equal ones would collide.
    name = x509.Name(
        [
            x509.NameAttribute(
                NameOID.ORGANIZATION_NAME, f"evaflow stand-in {os.urandom(4).hex()}"
            ),
            x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1"),
        ]
    )
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost")]
            ),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = directory / "fake-gemini.pem", directory / "fake-gemini.key"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


class FakeGeminiLive:
    """The fake on a loopback TLS port: ``with FakeGeminiLive(brain, recognizer, tmp)``;
    point the SDK at ``base_url`` (``https://127.0.0.1:PORT``) and trust ``cert_file``."""

    def __init__(self, brain: Brain, recognizer: Recognizer, cert_dir: Path) -> None:
        self.brain = brain
        self.recognizer = recognizer
        self.cert_file, key_file = self_signed(cert_dir)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(self.cert_file, key_file)
        self.sessions: list[LiveSession] = []
        self.server = ServerThread(self._handle, ssl_context=context)

    async def _handle(self, ws: ServerConnection) -> None:
        request = ws.request
        path = request.path if request is not None else ""
        key = "key=" in path or bool(request and request.headers.get("x-goog-api-key"))
        if not PATH.match(path) or not key:
            await ws.close(1008, f"not a BidiGenerateContent path with an API key: {path[:80]}")
            return
        session = LiveSession(ws, self.brain, self.recognizer)
        self.sessions.append(session)
        await session.run()

    @property
    def base_url(self) -> str:
        return f"https://127.0.0.1:{self.server.port}"

    def __enter__(self) -> FakeGeminiLive:
        self.server.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.stop()
