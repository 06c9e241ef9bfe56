"""The llm judge through LiteLLM, against a local server speaking the chat-completions
protocol (``tests.fake_llm``): the official client connects to it unchanged through a
deployment's ``api_base``, as it would to OpenAI."""

from __future__ import annotations

import base64
import json
import time
import wave
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tasks.judges import AudioInput, JudgeTask, LLMJudge, make_judge
from tasks.judges.inputs import ConversationInput, SpeechFidelityInput, TraceItem, TurnTextInput
from tasks.judges.prompts import template
from tasks.judges.scoring import score_dimensions, score_per_turn
from tests.fake_llm import FakeChatServer, FakeResponse, fake_llm_fixture, text_reply  # noqa: F401

KEY_VAR = "EVAFLOW_TEST_JUDGE_KEY"
KEY = "sk-test-judge-0123456789"
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
STANDINS = {
    "gpt-5.2": "text-standin",
    "gpt-5.2-medium": "behaviour-standin",
    "us.anthropic.claude-opus-4-6-v1": "faithfulness-standin",
    "gemini-3-flash-preview": "audio-standin",
}


@pytest.fixture(autouse=True)
def judge_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_VAR, KEY)


def reference_list(base_url: str) -> list[dict[str, Any]]:
    """The reference's four judge model names, each a stand-in model on the local server."""
    return [
        {
            "model_name": name,
            "litellm_params": {
                "model": f"openai/{model}",
                "api_base": base_url,
                "api_key": f"os.environ/{KEY_VAR}",
            },
        }
        for name, model in STANDINS.items()
    ]


