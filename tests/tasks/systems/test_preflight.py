"""Preflight: one error naming every system, component and cause; values never shown.

No test here touches DNS or the internet: the providers' default hosts are pointed at
loopback (their table rows, or the variables their clients read), and a guard fails any
name lookup that is not loopback. The bot's pipeline build (a process in .venv-pipecat) is
tested in test_bot_check.py; here ``build=False``.
"""

from __future__ import annotations

import dataclasses
import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

import tasks.systems.preflight as pf
from tasks.config import ConfigError, SystemSpec
from tasks.systems import providers
from tasks.systems.catalogue import load_catalogue, to_system_spec, unresolved
from tasks.systems.providers import PROVIDERS, component_label

SECRET = "sk-preflight-secret-9c1e"
LOOPBACK = {"127.0.0.1", "localhost"}


@pytest.fixture(autouse=True)
def no_dns(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Fail (and record) any name lookup that is not loopback; forget passed systems."""
    looked_up: list[str] = []
    real = socket.getaddrinfo

    def guarded(host: Any, *args: Any, **kwargs: Any) -> Any:
        if str(host) not in LOOPBACK:
            looked_up.append(str(host))
            raise socket.gaierror(f"test guard: no DNS for {host}")
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", guarded)
    pf.clear_passed()
    return looked_up


@pytest.fixture
def listening() -> Iterator[int]:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        yield server.getsockname()[1]


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def pipecat_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    python = tmp_path / ".venv-pipecat" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text("")
    monkeypatch.setenv("EVAFLOW_PIPECAT_PYTHON", str(python))
    return python


class Answers:
    """A local provider: path -> (status, JSON body); records each request's headers."""

    def __init__(self, routes: dict[str, tuple[int, Any]]) -> None:
        self.routes = routes
        self.seen: list[tuple[str, dict[str, str]]] = []
        answers = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - http.server's naming
                answers.seen.append((self.path, dict(self.headers.items())))
                status, body = answers.routes.get(self.path, (404, {"error": "no such path"}))
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> Answers:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


def catalogue_spec(name: str, environ: dict[str, str]) -> SystemSpec:
    return to_system_spec(load_catalogue(environ={}).get(name), environ)


def cascade(**components: dict[str, Any]) -> SystemSpec:
    params = {"architecture": "cascade", "components": components}
    return SystemSpec(name="mine", agent="pipecat", params=params)


def problems(systems: list[SystemSpec], env: dict[str, str], **kw: Any) -> list[str]:
    """The error's problem lines ([] when preflight passes)."""
    try:
        pf.preflight(systems, environ=env, timeout_s=0.5, build=False, **kw)
    except ConfigError as exc:
        header, *lines = str(exc).splitlines()
        assert header == "preflight failed; no trial was started:"
        return [line.removeprefix("  - ") for line in lines]
    return []


# ------------------------------------------------------------------ every paid system


PAID = [
    n
    for n in load_catalogue(environ={})
    if load_catalogue(environ={}).get(n).agent == "pipecat" and n != "pipecat-offline"
]


@pytest.mark.parametrize("name", PAID)
def test_a_paid_system_with_placeholder_keys_and_no_route_names_each_component(
    name: str, pipecat_env: Path, monkeypatch: pytest.MonkeyPatch, no_dns: list[str]
) -> None:
    nowhere = f"http://127.0.0.1:{closed_port()}"
    for key, row in PROVIDERS.items():  # every default host: a closed loopback port
        ws = nowhere.replace("http", "ws") + "/stream" if row.ws else None
        monkeypatch.setitem(PROVIDERS, key, dataclasses.replace(row, rest=nowhere, ws=ws))
    entry = load_catalogue(environ={}).get(name)
    env = {var: "placeholder" for var in [*entry.required_env(), *providers.key_variables()]}
    # The variables the catalogue file and the providers' own clients read for hosts.
    written = unresolved(entry.model_dump(include={"components"}))
    env |= {var: f"{nowhere}/v1" for var in written if var.endswith("_BASE_URL")}
    env |= {"OPENAI_BASE_URL": f"{nowhere}/v1", "ANTHROPIC_BASE_URL": nowhere}
    env |= {"GOOGLE_GEMINI_BASE_URL": nowhere}
    spec = to_system_spec(entry, env)
    found = problems([spec], env)
    assert found, f"{name} passed preflight with no route to its providers"
    for role, component in entry.components.items():
        label = component_label(role, component.provider, spec.params["components"][role]["model"])
        mine = [line for line in found if f"system {name!r}: {label}: " in line]
        assert mine and "is unreachable" in mine[0], (label, found)
    assert len(found) == len(entry.components)  # one line per component, nothing else
    assert "placeholder" not in "\n".join(found) and not no_dns


def test_the_default_hosts_are_the_providers_own(no_dns: list[str]) -> None:
    """Unmoved, a component is checked at its provider's host (here: the guard refuses it)."""
    env = {"ANTHROPIC_API_KEY": SECRET}
    spec = cascade(llm={"provider": "anthropic", "model": "claude-haiku-4-5"})
    found = problems([spec], env)
    assert found == [
        "system 'mine': llm anthropic (claude-haiku-4-5): "
        "api.anthropic.com:443 is unreachable (gaierror)"
    ]
    assert no_dns == ["api.anthropic.com"]


def test_hosts_follow_param_then_client_variable_then_default() -> None:
    row = PROVIDERS[("llm", "openai")]
    assert providers.hosts(row, {}, {}).rest == "https://api.openai.com/v1"
    moved = providers.hosts(row, {}, {"OPENAI_BASE_URL": "http://gpu:8000/v1"})
    assert (moved.rest, moved.moved, moved.source) == (
        "http://gpu:8000/v1",
        True,
        "env OPENAI_BASE_URL",
    )
    param = providers.hosts(
        row, {"base_url": "https://api.openai.com/v1/"}, {"OPENAI_BASE_URL": "x"}
    )
    assert (param.moved, param.source) == (False, "param base_url")
    tts = providers.hosts(
        PROVIDERS[("tts", "cartesia")], {"url": "ws://127.0.0.1:9/tts/websocket"}, {}
    )
    assert (tts.rest, tts.urls) == ("http://127.0.0.1:9", ("ws://127.0.0.1:9/tts/websocket",))
    bare = providers.hosts(PROVIDERS[("stt", "elevenlabs")], {"base_url": "eu.example:8443"}, {})
    assert bare.urls == ("wss://eu.example:8443",) and bare.rest == "https://eu.example:8443"


# ------------------------------------------------------------------ the authenticated request


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        (401, "$ANTHROPIC_API_KEY was rejected (HTTP 401: invalid x-api-key ***)"),
        (403, "$ANTHROPIC_API_KEY was rejected (HTTP 403: invalid x-api-key ***)"),
        (404, "model 'claude-haiku-4-5' not found at"),
        (200, None),
    ],
)
def test_the_key_and_model_are_judged_by_the_providers_answer(
    status: int, expected: str | None
) -> None:
    body = {"error": {"message": f"invalid x-api-key {SECRET}"}} if status != 200 else {"id": "x"}
    with Answers({"/v1/models/claude-haiku-4-5": (status, body)}) as server:
        env = {"ANTHROPIC_API_KEY": SECRET, "ANTHROPIC_BASE_URL": server.url}
        spec = cascade(llm={"provider": "anthropic", "model": "claude-haiku-4-5"})
        found = problems([spec], env)
    assert server.seen[0][1]["x-api-key"] == SECRET
    assert server.seen[0][1]["anthropic-version"] == "2023-06-01"
    if expected is None:
        assert found == []
        return
    assert len(found) == 1 and SECRET not in found[0]
    assert found[0].startswith("system 'mine': llm anthropic (claude-haiku-4-5): ")
    assert expected in found[0]


