import pytest
from pydantic import ValidationError

from perturbations.behavior import InteractionParams, PersonaParams, behavior_rng
from perturbations.conditions import get_condition


def test_behaviour_conditions_are_registered_and_combine_with_acoustics() -> None:
    barge = get_condition("barge-in+noise")
    assert barge.interaction is not None and barge.interaction.barge_in_rate > 0
    assert barge.noise is not None and not barge.is_clean
    elderly = get_condition("elderly_slow+barge-in")
    assert elderly.persona is not None and elderly.persona.behavior == "elderly_slow"
    assert elderly.interaction == barge.interaction
    for name in ("aggressive_impatient", "elderly_slow", "forgetful_disorganized"):
        assert get_condition(name).persona.behavior == name  # type: ignore[union-attr]


def test_two_interactions_do_not_combine_and_the_error_names_the_axis() -> None:
    with pytest.raises(ValueError, match="'interaction'"):
        get_condition("aggressive_impatient+barge-in")


def test_bad_ranges_name_the_field() -> None:
    with pytest.raises(ValidationError, match="barge_in_after_s"):
        InteractionParams(barge_in_after_s=(3.0, 1.0))
    with pytest.raises(ValidationError, match="hesitation_s"):
        PersonaParams(behavior="x", persona_text="y", hesitation_s=(-1.0, 1.0))


def test_behaviour_draws_are_their_own_stream() -> None:
    a = behavior_rng(7, "interaction", "agent_turn", 3).random()
    assert a == behavior_rng(7, "interaction", "agent_turn", 3).random()
    assert a != behavior_rng(7, "interaction", "agent_turn", 4).random()
    assert a != behavior_rng(7, "persona", "agent_turn", 3).random()
