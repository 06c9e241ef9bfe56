"""Offline rule of ``conciseness``: counts per assistant turn against fitted limits."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from tasks.judges.base import JudgeTask
from tasks.judges.inputs import ConcisenessInput, TraceItem
from tasks.judges.offline import OfflineAnswer, offline_rule
from tasks.judges.offline.entities import find_entities
from tasks.judges.offline.params import ConcisenessParams
from tasks.spoken import normalize_spoken

_P = ConcisenessParams()
CONCISENESS_SCOPE = f"""Rule-based conciseness check per assistant turn, from counts: words
(spelled codes count as one word), sentences, key figures (times, amounts, dates, flight
numbers, codes), enumerated options and filler phrases. Limits fitted to human labels
(ConcisenessParams): beyond {_P.max_words} words, {_P.max_sentences} sentences,
{_P.max_figures} figures or {_P.max_options} options is a minor overload (rating 2), beyond
{_P.severe_words} words, {_P.severe_sentences} sentences, {_P.severe_figures} figures or
{_P.severe_options} options is significant (rating 1); the last turn gets {_P.final_words}
words and {_P.final_sentences} sentence(s) more for a wrap-up. It cannot tell whether detail
was asked for, whether a long turn was justified by the caller's question, or how content
was lost to interruptions."""

_TAG = re.compile(r"\[[a-z ]+\]", re.IGNORECASE)
_FILLER = re.compile(
    r"\b(great question|absolutely|i completely understand|i understand how|i apologi[sz]e for "
    r"the inconvenience|thank you for your patience|rest assured|i'?d be happy to|"
    r"i'?d be glad to|no problem at all|happy to help|bear with me)\b",
    re.IGNORECASE,
)
_ENUMERATOR = re.compile(
    r"(?:^|[.:;]\s+)(?:option\s+)?(?:one|two|three|four|five|first|second|third|fourth|fifth)"
    r"\s*[,:]|\b(?:option|choice)\s+(?:one|two|three|four|five|\d)\b",
    re.IGNORECASE,
)
_FIGURES = {"time", "amount", "date", "flight_number", "code", "seat", "gate", "phone", "email"}
CONCISENESS_MODES = (
    "verbosity_or_filler",
    "excess_information_density",
    "over_enumeration_or_list_exhaustion",
    "contextually_disproportionate_detail",
)


class TurnFeatures(BaseModel):
    words: int
    sentences: int
    figures: int
    options: int
    fillers: int


def turn_features(text: str) -> TurnFeatures:
    clean = _TAG.sub(" ", text)
    sentences = [s for s in re.split(r"(?<=[.!?])\s+", clean.strip()) if re.search(r"\w", s)]
    entities = [e for e in find_entities(clean) if e.type in _FIGURES]
    norm = normalize_spoken(clean)
    flights = max(
        sum(1 for e in entities if e.type == "flight_number"),
        len(re.findall(r"\bflights? \d", norm.lower())),
    )
    return TurnFeatures(
        words=len(norm.split()),
        sentences=len(sentences),
        figures=len(entities),
        options=max(len(_ENUMERATOR.findall(clean)), flights),
        fillers=len(_FILLER.findall(clean)),
    )


def rate_turn(
    f: TurnFeatures, final: bool, p: ConcisenessParams | None = None
) -> tuple[int, list[str], str]:
    """(rating, failure modes, explanation) from a turn's features."""
    p = p or ConcisenessParams()
    extra_words, extra_sentences = (p.final_words, p.final_sentences) if final else (0, 0)
    words, sentences = f.words - extra_words, f.sentences - extra_sentences
    modes = []
    if f.fillers >= 1 and words > p.filler_words:
        modes.append("verbosity_or_filler")
    if f.figures > p.max_figures:
        modes.append("excess_information_density")
    if f.options > p.max_options:
        modes.append("over_enumeration_or_list_exhaustion")
    if words > p.max_words or sentences > p.max_sentences:
        modes.append("contextually_disproportionate_detail")
    severe = (
        words > p.severe_words
        or sentences > p.severe_sentences
        or f.figures > p.severe_figures
        or f.options > p.severe_options
    )
    rating = 1 if severe else (2 if modes else 3)
    explanation = (
        f"{f.words} words, {f.sentences} sentences, {f.figures} figures, {f.options} options"
        + (f", {f.fillers} filler phrases" if f.fillers else "")
    )
    return rating, modes if rating < 3 else [], explanation


def assistant_texts(trace: list[TraceItem]) -> dict[int, str]:
    """Turn -> the assistant's speech in it (several entries of a turn judged together)."""
    texts: dict[int, str] = {}
    for item in trace:
        if item.kind == "assistant" and item.text.strip():
            texts[item.turn_id] = f"{texts.get(item.turn_id, '')} {item.text}".strip()
    return texts


def judge_conciseness(
    trace: list[TraceItem], p: ConcisenessParams | None = None
) -> list[dict[str, Any]]:
    texts = assistant_texts(trace)
    last = max(texts, default=None)
    out = []
    for turn in sorted({item.turn_id for item in trace}):
        if turn not in texts:
            out.append(
                {
                    "turn_id": turn,
                    "explanation": "No assistant speech.",
                    "failure_modes": [],
                    "rating": None,
                }
            )
            continue
        rating, modes, why = rate_turn(turn_features(texts[turn]), turn == last, p)
        out.append({"turn_id": turn, "explanation": why, "failure_modes": modes, "rating": rating})
    return out


@offline_rule("conciseness", CONCISENESS_SCOPE)
def conciseness_rule(task: JudgeTask, params: Mapping[str, Any]) -> OfflineAnswer:
    if not isinstance(task.inputs, ConcisenessInput):
        return OfflineAnswer(error=f"expected ConcisenessInput, got {type(task.inputs).__name__}")
    p = ConcisenessParams.resolve("conciseness", params)
    return OfflineAnswer(output=judge_conciseness(task.inputs.trace, p))
