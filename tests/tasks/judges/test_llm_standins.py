"""The reference's judge models through LiteLLM against the providers' stand-ins (issue 31):
faithfulness answered by Claude Opus 4.6 on the Anthropic Messages stand-in, an audio judge
by Gemini 3 Flash on the Gemini API stand-in hearing the real, silence-trimmed track
(inline WAV, or through the Files API when the inline audio is too large, refused or not
heard), and every failure of a provider a metric error with its reason.

The stand-ins answer with :class:`tasks.systems.standins.judge.JudgeBrain`: the JSON shape
the prompt asks for, built from what the request holds (the audio judge's transcripts are
what the stand-in's recogniser heard in the audio it was sent)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tasks.judges import AudioInput, JudgeTask, LLMJudge
from tasks.judges.audio_calls import judge_audio
from tasks.judges.inputs import ConversationInput, SpeechFidelityInput
from tasks.judges.parsing import PARSE_ERROR
from tasks.judges.prompts import template
from tasks.judges.scoring import score_dimensions, score_per_turn
from tasks.systems.standins.anthropic import FakeAnthropic
from tasks.systems.standins.gemini import AUDIO_TOKENS_PER_S, FakeGemini
from tasks.systems.standins.judge import NO_AUDIO, JudgeBrain
from tasks.systems.standins.openai_http import FakeOpenAIHTTP
from tasks.voice.stt import Recognizer, SttSpec
from tests.tasks.judges.standins import model_list, placeholder_keys, speech, wav_of  # noqa: F401
from tests.tasks.judges.test_llm import DIMS, TRACE

FIRST = "my booking code is alpha bravo seven"
SECOND = "please move my flight to friday morning"
pytestmark = pytest.mark.usefixtures("placeholder_keys")


@pytest.fixture(scope="module")
def recognizer(tmp_path_factory: pytest.TempPathFactory) -> Recognizer:
    return Recognizer(SttSpec(lm="general"), None, tmp_path_factory.mktemp("lm"))


@pytest.fixture(scope="module")
def track(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The caller's track as a call stores it: speech between long stretches of silence."""
    path = tmp_path_factory.mktemp("audio") / "caller.wav"
    path.write_bytes(wav_of(2.0, speech(FIRST), 6.0, speech(SECOND), 4.0))
    return path


@pytest.fixture
def gemini(recognizer: Recognizer, request: pytest.FixtureRequest) -> Iterator[FakeGemini]:
    options = getattr(request, "param", {})
    with FakeGemini(JudgeBrain(), recognizer, **options) as fake:
        yield fake


def judge(sleeps: list[float] | None = None, **params: Any) -> LLMJudge:
    record = sleeps if sleeps is not None else []
    return LLMJudge({"max_retries": 0, **params}, sleep=record.append)


def faithfulness_task() -> JudgeTask:
    inputs = ConversationInput(trace=TRACE, role="Airline agent", instructions="Be exact.")
    return JudgeTask(metric="faithfulness", inputs=inputs)


def speech_task(path: Path) -> JudgeTask:
    inputs = SpeechFidelityInput(role="user", turns={1: FIRST, 2: SECOND}, variant="user")
    return JudgeTask(metric="user_speech_fidelity", inputs=inputs, audio=AudioInput(path=path))


def score_speech(verdict: Any) -> Any:
    return score_per_turn("user_speech_fidelity", verdict, [1, 2], low=1, high=3)


# ------------------------------------------------------------------ faithfulness: Claude


def test_faithfulness_is_judged_by_claude_opus_on_the_anthropic_standin() -> None:
    with FakeAnthropic(JudgeBrain()) as claude:
        entries = model_list(anthropic=claude.base_url)
        verdict = judge(model_list=entries).evaluate(faithfulness_task())
    body, headers = claude.requests[0], claude.headers[0]
    assert body["model"] == "claude-opus-4-6" and body["max_tokens"] == 100000  # spec 4.1
    assert "faithfulness" in json.dumps(body["system"]) and "Be exact." in json.dumps(
        body["messages"]
    )
    assert headers["x-api-key"] == "sk-ant-placeholder" and headers["anthropic-version"]
    assert verdict.error is None and verdict.model == "us.anthropic.claude-opus-4-6-v1"
    assert verdict.prompt_hash == template("faithfulness").hash
    usage = verdict.usage[0]
    assert (usage.model, usage.model_name) == ("claude-opus-4-6", verdict.model)
    assert usage.input_tokens > 100 and usage.output_tokens > 10
    assert usage.cost_usd == pytest.approx(5e-6 * usage.input_tokens + 25e-6 * usage.output_tokens)
    score = score_dimensions("faithfulness", verdict, DIMS)
    assert (score.score, score.normalized_score, score.error) == (3.0, 1.0, None)
    assert set(json.loads(verdict.raw_text)["dimensions"]) == set(DIMS)  # read from the prompt


