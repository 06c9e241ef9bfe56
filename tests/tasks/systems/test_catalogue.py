"""The systems catalogue: the paper's systems by name, validation, ${VAR}, user directories."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evaflow_core.registry import UnknownNameError
from tasks.config import ConfigError, SystemSpec, parse_config
from tasks.systems.catalogue import (
    architecture_of,
    expand_systems,
    interpolate,
    load_catalogue,
    load_entry,
    to_system_spec,
)

PUBLISHED = (
    Path(__file__).resolve().parents[3].parent / "shared/eva/published/leaderboardStats.json"
)
# The twelve systems the issue names, by the paper's names (lower-cased, spaces dropped).
PAPER = {
    "cohere-transcribe+gemma-4-26b+voxtral-4b-tts": "cascade",
    "scribe-v2.2-realtime+gemini-3-flash+tts-conversational-v3-alpha": "cascade",
    "ink-whisper+haiku-4.5+sonic-3": "cascade",
    "nova-3+gpt-5.4+sonic-3": "cascade",
    "nova-3+gpt-5.4-mini+aura-2": "cascade",
    "parakeet-1.1+gemma-4-31b+kokoro": "cascade",
    "whisper-large-v3+qwen3.5-27b+voxtral-4b-tts": "cascade",
    "gemini-3-flash+gemini-3.1-flash-tts": "hybrid",
    "ultravox-realtime": "hybrid",
    "gemini-3.1-flash-live": "s2s",
    "gpt-realtime-1.5": "s2s",
    "gpt-realtime-mini": "s2s",
}
OFFLINE = {"reference", "llm", "pipecat-offline"}

GOOD = """\
name: my-bot
title: My Bot
architecture: s2s
description: Ours.
agent: pipecat
components:
  realtime:
    provider: openai-realtime
    model: m1
    params: {base_url: "${MY_URL:-ws://127.0.0.1:9/v1}", region: "${MY_REGION}"}
