"""The llm judge against a local server speaking the chat-completions protocol."""

from __future__ import annotations

import base64
import json
import wave
from pathlib import Path

import numpy as np
import pytest

from tasks.judges import AudioInput, JudgeTask, LLMJudge, make_judge
from tasks.judges.inputs import ConversationInput, SpeechFidelityInput, TraceItem, TurnTextInput
from tasks.judges.prompts import template
from tasks.judges.scoring import score_dimensions, score_per_turn
from tests.tasks.judges.fakes import FakeChatServer

DIMS = (
    "fabricating_tool_parameters",
    "misrepresenting_tool_result",
    "violating_policies",
    "failing_to_disambiguate",
    "hallucination",
)
TRACE = [
    TraceItem(kind="assistant", turn_id=0, text="Hello! How can I help?"),
    TraceItem(kind="user", turn_id=1, text="My code is ABC123."),
    TraceItem(kind="tool_call", turn_id=1, tool_name="get_reservation", params={"code": "ABC123"}),
    TraceItem(
        kind="tool_response", turn_id=1, tool_name="get_reservation", response={"status": "success"}
    ),
    TraceItem(kind="assistant", turn_id=1, text="Found it."),
]


def judge_for(
    server: FakeChatServer, sleeps: list[float] | None = None, **params: object
) -> LLMJudge:
    record = sleeps if sleeps is not None else []
    return LLMJudge(
        {"base_url": server.base_url, "model": "judge-model", **params}, sleep=record.append
    )


def faithfulness_task() -> JudgeTask:
    inputs = ConversationInput(trace=TRACE, role="Airline agent", instructions="Be nice.")
    return JudgeTask(metric="faithfulness", inputs=inputs)


def answer(rating: int) -> str:
    dims = {d: {"evidence": "", "flagged": False, "rating": 3} for d in DIMS}
    return (
        "Here is my verdict:\n```json\n"
        + json.dumps({"dimensions": dims, "rating": rating})
        + "\n```"
    )


def test_request_shape_usage_and_prompt_hash(chat_server: FakeChatServer) -> None:
    chat_server.reply(answer(3), prompt_tokens=321, completion_tokens=45)
    verdict = judge_for(chat_server).evaluate(faithfulness_task())
    request = chat_server.requests[0]
    assert request["model"] == "judge-model" and request["temperature"] == 0.0
    assert [m["role"] for m in request["messages"]] == ["system", "user"]
    user = request["messages"][1]["content"]
    assert "Turn 1:" in user and "tool_call: get_reservation" in user and "Be nice." in user
    assert "{instructions}" not in user and '"rating"' in user  # rendered, JSON braces kept
    assert verdict.error is None and verdict.judge == "llm"
    assert verdict.prompt_hash == template("faithfulness").hash and len(verdict.prompt_hash) == 12
    assert verdict.usage[0].input_tokens == 321 and verdict.usage[0].output_tokens == 45
    score = score_dimensions("faithfulness", verdict, DIMS)
    assert (score.score, score.normalized_score) == (3.0, 1.0)
    assert score.details["judge_usage"][0]["input_tokens"] == 321


def test_malformed_json_scores_zero_with_parse_error(chat_server: FakeChatServer) -> None:
    chat_server.reply('{"dimensions": {"hallucination": {"rating": 2,,}')
    verdict = judge_for(chat_server).evaluate(faithfulness_task())
    score = score_dimensions("faithfulness", verdict, DIMS)
    assert score.score == 0.0 and score.error == "Failed to parse judge response"


def test_out_of_range_rating_becomes_scale_minimum(chat_server: FakeChatServer) -> None:
    chat_server.reply(answer(7))
    score = score_dimensions(
        "faithfulness", judge_for(chat_server).evaluate(faithfulness_task()), DIMS
    )
    assert (score.score, score.normalized_score, score.error) == (1.0, 0.0, None)