def judge_for(server: FakeChatServer, sleeps: list[float] | None = None, **params: Any) -> LLMJudge:
    record = sleeps if sleeps is not None else []
    return LLMJudge(
        {"model_list": reference_list(server.base_url), "max_retries": 1, **params},
        sleep=record.append,
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


def error(status: int, message: str = "nope") -> FakeResponse:
    return FakeResponse(status, {"error": {"message": message}})


def test_request_shape_usage_and_prompt_hash(fake_llm: FakeChatServer) -> None:
    fake_llm.push(text_reply(answer(3), usage=(321, 45)))
    verdict = judge_for(fake_llm).evaluate(faithfulness_task())
    request = fake_llm.requests[0]
    body = request.body
    assert request.path.endswith("/chat/completions")
    assert body["model"] == "faithfulness-standin" and body["max_tokens"] == 100000
    assert "service_tier" not in body  # spec 4.1: the faithfulness judge has no flex tier
    assert {k.lower(): v for k, v in request.headers.items()}["authorization"] == f"Bearer {KEY}"
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    user = body["messages"][1]["content"]
    assert "Turn 1:" in user and "tool_call: get_reservation" in user and "Be nice." in user
    assert "{instructions}" not in user and '"rating"' in user  # rendered, JSON braces kept
    assert verdict.error is None and verdict.judge == "llm"
    assert verdict.model == "us.anthropic.claude-opus-4-6-v1"
    assert verdict.prompt_hash == template("faithfulness").hash and len(verdict.prompt_hash) == 12
    usage = verdict.usage[0]
    assert (usage.input_tokens, usage.output_tokens) == (321, 45)
    assert (usage.model, usage.model_name) == ("faithfulness-standin", verdict.model)
    score = score_dimensions("faithfulness", verdict, DIMS)
    assert (score.score, score.normalized_score) == (3.0, 1.0)
    assert score.details["judge_usage"][0]["input_tokens"] == 321


def test_text_judges_get_the_reference_params(fake_llm: FakeChatServer) -> None:
    fake_llm.push(text_reply("[]"))
    task = JudgeTask(metric="speakability", inputs=TurnTextInput(turns={1: "Hi."}))
    judge_for(fake_llm).evaluate(task)
    body = fake_llm.requests[0].body
    assert body["model"] == "text-standin" and body["service_tier"] == "flex"
    assert "temperature" not in body  # the reference leaves text judges' temperature alone


def test_malformed_json_scores_zero_with_parse_error(fake_llm: FakeChatServer) -> None:
    fake_llm.push(text_reply('{"dimensions": {"hallucination": {"rating": 2,,}'))
    verdict = judge_for(fake_llm).evaluate(faithfulness_task())
    score = score_dimensions("faithfulness", verdict, DIMS)
    assert score.score == 0.0 and score.error == "Failed to parse judge response"


def test_out_of_range_rating_becomes_scale_minimum(fake_llm: FakeChatServer) -> None:
    fake_llm.push(text_reply(answer(7)))
    score = score_dimensions(
        "faithfulness", judge_for(fake_llm).evaluate(faithfulness_task()), DIMS
    )
    assert (score.score, score.normalized_score, score.error) == (1.0, 0.0, None)


def test_per_turn_out_of_range_is_excluded(fake_llm: FakeChatServer) -> None:
    fake_llm.push(
        text_reply(json.dumps([{"turn_id": 1, "rating": 5}, {"turn_id": 2, "rating": 0}]))
    )
    task = JudgeTask(metric="speakability", inputs=TurnTextInput(turns={1: "Hi.", 2: "**Hi**"}))
    score = score_per_turn(
        "speakability", judge_for(fake_llm).evaluate(task), [1, 2], low=0, high=1
    )
    assert score.details["per_turn_ratings"] == {"1": None, "2": 0}
    assert score.score == 0.0 and score.error is None


def test_429_then_success_is_retried_by_litellm(fake_llm: FakeChatServer) -> None:
    fake_llm.push(error(429, "rate limited"), text_reply(answer(2)))
    verdict = judge_for(fake_llm).evaluate(faithfulness_task())
    assert verdict.error is None and len(fake_llm.requests) == 2
    assert score_dimensions("faithfulness", verdict, DIMS).score == 2.0


def test_rate_limit_that_persists_is_a_metric_error(fake_llm: FakeChatServer) -> None:
    fake_llm.push(*[error(429, "rate limited")] * 3)
    verdict = judge_for(fake_llm).evaluate(faithfulness_task())
    assert len(fake_llm.requests) == 2  # the first try and max_retries=1
    assert verdict.error and "RateLimitError" in verdict.error
    score = score_dimensions("faithfulness", verdict, DIMS)
    assert score.error and "RateLimitError" in score.error  # an error row, not a silent 0


def test_client_errors_are_not_retried(fake_llm: FakeChatServer) -> None:
    fake_llm.push(error(400, "bad model"))
    verdict = judge_for(fake_llm, max_retries=3).evaluate(faithfulness_task())
    assert verdict.error and "BadRequestError" in verdict.error and "bad model" in verdict.error
    assert len(fake_llm.requests) == 1


def test_a_timeout_is_a_metric_error(fake_llm: FakeChatServer) -> None:
    def slow(body: Any) -> dict[str, Any]:
        time.sleep(2.0)
        return text_reply(answer(3))

    fake_llm.push(slow)
    started = time.perf_counter()
    verdict = judge_for(fake_llm, max_retries=0, timeout_s=0.3).evaluate(faithfulness_task())
    assert verdict.error and "Timeout" in verdict.error
    assert time.perf_counter() - started < 1.9  # it did not wait for the answer
    assert score_dimensions("faithfulness", verdict, DIMS).error


def test_a_key_echoed_by_the_endpoint_never_reaches_the_verdict(fake_llm: FakeChatServer) -> None:
    fake_llm.push(error(401, f"Incorrect API key: Bearer {KEY}"))
    verdict = judge_for(fake_llm).evaluate(faithfulness_task())
    assert verdict.error and "AuthenticationError" in verdict.error
    assert KEY not in verdict.error and "***" in verdict.error


def test_unreachable_endpoint_is_an_error_not_an_exception() -> None:
    judge = LLMJudge({"model_list": reference_list("http://127.0.0.1:9/v1"), "max_retries": 0})
    verdict = judge.evaluate(faithfulness_task())
    assert verdict.error and "Connection" in verdict.error


def _wav(path: Path, seconds: float = 1.0, rate: int = 16000) -> Path:
    t = np.arange(int(seconds * rate)) / rate
    pcm = (0.3 * np.sin(2 * np.pi * 220 * t) * 32767).astype("<i2")
    with wave.open(str(path), "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(rate)
        wav.writeframes(pcm.tobytes())
    return path


def speech_task(path: Path) -> JudgeTask:
    inputs = SpeechFidelityInput(role="user", turns={1: "Hello"}, variant="user")
    return JudgeTask(metric="user_speech_fidelity", inputs=inputs, audio=AudioInput(path=path))


def test_audio_judge_hears_audio_and_retries_empty_turns(
    fake_llm: FakeChatServer, tmp_path: Path
) -> None:
    fake_llm.push(text_reply('{"turns": []}'))
    fake_llm.push(text_reply(json.dumps({"turns": [{"turn_id": 1, "rating": 3}]})))
    sleeps: list[float] = []
    verdict = judge_for(fake_llm, sleeps).evaluate(speech_task(_wav(tmp_path / "caller.wav")))
    body = fake_llm.requests[0].body
    audio = next(p for p in body["messages"][-1]["content"] if p["type"] == "input_audio")
    assert audio["input_audio"]["format"] == "wav"
    assert base64.b64decode(audio["input_audio"]["data"])[:4] == b"RIFF"
    assert body["model"] == "audio-standin" and verdict.model == "gemini-3-flash-preview"
    assert body["temperature"] == 0.0 and body["max_tokens"] == 40000  # spec 4.1 audio params
    assert len(verdict.usage) == 2 and '"rating": 3' in verdict.raw_text
    assert sleeps == [1.0]  # spec 4.7: 2**attempt seconds, the first attempt being 0


def test_missing_audio_file_is_an_error(fake_llm: FakeChatServer, tmp_path: Path) -> None:
    verdict = judge_for(fake_llm).evaluate(speech_task(tmp_path / "missing.wav"))
    assert verdict.error and "missing.wav" in verdict.error and not fake_llm.requests


def test_model_list_routes_each_judge_to_its_model(
    fake_llm: FakeChatServer, tmp_path: Path
) -> None:
    judge = make_judge(
        {
            "name": "llm",
            "params": {
                "model_list": reference_list(fake_llm.base_url),
                "models": {"conciseness": "gpt-5.2-medium"},
            },
        }
    )
    tasks = {t.metric: t for t in sample_tasks()}
    asked = [
        faithfulness_task(),
        tasks["conversation_progression"],
        tasks["conciseness"],  # overridden
        tasks["user_behavioral_fidelity"],
        speech_task(_wav(tmp_path / "caller.wav")),
    ]
    for _ in asked:
        fake_llm.push(text_reply(json.dumps({"rating": 3, "turns": [{"turn_id": 1, "rating": 3}]})))
    verdicts = [judge.evaluate(task) for task in asked]
    assert [r.body["model"] for r in fake_llm.requests] == [
        "faithfulness-standin",
        "text-standin",
        "behaviour-standin",
        "behaviour-standin",
        "audio-standin",
    ]
    assert all(v.error is None for v in verdicts)


def test_a_model_missing_from_the_list_is_a_verdict_error(fake_llm: FakeChatServer) -> None:
    judge = make_judge(
        {"name": "llm", "params": {"model_list": reference_list(fake_llm.base_url)[:1]}}
    )
    verdict = judge.evaluate(faithfulness_task())
    assert verdict.error and "'us.anthropic.claude-opus-4-6-v1' is not in the model list" in (
        verdict.error
    )
    assert fake_llm.requests == []


def test_endpoint_mode_goes_through_litellm_too(fake_llm: FakeChatServer) -> None:
    """One OpenAI-compatible endpoint, no list: a local server's model for every text judge."""
    fake_llm.push(text_reply(answer(3)))
    judge = LLMJudge(
        {"base_url": fake_llm.base_url, "model": "local-judge", "api_key_env": KEY_VAR}
    )
    verdict = judge.evaluate(faithfulness_task())
    body = fake_llm.requests[0].body
    assert verdict.error is None and body["model"] == "local-judge" and body["temperature"] == 0.0
    assert verdict.usage[0].model == "local-judge"


def test_registry_builds_judges_and_lists_valid_names() -> None:
    assert make_judge(None).name == "offline"
    assert make_judge({"name": "llm", "params": {"model": "m"}}).name == "llm"
    with pytest.raises(KeyError, match="valid names: llm, offline"):
        make_judge("gpt")


def test_bad_parameters_name_the_field_but_not_the_value() -> None:
    from tasks.judges.llm import JudgeParamsError

    with pytest.raises(JudgeParamsError, match="temperature") as info:
        LLMJudge({"temperature": "sk-secret-value"})
    assert "sk-secret-value" not in str(info.value)
    with pytest.raises(JudgeParamsError, match="api_key"):
        LLMJudge({"api_key": "sk-secret-value"})
    with pytest.raises(JudgeParamsError, match="literal secret") as info:
        LLMJudge(
            {
                "model_list": [
                    {
                        "model_name": "m",
                        "litellm_params": {"model": "m", "api_key": "sk-secret-value"},
                    }
                ]
            }
        )
    assert "sk-secret-value" not in str(info.value)


def test_judges_of_one_list_share_one_router(fake_llm: FakeChatServer) -> None:
    from tasks.llm_router import router_for

    first, second = judge_for(fake_llm), judge_for(fake_llm)
    other = judge_for(fake_llm, timeout_s=9.0)
    assert router_for(first.deployments, first.policy) is router_for(
        second.deployments, second.policy
    )
    assert router_for(first.deployments, first.policy) is not router_for(
        other.deployments, other.policy
    )


def test_litellm_is_imported_only_when_a_model_is_called() -> None:
    """Workers that never call a model (offline judges) must not pay LiteLLM's import."""
    import subprocess
    import sys

    code = (
        "import sys; from tasks.judges import make_judge; import tasks.judges.llm; "
        "import tasks.stage_providers; "
        "make_judge({'name': 'llm', 'params': {}}); make_judge('offline'); "
        "print('litellm' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


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
