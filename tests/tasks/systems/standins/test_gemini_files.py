"""The Gemini stand-in's Files API (:mod:`tasks.systems.standins.gemini_files`) with the
official ``google-genai`` client: a resumable upload, the file's state, a request that
names it (``fileData``) heard as audio, deletion, and the API's errors; and the limits a
judge's fallback reacts to (a request too large, inline audio not heard)."""

from __future__ import annotations

import io
from collections.abc import Iterator
from typing import Any

import pytest

from tasks.systems.standins.gemini import FakeGemini
from tasks.systems.standins.judge import JudgeBrain
from tasks.voice.stt import Recognizer, SttSpec
from tests.tasks.judges.standins import speech, wav_of

genai = pytest.importorskip("google.genai")
types = pytest.importorskip("google.genai.types")
errors = pytest.importorskip("google.genai.errors")

MODEL = "gemini-3-flash-preview"
PROMPT = 'Intended text per turn:\nTurn 1: call me tomorrow\n\nShape: {"turns": [{"turn_id": 1}]}'


@pytest.fixture(scope="module")
def recognizer(tmp_path_factory: pytest.TempPathFactory) -> Recognizer:
    return Recognizer(SttSpec(lm="general"), None, tmp_path_factory.mktemp("lm"))


@pytest.fixture(scope="module")
def wav() -> bytes:
    return wav_of(0.3, speech("call me tomorrow"), 0.3)


@pytest.fixture
def gemini(recognizer: Recognizer, request: pytest.FixtureRequest) -> Iterator[FakeGemini]:
    with FakeGemini(JudgeBrain(), recognizer, **getattr(request, "param", {})) as fake:
        yield fake


def client(gemini: FakeGemini, key: str = "test-key") -> Any:
    return genai.Client(api_key=key, http_options=types.HttpOptions(base_url=gemini.base_url))


@pytest.fixture
def sdk(gemini: FakeGemini) -> Any:
    return client(gemini)  # one client per test: a dropped Client closes its connections


def upload(sdk: Any, wav: bytes) -> Any:
    config = types.UploadFileConfig(mime_type="audio/wav", display_name="caller.wav")
    return sdk.files.upload(file=io.BytesIO(wav), config=config)


def ask(sdk: Any, part: Any) -> Any:
    contents = [types.Content(role="user", parts=[types.Part(text=PROMPT), part])]
    return sdk.models.generate_content(model=MODEL, contents=contents)


def test_the_sdk_uploads_waits_uses_and_deletes_a_file(
    gemini: FakeGemini, sdk: Any, wav: bytes
) -> None:
    uploaded = upload(sdk, wav)
    assert uploaded.name.startswith("files/") and uploaded.display_name == "caller.wav"
    assert uploaded.size_bytes == len(wav) and uploaded.mime_type == "audio/wav"
    assert uploaded.uri == f"https://generativelanguage.googleapis.com/v1beta/{uploaded.name}"
    states = [sdk.files.get(name=uploaded.name).state.name for _ in range(2)]
    assert states == ["PROCESSING", "ACTIVE"]
    answer = ask(sdk, types.Part.from_uri(file_uri=uploaded.uri, mime_type="audio/wav"))
    (heard,) = gemini.log[-1]["audio"]
    assert heard.source == "file" and "tomorrow" in heard.text
    assert "tomorrow" in answer.text  # the judge brain's transcript of what it heard
    sdk.files.delete(name=uploaded.name)
    with pytest.raises(errors.ClientError) as gone:
        sdk.files.get(name=uploaded.name)
    assert gone.value.code == 403 and gemini.files.files == {}


def test_a_file_is_refused_before_it_is_active_or_when_unknown(sdk: Any, wav: bytes) -> None:
    uploaded = upload(sdk, wav)
    part = types.Part.from_uri(file_uri=uploaded.uri, mime_type="audio/wav")
    with pytest.raises(errors.ClientError) as early:
        ask(sdk, part)
    assert early.value.code == 400 and early.value.status == "FAILED_PRECONDITION"
    with pytest.raises(errors.ClientError) as unknown:
        ask(sdk, types.Part.from_uri(file_uri="files/nosuchfile", mime_type="audio/wav"))
    assert unknown.value.code == 403 and unknown.value.status == "PERMISSION_DENIED"


def test_the_upload_needs_a_valid_key(gemini: FakeGemini, wav: bytes) -> None:
    rejected = client(gemini, key="reject")
    with pytest.raises(errors.ClientError) as denied:
        upload(rejected, wav)
    assert denied.value.code == 400 and gemini.files.files == {}


@pytest.mark.parametrize("gemini", [{"max_request_bytes": 20_000}], indirect=True)
def test_a_request_over_the_limit_is_the_apis_400(gemini: FakeGemini, sdk: Any, wav: bytes) -> None:
    assert len(wav) > 20_000
    with pytest.raises(errors.ClientError) as refused:
        ask(sdk, types.Part(inline_data=types.Blob(mime_type="audio/wav", data=wav)))
    assert refused.value.code == 400 and "payload size exceeds the limit" in str(refused.value)
    assert gemini.log == []


@pytest.mark.parametrize("gemini", [{"hear_inline_audio": False}], indirect=True)
def test_inline_audio_can_go_unheard_as_gemini_sometimes_does(
    gemini: FakeGemini, sdk: Any, wav: bytes
) -> None:
    answer = ask(sdk, types.Part(inline_data=types.Blob(mime_type="audio/wav", data=wav)))
    assert gemini.log[-1]["audio"] == [] and "No audio" in answer.text
