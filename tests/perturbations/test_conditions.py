"""perturbations.conditions and accent: named conditions, YAML, accent draws."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from evaflow_core.registry import UnknownNameError
from perturbations.accent import ENGLISH_ACCENTS, AccentParams, apply_accent
from perturbations.audio import VoiceSpec
from perturbations.conditions import CONDITIONS, get_condition, load_conditions_yaml
from perturbations.seeding import make_rng


def test_builtin_conditions() -> None:
    assert {"clean", "accent", "noise", "accent+noise", "connection"} <= set(CONDITIONS.names())
    assert get_condition("clean").is_clean
    both = get_condition("accent+noise")
    assert both.accent is not None and both.noise is not None and both.connection is None


def test_unknown_condition_lists_names() -> None:
    with pytest.raises(UnknownNameError, match="valid names: .*accent"):
        get_condition("underwater")


def test_yaml_conditions_load(tmp_path) -> None:
    path = tmp_path / "conds.yaml"
    path.write_text(
        "conditions:\n"
        "  - name: street-10db\n"
        "    noise: {source: street, snr_db: 10}\n"
        "  - name: rp-bad-line\n"
        "    accent: {voices: [en-gb-x-rp]}\n"
        "    connection: {packet_loss: {loss_rate: 0.1}, codec: {bitrate_kbps: 8}}\n"
    )
    street, rp = load_conditions_yaml(path)
    assert street.noise is not None and street.noise.snr_db == 10
    assert rp.connection is not None and rp.connection.codec is not None
    assert rp.connection.codec.bitrate_kbps == 8
    assert rp.accent is not None and rp.accent.voices == ["en-gb-x-rp"]


def test_yaml_mapping_form(tmp_path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("quiet-cafe:\n  noise: {source: cafe, snr_db: 25}\n")
    (spec,) = load_conditions_yaml(path)
    assert spec.name == "quiet-cafe"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            "conditions:\n  - name: x\n    noise: {snr_db: 99}\n",
            r"conditions\[0\] \(x\): field 'noise.snr_db'",
        ),
        ("conditions:\n  - name: x\n    nois: {}\n", r"field 'nois'"),
        ("conditions:\n  - noise: {}\n", r"field 'name'"),
        ("conditions: [\n", "not valid YAML"),
        ("conditions: []\n", "non-empty list"),
        ("- {name: a}\n- {name: a}\n", "duplicate"),
        ("conditions:\n  - name: y\n    accent: {voices: [fr-fr]}\n", "English"),
    ],
)
def test_yaml_errors_name_file_and_field(tmp_path, body: str, message: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(body)
    with pytest.raises(ValueError, match=message) as info:
        load_conditions_yaml(path)
    assert "bad.yaml" in str(info.value)


def test_missing_yaml_file(tmp_path) -> None:
    with pytest.raises(FileNotFoundError, match="nope.yaml"):
        load_conditions_yaml(tmp_path / "nope.yaml")


def test_accent_draws_from_pools_within_bounds() -> None:
    params = AccentParams()
    seen = set()
    for seed in range(40):
        voice = apply_accent(VoiceSpec(), params, make_rng(seed))
        accent, _, variant = voice.voice.partition("+")
        seen.add(accent)
        assert accent in ENGLISH_ACCENTS and variant in params.variants
        assert params.rate_wpm[0] <= voice.rate_wpm <= params.rate_wpm[1]
        assert params.word_gap_ms[0] <= voice.word_gap_ms <= params.word_gap_ms[1]
    assert len(seen) >= 5


def test_accent_ranges_are_validated() -> None:
    with pytest.raises(ValidationError, match="rate_wpm"):
        AccentParams(rate_wpm=(300, 100))
    with pytest.raises(ValidationError, match="English"):
        AccentParams(voices=["fr"])
