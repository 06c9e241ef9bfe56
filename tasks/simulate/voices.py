"""How the simulated parties sound and listen: voices, persona style, recognisers.

The caller's voice follows the persona's gender; its style (rate, response pauses,
disfluencies, barge-in) follows the persona text.

The two recognisers see different things, as the two parties do:

* the agent's (:func:`agent_recognizer_for_domain`) is built per *domain* from what a
  deployed agent knows before the call: the domain's agent configuration (policy text,
  tool and parameter descriptions with their example values, enum choices), generic
  caller templates, and a generic name list (:func:`tasks.voice.corpus.generic_names`).
  Entities are redrawn by :func:`tasks.voice.corpus.domain_corpus`, so the model knows
  the shape of codes and dates. It never sees a scenario's caller lines, user goal or
  expected database: a caller's unusual surname or campus is out of its vocabulary and
  has to be spelled, as with any deployed agent.
* the caller's (:func:`caller_recognizer`) is the simulator's, built per scenario from
  the agent's trace lines: the simulator may know its own script.
"""

from __future__ import annotations

import functools
import random
import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from perturbations.audio import VoiceSpec
from perturbations.behavior import InteractionParams
from perturbations.conditions import ConditionSpec, get_condition
from scenarios.models import AgentConfig, Scenario
from tasks.simulate.caller.caller import CLOSING, FAILURE_CLOSING, REPEAT_REQUEST
from tasks.simulate.channel import CallerChannel
from tasks.simulate.config import SimulationConfig
from tasks.simulate.dialogue.script import build_script
from tasks.simulate.reference.policy import CLOSING as AGENT_CLOSING
from tasks.simulate.reference.policy import GIVE_UP, GREETING
from tasks.spoken import render_spoken
from tasks.voice.corpus import domain_corpus, name_sentences
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
    "ZK3FFW.",  # written, so that ``domain_corpus`` redraws them
    "EMP048271.",
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
    hesitation_rate: float = Field(
        default=0.0, ge=0, le=1, description="Chance an utterance has a pause inside it"
    )
    hesitation_s: tuple[float, float] = Field(default=(0.3, 0.7), description="That pause")
    interaction: InteractionParams | None = Field(
        default=None, description="The condition's barge-in and backchannels"
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


def condition_spec(condition: Any) -> ConditionSpec:
    """The condition a config names (a registered name or a ConditionSpec)."""
    return get_condition(condition) if isinstance(condition, str) else condition


def trial_style(scenario: Scenario, condition: Any) -> CallerStyle:
    """The scenario persona's style with the condition's behaviour on top: a behaviour
    persona sets rate, pauses, disfluency and hesitations; an interaction its barge-in and
    backchannels (which then replace the persona text's own barge-in)."""
    style = persona_style(str(scenario.user_config.get("user_persona") or ""))
    spec = condition_spec(condition)
    update: dict[str, Any] = {}
    if spec.persona is not None:
        p = spec.persona
        update["rate_wpm"] = round(style.rate_wpm * p.rate_scale)
        update["hesitation_rate"], update["hesitation_s"] = p.hesitation_rate, p.hesitation_s
        if p.pause_s is not None:
            update["pause_s"] = p.pause_s
        if p.disfluency is not None:
            update["disfluency"] = p.disfluency
    if spec.interaction is not None:
        update["interaction"], update["barge_in_after_s"] = spec.interaction, None
    return style.model_copy(update=update) if update else style


def caller_voice(scenario: Scenario, style: CallerStyle, override: VoiceSpec | None) -> VoiceSpec:
    """The persona's voice, or the configured one. A configured voice that leaves the rate
    unset keeps the persona's rate: choosing a timbre must not undo ``elderly_slow``."""
    if override is not None:
        if "rate_wpm" in override.model_fields_set:
            return override
        return override.model_copy(update={"rate_wpm": style.rate_wpm})
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


# Generic caller speech: what callers of any service line say, values in written form
# (redrawn by ``domain_corpus``). Written without looking at any scenario's lines.
_GENERIC_CALLER = [
    "Hi, I need some help please.",
    "Hello, I'm calling about a problem.",
    "Yes, that's right.",
    "Yes, that's correct.",
    "No, that's not right.",
    "Yes please, go ahead.",
    "Okay, thank you.",
    "Sure, one moment.",
    "I'm not sure.",
    "Can you say that again?",
    "Could you repeat that please?",
    "What are my options?",
    "That works for me.",
    "That's fine, let's do that.",
    "I'd prefer the first option.",
    "I'd like the second one.",
    "Can I speak to a supervisor?",
    "Can you transfer me to a live agent?",
    "No, that's everything, thank you.",
    "Thank you so much for your help, goodbye.",
    "My date of birth is March 4, 1987.",
    "It's on June 12.",
    "The date is 2026-08-15.",
    "The amount was $240.50.",
    "At 9:30 AM.",
    "Around 2:00 PM.",
    "My phone number ends in 4417.",
    "The last four digits are 7294.",
    "My email is on file.",
]


def agent_config_texts(agent: AgentConfig) -> list[str]:
    """The sentences of a domain's agent configuration: policy text, tool and parameter
    descriptions, enum choices, and "my <parameter> is <example>" answers built from the
    schema's own example values (which ``domain_corpus`` redraws)."""
    prose = " ".join([agent.description, agent.role, agent.instructions])
    texts = [t for t in re.split(r"(?<=[.!?:])\s+|\n+", prose) if t.strip()]
    for tool in agent.tools:
        texts.append(tool.description)
        for param in [*tool.required_parameters, *tool.optional_parameters]:
            label = param.name.replace("_", " ")
            texts.append(param.description)
            for example in re.findall(
                r"e\.g\.,? '?([A-Z0-9][A-Za-z0-9:-]*\d[A-Za-z0-9-]*)", param.description
            ):
                texts += [f"My {label} is {example}.", f"It's {example}.", f"{example}."]
            for choice in param.enum or []:
                words = str(choice).replace("_", " ")
                texts += [f"{words}.", f"I'd like {words}.", f"{label} {words}."]
    return [t for t in texts if t.strip()]


@functools.lru_cache(maxsize=16)
def _agent_corpus(domain: str, agent_json: str, seed: int) -> tuple[str, ...]:
    agent = AgentConfig.model_validate_json(agent_json)
    templates = [*agent_config_texts(agent), *_GENERIC_CALLER, *_CALLER_PHRASES]
    return (*_corpus(templates, seed), *name_sentences(seed))


def agent_corpus_for_domain(domain: str, agent_config: AgentConfig, seed: int = 0) -> list[str]:
    """The agent-side LM sentences of one domain (cached per domain, config and seed).

    Its only inputs are the domain's agent configuration and generic material; no
    scenario reaches it, which is what ``tests/tasks/simulate/test_agent_ears.py`` checks
    on every built-in and EVA record."""
    return list(_agent_corpus(domain, agent_config.model_dump_json(), seed))


def agent_recognizer_for_domain(
    domain: str, agent_config: AgentConfig, spec: SttSpec, cache_dir: Path, seed: int = 0
) -> Recognizer:
    """A deployed agent's ears for ``domain``: an LM over :func:`agent_corpus_for_domain`
    (the built LM is cached on disk by content; the decoder is per call, being per thread)."""
    corpus = agent_corpus_for_domain(domain, agent_config, seed) if spec.lm == "domain" else None
    return Recognizer(spec, corpus, cache_dir / "lm")


def agent_recognizer(scenario: Scenario, spec: SttSpec, cache_dir: Path, seed: int) -> Recognizer:
    """The reference (and ``llm``) agent's ears for a call of ``scenario``: only its domain
    and agent configuration are used (:func:`agent_recognizer_for_domain`)."""
    return agent_recognizer_for_domain(scenario.domain, scenario.agent, spec, cache_dir, seed)


def caller_recognizer(scenario: Scenario, spec: SttSpec, cache_dir: Path, seed: int) -> Recognizer:
    """The caller's ears: an LM over the agent's trace lines of this scenario (entities
    redrawn). The simulator may know its own script; no agent sees this."""
    script = build_script(scenario)
    agent_lines = [s.text for block in script.blocks for s in block if s.kind == "say"]
    spoken = [speakable(t) for t in agent_lines]
    corpus = _corpus([*spoken, *_AGENT_PHRASES], seed) if spec.lm == "domain" else None
    return Recognizer(spec, corpus, cache_dir / "lm")
