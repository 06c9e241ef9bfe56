"""The provider table says what the Pipecat services and SDKs in .venv-pipecat really do.

One script in the Pipecat environment reads, for every (role, provider) the bot builds:
the constructor parameter that moves the host and its default, the SDK's default base URL,
and the base URL each SDK takes from its own variable; the table must agree. Starts
.venv-pipecat once (a few seconds): run under ``flock /tmp/evaflow-heavy.lock``.
"""

from __future__ import annotations

import json

import pytest

from tasks.systems.providers import PROVIDERS, origin
from tests.tasks.systems.standins.pipecat_driver import require_pipecat, run_in_pipecat

FACTS = r"""
import importlib, inspect, json, os
from tasks.systems.pipecat_bot.pipeline import SERVICES
from tasks.systems.pipecat_bot.check import REALTIME, accepted
from tasks.systems.pipecat_bot.realtime import KEYS

def default(cls, name):
    for klass in cls.__mro__:
        init = klass.__dict__.get("__init__")
        if init is not None:
            p = inspect.signature(init).parameters.get(name)
            if p is not None and p.default is not inspect.Parameter.empty:
                return p.default if isinstance(p.default, str) else None
    return None

services = {}
for role, by_name in SERVICES.items():
    for name, (module, cls_name, key) in by_name.items():
        cls = getattr(importlib.import_module(module), cls_name)
        services[f"{role}/{name}"] = {"accepts": sorted(accepted(cls)), "key": key}
for name, (module, cls_name, _) in REALTIME.items():
    cls = getattr(importlib.import_module(module), cls_name)
    services[f"realtime/{name}"] = {"accepts": sorted(accepted(cls)), "key": KEYS[name]}
defaults = {}
for key, info in services.items():
    role, name = key.split("/")
    module, cls_name = (SERVICES.get(role, {}).get(name) or REALTIME[name])[:2]
    cls = getattr(importlib.import_module(module), cls_name)
    defaults[key] = {p: default(cls, p) for p in ("base_url", "url", "api_endpoint_base_url")}

import anthropic, openai
from deepgram import DeepgramClientEnvironment
from google.genai import Client
sdk = {
    "openai": str(openai.AsyncOpenAI(api_key="x").base_url),
    "anthropic": str(anthropic.AsyncAnthropic(api_key="x").base_url),
    "deepgram": DeepgramClientEnvironment.PRODUCTION.base,
    "google": Client(api_key="x")._api_client._http_options.base_url,
}
os.environ.update({"OPENAI_BASE_URL": "http://moved:1/v1", "ANTHROPIC_BASE_URL": "http://moved:2",
                   "GOOGLE_GEMINI_BASE_URL": "http://moved:3/"})
moved = {
    "OPENAI_BASE_URL": str(openai.AsyncOpenAI(api_key="x").base_url),
    "ANTHROPIC_BASE_URL": str(anthropic.AsyncAnthropic(api_key="x").base_url),
    "GOOGLE_GEMINI_BASE_URL": Client(api_key="x")._api_client._http_options.base_url,
}
print(json.dumps({"services": services, "defaults": defaults, "sdk": sdk, "moved": moved}))
"""


@pytest.fixture(scope="module")
def facts() -> dict[str, object]:
    require_pipecat()
    result: dict[str, object] = run_in_pipecat(FACTS, timeout=120)
    return result


def test_every_service_the_bot_builds_has_a_row_with_its_key(facts: dict) -> None:
    services = facts["services"]
    assert set(services) == {f"{r}/{p}" for r, p in PROVIDERS}
    for key, info in services.items():
        role, name = key.split("/")
        assert PROVIDERS[(role, name)].key_env == info["key"], key


def test_the_host_parameter_is_one_the_service_takes(facts: dict) -> None:
    services = facts["services"]
    # The bot turns a google component's base_url into the client's http_options.
    renamed = {("llm", "google"): "http_options", ("tts", "google"): "http_options"}
    for (role, name), row in PROVIDERS.items():
        if row.host_param is None:
            assert name == "anthropic", (role, name)
            continue
        if (role, name) == ("realtime", "ultravox"):
            continue  # the bot's builder takes base_url (realtime.hosted_ultravox), not Pipecat
        taken = renamed.get((role, name), row.host_param)
        if (role, name) == ("realtime", "gemini-live"):
            taken = "http_options"  # realtime.gemini_live: base_url -> HttpOptions
        assert taken in services[f"{role}/{name}"]["accepts"], (role, name, taken)


def test_default_hosts_are_the_services_and_sdks_own(facts: dict) -> None:
    defaults, sdk = facts["defaults"], facts["sdk"]
    for (role, name), row in PROVIDERS.items():
        mine = {origin(u) for u in (row.rest, row.ws) if u}
        given = defaults[f"{role}/{name}"].get(row.host_param or "")
        if given:  # the service's own default for the parameter that moves it
            assert origin(given) in mine, (role, name, given)
    assert sdk["openai"].rstrip("/") == PROVIDERS[("llm", "openai")].rest
    assert sdk["anthropic"].rstrip("/") == PROVIDERS[("llm", "anthropic")].rest
    assert sdk["deepgram"] == PROVIDERS[("stt", "deepgram")].rest
    assert sdk["google"].rstrip("/") == PROVIDERS[("llm", "google")].rest


def test_the_clients_read_the_variables_the_table_names(facts: dict) -> None:
    moved = facts["moved"]
    named = {row.host_env for row in PROVIDERS.values() if row.host_env}
    assert named == set(moved)
    assert moved == {
        "OPENAI_BASE_URL": "http://moved:1/v1/",
        "ANTHROPIC_BASE_URL": "http://moved:2",
        "GOOGLE_GEMINI_BASE_URL": "http://moved:3/",
    }, json.dumps(moved)
