"""The stand-ins' brain and ears for a rehearsal (``evaflow run --rehearse``).

A rehearsal runs catalogue systems against local stand-ins of their providers
(:mod:`tasks.systems.standins`). One set of stand-ins serves every call of the run, so
the brain behind them cannot be built around one record the way a test's is: it has to
tell which of the run's scenarios a call belongs to from the request alone.

:class:`RehearsalBrain` does that from what the model is sent, nothing else:

* the DOMAIN from the system prompt. The Pipecat agent sends each call the domain agent's
  prompt (:func:`tasks.simulate.llm_prompts.agent_system_prompt`: the agent's role,
  service description and policy), which is the same for every scenario of a domain and
  differs between domains; the domain whose agent texts share the most words with it wins;
* within a domain holding several of the run's scenarios, the SCENARIO whose scripted
  first caller line (``user_goal.starting_utterance``) shares the most words with what the
  caller was heard to say so far (the user messages, as transcribed by the system under
  test). Before the caller has spoken, every scenario of the domain greets alike.

It then answers with :func:`tasks.systems.standins.brain.next_message`, the reference
policy replayed over the history. So the stand-in's brain is the REFERENCE POLICY of the
inferred scenario: which scenario is inferred, but every caller-supplied value (codes,
names, dates) still comes only from what the stand-in heard, and every tool runs in the
harness. A mis-identified scenario shows up as a wrong final DB, never as a hidden answer.

Ears (:func:`rehearsal_recognizer`): an STT stand-in receives audio with no context, so it
gets ONE recogniser whose language model covers every domain of the run: the
concatenated agent-side corpora (:func:`tasks.simulate.voices.agent_corpus_for_domain`,
built from each domain's agent configuration and generic material, never a scenario's
caller lines).
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from perturbations.audio import Clip
from scenarios.models import Scenario
from scenarios.spoken_forms import NATO, ONES
from tasks.simulate.voices import agent_corpus_for_domain
from tasks.systems.standins.brain import expectation_after, next_message, text_of
from tasks.voice.recognizer_pool import reset_recognizer
from tasks.voice.stt import Expectation, Recognizer, SttSpec
from tasks.voice.vad import EnergyVAD, VadConfig

log = logging.getLogger(__name__)

_WORD = re.compile(r"[a-z0-9']+")
# The stand-ins hear spelled codes (confirmation numbers) as the reference agent does.
EARS = SttSpec(grammar="codes")


def words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


def overlap(a: set[str], b: set[str]) -> float:
    """Share of ``a``'s words found in ``b`` (0 when ``a`` is empty)."""
    return len(a & b) / len(a) if a else 0.0


def domain_texts(scenario: Scenario) -> str:
    """What the agent prompt says of a domain (role, service, policy)."""
    agent = scenario.agent
    return " ".join(str(t or "") for t in (agent.role, agent.description, agent.instructions))


def _system_text(messages: list[dict[str, Any]]) -> str:
    return " ".join(text_of(m) for m in messages if m.get("role") in ("system", "developer"))


def _heard(messages: list[dict[str, Any]]) -> str:
    return " ".join(text_of(m) for m in messages if m.get("role") == "user")


def _first_line(scenario: Scenario) -> str:
    return str(scenario.user_goal.get("starting_utterance") or "")


class RehearsalBrain:
    """``messages -> next assistant message`` over the run's scenarios (see module doc).

    Callable like a stand-in's brain; ``identified`` counts which scenario each request
    was answered as (for the run's log and tests)."""

    def __init__(self, scenarios: Sequence[Scenario]) -> None:
        if not scenarios:
            raise ValueError("a rehearsal brain needs at least one scenario")
        self.scenarios = list(scenarios)
        self.by_domain: dict[str, list[Scenario]] = {}
        for scenario in self.scenarios:
            self.by_domain.setdefault(scenario.domain, []).append(scenario)
        self.domain_words = {
            d: words(domain_texts(group[0])) for d, group in self.by_domain.items()
        }
        self.identified: dict[str, int] = {}
        self._lock = threading.Lock()

    def domain_of(self, messages: list[dict[str, Any]]) -> str | None:
        """The domain whose agent texts the system prompt shares most; None if it names
        none (no system prompt, or no word in common)."""
        if len(self.by_domain) == 1:
            return next(iter(self.by_domain))
        prompt = words(_system_text(messages))
        scores = {d: overlap(w, prompt) for d, w in self.domain_words.items()}
        best = max(scores, key=lambda d: scores[d])
        return best if scores[best] > 0 else None

    def scenario_of(self, messages: list[dict[str, Any]]) -> Scenario:
        """The scenario a request belongs to: its domain, then the first caller line that
        best matches what was heard (ties: the run's order)."""
        domain = self.domain_of(messages)
        candidates = self.by_domain[domain] if domain is not None else self.scenarios
        if len(candidates) == 1:
            return candidates[0]
        heard = words(_heard(messages))
        return max(candidates, key=lambda s: overlap(words(_first_line(s)), heard))

    def __call__(self, messages: list[dict[str, Any]]) -> dict[str, Any]:
        scenario = self.scenario_of(messages)
        with self._lock:
            self.identified[scenario.key] = self.identified.get(scenario.key, 0) + 1
        return next_message(scenario, messages)

    def expectation(self, messages: list[dict[str, Any]]) -> Expectation:
        """What the next caller turn should hold (:func:`.standins.brain.expectation_after`)."""
        return expectation_after(self.scenario_of(messages), messages)