def test_one_request_per_provider_and_model_across_systems() -> None:
    with Answers({"/v1beta/models/gemini-3-flash-preview": (200, {})}) as server:
        env = {"GOOGLE_API_KEY": SECRET, "GOOGLE_GEMINI_BASE_URL": server.url}
        llm = {"provider": "google", "model": "gemini-3-flash-preview"}
        specs = [cascade(llm=llm), cascade(llm=llm).model_copy(update={"name": "other"})]
        assert problems(specs, env) == []
    assert [path for path, _ in server.seen] == ["/v1beta/models/gemini-3-flash-preview"]
    assert server.seen[0][1]["x-goog-api-key"] == SECRET


def test_a_list_answer_must_offer_the_model_or_voice() -> None:
    models = {
        "stt": [{"canonical_name": "nova-2"}],
        "tts": [{"canonical_name": "aura-2-thalia-en"}],
    }
    with Answers({"/v1/models": (200, models)}) as server:
        env = {"DEEPGRAM_API_KEY": SECRET}
        spec = cascade(
            stt={"provider": "deepgram", "model": "nova-3", "params": {"base_url": server.url}},
            tts={
                "provider": "deepgram",
                "model": "aura-2",
                "params": {
                    "base_url": server.url.replace("http", "ws"),
                    "voice": "aura-2-helena-en",
                },
            },
        )
        found = problems([spec], env)
    assert server.seen[0][1]["Authorization"] == f"Token {SECRET}"
    assert len(found) == 2
    assert "stt deepgram (nova-3): model 'nova-3' is not offered" in found[0]
    assert "tts deepgram (aura-2): voice 'aura-2-helena-en' is not offered" in found[1]