def test_per_turn_out_of_range_is_excluded(chat_server: FakeChatServer) -> None:
    chat_server.reply(json.dumps([{"turn_id": 1, "rating": 5}, {"turn_id": 2, "rating": 0}]))
    task = JudgeTask(metric="speakability", inputs=TurnTextInput(turns={1: "Hi.", 2: "**Hi**"}))
    score = score_per_turn(
        "speakability", judge_for(chat_server).evaluate(task), [1, 2], low=0, high=1
    )
    assert score.details["per_turn_ratings"] == {"1": None, "2": 0}
    assert score.score == 0.0 and score.error is None


def test_429_then_success_retries_with_backoff(chat_server: FakeChatServer) -> None:
    chat_server.reply('{"error": "rate limited"}', status=429)
    chat_server.reply(answer(2))
    sleeps: list[float] = []
    verdict = judge_for(chat_server, sleeps).evaluate(faithfulness_task())
    assert verdict.error is None and verdict.usage[0].attempts == 2
    assert len(chat_server.requests) == 2
    assert len(sleeps) == 1 and 0.8 <= sleeps[0] <= 1.2  # 1 s base +-20 % jitter


def test_retries_are_bounded_and_backoff_grows(chat_server: FakeChatServer) -> None:
    for _ in range(4):
        chat_server.reply('{"error": "down"}', status=503)
    sleeps: list[float] = []
    verdict = judge_for(chat_server, sleeps, max_retries=3, jitter=0.0).evaluate(
        faithfulness_task()
    )
    assert verdict.error is not None and "after 4 attempt(s)" in verdict.error
    assert sleeps == [1.0, 2.0, 4.0]
    assert score_dimensions("faithfulness", verdict, DIMS).score == 0.0


def test_client_errors_are_not_retried(chat_server: FakeChatServer) -> None:
    chat_server.reply('{"error": "bad model"}', status=400)
    verdict = judge_for(chat_server).evaluate(faithfulness_task())
    assert verdict.error and "HTTP 400" in verdict.error and len(chat_server.requests) == 1


