"""How the caller behaves, beyond how its audio sounds: turn-taking and EVA's personas.

Two condition axes, both optional and combinable with the acoustic ones:

* ``interaction`` (:class:`InteractionParams`): barge-in and backchannels while the agent
  speaks. Audio mode only: a text conversation has no overlap.
* ``persona`` (:class:`PersonaParams`): EVA's behaviour perturbations (spec 8.1,
  ``aggressive_impatient``, ``elderly_slow``, ``forgetful_disorganized``). The persona text
  replaces the scenario's for an LLM caller, as EVA's ``user_behaviors.yaml`` fragment
  does; the scripted caller reads the numeric knobs (what it withholds, repeats or asks
  again in both modes; rate, pauses and hesitations in audio mode).

Every draw comes from :func:`behavior_rng` over the trial's channel seed, a stream of its
own, so turning a behaviour on never moves what the noise or the connection draw, and the
same trial behaves the same way for every agent under test wherever the agent's answers
allow it to.
"""

from __future__ import annotations

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_validator

from perturbations.seeding import make_rng

Range = tuple[float, float]


def _ordered(value: Range | None, field: str) -> None:
    if value is not None and not 0 <= value[0] <= value[1]:
        raise ValueError(f"{field} must be (low, high) with 0 <= low <= high, got {value}")


class InteractionParams(BaseModel):
    """The caller's turn-taking while the agent speaks (audio mode)."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    barge_in_rate: float = Field(
        default=0.0, ge=0, le=1, description="Chance the caller cuts into a given agent turn"
    )
    barge_in_after_s: Range = Field(
        default=(1.5, 4.0),
        description="Agent speech heard before cutting in, drawn per agent turn; a turn that "
        "ends sooner is not cut",
    )
    backchannel_every_s: Range | None = Field(
        default=None,
        description="Agent speech between two backchannels, drawn each time (None: never)",
    )
    backchannels: tuple[str, ...] = Field(
        default=("Mm-hmm.", "Okay.", "Right.", "Uh-huh."),
        min_length=1,
        description="What the caller says as a backchannel (never a turn)",
    )

    @model_validator(mode="after")
    def _ranges(self) -> InteractionParams:
        _ordered(self.barge_in_after_s, "barge_in_after_s")
        _ordered(self.backchannel_every_s, "backchannel_every_s")
        if self.backchannel_every_s is not None and self.backchannel_every_s[0] <= 0:
            raise ValueError("backchannel_every_s must be above 0 s")
        return self


class PersonaParams(BaseModel):
    """One of EVA's behaviour personas: who the caller is and how that shows."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    behavior: str = Field(min_length=1, description="EVA's name, e.g. 'elderly_slow'")
    persona_text: str = Field(
        min_length=1, description="Replaces the scenario's persona text for an LLM caller"
    )
    rate_scale: float = Field(default=1.0, ge=0.5, le=1.6, description="x speaking rate")
    pause_s: Range | None = Field(
        default=None, description="Pause before answering (None: the scenario persona's)"
    )
    disfluency: float | None = Field(
        default=None, ge=0, le=1, description="Chance of a leading 'um' (None: persona's)"
    )
    hesitation_rate: float = Field(
        default=0.0, ge=0, le=1, description="Chance an utterance has a pause inside it"
    )
    hesitation_s: Range = Field(default=(0.3, 0.7), description="Length of that pause")
    withhold_rate: float = Field(
        default=0.0,
        ge=0,
        le=1,
        description="Chance a value a line gives is left out until the agent asks for it",
    )
    repeat_rate: float = Field(
        default=0.0, ge=0, le=1, description="Chance a turn repeats what the caller said before"
    )
    ask_repeat_rate: float = Field(
        default=0.0, ge=0, le=1, description="Chance the caller asks the agent to say it again"
    )

    @model_validator(mode="after")
    def _ranges(self) -> PersonaParams:
        _ordered(self.pause_s, "pause_s")
        _ordered(self.hesitation_s, "hesitation_s")
        return self


def behavior_rng(seed: int, axis: str, *where: object) -> np.random.Generator:
    """The draws of one behaviour axis at one place of a trial (``where``: e.g. the agent
    turn or the caller utterance number), from the trial's channel seed."""
    return make_rng(seed, "behavior", axis, *where)


# Rates typical of an impatient caller: about every other long agent turn cut, a
# backchannel every few seconds of agent speech.
BARGE_IN = InteractionParams(
    barge_in_rate=0.5, barge_in_after_s=(1.5, 4.0), backchannel_every_s=(3.0, 6.0)
)

AGGRESSIVE_IMPATIENT = PersonaParams(
    behavior="aggressive_impatient",
    persona_text=(
        "You are impatient and irritable. You speak fast and curtly, you dislike waiting "
        "or hearing long explanations, and you cut the agent off when it rambles. You still "
        "want your problem solved and you give the information you are asked for."
    ),
    rate_scale=1.15,
    pause_s=(0.1, 0.35),
    disfluency=0.0,
)
AGGRESSIVE_INTERACTION = InteractionParams(
    barge_in_rate=0.6,
    barge_in_after_s=(1.0, 3.0),
    backchannel_every_s=(2.5, 5.0),
    backchannels=("Yeah.", "Okay.", "Right."),
)
ELDERLY_SLOW = PersonaParams(
    behavior="elderly_slow",
    persona_text=(
        "You are an elderly caller. You speak slowly, you pause to think in the middle of "
        "sentences, and you sometimes ask the agent to repeat what it said because you did "
        "not quite catch it. You are polite and you get there in the end."
    ),
    rate_scale=0.8,
    pause_s=(1.0, 1.8),
    hesitation_rate=0.4,
    hesitation_s=(0.4, 0.9),
    ask_repeat_rate=0.15,
)
FORGETFUL_DISORGANIZED = PersonaParams(
    behavior="forgetful_disorganized",
    persona_text=(
        "You are scattered and forgetful. You lose your train of thought, you leave details "
        "out until you are asked for them, and you sometimes repeat something you already "
        "said. Everything you do say is correct."
    ),
    rate_scale=0.95,
    pause_s=(0.6, 1.3),
    disfluency=0.35,
    hesitation_rate=0.3,
    hesitation_s=(0.3, 0.7),
    withhold_rate=0.5,
    repeat_rate=0.15,
)

# A persona with no interaction of its own combines with ``barge-in``
# (``elderly_slow+barge-in``); the impatient one barges in by itself.
PERSONAS: dict[str, tuple[PersonaParams, InteractionParams | None]] = {
    p.behavior: (p, i)
    for p, i in [
        (AGGRESSIVE_IMPATIENT, AGGRESSIVE_INTERACTION),
        (ELDERLY_SLOW, None),
        (FORGETFUL_DISORGANIZED, None),
    ]
}
