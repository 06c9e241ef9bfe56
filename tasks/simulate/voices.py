"""How the simulated parties sound and listen: voices, persona style, recognisers.

The caller's voice follows the persona's gender; its style (rate, response pauses,
disfluencies, barge-in) follows the persona text. Both sides recognise speech with a
domain language model built from sentence *templates* of the scenario (entities redrawn
by :func:`tasks.voice.corpus.domain_corpus`), so the model knows the shape of codes and
dates without memorising this call's values.
"""

from __future__ import annotations

import random
import re
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from perturbations.audio import VoiceSpec
from scenarios.models import Scenario
from tasks.simulate.caller import CLOSING, FAILURE_CLOSING, REPEAT_REQUEST, information_items
from tasks.simulate.channel import CallerChannel
from tasks.simulate.config import SimulationConfig
from tasks.simulate.policy import CLOSING as AGENT_CLOSING
from tasks.simulate.policy import GIVE_UP, GREETING
from tasks.simulate.script import build_script
from tasks.spoken import extract_entities, render_spoken
from tasks.voice.corpus import domain_corpus
from tasks.voice.stt import Recognizer, SttSpec

# eSpeak's Klatt voices are the ones PocketSphinx understands best over the phone band
# (6-digit strings over 8 kHz mu-law, exact: klatt3 0.90, klatt5 at pitch 70 0.75, f2 0.45
# with the code grammar), so the simulated callers are intelligible and what the agent
# mishears is the channel's doing, not the simulator's.
CALLER_VOICES = {"woman": ("en-us+klatt5", 70), "man": ("en-us+klatt3", 50)}
CORPUS_SENTENCES = 3000

_AGENT_PHRASES = [
    GREETING,
    AGENT_CLOSING,
    GIVE_UP,
    "I'm sorry, I couldn't find a match for that. Could you please spell your last name for me?",
    "Thank you. And could you please spell your confirmation number?",
    "Could you please tell me your employee id?",
    "Could you please tell me your otp code?",
]
_CALLER_PHRASES = [
    REPEAT_REQUEST,
    CLOSING,
    FAILURE_CLOSING,
    "Z K three F F W.",
    "E M P zero four eight two seven one.",
    "Yes.",
    "No.",
    "Goodbye.",
]


class CallerStyle(BaseModel):
    """How a persona speaks on the phone (audio mode only)."""

    model_config = ConfigDict(frozen=True)
    rate_wpm: int = Field(default=165, description="Speaking rate")
    pause_s: tuple[float, float] = Field(
        default=(0.4, 0.9), description="Range of the pause before answering, seconds"
    )
    disfluency: float = Field(default=0.0, ge=0, le=1, description="Chance of a leading 'um'")
    barge_in_after_s: float | None = Field(
        default=None, description="Impatient callers cut in after this much agent speech"
    )


def persona_style(persona: str) -> CallerStyle:
    """Read the persona text for pace, patience and tidiness."""
    text = persona.lower()
    if re.search(r"impatient|frustrat|curt|rushed|in a hurry|aggressive", text):
        return CallerStyle(rate_wpm=185, pause_s=(0.2, 0.5), barge_in_after_s=12.0)
    if re.search(r"elderly|older adult|senior|retired|speaks? slowly|hard of hearing", text):
        return CallerStyle(rate_wpm=135, pause_s=(0.9, 1.6))
    if re.search(r"forgetful|disorganized|scattered|rambl", text):
        return CallerStyle(rate_wpm=155, pause_s=(0.6, 1.2), disfluency=0.3)
    return CallerStyle()


def caller_voice(scenario: Scenario, style: CallerStyle, override: VoiceSpec | None) -> VoiceSpec:
    if override is not None:
        return override
    gender = str(scenario.user_config.get("gender") or "woman").lower()
    voice, pitch = CALLER_VOICES.get(gender, CALLER_VOICES["woman"])
    return VoiceSpec(voice=voice, pitch=pitch, rate_wpm=style.rate_wpm)


def retake_voice(voice: VoiceSpec, attempt: int, rng: random.Random) -> VoiceSpec:
    """The caller's voice on a regenerated attempt: the same voice, another delivery.

    A regeneration exists because the simulator was at fault (e.g. its speech was not
    intelligible); eSpeak is deterministic, so replaying the same delivery would fail the
    same way. Attempt 1 is the persona's voice unchanged.
    """
    if attempt <= 1:
        return voice
    rate = round(voice.rate_wpm * rng.uniform(0.88, 1.12))
    pitch = min(99, max(0, voice.pitch + rng.randint(-12, 12)))
    return voice.model_copy(update={"rate_wpm": max(80, min(450, rate)), "pitch": pitch})


def trial_voice(
    scenario: Scenario,
    style: CallerStyle,
    config: SimulationConfig,
    channel: CallerChannel,
    rng: random.Random,
) -> VoiceSpec:
    """The caller's voice for one attempt: the persona's (or the configured) voice, another
    delivery on a retake, then the condition's accent draw if it has one."""
    persona = caller_voice(scenario, style, config.caller_voice)
    return channel.voice(retake_voice(persona, config.attempt, rng))


def speakable(text: str, rng: random.Random | None = None, disfluency: float = 0.0) -> str:
    """Written text as a speaker says it (codes spelled, numbers in words)."""
    spoken = render_spoken(text.replace("\n", " "))
    if rng is not None and disfluency > 0 and rng.random() < disfluency:
        spoken = f"Um, {spoken[:1].lower()}{spoken[1:]}"
    return spoken


def _corpus(texts: list[str], seed: int) -> list[str]:
    return domain_corpus([t for t in texts if t.strip()], CORPUS_SENTENCES, seed)


def _value_templates(scenario: Scenario) -> list[str]:
    """Bare caller answers in written form (``domain_corpus`` redraws their entities)."""
    items = information_items(scenario.user_goal)
    return [item.value for item in items if extract_entities(item.value)]


def agent_recognizer(scenario: Scenario, spec: SttSpec, cache_dir: Path, seed: int) -> Recognizer:
    """The reference agent's ears: an LM over caller-side sentence templates."""
    lines = [*build_script(scenario).user_lines, *_value_templates(scenario), *_CALLER_PHRASES]
    corpus = _corpus(lines, seed) if spec.lm == "domain" else None
    return Recognizer(spec, corpus, cache_dir / "lm")


def caller_recognizer(scenario: Scenario, spec: SttSpec, cache_dir: Path, seed: int) -> Recognizer:
    """The caller's ears: an LM over agent-side sentence templates."""
    script = build_script(scenario)
    agent_lines = [s.text for block in script.blocks for s in block if s.kind == "say"]
    spoken = [speakable(t) for t in agent_lines]
    corpus = _corpus([*spoken, *_AGENT_PHRASES], seed) if spec.lm == "domain" else None
    return Recognizer(spec, corpus, cache_dir / "lm")
