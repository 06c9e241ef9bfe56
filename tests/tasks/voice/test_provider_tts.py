"""Hosted caller voices (tasks/voice/providers) against local fakes of the providers' APIs.

The fakes (tests/fakes/tts_apis.py) speak each API's published protocol and answer with
real eSpeak speech, so these tests exercise the real clients (LiteLLM for OpenAI and
ElevenLabs, pointed at the fake by its base URL; the official SDK for Cartesia), their
retries, the PCM decoding, and the official SDKs against the same fakes."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import numpy as np
import pytest

from perturbations.audio import VoiceSpec
from scenarios.loader import load_eva_scenarios
from tasks.config import CallerSpec
from tasks.simulate import SimulationConfig, simulate
from tasks.simulation import simulation_config
from tasks.voice.providers._common import Provider
from tasks.voice.providers.openai_tts import OPENAI
from tasks.voice.tts import TTS_ENGINES, TtsError, synthesize
from tests.fakes.tts_apis import (
    FakeTtsServer,
    Response,
    cartesia_fake,
    elevenlabs_fake,
    openai_fake,
    openai_rate_limited,
)
from tests.tasks.simulate.clocks.short_calls import first_lines
from tests.tasks.specs import trial_spec

KEY = "sk-test-0123456789abcdef"
TEXT = "Hi, I need to change my flight to March twenty fifth, please."
REPO = Path(__file__).resolve().parents[3]


def elevenlabs_busy() -> Response:
    """ElevenLabs' 429 (its reference's ``too_many_concurrent_requests``)."""
    detail = {"status": "too_many_concurrent_requests", "message": "Too many concurrent requests"}
    return Response(
        429, Response.of_json(429, {"detail": detail}).body, headers={"Retry-After": "0"}
    )


def cartesia_busy() -> Response:
    body = Response.of_json(429, {"error": "Rate limit exceeded"}).body
    return Response(429, body, headers={"Retry-After": "0"})


@dataclass(frozen=True)
class Engine:
    name: str
    fake: Callable[[str], FakeTtsServer]
    key_env: str
    url_env: str
    rate: int
    provider_message: str  # what the provider says on a wrong key
    busy: Callable[[], Response]  # its 429
    busy_message: str


ENGINES = [
    Engine(
        "openai",
        openai_fake,
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        24000,
        "Incorrect API key",
        openai_rate_limited,
        "Rate limit reached",
    ),
    Engine(
        "elevenlabs",
        elevenlabs_fake,
        "ELEVENLABS_API_KEY",
        "ELEVENLABS_BASE_URL",
        16000,
        "Invalid API key",
        elevenlabs_busy,
        "Too many concurrent requests",
    ),
    Engine(
        "cartesia",
        cartesia_fake,
        "CARTESIA_API_KEY",
        "CARTESIA_BASE_URL",
        24000,
        "Invalid API key",
        cartesia_busy,
        "Rate limit exceeded",
    ),
]


@pytest.fixture(params=ENGINES, ids=[e.name for e in ENGINES])
def served(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[Engine, FakeTtsServer]]:
    engine: Engine = request.param
    with engine.fake(KEY) as fake:
        monkeypatch.setenv(engine.key_env, KEY)
        monkeypatch.setenv(engine.url_env, fake.url)
        yield engine, fake


def test_hosted_engines_are_discovered_without_importing_their_clients() -> None:
    assert {"openai", "elevenlabs", "cartesia"} <= set(TTS_ENGINES.names())
    code = (
        "import sys; from tasks.voice.tts import TTS_ENGINES;"
        "names = TTS_ENGINES.names(); print('openai' in names,"
        " *(m in sys.modules for m in ('httpx', 'litellm', 'cartesia')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True
    )
    assert out.stdout.split() == ["True", "False", "False", "False"]


def test_preparing_the_voice_imports_its_client_and_sends_nothing() -> None:
    """A call builds its voice before its clock runs (``prepare_engine``): LiteLLM's import
    and the voice's Router are paid there, so the first turn reuses that Router."""
    code = (
        "import sys\n"
        "from perturbations.audio import VoiceSpec\n"
        "from tasks.voice.tts import prepare_engine, synthesize\n"
        "from tests.fakes.tts_apis import openai_fake\n"
        "import os\n"
        f"os.environ['OPENAI_API_KEY'] = {KEY!r}\n"
        "with openai_fake(os.environ['OPENAI_API_KEY']) as fake:\n"
        "    os.environ['OPENAI_BASE_URL'] = fake.url\n"
        "    prepare_engine('openai', VoiceSpec(voice='tts-1:alloy'))\n"
        "    from tasks import llm_router\n"
        "    warmed = 'litellm' in sys.modules, len(fake.requests), len(llm_router._ROUTERS)\n"
        "    synthesize('Hello there.', VoiceSpec(voice='tts-1:alloy'), 'openai')\n"
        "    print(*warmed, len(fake.requests), len(llm_router._ROUTERS))\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "OPENAI_BASE_URL")}
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, env=env
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["True", "0", "1", "1", "1"]


def test_engine_speaks_through_its_fake(served: tuple[Engine, FakeTtsServer]) -> None:
    engine, fake = served
    clip = synthesize(TEXT, VoiceSpec(), engine.name)
    assert clip.rate == engine.rate
    assert clip.rms() > 0.01  # speech, not silence
    # ~11 words at the default 165 wpm is ~4 s; eSpeak's pauses and lead-in widen it.
    expected_s = len(TEXT.split()) / (165 / 60)
    assert 0.5 * expected_s < clip.duration_s < 2.0 * expected_s
    assert len(fake.requests) == 1 and fake.requests[0].method == "POST"


def test_request_fields_reach_the_wire(served: tuple[Engine, FakeTtsServer]) -> None:
    engine, fake = served
    name = "shimmer" if engine.name == "openai" else "voice42"
    synthesize(TEXT, VoiceSpec(voice=f"my-model:{name}", rate_wpm=330), engine.name)
    sent = fake.requests[0]
    body = sent.json()
    if engine.name == "openai":
        assert sent.headers["authorization"] == f"Bearer {KEY}"
        assert (body["model"], body["voice"], body["response_format"]) == (
            "my-model",
            "shimmer",
            "pcm",
        )
        assert body["speed"] == 2.0
    elif engine.name == "elevenlabs":
        assert sent.path == "/v1/text-to-speech/voice42"
        assert sent.query == {"output_format": "pcm_16000"}
        assert sent.headers["xi-api-key"] == KEY
        assert body["model_id"] == "my-model" and body["voice_settings"]["speed"] == 1.2
    else:
        assert sent.headers["authorization"] == f"Bearer {KEY}" and sent.headers["cartesia-version"]
        assert body["voice"] == {"mode": "id", "id": "voice42"}
        assert body["output_format"] == {
            "container": "raw",
            "encoding": "pcm_s16le",
            "sample_rate": 24000,
        }


def test_speed_changes_the_audio(served: tuple[Engine, FakeTtsServer]) -> None:
    """Where a speed parameter exists, a faster persona is shorter speech (Cartesia: none)."""
    engine, _ = served
    normal = synthesize(TEXT, VoiceSpec(), engine.name).duration_s
    fast = synthesize(TEXT, VoiceSpec(rate_wpm=300), engine.name).duration_s
    if engine.name == "cartesia":
        assert fast == pytest.approx(normal)
    else:
        assert fast < 0.9 * normal


def test_wrong_key_names_engine_status_and_provider_message(
    served: tuple[Engine, FakeTtsServer], monkeypatch: pytest.MonkeyPatch
) -> None:
    engine, fake = served
    monkeypatch.setenv(engine.key_env, "sk-wrong-key-000000")
    with pytest.raises(TtsError) as err:
        synthesize(TEXT, VoiceSpec(), engine.name)
    message = str(err.value)
    assert engine.name in message and "HTTP 401" in message
    assert engine.provider_message in message
    assert len(fake.requests) == 1  # a bad key is not retried


def test_missing_key_names_the_variable(
    served: tuple[Engine, FakeTtsServer], monkeypatch: pytest.MonkeyPatch
) -> None:
    engine, fake = served
    monkeypatch.delenv(engine.key_env)
    with pytest.raises(TtsError, match=engine.key_env):
        synthesize(TEXT, VoiceSpec(), engine.name)
    assert fake.requests == []  # nothing was sent without a key


def test_rate_limits_are_retried(served: tuple[Engine, FakeTtsServer]) -> None:
    """The client's own retries (LiteLLM's Router, Cartesia's SDK): two 429s then speech is
    speech; three 429s are the provider's error after three attempts."""
    engine, fake = served
    fake.queued += [engine.busy(), engine.busy()]
    clip = synthesize(TEXT, VoiceSpec(), engine.name)
    assert clip.rms() > 0.01 and len(fake.requests) == 3
    fake.queued += [engine.busy()] * 3
    with pytest.raises(TtsError) as err:
        synthesize(TEXT, VoiceSpec(), engine.name)
    message = str(err.value)
    assert message.startswith(f"{engine.name} TTS: HTTP 429 ")
    assert "after 3 attempts" in message and engine.busy_message in message
    assert len(fake.requests) == 6


@pytest.mark.parametrize("payload", [b"", b"\x01\x02\x03"])
def test_audio_that_is_not_pcm16_is_a_tts_error(
    served: tuple[Engine, FakeTtsServer], payload: bytes
) -> None:
    engine, fake = served
    fake.queued.append(Response(200, payload, "audio/pcm"))
    with pytest.raises(TtsError, match=rf"^{engine.name} TTS returned {len(payload)} bytes"):
        synthesize(TEXT, VoiceSpec(), engine.name)
    assert len(fake.requests) == 1


def test_a_rejected_request_is_not_retried(served: tuple[Engine, FakeTtsServer]) -> None:
    """A request the provider refuses as malformed (here the fake's 400/422 on the voice or
    body) is the provider's message at once, not three attempts."""
    engine, fake = served
    fake.queued.append(Response.of_json(400, {"error": {"message": "Invalid value for 'voice'"}}))
    with pytest.raises(TtsError, match=rf"^{engine.name} TTS: HTTP 400 .*Invalid value for"):
        synthesize(TEXT, VoiceSpec(), engine.name)
    assert len(fake.requests) == 1


def test_unreachable_provider_is_a_tts_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # discard port: refused
    with pytest.raises(TtsError, match="openai TTS: request to"):
        synthesize(TEXT, VoiceSpec(), "openai")


@pytest.mark.parametrize(
    ("voice", "expected"),
    [
        (VoiceSpec(voice="alloy"), ("gpt-4o-mini-tts", "alloy")),
        (VoiceSpec(voice="tts-1:echo"), ("tts-1", "echo")),
        (VoiceSpec(voice="en-us+klatt5", pitch=70), ("gpt-4o-mini-tts", "nova")),
        (VoiceSpec(voice="en-gb-scotland+klatt3", pitch=50), ("gpt-4o-mini-tts", "onyx")),
        (VoiceSpec(voice="tts-1:en-us"), ("tts-1", "onyx")),
        (VoiceSpec(voice="en-us", pitch=75), ("gpt-4o-mini-tts", "nova")),
        # A retake moves the pitch by up to 12: the persona's voice stays the same.
        (VoiceSpec(voice="en-us+klatt5", pitch=58), ("gpt-4o-mini-tts", "nova")),
        (VoiceSpec(voice="en-us+klatt3", pitch=62), ("gpt-4o-mini-tts", "onyx")),
    ],
)
def test_voice_string(voice: VoiceSpec, expected: tuple[str, str]) -> None:
    assert OPENAI.model_and_voice(voice) == expected


def test_cartesia_uuid_is_not_taken_for_an_espeak_name() -> None:
    provider = Provider("x", "K", "U", "http://h", "m", "high", "low")
    uuid = "a0e99841-438c-4a64-b679-ae501e7d6091"
    assert provider.model_and_voice(VoiceSpec(voice=uuid)) == ("m", uuid)


# ----------------------------------------------------------------------------- the fakes


def test_openai_sdk_talks_to_the_fake_unchanged() -> None:
    """The official client, configured only by base URL and key, gets PCM and typed errors."""
    import openai

    with openai_fake(KEY) as fake:
        client = openai.OpenAI(api_key=KEY, base_url=fake.url, max_retries=0)
        speech = client.audio.speech.create(
            model="gpt-4o-mini-tts", voice="alloy", input=TEXT, response_format="pcm"
        )
        samples = np.frombuffer(speech.content, dtype="<i2")
        assert samples.size / 24000 > 1.5 and np.abs(samples).max() > 1000
        wrong = openai.OpenAI(api_key="sk-wrong-key-000000", base_url=fake.url, max_retries=0)
        with pytest.raises(openai.AuthenticationError) as err:
            wrong.audio.speech.create(model="tts-1", voice="alloy", input=TEXT)
        assert err.value.status_code == 401 and err.value.code == "invalid_api_key"
        with pytest.raises(openai.BadRequestError) as bad:
            client.audio.speech.create(model="tts-1", voice="alloy", input=TEXT, speed=9.0)
        assert bad.value.param == "speed"


def test_elevenlabs_sdk_talks_to_the_fake_unchanged() -> None:
    """Runs where the ``elevenlabs`` SDK is installed (not a dependency of evaflow)."""
    client_module = pytest.importorskip("elevenlabs.client")
    with elevenlabs_fake(KEY) as fake:
        client = client_module.ElevenLabs(api_key=KEY, base_url=fake.url)
        chunks = client.text_to_speech.convert(
            "JBFqnCBsd6RMkjVDRZzb", text=TEXT, output_format="pcm_16000"
        )
        samples = np.frombuffer(b"".join(chunks), dtype="<i2")
        assert samples.size / 16000 > 1.5 and np.abs(samples).max() > 1000
        wrong = client_module.ElevenLabs(api_key="bad", base_url=fake.url)
        with pytest.raises(Exception) as err:
            b"".join(wrong.text_to_speech.convert("x", text=TEXT, output_format="pcm_16000"))
        assert getattr(err.value, "status_code", None) == 401


def test_cartesia_sdk_talks_to_the_fake_unchanged() -> None:
    """Runs where the ``cartesia`` SDK is installed (4.x sends a 2026 version, Bearer auth)."""
    cartesia = pytest.importorskip("cartesia")
    with cartesia_fake(KEY) as fake:
        client = cartesia.Cartesia(api_key=KEY, base_url=fake.url, max_retries=0)
        response = client.tts.generate(
            model_id="sonic-2",
            transcript=TEXT,
            voice={"mode": "id", "id": "694f9389-aac1-45b6-b726-9d9369183238"},
            output_format={"container": "raw", "encoding": "pcm_s16le", "sample_rate": 24000},
        )
        samples = np.frombuffer(response.read(), dtype="<i2")
        assert samples.size / 24000 > 1.5 and np.abs(samples).max() > 1000
        wrong = cartesia.Cartesia(api_key="bad", base_url=fake.url, max_retries=0)
        with pytest.raises(cartesia.AuthenticationError):
            wrong.tts.generate(
                model_id="sonic-2",
                transcript=TEXT,
                voice={"mode": "id", "id": "v"},
                output_format={"container": "raw", "encoding": "pcm_s16le", "sample_rate": 8000},
            ).read()


def test_fakes_reject_what_the_providers_reject() -> None:
    """Each fake validates the request: a lenient fake would let a wrong client pass."""
    with openai_fake(KEY) as fake:
        r = httpx.post(
            f"{fake.url}/audio/speech",
            headers={"Authorization": f"Bearer {KEY}"},
            json={"model": "tts-1", "voice": "alloy"},
        )
        assert r.status_code == 400 and r.json()["error"]["param"] == "input"
    with elevenlabs_fake(KEY) as fake:
        r = httpx.post(f"{fake.url}/v1/text-to-speech/abc", headers={"xi-api-key": KEY}, json={})
        assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["body", "text"]
    with cartesia_fake(KEY) as fake:
        body = {"model_id": "sonic-2", "transcript": "hi", "voice": {"mode": "id", "id": "v"}}
        r = httpx.post(f"{fake.url}/tts/bytes", headers={"X-API-Key": KEY}, json=body)
        assert r.status_code == 400 and "Cartesia-Version" in r.json()["error"]
        headers = {"X-API-Key": KEY, "Cartesia-Version": "2024-11-13"}
        r = httpx.post(f"{fake.url}/tts/bytes", headers=headers, json=body)
        assert r.status_code == 400 and "output_format" in r.json()["error"]


# ----------------------------------------------------------------------------- a call


def test_run_config_caller_params_pick_the_engine_and_voice() -> None:
    """The README's form, ``caller: {params: {tts: openai, voice: {...}}}``, reaches the call."""
    params = {"tts": "openai", "voice": {"voice": "tts-1:alloy"}}
    spec = trial_spec(caller=CallerSpec(name="scripted", params=params))
    config = simulation_config(spec, 1)
    assert config.caller_tts == "openai"
    assert config.caller_voice == VoiceSpec(voice="tts-1:alloy")
    assert config.caller_params == {}


def test_audio_call_with_an_openai_caller_voice(
    eva_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A one-line audio call whose caller speaks through the OpenAI fake: the reference agent
    recognises the first caller turn from that audio."""
    record_ = load_eva_scenarios(eva_root, ["itsm"], ["14"])[0]
    scenario = first_lines(record_, 1).model_copy(update={"expected_db": record_.initial_db})
    with openai_fake(KEY) as fake:
        monkeypatch.setenv("OPENAI_API_KEY", KEY)
        monkeypatch.setenv("OPENAI_BASE_URL", fake.url)
        config = SimulationConfig(
            mode="audio", audio_dir=tmp_path, cache_dir=tmp_path / "cache", caller_tts="openai"
        )
        record = simulate(scenario, config)
    assert record.status == "ok", record.error
    user_turns = record.turns_of("user")
    assert user_turns and user_turns[0].heard_text.strip()
    said = [r.json()["input"] for r in fake.requests]
    assert len(said) == len(user_turns) and said[0]  # every caller turn was voiced by the fake


def test_a_call_without_the_key_ends_as_an_infra_error_naming_it(
    eva_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A missing key is the harness's fault, not the agent's: the record says which one."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    record_ = load_eva_scenarios(eva_root, ["itsm"], ["14"])[0]
    scenario = first_lines(record_, 1).model_copy(update={"expected_db": record_.initial_db})
    config = SimulationConfig(
        mode="audio", audio_dir=tmp_path, cache_dir=tmp_path / "cache", caller_tts="openai"
    )
    record = simulate(scenario, config)
    assert record.status == "infra_error" and "OPENAI_API_KEY" in (record.error or "")
