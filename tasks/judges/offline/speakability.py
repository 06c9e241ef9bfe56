"""Offline rule of ``speakability``: text a speech engine would read badly."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from tasks.judges.base import JudgeTask
from tasks.judges.inputs import TurnTextInput
from tasks.judges.offline import OfflineAnswer, offline_rule

SCOPE = """Rule-based speakability check per assistant turn: rated 0 for markdown or visual
formatting (bold/italic markers, headers, bullet or numbered list markers at line starts,
table pipes, runs of three or more repeated symbols), JSON or code braces, square/angle
brackets (our interruption tags excepted), words glued by punctuation without a space
('done.Your') or camel-case joins starting lower-case ('yourFlight'), emojis and other
pictographs; else 1. CJK text is exempt from the glued-word rule. It cannot hear how a
given engine reads abbreviations, symbols like '$' or '%', or unusual names."""

_TAGS = re.compile(
    r"\[(?:assistant interrupts|user interrupts|likely cut off by user|likely cut off by "
    r"assistant|speaker likely cut itself off|likely interruption|pause)\]",
    re.IGNORECASE,
)
_CHECKS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("markdown emphasis", re.compile(r"\*\*[^*]+\*\*|__[^_]+__|(?<!\w)\*[^*\s][^*]*\*(?!\w)")),
    ("markdown header", re.compile(r"(?m)^\s*#{1,6}\s")),
    ("list marker", re.compile(r"(?m)^\s*(?:[-*\u2022]|\d+[.)])\s+")),
    ("table", re.compile(r"\|[^|\n]*\|")),
    ("repeated symbols", re.compile(r"([^\w\s.])\1{2,}|\.{4,}")),
    ("braces", re.compile(r"[{}]")),
    ("brackets", re.compile(r"[\[\]<>]")),
    ("glued words", re.compile(r"\b[a-z]{2,}[.!?,;:][A-Z][a-z]+|\b[a-z]+[A-Z][a-z]+\w*")),
    (
        "emoji",
        re.compile(
            "[\U0001f300-\U0001faff\U00002600-\U000027bf\U0001f000-\U0001f2ff"
            "\U0001f900-\U0001f9ff\u200d\ufe0f]"
        ),
    ),
)
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")


def speakability_problems(text: str) -> list[str]:
    """Names of the non-speakable structures found in ``text``."""
    clean = _TAGS.sub(" ", text)
    found = []
    for name, pattern in _CHECKS:
        if name == "glued words" and _CJK.search(clean):
            continue
        if pattern.search(clean):
            found.append(name)
    return found


@offline_rule("speakability", SCOPE)
def speakability_rule(task: JudgeTask, params: Mapping[str, Any]) -> OfflineAnswer:
    inp = task.inputs
    if not isinstance(inp, TurnTextInput):
        return OfflineAnswer(error=f"expected TurnTextInput, got {type(inp).__name__}")
    out = []
    for turn, text in sorted(inp.turns.items()):
        problems = speakability_problems(text)
        out.append(
            {
                "turn_id": turn,
                "explanation": "Contains " + ", ".join(problems) if problems else "Plain speech.",
                "rating": 0 if problems else 1,
            }
        )
    return OfflineAnswer(output=out)