def test_a_self_hosted_server_is_asked_what_it_serves() -> None:
    served = {"data": [{"id": "Qwen/Qwen3.5-27B"}]}
    with Answers({"/v1/models": (200, served)}) as server:

        def served_by(model: str) -> dict[str, Any]:
            return {
                "provider": "openai",
                "model": model,
                "params": {"base_url": f"{server.url}/v1"},
            }

        ok = cascade(llm=served_by("Qwen/Qwen3.5-27B"))
        wrong = cascade(llm=served_by("google/gemma-4-31B-it")).model_copy(update={"name": "wrong"})
        found = problems([ok, wrong], {})  # no OPENAI_API_KEY needed for one's own server
    assert found == [
        f"system 'wrong': llm openai (google/gemma-4-31B-it): model 'google/gemma-4-31B-it' "
        f"is not offered ({server.url}/v1/models lists: Qwen/Qwen3.5-27B)"
    ]
    assert server.seen[0][1]["Authorization"] == "Bearer not-needed"


def test_a_server_that_lists_no_models_is_not_judged_on_them() -> None:
    with Answers({}) as server:  # every path 404, as a chat-only server would
        spec = cascade(llm={"provider": "openai", "model": "m",
                            "params": {"base_url": f"{server.url}/v1"}})  # fmt: skip
        assert problems([spec], {}) == []


# ------------------------------------------------------------------ --no-preflight, memo


def test_no_preflight_skips_the_network_but_not_the_variables(
    monkeypatch: pytest.MonkeyPatch, no_dns: list[str]
) -> None:
    spec = cascade(llm={"provider": "anthropic", "model": "claude-haiku-4-5"})
    assert problems([spec], {"ANTHROPIC_API_KEY": SECRET}, network=False) == []
    assert problems([spec], {"ANTHROPIC_API_KEY": SECRET, pf.NETWORK_ENV: "0"}) == []
    assert not no_dns  # nothing was looked up, nothing connected
    assert problems([spec], {}, network=False) == [
        "system 'mine': llm anthropic (claude-haiku-4-5): "
        "environment variable ANTHROPIC_API_KEY is not set"
    ]


