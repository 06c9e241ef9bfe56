"""Rehearsal (issue 29, item 2): every shipped paid system pointed at the stand-ins with
nothing else changed and no real key passing, the brain's scenario identification, and a
rehearsal never resuming into a real run (or the other way round)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from flows.benchmark import _write_run_row
from scenarios.models import Scenario
from tasks.config import BenchmarkConfig, ConfigError, ScenarioSource
from tasks.config_checks import load_checked, resume_config
from tasks.simulate.llm_prompts import agent_system_prompt
from tasks.store import Store
from tasks.systems.catalogue import load_catalogue, to_system_spec
from tasks.systems.providers import key_variables, provider
from tasks.systems.rehearsal import (
    PLACEHOLDER_KEY,
    REHEARSAL_ENV,
    ROUTES,
    apply_to_bot_system,
    rehearsal,
    rehearsal_environ,
    rehearsed_system,
    standins_needed,
)
from tasks.systems.rehearsal_brain import RehearsalBrain
from tasks.systems.spec import SystemSpec
from tasks.systems.standins.brain import next_message
from tasks.tables import SCHEMAS

# A distinct, recognisable URL per (role, provider), as the stand-ins' would be.
URLS = {key: f"http://{kind}.standin.invalid/{key[0]}" for key, (kind, _) in ROUTES.items()}


def paper_specs() -> list[SystemSpec]:
    catalogue = load_catalogue(environ={})
    names = sorted(n for n in catalogue if catalogue.get(n).paper_id)
    assert len(names) == 12, names
    return [to_system_spec(catalogue.get(n), environ={}) for n in names]


@pytest.mark.parametrize("spec", paper_specs(), ids=lambda s: s.name)
def test_every_component_host_points_at_a_standin_and_nothing_else_changes(
    spec: SystemSpec,
) -> None:
    pointed = rehearsed_system(spec, URLS)
    environ = rehearsal_environ([spec], URLS, None)
    assert pointed.name == spec.name and pointed.agent == spec.agent
    assert pointed.params["architecture"] == spec.params["architecture"]
    before, after = spec.params["components"], pointed.params["components"]
    assert set(after) == set(before)
    for role, comp in before.items():
        row = provider(role, comp["provider"])
        assert row is not None, (spec.name, role)
        moved = dict(after[role])
        params = dict(moved.pop("params"))
        if row.host_param:
            assert params.pop(row.host_param) == URLS[(role, comp["provider"])]
        else:  # Anthropic: its client reads ANTHROPIC_BASE_URL
            assert row.host_env and environ[row.host_env] == URLS[(role, comp["provider"])]
        original = dict(comp)
        given = dict(original.pop("params", None) or {})
        given.pop(row.host_param or "", None)
        # Same service, model id, voice and every other parameter.
        assert moved == original and params == given, (spec.name, role)
    # Every key variable of the provider table is a placeholder, so none of a real one passes.
    assert {v: environ[v] for v in key_variables()} == dict.fromkeys(
        key_variables(), PLACEHOLDER_KEY
    )
    assert all("${" not in json.dumps(c.get("params")) for c in after.values()), after


def test_a_provider_without_a_standin_or_a_remote_agent_is_refused() -> None:
    assembly = SystemSpec(
        name="aai",
        agent="pipecat",
        params={
            "architecture": "cascade",
            "components": {
                "stt": {"provider": "assemblyai", "model": "u3"},
                "llm": {"provider": "openai", "model": "gpt-5.4"},
                "tts": {"provider": "evaflow-espeak"},
            },
        },
    )
    remote = SystemSpec(name="mine", agent="ws://10.0.0.1:9000/ws")
    with pytest.raises(ConfigError) as error:
        standins_needed([assembly, remote])
    assert "stt assemblyai: no stand-in" in str(error.value)
    assert "remote agent" in str(error.value)


def test_the_context_overrides_real_keys_and_restores_them(
    eva_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from scenarios.loader import load_eva_scenarios

    monkeypatch.setenv("OPENAI_API_KEY", "sk-real-key")
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    specs = [s for s in paper_specs() if s.name == "ink-whisper+haiku-4.5+sonic-3"]
    scenarios = load_eva_scenarios(eva_root, record_ids=["airline/5.2.2"])
    with rehearsal(specs, scenarios, tmp_path) as running:
        assert sorted(running.servers) == ["anthropic", "cartesia"]
        assert os.environ["OPENAI_API_KEY"] == PLACEHOLDER_KEY
        assert os.environ["ANTHROPIC_BASE_URL"] == running.servers["anthropic"].base_url
        comps = running.systems[0].params["components"]
        assert comps["stt"]["params"]["base_url"] == running.servers["cartesia"].base_url
        assert comps["tts"]["params"]["url"] == running.servers["cartesia"].tts_url
        # What the Pipecat agent hands its bot is pointed the same way.
        shipped = {**specs[0].params, "cache_dir": "/tmp/x"}
        bot = apply_to_bot_system(shipped, os.environ)
        assert bot["components"] == comps and bot["cache_dir"] == "/tmp/x"
    assert os.environ["OPENAI_API_KEY"] == "sk-real-key"
    assert "ANTHROPIC_BASE_URL" not in os.environ and REHEARSAL_ENV not in os.environ
    assert apply_to_bot_system(shipped, os.environ) == shipped


@pytest.fixture(scope="module")
def builtin_scenarios() -> list[Scenario]:
    found = load_checked(ScenarioSource())
    assert len({s.domain for s in found}) >= 2 and len(found) > len({s.domain for s in found})
    return found


def call(scenario: Scenario, heard: str | None) -> list[dict[str, Any]]:
    messages = [{"role": "system", "content": agent_system_prompt(scenario)}]
    return messages + ([{"role": "user", "content": heard}] if heard is not None else [])


def test_the_brain_identifies_the_scenario_from_what_the_model_is_sent(
    builtin_scenarios: list[Scenario],
) -> None:
    brain = RehearsalBrain(builtin_scenarios)
    for scenario in builtin_scenarios:
        # Domain from the system prompt alone, before the caller said anything.
        assert brain.domain_of(call(scenario, None)) == scenario.domain
        first = str(scenario.user_goal["starting_utterance"])
        # As a recogniser might hear it: lower case, no punctuation, a word lost.
        heard = " ".join(first.lower().replace(",", "").replace(".", "").split()[1:])
        messages = call(scenario, heard)
        assert brain.scenario_of(messages).key == scenario.key, (scenario.key, heard)
        assert brain(messages) == next_message(scenario, messages)
    assert set(brain.identified) == {s.key for s in builtin_scenarios}


def test_the_brain_domain_follows_the_prompt_not_the_callers_words(
    builtin_scenarios: list[Scenario],
) -> None:
    brain = RehearsalBrain(builtin_scenarios)
    by_domain = {s.domain: s for s in builtin_scenarios}
    airline, other = by_domain["airline"], next(s for d, s in by_domain.items() if d != "airline")
    # The other domain's caller line under the airline agent's prompt stays airline.
    messages = [
        {"role": "system", "content": agent_system_prompt(airline)},
        {"role": "user", "content": str(other.user_goal["starting_utterance"])},
    ]
    assert brain.scenario_of(messages).domain == "airline"


def text_config(store: Path, rehearse: bool) -> BenchmarkConfig:
    return BenchmarkConfig.model_validate(
        {
            "store": str(store),
            "run_id": "nightly",
            "rehearse": rehearse,
            "systems": ["nova-3+gpt-5.4+sonic-3"],
            "scenarios": {"domains": ["airline"], "limit": 1},
            "conditions": ["clean"],
            "trials": 1,
            "report": False,
        }
    )


@pytest.mark.parametrize("stored_rehearsal", [False, True])
def test_a_rehearsal_and_a_real_run_never_resume_into_each_other(
    tmp_path: Path, stored_rehearsal: bool
) -> None:
    stored = text_config(tmp_path, stored_rehearsal)
    store = Store(str(tmp_path))
    _write_run_row(store, stored)
    assert bool(store.read("runs", "nightly")["rehearsal"].iloc[0]) is stored_rehearsal
    assert stored.fingerprint() != text_config(tmp_path, not stored_rehearsal).fingerprint()
    assert resume_config(store, stored) == stored  # the same kind of run resumes
    with pytest.raises(ConfigError) as error:
        resume_config(store, text_config(tmp_path, not stored_rehearsal))
    assert f"rehearse: stored {json.dumps(stored_rehearsal)}" in str(error.value)
    renamed = resume_config(store, text_config(tmp_path, not stored_rehearsal), True)
    assert renamed.run_id != "nightly"


def test_the_cli_refuses_a_rehearsal_on_a_remote_cluster(tmp_path: Path) -> None:
    argv = ["run", "--system", "gpt-realtime-mini", "--rehearse", "--dask-address", "tcp://h:1"]
    done = subprocess.run(
        [sys.executable, "-m", "flows", *argv, "--store", str(tmp_path / "store")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert lines == [
        "error: --rehearse runs on local runners only (its stand-ins listen on loopback)"
    ]
    assert not (tmp_path / "store").exists()


def test_the_tables_say_rehearsal_and_old_runs_read_null() -> None:
    assert SCHEMAS["runs"].field("rehearsal").type == pa.bool_()
    assert SCHEMAS["trials"].field("rehearsal").type == pa.bool_()
    assert BenchmarkConfig().rehearse is False


def test_the_report_says_rehearsal_prominently_and_old_runs_do_not() -> None:
    import pandas as pd

    from analysis.report_index import summary_section

    empty = pd.DataFrame()
    assert "REHEARSAL" in summary_section({"run_id": "r", "rehearsal": True}, empty)
    for old in ({"run_id": "r"}, {"run_id": "r", "rehearsal": None}, {"rehearsal": False}):
        assert "REHEARSAL" not in summary_section(old, empty)


def test_rehearsal_preflight_passes_against_the_standins_with_no_route_anywhere(
    tmp_path: Path,
) -> None:
    """``evaflow run --rehearse --check``: variables (placeholders), every host reachable
    (the stand-ins), key and model where the stand-in serves the probe, and the bot's
    ``--check`` build of each system as pointed; nothing is stored."""
    from tasks.systems.pipecat_process import bot_python

    if not bot_python().exists():
        pytest.skip("the Pipecat environment is missing: run `make pipecat-env`")
    names = ["nova-3+gpt-5.4-mini+aura-2", "ink-whisper+haiku-4.5+sonic-3", "ultravox-realtime"]
    argv = [arg for name in names for arg in ("--system", name)]
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_BASE_URL"))}
    done = subprocess.run(
        [sys.executable, "-m", "flows", "run", *argv, "--rehearse", "--check"]
        + ["--store", str(tmp_path / "store")],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    assert f"preflight passed for {', '.join(names)}" in " ".join(done.stdout.split())
    assert "handshake" not in done.stderr and not (tmp_path / "store").exists()
