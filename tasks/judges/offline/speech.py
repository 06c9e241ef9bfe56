"""Offline rules of the speech-fidelity family: recognise each turn's audio with our own STT
and compare it with what the speaker intended to say."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any

import numpy as np

from tasks.judges.audio import AudioReadError, cut_segments, read_wav
from tasks.judges.base import JudgeTask
from tasks.judges.inputs import SpeechFidelityInput
from tasks.judges.offline import OfflineAnswer, offline_rule
from tasks.judges.offline.entities import CallerEntity, find_entities, heard_as
from tasks.judges.offline.speech_context import ContextRule
from tasks.judges.offline.speech_variants import variant_sentences
from tasks.spoken import normalize_spoken

Transcriber = Callable[[np.ndarray, int], str]
# Natural-log score by which a variant must beat the intended value in the forced choice
# (tasks.voice.verify) for the entity to count as said wrong. Chosen on seeds 0 and 1 of
# tests/tasks/judges/test_offline_agent_speech_injected.py (12 calls): the best variant
# beat the intended value by at most 0.030 in clean audio (V for D, Z for G), wrong values
# spoken by 0.06 (V for G), 0.07 (X for S) and 0.10 or more in 43 of the other 46.
CHOICE_MARGIN = 0.04

_SCOPE_COMMON = """Recognises each turn's audio (its harness-measured segments) with our
offline recogniser (PocketSphinx with a language model built from this conversation's own
sentences, entity values re-drawn) and compares it with the intended text after removing
interruption tags and text after a cut-off tag. A turn without audio segments is not
rated; without any audio (text mode) the metric is skipped. An entity missing from the
transcript is checked again by a forced choice: the turn's audio is decoded against the
intended sentence with that entity's slot open to the intended value and its plausible
variants (one letter or digit of a code, the month or day of a date, an amount or clock
time a little off); it counts as an error only when a variant beats the intended value by
a margin, and again in a second view of the clip (5% faster), so the recogniser's own
letter confusions (W/D, T/D) are mostly not charged to the speaker. Emails and names get
no variants and keep the transcript check; names are not checked (the recogniser's
vocabulary lacks most of them), and prosody, accent and language identity are not
judged."""

AGENT_SCOPE = f"""Agent speech fidelity, rule-based: per assistant turn, every code, amount,
date, time, flight number, seat, gate, phone number and email in the intended text must
be found (canonical value) in the recognised text for rating 1, else 0; turns with none of
them have has_entities=false. For audio-native agents (speech-to-speech, audio-in LLM) only
the entities the turn says that also appear in the caller's turns or a tool response are
judged, as the reference's judge is asked (an s2s turn's text is the agent's own transcript,
else the caller side's, where a code of five or more symbols one substitution away from one
code of the context is judged as that code). {_SCOPE_COMMON}"""

USER_SCOPE = f"""User speech fidelity, rule-based (spec 4.5): per caller turn, 1 if nothing
was recognised, under 30% of the intended words were, or an entity of the intended text is
missing from the recognised text (the spec's "1 any entity error or a major error"); 2 if
fewer than 70% of the words were recognised; else 3. Our recogniser also misses some
spelled codes on its own, which this rule charges to the caller and so regenerates the
attempt; parameter user_entity_error_rating=2 rates such a miss 2 instead (no human labels
of this metric exist to measure which reading agrees better). {_SCOPE_COMMON}"""

TTS_SCOPE = f"""TTS fidelity, rule-based: per assistant turn, rating 0 with failure modes
entity_error (an entity missing), truncation (under 60% of the last third of the words
recognised, at least 25 points below the rest), garbled_hallucination (under 30% of all words recognised),
insertion_hallucination (50% more words recognised than intended, plus 5); wrong_language
is not detected. {_SCOPE_COMMON}"""

_CHECKED = {
    "code",
    "spelled",
    "amount",
    "date",
    "time",
    "flight_number",
    "seat",
    "gate",
    "phone",
    "email",
    "airport_code",
}
# Spec 4.5, user_speech_fidelity: "1 any entity error or a major error".
USER_ENTITY_ERROR_RATING = 1
_TAG = re.compile(r"\[[a-z ]+\]", re.IGNORECASE)
_CUT = re.compile(
    r"\[(?:likely cut off by user|likely cut off by assistant|speaker likely cut itself off)\].*",
    re.IGNORECASE | re.DOTALL,
)


def spoken_part(text: str) -> str:
    return _TAG.sub(" ", _CUT.sub(" ", text)).strip()


def word_recall(intended: str, heard: str, known: frozenset[str] | None = None) -> float:
    """Share of the intended words heard; only words in ``known`` count when it is given
    (a word the recogniser cannot output is no evidence about the speaker)."""
    want = Counter(
        w for w in normalize_spoken(intended).lower().split() if known is None or w in known
    )
    got = Counter(normalize_spoken(heard).lower().split())
    total = sum(want.values())
    return 1.0 if total == 0 else sum((want & got).values()) / total


class Listener:
    """A transcriber plus the words it can output (None: unknown, every word counts)."""

    def __init__(self, transcribe: Transcriber, vocabulary: frozenset[str] | None) -> None:
        self.transcribe, self.vocabulary = transcribe, vocabulary

    def __call__(self, samples: np.ndarray, rate: int) -> str:
        return self.transcribe(samples, rate)


def _line_words(line: str) -> tuple[str, ...]:
    """The words of a corpus line as the recogniser can output them (``normalize_spoken``
    caches the costly part: the corpora of one record's attempts repeat the same lines)."""
    return tuple(normalize_spoken(line).lower().split())


def default_transcriber(inp: SpeechFidelityInput, params: Mapping[str, Any]) -> Listener:
    """Our PocketSphinx recogniser with a domain LM built from this conversation's texts.

    Its vocabulary is that of the LM's sentences, whose entity values are re-drawn: names
    and codes of this call are not in it, so they never count as missed words (the entity
    check covers codes)."""
    from perturbations.audio import Clip
    from tasks.voice.corpus import domain_corpus
    from tasks.voice.stt import Recognizer, SttSpec

    spec = SttSpec(**dict(params.get("stt") or {}))
    texts = [spoken_part(t) for t in inp.turns.values() if spoken_part(t)]
    corpus = domain_corpus(texts, int(params.get("corpus_size", 1500)), seed=0) if texts else []
    cache_dir = params.get("cache_dir", ".cache/evaflow/lm")
    if not corpus:
        general = Recognizer(spec.model_copy(update={"lm": "general"}), None, cache_dir)
        return Listener(lambda x, r: general.recognize(Clip.from_float(x, r, clip=True)), None)
    recognizer = Recognizer(spec, corpus, cache_dir)
    vocabulary = frozenset(w for line in corpus for w in _line_words(line))
    return Listener(lambda x, r: recognizer.recognize(Clip.from_float(x, r, clip=True)), vocabulary)


def turn_clips(
    task: JudgeTask, inp: SpeechFidelityInput
) -> tuple[dict[int, np.ndarray], int] | OfflineAnswer:
    """(turn -> its audio, sample rate); a turn without audio segments is left out."""
    if task.audio is None:
        return OfflineAnswer(skipped="no audio for this attempt (text mode)")
    try:
        samples, rate = read_wav(task.audio.path)
    except AudioReadError as exc:
        return OfflineAnswer(error=str(exc))
    clips = {}
    for turn in sorted(inp.turns):
        clip = cut_segments(samples, rate, task.audio.segments.get(turn) or [])
        if clip.size:
            clips[turn] = clip
    return clips, rate


def default_chooser(params: Mapping[str, Any]) -> Any | None:
    """The forced-choice decoder: ``params["chooser"]``, else ours for the default
    recogniser; none for a stand-in transcriber (its tests give no speech to decode), or
    when ``forced_choice`` is false (the transcript check alone)."""
    if "chooser" in params:
        return params["chooser"]
    if params.get("transcriber") or not params.get("forced_choice", True):
        return None
    from tasks.voice.stt import SttSpec
    from tasks.voice.verify import shared_decoder

    return shared_decoder(SttSpec(**dict(params.get("stt") or {})))


def _clip(samples: np.ndarray, rate: int) -> Any:
    from perturbations.audio import Clip

    return Clip.from_float(samples, rate, clip=True)


def recognise_turns(
    task: JudgeTask, inp: SpeechFidelityInput, transcriber: Transcriber
) -> dict[int, str | None] | OfflineAnswer:
    """turn -> recognised text (None = no audio for that turn), or an answer to return."""
    found = turn_clips(task, inp)
    if isinstance(found, OfflineAnswer):
        return found
    clips, rate = found
    return {t: transcriber(clips[t], rate) if t in clips else None for t in sorted(inp.turns)}


class EntityCheck:
    """Which entities of an intended turn its audio did not carry: missing from the
    transcript and, when a forced-choice decoder is given, also beaten by a variant."""

    def __init__(self, chooser: Any | None = None, margin: float = CHOICE_MARGIN) -> None:
        self.chooser, self.margin = chooser, margin
        self.clip: Any | None = None  # the current turn's audio (a perturbations Clip)
        self.kept: list[str] = []
        self.heard = ""  # the current turn's transcript

    def wrong(self, entity: CallerEntity, intended: str) -> str | None:
        """Why ``entity`` counts as said wrong, or None when the forced choice kept it."""
        if self.chooser is None or self.clip is None:
            return entity.value
        from tasks.voice.stt import lm_tokens

        variants = variant_sentences(intended, entity)
        if not variants:
            return entity.value
        from tasks.voice.verify import changed_words, supported

        seqs = [lm_tokens(intended).split()] + [lm_tokens(v).split() for v in variants]
        heard = lm_tokens(self.heard).split()
        try:
            choice = self.chooser.choose(self.clip, seqs, heard)
        except (RuntimeError, ValueError) as exc:  # the transcript check stands
            return f"{entity.value} (forced choice failed: {exc})"
        if choice is None:
            return f"{entity.value} (no forced-choice path)"
        # Every piece of evidence must also hold in the second view of the clip (it faster
        # and higher, ``Choice.view_margins``): clean-audio confusions (V for D, a digit the
        # transcript misheard) win by a hair that the second view tends to undo. Without it seeds
        # 4-11 of the injected-error test gave 10/192 false alarms.
        view = choice.view_margins
        if choice.winner != 0 and choice.margin > self.margin and view.get(choice.winner, 0) > 0:
            return f"{entity.value} (heard '{choice.heard}', margin {choice.margin:.2f})"
        # The transcript's confusions in clean audio are mostly spelled letters (W/D, C/D);
        # a variant it heard in words (a digit, a month, a number) counts even when the
        # forced choice kept the intended value, as it did for wrong last digits and
        # amounts ("$420" for "$421", seeds 1-2 of the injected-error test).
        for i in supported(seqs, heard):
            spelled = any(len(w) == 1 and w.isalpha() for w in changed_words(seqs[0], seqs[i]))
            if not spelled and view.get(i, 0) > 0:
                return f"{entity.value} (transcript heard '{' '.join(seqs[i])}')"
        self.kept.append(f"{entity.value} (best variant margin {choice.margin:.3f})")
        return None

    def missing(
        self, intended: str, heard: str, entities: list[CallerEntity] | None = None
    ) -> list[str]:
        """Values (with the evidence) of the entities (default: all of ``intended``'s) said
        wrong; ``kept`` lists those the transcript missed but the forced choice kept."""
        self.kept, self.heard = [], heard
        return [
            why
            for e in (_entities(intended) if entities is None else entities)
            if not heard_as(e, heard)[0] and (why := self.wrong(e, intended)) is not None
        ]

    def note(self) -> str:
        return f" Kept by forced choice: {', '.join(self.kept)}." if self.kept else ""


def _entities(text: str) -> list[Any]:
    return [e for e in find_entities(text) if e.type in _CHECKED]


def _agent_turn(
    turn: int,
    intended: str,
    heard: str,
    language: str,
    check: EntityCheck,
    rule: ContextRule | None = None,
) -> dict[str, Any]:
    """One agent turn: its entities must be heard; with a context ``rule`` (audio-native
    agents) only those of the context, plus the context's identifiers a transcript turn
    says with one symbol off, each in its own sentence (:mod:`.speech_context`)."""
    entities = [e for e in _entities(intended) if rule is None or rule.keep(e)]
    missing = check.missing(intended, heard, entities)
    kept = list(check.kept)
    for entity, sentence in rule.slips(turn, intended) if rule is not None else []:
        entities.append(entity)
        missing += check.missing(sentence, heard, [entity])
        kept += check.kept
    check.kept = kept
    row = {
        "turn_id": turn,
        "language": language,
        "transcript": heard,
        "has_entities": bool(entities),
        "entities": [e.model_dump() for e in entities],
    }
    if not entities:
        return {**row, "explanation": "No entities to check.", "rating": 1}
    why = f"Not recognised: {', '.join(missing)}." if missing else "All entities recognised."
    why += check.note()
    return {**row, "explanation": why, "rating": 0 if missing else 1}


def _user_turn(
    turn: int,
    intended: str,
    heard: str,
    language: str,
    check: EntityCheck,
    entity_error_rating: int = USER_ENTITY_ERROR_RATING,
    known: frozenset[str] | None = None,
) -> dict[str, Any]:
    missing = check.missing(intended, heard)
    recall = word_recall(intended, heard, known)
    if not heard.strip() or recall < 0.3:
        rating, why = 1, f"Major error: {recall:.0%} of the intended words recognised."
    elif missing:
        rating, why = entity_error_rating, f"Entity not recognised: {', '.join(missing)}"
    elif recall < 0.7:
        rating, why = 2, f"Only {recall:.0%} of the intended words recognised."
    else:
        rating, why = 3, f"Entities right, {recall:.0%} of words recognised."
    return {
        "turn_id": turn,
        "language": language,
        "transcript": heard,
        "explanation": why,
        "rating": rating,
    }


def _tts_turn(
    turn: int,
    intended: str,
    heard: str,
    language: str,
    check: EntityCheck,
    known: frozenset[str] | None = None,
) -> dict[str, Any]:
    modes = []
    if check.missing(intended, heard):
        modes.append("entity_error")
    words = intended.split()
    tail = " ".join(words[-max(1, len(words) // 3) :])
    recall, tail_recall = word_recall(intended, heard, known), word_recall(tail, heard, known)
    if recall < 0.3:
        modes.append("garbled_hallucination")
    else:
        head_recall = word_recall(" ".join(words[: len(words) * 2 // 3]), heard, known)
        if tail_recall < 0.6 and head_recall - tail_recall >= 0.25:
            modes.append("truncation")
    if len(heard.split()) > 1.5 * len(normalize_spoken(intended).split()) + 5:
        modes.append("insertion_hallucination")
    return {
        "turn_id": turn,
        "transcript": heard,
        "failure_modes": modes,
        "explanation": f"{recall:.0%} of words recognised",
        "rating": 0 if modes else 1,
    }


def judge_speech(task: JudgeTask, params: Mapping[str, Any]) -> OfflineAnswer:
    inp = task.inputs
    if not isinstance(inp, SpeechFidelityInput):
        return OfflineAnswer(error=f"expected SpeechFidelityInput, got {type(inp).__name__}")
    if task.audio is None:
        return OfflineAnswer(skipped="no audio for this attempt (text mode)")
    transcriber = params.get("transcriber") or default_transcriber(inp, params)
    found = turn_clips(task, inp)
    if isinstance(found, OfflineAnswer):
        return found
    clips, rate = found
    if not clips:
        return OfflineAnswer(skipped="no audio segments for any turn")
    heard = {t: transcriber(clips[t], rate) if t in clips else None for t in sorted(inp.turns)}
    check = EntityCheck(default_chooser(params), float(params.get("choice_margin", CHOICE_MARGIN)))
    known = getattr(transcriber, "vocabulary", None)
    rate_turn: Callable[..., dict[str, Any]] = _agent_turn
    if inp.variant == "agent_entities" and inp.entities_from == "context":
        rate_turn = partial(_agent_turn, rule=ContextRule(inp.trace, inp.transcribed_turns))
    elif inp.variant == "user":
        rating = int(params.get("user_entity_error_rating", USER_ENTITY_ERROR_RATING))
        rate_turn = partial(_user_turn, entity_error_rating=rating, known=known)
    elif inp.variant == "tts":
        rate_turn = partial(_tts_turn, known=known)
    rows = []
    for turn, text in sorted(inp.turns.items()):
        said = heard.get(turn)
        if said is None:
            rows.append(
                {
                    "turn_id": turn,
                    "transcript": "",
                    "has_entities": False,
                    "explanation": "No audio segments for this turn.",
                    "rating": None,
                }
            )
            continue
        check.clip = _clip(clips[turn], rate)
        rows.append(rate_turn(turn, spoken_part(text), said, inp.language, check))
    extra: dict[str, Any] = {"recognised": heard}
    if inp.variant == "agent_entities":
        extra["entities_from"] = inp.entities_from
    return OfflineAnswer(output={"turns": rows}, extra=extra)


offline_rule("agent_speech_fidelity", AGENT_SCOPE)(judge_speech)
offline_rule("user_speech_fidelity", USER_SCOPE)(judge_speech)
offline_rule("tts_fidelity", TTS_SCOPE)(judge_speech)