def test_a_system_that_passed_is_not_probed_again_until_something_changes() -> None:
    with Answers({"/v1/models/claude-haiku-4-5": (200, {})}) as server:
        env = {"ANTHROPIC_API_KEY": SECRET, "ANTHROPIC_BASE_URL": server.url}
        spec = cascade(llm={"provider": "anthropic", "model": "claude-haiku-4-5"})
        assert problems([spec], env) == problems([spec], env) == []  # the CLI, then the flow
        assert len(server.seen) == 1
        assert problems([spec], {**env, "ANTHROPIC_API_KEY": "another"}) == []
        assert len(server.seen) == 2
        pf.clear_passed()
        assert problems([spec], env) == []
        assert len(server.seen) == 3


# ------------------------------------------------------------------ what was there before


def test_a_missing_key_is_named_with_the_system(pipecat_env: Path, listening: int) -> None:
    env = {"OPENAI_REALTIME_BASE_URL": f"ws://127.0.0.1:{listening}/v1"}
    spec = catalogue_spec("gpt-realtime-1.5", env)
    found = problems([spec], env)
    assert found == [
        "system 'gpt-realtime-1.5': realtime openai-realtime (gpt-realtime-1.5): "
        "environment variable OPENAI_API_KEY is not set"
    ]
    assert problems([spec], {**env, "OPENAI_API_KEY": "sk-x"}) == []  # a moved host: TCP only


def test_everything_missing_for_every_system_in_one_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EVAFLOW_PIPECAT_PYTHON", str(tmp_path / "absent" / "python"))
    port = closed_port()
    env = {"EVAFLOW_LLM_BASE_URL": f"http://127.0.0.1:{port}/v1", "SECRET": "s3cr3t-value"}
    systems = [
        catalogue_spec("pipecat-offline", env),
        SystemSpec(name="mine", agent="llm", params={"model": "m", "api_key_env": "MY_KEY"}),
        SystemSpec(name="ok", agent="reference"),
    ]
    found = problems(systems, env)
    offline = [line for line in found if line.startswith("system 'pipecat-offline'")]
    assert any("EVAFLOW_LLM_MODEL is not set" in line for line in offline)
    assert not any("EVAFLOW_LLM_BASE_URL" in line for line in offline)
    assert any("make pipecat-env" in line for line in offline)
    assert any(f"llm openai (${{EVAFLOW_LLM_MODEL}}): 127.0.0.1:{port} is unreachable" in line
               for line in offline)  # fmt: skip
    assert any(line.startswith("system 'mine': ") and "MY_KEY is not set" in line for line in found)
    assert not any("'ok'" in line or "s3cr3t-value" in line for line in found)


def test_endpoints_and_env_params_are_found_anywhere_in_params() -> None:
    params = {
        "components": {"llm": {"params": {"base_url": "https://h/v1", "x": ["wss://w:9"]}}},
        "api_key_env": "K",
        "judge": {"token_env": "T"},
        "plain": "not a url",
        "later": "${LATER}/v1",
    }
    assert pf.endpoints(params) == ["https://h/v1", "wss://w:9"]
    assert pf.env_params(params) == ["K", "T"]


def test_a_model_lists_key_references_are_variables_to_check() -> None:
    """An ``llm`` agent naming a model list entry: its ``os.environ/`` keys are checked."""
    entry = {"model_name": "m", "litellm_params": {"model": "openai/m", "api_key": "os.environ/LK"}}
    spec = SystemSpec(name="mine", agent="llm", params={"model": "m", "model_list": [entry]})
    assert pf.env_params(spec.params) == ["LK"]
    assert pf.missing_variables(spec, None, {}) == ["LK"]
    assert pf.missing_variables(spec, None, {"LK": "set"}) == []


def test_reachable_endpoint_passes(listening: int) -> None:
    assert pf.unreachable(f"http://127.0.0.1:{listening}/v1", 1.0) is None
    assert "unreachable" in (pf.unreachable(f"ws://127.0.0.1:{closed_port()}/ws", 0.5) or "")