# ------------------------------------------------------------------ audio: Gemini


def test_an_audio_judge_hears_the_trimmed_track_inline(gemini: FakeGemini, track: Path) -> None:
    verdict = judge(model_list=model_list(gemini=gemini.base_url)).evaluate(speech_task(track))
    assert verdict.error is None, verdict.error
    (heard,) = gemini.log[-1]["audio"]
    sent = verdict.extra["audio"]
    assert heard.source == "inline" and heard.mime == "audio/wav"
    assert sent["source"] == "inline" and sent["trimmed"] and sent["calls"] == 1
    # Spec 4.7: the 6 s gap became a 3 s join and the 4 s tail a 0.5 s one; the 2 s lead
    # stays (under 3 s is no silence); each speech range is padded by 0.1 s where it can be.
    speech_s = speech(FIRST).duration_s + speech(SECOND).duration_s
    assert sent["seconds_stored"] == pytest.approx(12.0 + speech_s, abs=1e-3)
    assert sent["seconds_sent"] == pytest.approx(2.0 + speech_s + 0.3 + 3.0 + 0.5, abs=0.06)
    # What the stand-in decoded is what the judge trimmed.
    assert heard.seconds == pytest.approx(sent["seconds_sent"], abs=1e-3)
    assert heard.seconds == pytest.approx(judge_audio(track).seconds, abs=1e-3)
    for word in ("alpha", "bravo", "flight", "friday"):
        assert word in heard.text, heard.text  # real speech, decoded and recognised
    turns = json.loads(verdict.raw_text)["turns"]
    assert [t["turn_id"] for t in turns] == [1, 2] and turns[0]["transcript"] == heard.text
    usage = verdict.usage[0]
    assert usage.model == "gemini-3-flash-preview" and usage.model_name == verdict.model
    assert usage.input_audio_tokens == round(heard.seconds * AUDIO_TOKENS_PER_S)
    score = score_speech(verdict)
    assert score.error is None and score.details["num_evaluated"] == 2


def test_audio_too_large_to_send_inline_goes_through_the_files_api(
    gemini: FakeGemini, track: Path
) -> None:
    sleeps: list[float] = []
    entries = model_list(gemini=gemini.base_url)
    verdict = judge(sleeps, model_list=entries, inline_audio_limit_bytes=1000).evaluate(
        speech_task(track)
    )
    assert verdict.error is None, verdict.error
    assert len(gemini.log) == 1 and gemini.log[0]["audio"][0].source == "file"
    name = gemini.files.log[0][1]
    # Upload, read PROCESSING, wait 2 s, read ACTIVE, use it, delete it.
    assert gemini.files.log == [("upload", name), ("get", name), ("get", name), ("delete", name)]
    assert sleeps == [2.0] and gemini.files.files == {}
    assert verdict.extra["audio"]["source"] == "file" and score_speech(verdict).error is None


@pytest.mark.parametrize("gemini", [{"max_request_bytes": 400_000}], indirect=True)
def test_inline_audio_the_api_refuses_as_too_large_is_uploaded(
    gemini: FakeGemini, track: Path
) -> None:
    wav = judge_audio(track).wav
    assert len(wav) < 400_000 < len(wav) * 4 / 3  # the file fits, its base64 does not
    sleeps: list[float] = []
    verdict = judge(sleeps, model_list=model_list(gemini=gemini.base_url)).evaluate(
        speech_task(track)
    )
    assert verdict.error is None, verdict.error
    assert len(verdict.usage) == 2 and verdict.usage[0].input_tokens == 0  # refused, then heard
    assert [a.source for entry in gemini.log for a in entry["audio"]] == ["file"]
    assert sleeps == [2.0]  # the upload's one poll; a refusal is not waited on
    assert [op for op, _ in gemini.files.log][-1] == "delete"


