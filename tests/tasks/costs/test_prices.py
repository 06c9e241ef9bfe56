"""The shipped price table, user tables, and the metered components of catalogue systems."""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from tasks.config import ConfigError, parse_config
from tasks.costs.components import run_components
from tasks.costs.prices import DEFAULT_PRICES, PriceError, load_prices
from tasks.simulate.callers.openai_realtime import response_usage
from tasks.systems.catalogue import expand_systems

# Paid models of the catalogue whose published price was found (the rest stay unpriced).
CATALOGUE_PRICED = {
    "gpt-5.4",
    "gpt-5.4-mini",
    "gpt-realtime-1.5",
    "claude-haiku-4-5",
    "gemini-3-flash-preview",
    "gemini-3.1-flash-tts-preview",
    "nova-3",
    "scribe_v2_realtime",
    "fixie-ai/ultravox",
}
# The reference's judge models (EVA spec 4.1), as a judge's usage names them: the provider
# model of its deployment (Anthropic's API and the reference's Bedrock profile for Opus).
JUDGE_PRICED = {"gpt-5.2", "claude-opus-4-6", "us.anthropic.claude-opus-4-6-v1"}
PRICED = CATALOGUE_PRICED | JUDGE_PRICED


def test_the_shipped_table_has_a_dated_source_for_every_row() -> None:
    table = load_prices(DEFAULT_PRICES)
    assert {r.model for r in table.prices} == PRICED
    for row in table.prices:
        assert re.fullmatch(r"\d{4}-\d\d-\d\d", row.as_of), row
        assert row.source.startswith("https://") and row.currency == "USD", row
        assert 0 < row.unit_price < 1, row  # a price per token / second, never per million
    assert re.fullmatch(r"sha256:[0-9a-f]{12}@\d{4}-\d\d-\d\d", table.version_id)


def test_every_priced_model_is_one_the_catalogue_uses() -> None:
    systems = expand_systems(
        [
            "gpt-realtime-1.5",
            "nova-3+gpt-5.4+sonic-3",
            "nova-3+gpt-5.4-mini+aura-2",
            "ink-whisper+haiku-4.5+sonic-3",
            "gemini-3-flash+gemini-3.1-flash-tts",
            "scribe-v2.2-realtime+gemini-3-flash+tts-conversational-v3-alpha",
            "ultravox-realtime",
        ],
        [],
    )
    specs = {"systems": systems}
    import json

    used = {c.model for c in run_components("r", json.dumps(specs))}
    assert used >= CATALOGUE_PRICED, CATALOGUE_PRICED - used
    assert {"sonic-3", "aura-2", "ink-whisper"} <= used - PRICED  # named unpriced, not guessed


def test_offline_systems_and_callers_meter_nothing() -> None:
    import json

    systems = expand_systems(["reference"], [])
    specs = {
        "systems": systems,
        "caller": {"name": "scripted", "params": {"tts": "piper"}},
    }
    assert run_components("r", json.dumps(specs)) == []
    hosted = {**specs, "caller": {"name": "scripted", "params": {"tts": "openai"}}}
    (voice,) = run_components("r", json.dumps(hosted))
    assert (voice.role, voice.component, voice.provider) == ("simulator", "tts", "openai")


def write(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text(yaml.safe_dump({"prices": rows}), encoding="utf-8")
    return path


ROW = {
    "provider": "p",
    "model": "m",
    "unit": "input_token",
    "price": 1.0,
    "per": 1000000,
    "as_of": "2026-12-01",
    "source": "https://example.test",
}


def test_a_bad_user_table_is_one_error_naming_the_file(tmp_path: Path) -> None:
    twice = write(tmp_path / "twice.yaml", [ROW, ROW])
    with pytest.raises(
        PriceError, match=r"twice\.yaml: duplicate rows \[\('p', 'm', 'input_token'\)\]"
    ):
        load_prices(twice)
    unit = write(tmp_path / "unit.yaml", [{**ROW, "unit": "tokens"}])
    with pytest.raises(PriceError, match=r"unit\.yaml: prices\.0\.unit: Input should be"):
        load_prices(unit)
    with pytest.raises(ConfigError, match=r"field 'prices'.*missing\.yaml: cannot read it"):
        parse_config({"prices": str(tmp_path / "missing.yaml")})
    good = write(tmp_path / "good.yaml", [ROW])
    assert parse_config({"prices": str(good)}).prices == good


def test_the_realtime_caller_reports_each_responses_usage() -> None:
    usage = SimpleNamespace(
        input_tokens=900,
        output_tokens=120,
        input_token_details=SimpleNamespace(
            audio_tokens=700, cached_tokens_details=SimpleNamespace(text_tokens=50, audio_tokens=20)
        ),
        output_token_details=SimpleNamespace(audio_tokens=100),
    )
    data = response_usage(SimpleNamespace(usage=usage), "gpt-realtime-1.5")
    assert data == {
        "provider": "openai-realtime",
        "model": "gpt-realtime-1.5",
        "input_tokens": 900,
        "output_tokens": 120,
        "input_audio_tokens": 700,
        "cached_input_tokens": 50,
        "cached_input_audio_tokens": 20,
        "output_audio_tokens": 100,
    }
    assert response_usage(SimpleNamespace(usage=None), "m") is None
