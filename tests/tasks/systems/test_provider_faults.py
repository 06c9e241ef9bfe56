"""A provider's failure is infrastructure, never the agent's fault (issue 29, item 5).

A REAL Pipecat bot (its own process and environment, ``.venv-pipecat``) runs the
``pipecat-offline`` style cascade: PocketSphinx STT and eSpeak TTS as Pipecat services
around Pipecat's OpenAI LLM service, whose provider is a local stand-in speaking the chat
completions protocol (:class:`tests.fake_llm.FakeChatServer`). Each fault is injected
through that stand-in as the provider would show it: a rejected key (401, 403), 429 until
the client's retries run out, an event stream that is not JSON or not a chunk, a host
nobody listens on; and, on the speech-to-speech path, an OpenAI Realtime stand-in
(:mod:`tasks.systems.standins.openai_realtime`) that drops its socket mid-call. The bot
reports each (:mod:`tasks.systems.pipecat_bot.faults`, docs/agent-protocol.md section 9)
and the stored attempts are ``infra_error`` / ``provider_error`` naming the provider, the
role and the provider's message, regenerated under the attempt rules, with no
``agent_error`` row; each call ends within seconds of the failure, well before the 15 s
agent timeout. A bot process that dies mid-call is the harness's fault too.

Also: each Pipecat service class the catalogue uses, pointed at a closed loopback port,
yields a ``provider_error`` naming it (:mod:`tests.tasks.systems.fault_probe`, run in
``.venv-pipecat``).

Not covered: a 200 answer to a streaming request whose body is not an event stream at
all. The OpenAI SDK reads it as an empty stream without raising, so the service sees an
empty answer, which a healthy model can give too; the bot cannot tell, and the call ends
``agent_timeout`` (measured).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

import pandas as pd
import pytest

from flows.benchmark import run_benchmark
from scenarios.loader import load_eva_scenarios
from scenarios.models import Scenario
from tasks.config import BenchmarkConfig
from tasks.simulate.clocks.realtime import simulate_realtime_async
from tasks.simulate.config import SimulationConfig
from tasks.simulate.voices import agent_recognizer_for_domain
from tasks.store import Store
from tasks.systems import pipecat_process
from tasks.systems.pipecat_process import bot_python
from tasks.systems.standins.brain import next_message
from tasks.systems.standins.openai_realtime import FakeOpenAIRealtime, RealtimeSession
from tasks.voice.stt import SttSpec
from tests.fake_llm import FakeChatServer, FakeResponse, text_reply
from tests.fakes.trace_model import chat_handler

RECORD = "airline/5.2.2"
MAX_ATTEMPTS = 2
AGENT_TIMEOUT_S = 15.0  # the default: a provider failure must end the call well before it
REPO = Path(__file__).resolve().parents[3]

pytestmark = pytest.mark.skipif(
    not bot_python().exists(), reason="the Pipecat environment is missing: run `make pipecat-env`"
)


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def cascade(base_url: str, name: str = "pipecat-faults") -> dict[str, Any]:
    return {
        "name": name,
        "agent": "pipecat",
        "params": {
            "architecture": "cascade",
            "components": {
                "stt": {
                    "provider": "evaflow-pocketsphinx",
                    "params": {"stt": {"grammar": "codes"}},
                },
                "llm": {
                    "provider": "openai",
                    "model": "gpt-fake",
                    "params": {"base_url": base_url},
                },
                "tts": {"provider": "evaflow-espeak"},
            },
        },
    }


def run(
    eva_root: Path,
    store: Path,
    *systems: dict[str, Any],
    workers: int = 1,
    max_duration_s: float = 60,
) -> pd.DataFrame:
    config = BenchmarkConfig.model_validate(
        {
            "store": str(store),
            "run_id": "faults",
            "scenarios": {"eva_root": str(eva_root), "records": [RECORD]},
            "systems": list(systems),
            "conditions": ["clean"],
            "trials": 1,
            "max_attempts": MAX_ATTEMPTS,
            "max_duration_s": max_duration_s,
            "metrics": ["task_completion"],
            "report": False,
            "runner": {"kind": "threads", "workers": workers},
        }
    )
    run_benchmark(config)
    return Store(str(store)).read("trials", "faults")


def assert_provider_failures(
    rows: pd.DataFrame, turns: pd.DataFrame, named: str, says: str
) -> None:
    """Every attempt stored infra_error / provider_error naming the provider and its words,
    regenerated up to max_attempts; no agent_error. Each call ended well before the agent
    timeout could fire: within it of the caller's last turn (or of the call's start), the
    moment that timeout counts from (docs/agent-protocol.md section 6)."""
    assert len(rows) == MAX_ATTEMPTS, rows[["attempt", "status", "end_reason", "error"]]
    assert not (rows["status"] == "agent_error").any()
    for _, row in rows.iterrows():
        assert (row["status"], row["end_reason"]) == ("infra_error", "provider_error"), row["error"]
        assert row["validation_reason"] == "provider_error" and not row["valid"]
        assert row["error"].startswith(f"provider {named} failed: "), row["error"]
        assert says in row["error"], row["error"]
        said = turns[(turns["attempt_id"] == row["attempt_id"]) & (turns["role"] == "user")]
        since = row["duration_s"] - float(said["end_s"].max() if len(said) else 0.0)
        assert since < AGENT_TIMEOUT_S, (row["duration_s"], said[["start_s", "end_s"]])


@pytest.fixture(autouse=True)
def no_network_preflight(monkeypatch: pytest.MonkeyPatch) -> None:
    """As ``--no-preflight``: the run must reach the call for the failure to show there."""
    monkeypatch.setenv("EVAFLOW_PREFLIGHT_NETWORK", "0")


@pytest.fixture(scope="module")
def scenario(eva_root: Path) -> Scenario:
    return load_eva_scenarios(eva_root, record_ids=[RECORD])[0]


@pytest.fixture(scope="module")
def chat() -> Iterator[FakeChatServer]:
    """One chat-completions stand-in for the module, so every test calls the same bot."""
    with FakeChatServer() as server:
        yield server


def error(status: int, message: str, kind: str, code: str) -> FakeResponse:
    """An error body as the chat completions API sends it."""
    return FakeResponse(status, {"error": {"message": message, "type": kind, "code": code}})


FAULTS: dict[str, tuple[FakeResponse, str, int]] = {
    # fault -> (what the stand-in answers every request, words of it in the error, requests)
    "rejected_key_401": (
        error(
            401, "Incorrect API key provided: sk-fake.", "invalid_request_error", "invalid_api_key"
        ),
        "Error code: 401 - Incorrect API key provided",
        1,
    ),
    "forbidden_403": (
        error(
            403,
            "Project does not have access to model gpt-fake",
            "invalid_request_error",
            "model_not_found",
        ),
        "Error code: 403 - Project does not have access to model gpt-fake",
        1,
    ),
    "rate_limited_429": (  # the OpenAI client retries twice before it gives up
        error(429, "Rate limit reached for requests", "requests", "rate_limit_exceeded"),
        "Error code: 429 - Rate limit reached for requests",
        3,
    ),
    "invalid_json": (
        FakeResponse(
            200,
            'data: {"id": "chatcmpl-1", "choices": [{"delta": {"content": "He\n\n',
            "text/event-stream",
        ),
        "(JSONDecodeError)",
        1,
    ),
    "wrong_shape": (
        FakeResponse(
            200,
            'data: {"id": "chatcmpl-1", "choices": {"text": "Hi"}}\n\ndata: [DONE]\n\n',
            "text/event-stream",
        ),
        "Error during completion",
        1,
    ),
}


UNREACHABLE = "unreachable_host"
LLM_FAULTS = [*sorted(FAULTS), UNREACHABLE]
HEALTHY = "pipecat-healthy"  # the run's one system whose provider answers
HEALTHY_LIMIT_S = 20  # the run's time limit: the healthy call ends there, the faults long before
# Calls side by side: each fault's two attempts are a few seconds of real-time audio (the
# greeting, the caller's first words, then the model's failure), one bot per system; and
# the healthy call's 20 s beside them.
FAULT_WORKERS = len(LLM_FAULTS) + 1


class FaultRun(NamedTuple):
    trials: pd.DataFrame
    events: pd.DataFrame
    turns: pd.DataFrame
    servers: dict[str, FakeChatServer]


@pytest.fixture(scope="module")
def llm_fault_run(
    eva_root: Path, scenario: Scenario, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[FaultRun]:
    """Every chat-provider fault in ONE run: a system per fault, each pointed at its own
    stand-in answering every request with that fault (or at a host nobody listens on);
    and one more system whose stand-in answers as a model would (:data:`HEALTHY`)."""
    with contextlib.ExitStack() as stack:
        # As ``--no-preflight`` (the autouse fixture is function-scoped: it comes later).
        stack.enter_context(pytest.MonkeyPatch.context()).setenv("EVAFLOW_PREFLIGHT_NETWORK", "0")
        servers = {fault: stack.enter_context(FakeChatServer()) for fault in FAULTS}
        urls = {fault: server.base_url for fault, server in servers.items()}
        urls[UNREACHABLE] = f"http://127.0.0.1:{closed_port()}/v1"
        for fault, server in servers.items():
            server.fallback = FAULTS[fault][0]
        healthy = stack.enter_context(FakeChatServer())
        healthy.fallback = chat_handler(scenario)
        systems = [cascade(url, f"pipecat-{fault}") for fault, url in urls.items()]
        systems.append(cascade(healthy.base_url, HEALTHY))
        store = tmp_path_factory.mktemp("llm-faults")
        trials = run(
            eva_root, store, *systems, workers=FAULT_WORKERS, max_duration_s=HEALTHY_LIMIT_S
        )
        stored = Store(str(store))
        yield FaultRun(
            trials, stored.read("events", "faults"), stored.read("turns", "faults"), servers
        )


@pytest.mark.timeout(300)
@pytest.mark.parametrize("fault", LLM_FAULTS)
def test_a_failing_llm_provider_is_an_infra_error_naming_it(
    llm_fault_run: FaultRun, fault: str
) -> None:
    trials, servers = llm_fault_run.trials, llm_fault_run.servers
    rows = trials[trials["system"] == f"pipecat-{fault}"]
    # The bot's report is stored with each attempt's events.
    events = llm_fault_run.events
    reported = events[events["attempt_id"].isin(rows["attempt_id"])]
    assert set(reported.loc[reported["kind"] == "provider_error", "attempt_id"]) == set(
        rows["attempt_id"]
    )
    if fault == UNREACHABLE:
        turns = llm_fault_run.turns
        assert_provider_failures(rows, turns, "openai llm (model gpt-fake)", "Connection error")
        return
    _, says, per_attempt = FAULTS[fault]
    assert_provider_failures(rows, llm_fault_run.turns, "openai llm (model gpt-fake)", says)
    # The stand-in heard the real requests: the failure is the provider's answer to them.
    chat = servers[fault]
    assert len(chat.requests) == per_attempt * MAX_ATTEMPTS
    assert all(r.body.get("stream") and r.messages for r in chat.requests)


# --------------------------------------------------------- healthy providers: no report


@pytest.mark.timeout(300)
def test_a_healthy_call_reports_no_provider_error(llm_fault_run: FaultRun) -> None:
    """The reporter stays quiet while the providers answer: 20 s of a call that goes on
    (greeting, caller turns, the model answering) ends at the time limit, ``ok`` (kept
    under time-limit acceptance, spec 6.3 step 5).

    On a loaded machine the bot can start late and the call reach the limit early in the
    record; an attempt whose simulated caller then fails its checks is the simulator's and
    is regenerated. That is allowed; a provider or agent failure is not."""
    trials = llm_fault_run.trials
    rows = trials[trials["system"] == HEALTHY].sort_values("attempt")
    shown = rows[["attempt", "status", "end_reason", "validation_reason", "failed_metrics"]]
    row = rows.iloc[-1].to_dict()
    assert (row["status"], row["end_reason"]) == ("ok", "max_duration"), shown
    assert row["valid"] and row["validation_reason"] == "time_limit_accepted", shown
    earlier = rows.iloc[:-1]
    assert (earlier["status"] == "invalid").all(), shown  # the simulator's, regenerated
    assert not earlier["end_reason"].isin(["provider_error", "harness_error"]).any(), shown
    turns = llm_fault_run.turns
    said = turns[(turns["attempt_id"] == row["attempt_id"]) & (turns["role"] == "assistant")]
    assert len(said) >= 2  # it answered the caller, not just greeted
    events = llm_fault_run.events
    events = events[events["attempt_id"].isin(rows["attempt_id"])]
    assert len(events) and not (events["kind"] == "provider_error").any(), events


class DroppingSession(RealtimeSession):
    """The provider drops the call's socket after its first answer (a server-side crash:
    no close handshake), as a provider outage looks from the client."""

    async def done(self, *args: Any, **kwargs: Any) -> None:
        await super().done(*args, **kwargs)
        self.ws.transport.abort()


class DroppingRealtime(FakeOpenAIRealtime):
    session_class = DroppingSession


@pytest.fixture
def dropping_realtime(
    eva_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[DroppingRealtime]:
    scenario = load_eva_scenarios(eva_root, record_ids=[RECORD])[0]
    ears = agent_recognizer_for_domain(
        scenario.domain, scenario.agent, SttSpec(grammar="codes"), tmp_path / "ears"
    )
    monkeypatch.setenv("OPENAI_API_KEY", "placeholder-key")

    def brain(messages: list[dict[str, Any]]) -> dict[str, Any]:
        return next_message(scenario, messages)

    with DroppingRealtime(brain, ears) as server:
        yield server


@pytest.mark.timeout(300)
def test_a_realtime_socket_dropped_mid_call_is_an_infra_error_naming_it(
    eva_root: Path, tmp_path: Path, dropping_realtime: DroppingRealtime
) -> None:
    realtime = {
        "provider": "openai-realtime",
        "model": "gpt-realtime",
        "params": {"base_url": dropping_realtime.base_url},
    }
    system = {
        "name": "s2s-faults",
        "agent": "pipecat",
        "params": {"architecture": "s2s", "components": {"realtime": realtime}},
    }
    rows = run(eva_root, tmp_path / "store", system)
    # The service's receive task dies of it (reported from Pipecat's task log), or its
    # next send fails (an error frame), whichever comes first: both quote the socket.
    says = "no close frame received or sent"
    turns = Store(str(tmp_path / "store")).read("turns", "faults")
    assert_provider_failures(rows, turns, "openai-realtime realtime (model gpt-realtime)", says)
    # Mid-call: each session answered (the greeting) before its socket was dropped.
    assert len(dropping_realtime.sessions) == MAX_ATTEMPTS
    assert all(session.usage_log for session in dropping_realtime.sessions)


# ------------------------------------------------------------------- the bot itself dies


def kill_bot_when_the_call_starts(deadline_s: float) -> threading.Thread:
    """SIGKILL this process's bot two seconds after it listens (``shared_bot`` files it
    once it does): the call opens at once, and the bot is greeting by then."""

    def killer() -> None:
        until = time.monotonic() + deadline_s
        while time.monotonic() < until:
            bots = [b for b in pipecat_process._BOTS.values() if b.running()]
            if bots and bots[0].process is not None:
                time.sleep(2.0)
                os.kill(bots[0].process.pid, signal.SIGKILL)
                return
            time.sleep(0.05)

    thread = threading.Thread(target=killer, daemon=True)
    thread.start()
    return thread


@pytest.mark.timeout(300)
def test_a_bot_process_that_dies_mid_call_is_a_harness_error(
    scenario: Scenario, tmp_path: Path, chat: FakeChatServer
) -> None:
    chat.fallback = text_reply("Could you spell the confirmation code for me?")
    config = SimulationConfig(
        agent="pipecat",
        agent_params=cascade(chat.base_url)["params"],
        max_duration_s=60,
        cache_dir=tmp_path,
    )
    pipecat_process.stop_all()  # a fresh bot: the one this test kills
    killer = kill_bot_when_the_call_starts(deadline_s=120)
    record = asyncio.run(simulate_realtime_async(scenario, config))
    killer.join(5)
    assert (record.status, record.end_reason) == ("infra_error", "harness_error"), record.error
    assert "stopped serving" in (record.error or ""), record.error
    assert record.duration_s < AGENT_TIMEOUT_S


# ------------------------------------------------------- every service class, one by one


def test_every_catalogue_service_reports_an_unreachable_provider_by_name() -> None:
    keys = ("DEEPGRAM", "CARTESIA", "ELEVENLABS", "ASSEMBLYAI", "OPENAI", "GOOGLE", "ANTHROPIC")
    env = {**os.environ, "PYTHONPATH": str(REPO), **{f"{k}_API_KEY": "placeholder" for k in keys}}
    env.pop("VIRTUAL_ENV", None)
    started = time.perf_counter()
    done = subprocess.run(
        [
            str(bot_python()),
            "-m",
            "tests.tasks.systems.fault_probe",
            f"http://127.0.0.1:{closed_port()}",
        ],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    results = json.loads(done.stdout.strip().splitlines()[-1])
    assert len(results) == 15
    for result in results:
        named = (result["provider"], result["role"])
        assert "build_error" not in result, result
        [event] = result["events"]  # the first fatal one; the reporter stops there
        assert (event["provider"], event["role"], event["fatal"]) == (*named, True), result
        assert event["event"] == "provider_error" and event["streamSid"] == "MZprobe"
        assert event["message"], result
    print(f"{len(results)} services probed in {time.perf_counter() - started:.1f} s")