@pytest.mark.parametrize("gemini", [{"hear_inline_audio": False}], indirect=True)
def test_an_answer_that_heard_no_audio_is_asked_again_with_the_file(
    gemini: FakeGemini, track: Path
) -> None:
    sleeps: list[float] = []
    verdict = judge(sleeps, model_list=model_list(gemini=gemini.base_url)).evaluate(
        speech_task(track)
    )
    assert verdict.error is None, verdict.error
    first, second = (entry["reply"]["content"] for entry in gemini.log)
    assert NO_AUDIO in first and NO_AUDIO not in second
    assert [a.source for entry in gemini.log for a in entry["audio"]] == ["file"]
    assert sleeps == [2.0, 1.0]  # the upload's poll, then 2**0 before asking again
    assert len(verdict.usage) == 2 and score_speech(verdict).error is None


def test_no_audio_in_every_answer_is_an_error_not_a_score(track: Path) -> None:
    """A provider without the Files API (here OpenAI's chat completions, whose stand-in
    takes no audio part): the retries are spent, then the metric is an error."""
    sleeps: list[float] = []
    with FakeOpenAIHTTP(JudgeBrain()) as openai:
        entries = [
            {"model_name": "gemini-3-flash-preview",
             "litellm_params": {"model": "openai/audio-judge", "api_base": openai.base_url}}
        ]  # fmt: skip
        verdict = judge(sleeps, model_list=entries, empty_turns_retries=2).evaluate(
            speech_task(track)
        )
    assert len(openai.requests) == 3 and sleeps == [1.0, 2.0]
    assert verdict.error and "reported no audio in 3 answers" in verdict.error
    score = score_speech(verdict)
    assert score.error == verdict.error and len(verdict.usage) == 3


# ------------------------------------------------------------------ failures are data


def test_a_rate_limited_audio_judge_is_a_metric_error(
    gemini: FakeGemini, track: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", "ratelimit")  # the stand-in answers 429
    verdict = judge(model_list=model_list(gemini=gemini.base_url)).evaluate(speech_task(track))
    score = score_speech(verdict)
    assert score.error and "RateLimitError" in score.error and "exhausted" in score.error
    assert gemini.log == [] and gemini.files.log == []


@pytest.mark.parametrize(
    ("key", "says"),
    [("ratelimit", "RateLimitError"), ("malformed", "Error"), ("reject", "AuthenticationError")],
)
def test_a_failing_anthropic_api_is_a_metric_error(
    key: str, says: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", key)
    with FakeAnthropic(JudgeBrain()) as claude:
        verdict = judge(model_list=model_list(anthropic=claude.base_url)).evaluate(
            faithfulness_task()
        )
    score = score_dimensions("faithfulness", verdict, DIMS)
    assert score.error and says in score.error and score.score == 0.0, score.error


def test_a_judge_answer_that_is_not_json_is_a_parse_error() -> None:
    def rambling(messages: list[dict[str, Any]]) -> dict[str, Any]:
        return {"role": "assistant", "content": 'I would rate it {"rating": 3,, maybe'}

    with FakeAnthropic(rambling) as claude:
        verdict = judge(model_list=model_list(anthropic=claude.base_url)).evaluate(
            faithfulness_task()
        )
    score = score_dimensions("faithfulness", verdict, DIMS)
    assert verdict.error is None and score.error == PARSE_ERROR and score.score == 0.0


def test_a_judge_that_does_not_answer_in_time_is_a_metric_error() -> None:
    def slow(messages: list[dict[str, Any]]) -> dict[str, Any]:
        time.sleep(2.0)
        return JudgeBrain()(messages)

    with FakeAnthropic(slow) as claude:
        started = time.perf_counter()
        verdict = judge(model_list=model_list(anthropic=claude.base_url), timeout_s=0.5).evaluate(
            faithfulness_task()
        )
        waited = time.perf_counter() - started
    score = score_dimensions("faithfulness", verdict, DIMS)
    assert score.error and "Timeout" in score.error and waited < 1.9
