"""Test doubles for judges: a judge that answers with canned text, and a tiny local
chat-completions server (the protocol the ``llm`` judge speaks)."""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from tasks.judges import JudgeTask, JudgeVerdict


class CannedJudge:
    """Answers every task with the same text (or an error); records the tasks it saw."""

    def __init__(self, text: str = "", error: str | None = None, name: str = "canned") -> None:
        self.name = name
        self.text, self.error = text, error
        self.tasks: list[JudgeTask] = []

    def prompt_hash(self, metric: str) -> str:
        return "0123456789ab"

    def evaluate(self, task: JudgeTask) -> JudgeVerdict:
        self.tasks.append(task)
        return JudgeVerdict(
            judge=self.name,
            metric=task.metric,
            raw_text=self.text,
            error=self.error,
            prompt_hash=self.prompt_hash(task.metric),
        )


def completion(
    content: str, prompt_tokens: int = 120, completion_tokens: int = 30
) -> dict[str, Any]:
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens},
    }


class FakeChatServer:
    """Serves queued (status, body) replies on POST /v1/chat/completions."""

    def __init__(self) -> None:
        self.replies: deque[tuple[int, Any]] = deque()
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server naming
                length = int(self.headers.get("Content-Length", 0))
                server.requests.append(json.loads(self.rfile.read(length) or b"{}"))
                server.headers.append({k.lower(): v for k, v in self.headers.items()})
                status, body = server.replies.popleft() if server.replies else (500, "no reply")
                payload = body if isinstance(body, str) else json.dumps(body)
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(payload.encode())

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def reply(self, content: str, status: int = 200, **usage: int) -> None:
        self.replies.append((status, completion(content, **usage) if status < 400 else content))


@contextmanager
def running_server() -> Iterator[FakeChatServer]:
    server = FakeChatServer()
    server.thread.start()
    try:
        yield server
    finally:
        server.httpd.shutdown()
        server.httpd.server_close()


def write_tone_track(
    path: Path, spans: list[tuple[float, float]], seconds: float, rate: int = 16000
) -> Path:
    """A mono 16-bit WAV with a tone in each span (stands in for speech)."""
    import wave

    import numpy as np

    samples = np.zeros(int(seconds * rate), dtype=np.float32)
    for start, end in spans:
        t = np.arange(int((end - start) * rate)) / rate
        samples[int(start * rate) : int(start * rate) + t.size] = 0.3 * np.sin(2 * np.pi * 200 * t)
    with wave.open(str(path), "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(rate)
        wav.writeframes((samples * 32767).astype("<i2").tobytes())
    return path


def with_tracks(record: Any, directory: Path) -> Any:
    """``record`` with an agent and a clean caller track covering its turn segments."""
    from tasks.records import AudioRef

    refs = []
    for role, track in (("assistant", "agent"), ("user", "caller_clean")):
        spans = [(s.start_s, s.end_s) for t in record.turns_of(role) for s in t.segments]
        seconds = max([e for _, e in spans], default=1.0) + 1.0
        path = write_tone_track(directory / f"{track}.wav", spans, seconds)
        refs.append(AudioRef(track=track, path=str(path), sample_rate=16000, duration_s=seconds))
    return record.model_copy(update={"audio": refs})


def scripted_transcriber(*texts: str) -> Any:
    """A stand-in recogniser returning ``texts`` in turn order (then empty strings)."""
    queue = list(texts)
    return lambda samples, rate: queue.pop(0) if queue else ""
