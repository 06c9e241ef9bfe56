"""The stand-ins' ears in a rehearsal (``evaflow run --rehearse``).

An STT-side stand-in receives audio with no context, so every stand-in of a rehearsal
shares ONE recogniser recipe whose language model covers every domain of the run: the
concatenated agent-side corpora (:func:`tasks.simulate.voices.agent_corpus_for_domain`,
built from each domain's agent configuration and generic material, never a scenario's
caller lines).

The decoding runs in worker processes (:class:`tasks.simulate.clocks.stt_pool.WorkerPool`),
never in the run's process: PocketSphinx keeps the GIL while it decodes, and the stand-ins
serve every call of the run from that process, next to the callers' audio pumps. Decoding
there stalled every other call's frames; at six calls at a time the callers' and the
stand-ins' recognisers starved (measured 2026-12-06: 5/12 completed against 11/12 at three).
"""

from __future__ import annotations

import functools
import hashlib
import logging
import pickle
from collections.abc import Sequence
from concurrent.futures import Future, wait
from pathlib import Path
from typing import Protocol

import numpy as np

from perturbations.audio import Clip
from scenarios.models import Scenario
from scenarios.spoken_forms import NATO, ONES
from tasks.simulate.clocks.stt_pool import WorkerPool
from tasks.simulate.voices import agent_corpus_for_domain
from tasks.voice.recognizer_pool import reset_recognizer
from tasks.voice.stt import Expectation, Recognizer, SttSpec
from tasks.voice.vad import EnergyVAD, VadConfig

log = logging.getLogger(__name__)

# The stand-ins hear spelled codes (confirmation numbers) as the reference agent does.
EARS = SttSpec(grammar="codes")
# Worker processes of a rehearsal's ears: two decode side by side on the 2 cores the suite
# runs on (the callers' ears have their own pool), and a third would only queue for a core.
EAR_WORKERS = 2

_SPELLED = {w.replace("-", "") for w in NATO} | set(ONES[:10]) | {"oh", "zero"}
SPELLED_MIN_WORDS = 4
SPELLED_MIN_SHARE = 0.6


def rehearsal_corpus(scenarios: Sequence[Scenario]) -> list[str]:
    """Every run domain's agent-side LM sentences, concatenated (one domain's once)."""
    first: dict[str, Scenario] = {}
    for scenario in scenarios:
        first.setdefault(scenario.domain, scenario)
    corpus: list[str] = []
    for domain, scenario in sorted(first.items()):
        corpus += agent_corpus_for_domain(domain, scenario.agent)
    return corpus


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


class Decoder(Protocol):
    def recognize(self, clip: Clip, expect: Expectation = None) -> str: ...


def hear(recognizer: Decoder, clip: Clip, expect: Expectation = None) -> str:
    """What the ears make of one utterance: its speech span decoded, and speech that sounds
    spelled decoded again with the code grammar (:func:`sounds_spelled`)."""
    clip = speech_span(clip)
    text = recognizer.recognize(clip, expect)
    if expect is None and sounds_spelled(text):
        # Heard as spelling: decode it as spelling, as a provider's STT transcribes
        # spelled letters verbatim.
        text = recognizer.recognize(clip, "code") or text
    log.debug("heard %.2f s at %d Hz (expect %s): %r", clip.duration_s, clip.rate, expect, text)
    return text


@functools.lru_cache(maxsize=4)
def _worker_recognizer(key: str, recipe: bytes) -> Recognizer:
    corpus, lm_dir = pickle.loads(recipe)
    return Recognizer(EARS, corpus, Path(lm_dir))


def _hear_in_worker(
    key: str, recipe: bytes, samples: np.ndarray | None, rate: int, expect: Expectation
) -> str:
    """Worker side: one utterance (``samples=None`` only builds the recogniser)."""
    recognizer = _worker_recognizer(key, recipe)
    if samples is None:
        return ""
    # Utterances of every call and service (8 kHz mu-law, 16 or 24 kHz PCM, other voice
    # levels) land on any worker: decode each from a new decoder's state, so what is heard
    # depends on the utterance alone, not on the worker's history.
    reset_recognizer(recognizer)
    return hear(recognizer, Clip(samples, rate), expect)


class WorkerEars:
    """Recogniser-compatible ears shared by every stand-in and call of a rehearsal, decoding
    in worker processes (see the module doc). ``recognize`` blocks its calling thread."""

    def __init__(self, corpus: list[str], lm_dir: Path, workers: int = EAR_WORKERS) -> None:
        self.recipe = pickle.dumps((corpus, str(lm_dir)))
        self.key = hashlib.sha256(self.recipe).hexdigest()[:16]
        self.pool = WorkerPool(workers)
        self.workers = workers

    def warm(self) -> None:
        """Build the language model and a recogniser in each worker before the first call."""
        jobs: list[Future[str]] = [
            self.pool.submit(_hear_in_worker, self.key, self.recipe, None, 0, None)
            for _ in range(self.workers)
        ]
        wait(jobs)
        for job in jobs:
            job.result()

    def recognize(self, clip: Clip, expect: Expectation = None) -> str:
        job = self.pool.submit(
            _hear_in_worker, self.key, self.recipe, clip.samples, clip.rate, expect
        )
        text: str = job.result()
        return text

    def close(self) -> None:
        self.pool.shutdown()


def rehearsal_recognizer(scenarios: Sequence[Scenario], cache_dir: Path) -> WorkerEars:
    """The ears every STT-side stand-in shares: one LM over all the run's domains (built
    once, cached on disk by content), decoded in worker processes; started and warmed."""
    ears = WorkerEars(rehearsal_corpus(scenarios), cache_dir / "lm")
    try:
        ears.warm()
    except BaseException:
        ears.close()
        raise
    return ears