env: [MY_KEY]
"""


def test_the_catalogue_holds_the_papers_twelve_systems_and_the_offline_ones() -> None:
    catalogue = load_catalogue(environ={})
    assert set(catalogue.names()) == set(PAPER) | OFFLINE
    for name, architecture in PAPER.items():
        entry = catalogue.get(name)
        assert entry.architecture == architecture and entry.agent == "pipecat", name
        assert entry.source and Path(entry.source).name == f"{name}.yaml"


def test_paper_ids_are_the_published_leaderboards_and_types_agree() -> None:
    if not PUBLISHED.exists():
        pytest.skip("published leaderboard not found")
    published = {s["id"]: s["type"] for s in json.loads(PUBLISHED.read_text())["systems"]}
    kinds = {"cascade": "cascade", "2-part": "hybrid", "s2s": "s2s"}
    catalogue = load_catalogue(environ={})
    for name in PAPER:
        entry = catalogue.get(name)
        assert entry.paper_id in published, name
        assert kinds[published[entry.paper_id]] == entry.architecture, name


def test_unknown_names_list_the_valid_ones() -> None:
    with pytest.raises(UnknownNameError, match="valid names: .*gpt-realtime-1.5"):
        load_catalogue(environ={}).get("gpt-realtime-9")


def test_spec_follows_the_contract_with_variables_resolved() -> None:
    entry = load_catalogue(environ={}).get("gpt-realtime-1.5")
    spec = to_system_spec(entry, {"OPENAI_REALTIME_BASE_URL": "ws://127.0.0.1:4444/v1"})
    assert spec == SystemSpec(
        name="gpt-realtime-1.5",
        agent="pipecat",
        params={
            "architecture": "s2s",
            "components": {
                "realtime": {
                    "provider": "openai-realtime",
                    "model": "gpt-realtime-1.5",
                    "params": {"base_url": "ws://127.0.0.1:4444/v1"},
                }
            },
        },
    )
    default = to_system_spec(entry, {})
    assert default.params["components"]["realtime"]["params"]["base_url"] == (
        "wss://api.openai.com/v1"
    )


def test_interpolation_keeps_unset_references_for_preflight_to_name() -> None:
    value = {"a": "${X}/v1", "b": ["${Y:-dflt}", 3], "c": "${Z}"}
    assert interpolate(value, {"X": "http://h"}) == {
        "a": "http://h/v1",
        "b": ["dflt", 3],
        "c": "${Z}",
    }


def test_architecture_from_params_or_agent() -> None:
    assert architecture_of(SystemSpec(name="r", agent="reference")) == "cascade"
    assert architecture_of(SystemSpec(name="l", agent="llm", params={"model": "m"})) == "cascade"
    assert architecture_of(SystemSpec(name="x", agent="ws://127.0.0.1:1/ws")) is None
    assert (
        architecture_of({"name": "p", "agent": "pipecat", "params": {"architecture": "s2s"}})
        == "s2s"
    )
    llm = to_system_spec(
        load_catalogue(environ={}).get("llm"),
        {"EVAFLOW_LLM_BASE_URL": "u", "EVAFLOW_LLM_MODEL": "m"},
    )
    assert llm.params == {"base_url": "u", "model": "m"} and architecture_of(llm) == "cascade"


def test_a_user_adds_a_system_with_a_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "mine.yaml").write_text(GOOD)
    monkeypatch.setenv("EVAFLOW_SYSTEMS_PATH", str(tmp_path))
    entry = load_catalogue().get("my-bot")
    assert entry.required_env() == ["MY_KEY", "MY_REGION"]  # defaults make MY_URL optional
    config = parse_config({"systems": ["my-bot", {"name": "x", "agent": "reference"}]})
    assert [s.name for s in config.systems] == ["my-bot", "x"]
    assert config.systems[0].params["components"]["realtime"]["params"]["region"] == "${MY_REGION}"


def test_systems_dirs_in_a_run_config(tmp_path: Path) -> None:
    (tmp_path / "mine.yaml").write_text(GOOD)
    config = parse_config({"systems_dirs": [str(tmp_path)], "systems": ["my-bot", "reference"]})
    assert [(s.name, s.agent) for s in config.systems] == [
        ("my-bot", "pipecat"),
        ("reference", "reference"),
    ]
    with pytest.raises(ConfigError, match="field 'systems'.*unknown system 'nope'; valid names: "):
        parse_config({"systems": ["nope"]}, source="run.yaml")


def test_a_user_file_replaces_a_builtin_of_the_same_name(tmp_path: Path) -> None:
    (tmp_path / "ref.yaml").write_text(GOOD.replace("my-bot", "gpt-realtime-mini"))
    entry = load_catalogue([tmp_path], environ={}).get("gpt-realtime-mini")
    assert entry.components["realtime"].model == "m1"


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (("architecture: s2s", "architecture: duplex"), "field 'architecture'"),
        (("provider: openai-realtime", "providr: x"), "field 'components.realtime.provider'"),
        (("architecture: s2s", "architecture: cascade"), "do not make a cascade system"),
        (("name: my-bot", "name: My Bot"), "field 'name'"),
        (("env: [MY_KEY]", "env: [MY-KEY]"), "field 'env'"),
        (("  realtime:", "  speaker:"), "field 'components.speaker"),
    ],
)
def test_errors_name_the_file_and_the_field(
    tmp_path: Path, edit: tuple[str, str], message: str
) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(GOOD.replace(*edit))
    with pytest.raises(ConfigError) as info:
        load_entry(path)
    assert str(path) in str(info.value) and message in str(info.value)


def test_duplicate_names_in_one_directory_and_missing_directories_are_errors(
    tmp_path: Path,
) -> None:
    (tmp_path / "a.yaml").write_text(GOOD)
    (tmp_path / "b.yaml").write_text(GOOD)
    with pytest.raises(ConfigError, match="already defined in"):
        load_catalogue([tmp_path], environ={})
    with pytest.raises(ConfigError, match="systems directory not found"):
        load_catalogue([tmp_path / "nowhere"], environ={})
    assert expand_systems([{"name": "x"}]) == [{"name": "x"}]  # nothing to look up
