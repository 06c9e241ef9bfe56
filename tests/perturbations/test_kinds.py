"""perturbations.kinds: a new perturbation kind without editing ConditionSpec or Channel."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from pydantic import BaseModel, ValidationError

from perturbations import ConditionSpec, NoiseParams, make_channel
from perturbations.audio import Clip
from perturbations.conditions import load_conditions_yaml
from perturbations.kinds import PERTURBATIONS, perturbation_kind


class GainDb(BaseModel):
    db: float = -6.0


def scale(clip: Clip, params: GainDb, rng: np.random.Generator) -> Clip:
    return Clip((clip.samples * 10 ** (params.db / 20)).astype(np.float32), clip.rate)


@pytest.fixture
def quieter() -> Iterator[str]:
    perturbation_kind("quieter", GainDb, order=150)(scale)
    yield "quieter"
    PERTURBATIONS.remove("quieter")


def tone() -> Clip:
    t = np.arange(8000) / 8000
    return Clip((0.3 * np.sin(2 * np.pi * 300 * t)).astype(np.float32), 8000)


def test_a_registered_kind_acts_at_its_place_and_leaves_the_other_draws_alone(
    quieter: str,
) -> None:
    cafe = NoiseParams(source="cafe", snr_db=10.0, loop_s=2)
    plain = ConditionSpec(name="cafe", noise=cafe)
    both = ConditionSpec.model_validate({"name": "cafe+quiet", "noise": cafe, quieter: {}})
    assert [k.name for k, _ in both.kinds()] == ["quieter"] and not both.is_clean
    channel_plain, channel_both = make_channel(plain, seed=5), make_channel(both, seed=5)
    for _ in range(2):  # each utterance: the same noise draw, then the kind after the noise
        heard_plain, heard_both = channel_plain.speech(tone()), channel_both.speech(tone())
        expected = heard_plain.samples * 10 ** (-6 / 20)
        np.testing.assert_allclose(heard_both.samples, expected, atol=1e-6)


def test_a_spec_without_kinds_dumps_as_before() -> None:
    spec = ConditionSpec(name="cafe", noise=NoiseParams(source="cafe"))
    assert list(spec.model_dump()) == [
        "name",
        "version",
        "description",
        "accent",
        "noise",
        "connection",
    ]


def test_conditions_name_kinds_by_key_in_yaml_and_typos_list_the_kinds(
    quieter: str, tmp_path: Path
) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("conditions:\n  - name: hushed\n    quieter: {db: -20}\n")
    (spec,) = load_conditions_yaml(path)
    assert spec.kinds()[0][1] == GainDb(db=-20)
    with pytest.raises(ValidationError, match=r"unknown field 'quietr'.*kinds: .*quieter"):
        ConditionSpec.model_validate({"name": "x", "quietr": {}})
    with pytest.raises(ValidationError, match="db"):
        ConditionSpec.model_validate({"name": "x", quieter: {"db": "loud"}})


def test_a_kind_cannot_take_a_field_name_or_a_builtin_place() -> None:
    with pytest.raises(ValueError, match="ConditionSpec field"):
        perturbation_kind("noise", GainDb, order=10)
    with pytest.raises(ValueError, match="built-in's place"):
        perturbation_kind("other", GainDb, order=100.0)