def test_api_key_comes_from_the_named_env_var(
    chat_server: FakeChatServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EVAFLOW_TEST_JUDGE_KEY", "sk-test")
    chat_server.reply(answer(3))
    judge = judge_for(chat_server, api_key_env="EVAFLOW_TEST_JUDGE_KEY")
    judge.evaluate(faithfulness_task())
    assert chat_server.headers[0]["authorization"] == "Bearer sk-test"
    assert "sk-test" not in json.dumps(judge.params.model_dump())
    monkeypatch.delenv("EVAFLOW_TEST_JUDGE_KEY")
    verdict = judge.evaluate(faithfulness_task())
    assert verdict.error and "EVAFLOW_TEST_JUDGE_KEY" in verdict.error


def test_unreachable_endpoint_is_an_error_not_an_exception() -> None:
    judge = LLMJudge({"base_url": "http://127.0.0.1:9/v1", "max_retries": 1}, sleep=lambda s: None)
    verdict = judge.evaluate(faithfulness_task())
    assert verdict.error and "ConnectError" in verdict.error


def _wav(path: Path, seconds: float = 1.0, rate: int = 16000) -> Path:
    t = np.arange(int(seconds * rate)) / rate
    pcm = (0.3 * np.sin(2 * np.pi * 220 * t) * 32767).astype("<i2")
    with wave.open(str(path), "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(rate)
        wav.writeframes(pcm.tobytes())
    return path


def test_audio_judge_sends_input_audio_and_retries_empty_turns(
    chat_server: FakeChatServer, tmp_path: Path
) -> None:
    chat_server.reply('{"turns": []}')
    chat_server.reply(json.dumps({"turns": [{"turn_id": 1, "rating": 3}]}))
    inputs = SpeechFidelityInput(role="user", turns={1: "Hello"}, variant="user")
    task = JudgeTask(
        metric="user_speech_fidelity",
        inputs=inputs,
        audio=AudioInput(path=_wav(tmp_path / "caller.wav")),
    )
    verdict = judge_for(chat_server, audio_model="audio-model").evaluate(task)
    parts = chat_server.requests[0]["messages"][-1]["content"]
    audio = next(p for p in parts if p["type"] == "input_audio")["input_audio"]
    assert audio["format"] == "wav" and base64.b64decode(audio["data"])[:4] == b"RIFF"
    assert chat_server.requests[0]["model"] == "audio-model"
    assert len(verdict.usage) == 2 and '"rating": 3' in verdict.raw_text


def test_missing_audio_file_is_an_error(tmp_path: Path) -> None:
    inputs = SpeechFidelityInput(role="user", turns={1: "Hello"}, variant="user")
    task = JudgeTask(
        metric="user_speech_fidelity",
        inputs=inputs,
        audio=AudioInput(path=tmp_path / "missing.wav"),
    )
    verdict = LLMJudge({"base_url": "http://127.0.0.1:9/v1"}).evaluate(task)
    assert verdict.error and "missing.wav" in verdict.error


def test_registry_builds_judges_and_lists_valid_names() -> None:
    assert make_judge(None).name == "offline"
    assert make_judge({"name": "llm", "params": {"model": "m"}}).name == "llm"
    with pytest.raises(KeyError, match="valid names: llm, offline"):
        make_judge("gpt")


def sample_tasks() -> list[JudgeTask]:
    from tasks.judges.inputs import BehaviorInput, ConcisenessInput, EntityUnit, KeyEntityInput

    speech = {
        variant: SpeechFidelityInput(
            role="assistant", turns={1: "Code Z K three."}, trace=TRACE, variant=variant
        )  # type: ignore[arg-type]
        for variant in ("agent_entities", "user", "tts")
    }
    return [
        faithfulness_task(),
        JudgeTask(metric="conversation_progression", inputs=ConversationInput(trace=TRACE)),
        JudgeTask(metric="conciseness", inputs=ConcisenessInput(trace=TRACE)),
        JudgeTask(metric="speakability", inputs=TurnTextInput(turns={1: "Hi."})),
        JudgeTask(
            metric="transcription_accuracy_key_entities",
            inputs=KeyEntityInput(units=[EntityUnit(unit_id=1, expected="A", transcribed="B")]),
        ),
        JudgeTask(
            metric="transcription_accuracy_key_entities",
            inputs=KeyEntityInput(mode="tool_calls", trace=TRACE),
        ),
        JudgeTask(metric="agent_speech_fidelity", inputs=speech["agent_entities"]),
        JudgeTask(metric="user_speech_fidelity", inputs=speech["user"]),
        JudgeTask(metric="tts_fidelity", inputs=speech["tts"]),
        JudgeTask(
            metric="user_behavioral_fidelity",
            inputs=BehaviorInput(trace=TRACE, user_goal={"high_level_user_goal": "Rebook"}),
        ),
    ]


@pytest.mark.parametrize("task", sample_tasks(), ids=lambda t: t.metric)
def test_every_prompt_renders_completely(task: JudgeTask) -> None:
    import re

    from tasks.judges.prompts import render_messages
    from tasks.judges.render import prompt_variables, template_key

    tpl = template(template_key(task))
    names = set(re.findall(r"\{([a-z_]+)\}", tpl.system + tpl.user))
    system, user = render_messages(template_key(task), prompt_variables(task))
    assert not {n for n in names if "{" + n + "}" in system + user}
    assert "JSON" in user


def test_a_key_echoed_by_the_endpoint_never_reaches_the_verdict(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import httpx

    monkeypatch.setenv("EVAFLOW_TEST_JUDGE_KEY", "sk-test-echoed-0123456789")
    transport = httpx.MockTransport(
        lambda request: httpx.Response(
            401, text=f"Incorrect API key: {request.headers['authorization']}"
        )
    )
    judge = LLMJudge(
        {"api_key_env": "EVAFLOW_TEST_JUDGE_KEY", "max_retries": 0},
        transport=transport,
        sleep=lambda s: None,
    )
    verdict = judge.evaluate(faithfulness_task())
    assert verdict.error and "HTTP 401" in verdict.error
    assert "sk-test-echoed" not in verdict.error and verdict.usage[0].attempts == 1


def test_bad_parameters_name_the_field_but_not_the_value() -> None:
    from tasks.llm_client import EndpointParamsError

    with pytest.raises(EndpointParamsError, match="temperature") as info:
        LLMJudge({"temperature": "sk-secret-value"})
    assert "sk-secret-value" not in str(info.value)
    with pytest.raises(EndpointParamsError, match="api_key"):
        LLMJudge({"api_key": "sk-secret-value"})


def test_judges_with_the_same_endpoint_share_one_connection_pool() -> None:
    first = make_judge({"name": "llm", "params": {"base_url": "http://127.0.0.1:9/v1"}})
    second = make_judge({"name": "llm", "params": {"base_url": "http://127.0.0.1:9/v1"}})
    other = make_judge({"name": "llm", "params": {"base_url": "http://127.0.0.1:8/v1"}})
    assert isinstance(first, LLMJudge) and isinstance(second, LLMJudge)
    assert isinstance(other, LLMJudge)
    assert first.client is second.client and first.client is not other.client


def reference_list(server: FakeChatServer, key: str) -> list[dict[str, object]]:
    """The reference's four judge model names, each a stand-in model on the local server."""
    names = {
        "gpt-5.2": "text-standin",
        "gpt-5.2-medium": "behaviour-standin",
        "us.anthropic.claude-opus-4-6-v1": "faithfulness-standin",
        "gemini-3-flash-preview": "audio-standin",
    }
    return [
        {
            "model_name": name,
            "litellm_params": {
                "model": f"openai/{model}",
                "api_base": server.base_url,
                "api_key": f"os.environ/{key}",
            },
        }
        for name, model in names.items()
    ]


def test_model_list_routes_each_judge_to_its_reference_model(
    chat_server: FakeChatServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EVAFLOW_TEST_JUDGE_KEY", "sk-list")
    judge = make_judge(
        {
            "name": "llm",
            "params": {
                "model_list": reference_list(chat_server, "EVAFLOW_TEST_JUDGE_KEY"),
                "models": {"conciseness": "gpt-5.2-medium"},
            },
        }
    )
    speech = JudgeTask(
        metric="user_speech_fidelity",
        inputs=SpeechFidelityInput(role="user", turns={1: "Hello"}, variant="user"),
        audio=AudioInput(path=_wav(tmp_path / "caller.wav")),
    )
    tasks = {t.metric: t for t in sample_tasks()}
    asked = [
        faithfulness_task(),
        tasks["conversation_progression"],
        tasks["conciseness"],  # overridden
        tasks["user_behavioral_fidelity"],
        speech,
    ]
    for _ in asked:
        chat_server.reply(json.dumps({"rating": 3, "turns": [{"turn_id": 1, "rating": 3}]}))
    verdicts = [judge.evaluate(task) for task in asked]
    assert [r["model"] for r in chat_server.requests] == [
        "faithfulness-standin",
        "text-standin",
        "behaviour-standin",
        "behaviour-standin",
        "audio-standin",
    ]
    assert [v.model for v in verdicts][-1] == "gemini-3-flash-preview"
    assert all(v.error is None for v in verdicts)
    assert {h["authorization"] for h in chat_server.headers} == {"Bearer sk-list"}
    parts = chat_server.requests[-1]["messages"][-1]["content"]
    assert any(p["type"] == "input_audio" for p in parts)  # the audio judge hears audio


def test_a_model_missing_from_the_list_is_a_verdict_error(chat_server: FakeChatServer) -> None:
    judge = make_judge(
        {"name": "llm", "params": {"model_list": reference_list(chat_server, "K")[:1]}}
    )
    verdict = judge.evaluate(faithfulness_task())
    assert verdict.error and "'us.anthropic.claude-opus-4-6-v1' is not in the model list" in (
        verdict.error
    )
    assert chat_server.requests == []
