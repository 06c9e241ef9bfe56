"""What the forgetful persona may leave out (issue 13): only values it can give when asked.

Synthetic lines, not records: a clause is withheld only when the rest of the line still
says every other value the agent will act on (what the call is for, a part of a code said
in pieces), and an owed value answers the agent's request for it before the next line."""

from __future__ import annotations

import numpy as np

from perturbations.behavior import PersonaParams
from tasks.simulate.caller.info import InfoItem
from tasks.simulate.caller.persona import WITHHOLD, PersonaPlay


def play(info: list[InfoItem], needed: list[str]) -> PersonaPlay:
    params = PersonaParams(behavior="test", persona_text="A test caller.", withhold_rate=1.0)
    p = PersonaPlay(params, lambda turn: np.random.default_rng(turn), info, needed)
    p.start_turn()
    return p


def test_never_withholds_what_the_call_is_for_with_a_value() -> None:
    info = [InfoItem(label=["building", "name"], value="East Campus")]
    line = "Hi, I need a desk at East Campus."
    # "desk" is a value the agent acts on (a resource type) and no goal value: the caller
    # could not give it when asked, so the clause stays.
    said, done = play(info, ["desk", "BLD7"]).shape_line(line, lambda item: False)
    assert said == line and done == []
    # Nothing else needed in the clause: the building name may be left out and is owed.
    p = play(info, ["BLD7"])
    said, done = p.shape_line(line, lambda item: False)
    assert done == ["withheld"] and WITHHOLD in said and "East Campus" not in said
    assert [it.value for it in p.pending] == ["East Campus"]


def test_never_withholds_a_piece_of_a_code_said_in_pieces() -> None:
    info = [InfoItem(label=["fallback", "floor"], value="FL3")]
    line = "I'll take B L D five, F L three, R M three zero one."
    said, done = play(info, ["BLD5-FL3-RM301"]).shape_line(line, lambda item: False)
    assert said == line and done == []