def rehearsal_corpus(scenarios: Sequence[Scenario]) -> list[str]:
    """Every run domain's agent-side LM sentences, concatenated (one domain's once)."""
    first: dict[str, Scenario] = {}
    for scenario in scenarios:
        first.setdefault(scenario.domain, scenario)
    corpus: list[str] = []
    for domain, scenario in sorted(first.items()):
        corpus += agent_corpus_for_domain(domain, scenario.agent)
    return corpus


_SPELLED = {w.replace("-", "") for w in NATO} | set(ONES[:10]) | {"oh", "zero"}
SPELLED_MIN_WORDS = 4
SPELLED_MIN_SHARE = 0.6


def sounds_spelled(text: str) -> bool:
    """The free-speech hypothesis of an utterance is mostly alphabet words and digits: the
    caller is spelling (a code, a name). Decided from the audio's own hypothesis alone.

    STT-side stand-ins decode without the dialogue's context, where a domain language
    model misses spelled sequences it has no n-grams for ("yankee papa three golf victor
    quebec" heard "... victor clinton"); a second pass with the code grammar hears them
    as the realtime stand-ins do after the agent asked to spell."""
    found = text.lower().replace("-", "").split()
    spelled = sum(w in _SPELLED for w in found)
    return spelled >= SPELLED_MIN_WORDS and spelled >= SPELLED_MIN_SHARE * len(found)


# Margins measured 2026-12-06 on 96 deliveries of the 5.2.2 caller's two spelled answers
# (her voice, four rates, 8-48 kHz, 0.1-1.5 s of silence around, three noise floors),
# decoded with the code grammar, exact: 0.2 s before / 0.3 s after 83/96 (an "eight"
# inserted after "quebec" or "alpha"), 0.2/0.5 s 93/96, 0.5/0.5 s 92/96.
SPAN_BEFORE_S = 0.2
SPAN_AFTER_S = 0.5


def speech_span(clip: Clip) -> Clip:
    """``clip`` from its first speech to its last, with a little margin. A service may send
    an utterance with long silence around it (an audio-in LLM's pre-roll, a manual STT
    commit); a decoder fed silence first adapts to it and can turn the onset of speech into
    a word ("eight yankee papa ...")."""
    vad = EnergyVAD(VadConfig())
    events = [*vad.process(clip), *vad.flush()]
    starts = [e.time_s for e in events if e.kind == "speech_start"]
    ends = [e.time_s for e in events if e.kind == "speech_end"]
    if not starts:
        return clip
    end = ends[-1] if ends and ends[-1] > starts[-1] else clip.duration_s
    lo = max(0, int((starts[0] - SPAN_BEFORE_S) * clip.rate))
    hi = min(clip.n_samples, int((end + SPAN_AFTER_S) * clip.rate))
    return Clip(clip.samples[lo:hi], clip.rate) if hi > lo else clip


class PooledEars:
    """Recogniser-compatible ears shared by every stand-in and call of a rehearsal.
    Speech that sounds spelled gets a second pass with the code grammar (:func:`sounds_spelled`).

    One PocketSphinx decoder shared by all calls would both serialise every decode (a
    ``Recognizer`` holds a lock) and carry its live cepstral mean from one call's audio
    (8 kHz mu-law, 16 or 24 kHz PCM, another voice level) into the next utterance of
    another call. So each utterance is decoded by an idle recogniser of a pool, reset to
    a new one's state (:func:`tasks.voice.recognizer_pool.reset_recognizer`): it decodes as
    a fresh recogniser with no context would, and calls decode side by side."""

    def __init__(self, build: Callable[[], Recognizer]) -> None:
        self._build = build
        self._idle: list[Recognizer] = []
        self._lock = threading.Lock()
        self.built = 0

    def _checkout(self) -> Recognizer:
        with self._lock:
            recognizer = self._idle.pop() if self._idle else None
        if recognizer is not None and reset_recognizer(recognizer):
            return recognizer
        self.built += 1
        return self._build()

    def recognize(self, clip: Clip, expect: Expectation = None) -> str:
        clip = speech_span(clip)
        recognizer = self._checkout()
        try:
            text = recognizer.recognize(clip, expect)
            if expect is None and sounds_spelled(text):
                # Heard as spelling: decode it as spelling, as a provider's STT transcribes
                # spelled letters verbatim (see sounds_spelled).
                text = recognizer.recognize(clip, "code") or text
            log.debug(
                "heard %.2f s at %d Hz (expect %s): %r", clip.duration_s, clip.rate, expect, text
            )
            return text
        finally:
            with self._lock:
                self._idle.append(recognizer)


def rehearsal_recognizer(scenarios: Sequence[Scenario], cache_dir: Path) -> PooledEars:
    """The ears every STT-side stand-in shares: one LM over all the run's domains (built
    once, cached on disk by content), decoded by a pool of recognisers."""
    corpus = rehearsal_corpus(scenarios)
    first = Recognizer(EARS, corpus, cache_dir / "lm")  # builds the LM now, not mid-call
    ears = PooledEars(lambda: Recognizer(EARS, corpus, cache_dir / "lm"))
    ears._idle.append(first)
    return ears
