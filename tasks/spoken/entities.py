"""Key entities in written text: what a caller intends to say, with canonical values.

``extract_entities`` finds codes, IDs, dates, times, amounts, ... in written text (names are
out of scope); each entity's ``value`` is ``normalize_spoken`` of its span, so checking
whether a transcript got it right is a token comparison (``entity_heard``).
``render_spoken`` rewrites written text as a caller says it, through ``tasks.spoken.speak``.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from tasks.spoken.normalize import normalize_spoken
from tasks.spoken.speak import (
    CodeStyle,
    speak_amount,
    speak_code,
    speak_date,
    speak_digits,
    speak_email,
    speak_number,
    speak_ordinal,
    speak_time,
)
from tasks.spoken.words import MONTHS

EntityType = Literal[
    "code",
    "employee_id",
    "npi",
    "ticket_id",
    "date",
    "time",
    "amount",
    "flight_number",
    "digits",
    "email",
]


class Entity(BaseModel):
    """A key entity found in written text (character offsets into that text)."""

    model_config = ConfigDict(frozen=True)

    type: EntityType = Field(description="Entity kind, e.g. 'code', 'date', 'amount'.")
    value: str = Field(description="Canonical form: normalize_spoken() of the matched text.")
    text: str = Field(description="The matched text exactly as written.")
    start: int = Field(ge=0, description="Start offset of the match in the input text.")
    end: int = Field(ge=0, description="End offset (exclusive) of the match.")


_MONTH_RE = "|".join(m.capitalize() for m in MONTHS) + "|" + "|".join(MONTHS)
_CODE_CONTEXT = r"(?i:confirmation|booking|locator|reference|code|record)[\w\s#:]{0,25}?"
_ENTITY_PATTERNS: list[tuple[EntityType, re.Pattern[str]]] = [
    ("email", re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}")),
    ("employee_id", re.compile(r"\bEMP-?\d{4,8}\b")),
    ("ticket_id", re.compile(r"\b(?:INC|REQ|RITM|CHG|SCTASK|TASK|PRB|SR|CS|KB)-?\d{4,}\b")),
    ("date", re.compile(r"\b\d{4}-\d{2}-\d{2}\b")),
    ("date", re.compile(r"\b\d{1,2}/\d{1,2}/\d{4}\b")),
    ("date", re.compile(rf"\b(?:{_MONTH_RE})\.?\s+\d{{1,2}}(?:st|nd|rd|th)?\b(?:,?\s+\d{{4}}\b)?")),
    ("time", re.compile(r"\b\d{1,2}:\d{2}(?:\s*[AaPp]\.?\s?[Mm]\b\.?)?")),
    # A bare hour with am/pm is 1-12: "0AM" / "13PM" are not clock times.
    ("time", re.compile(r"\b(?:1[0-2]|0?[1-9])\s*[AaPp]\.?\s?[Mm]\b\.?")),
    ("amount", re.compile(r"\$\s?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d{2})?")),
    ("amount", re.compile(r"\b\d+(?:\.\d{2})?\s+dollars\b", re.IGNORECASE)),
    ("flight_number", re.compile(r"\b[A-Z]{2}\d{1,4}\b")),
    ("npi", re.compile(r"\b\d{10}\b")),
    ("digits", re.compile(r"\(?\b\d{3}\)?[-. ]\d{3}-\d{4}\b")),
    ("code", re.compile(r"\b[A-Z0-9]+(?:-[A-Z0-9]+)+\b")),
    ("code", re.compile(r"\b(?=[A-Z0-9]*\d)(?=[A-Z0-9]*[A-Z])[A-Z0-9]{4,14}\b")),
    # All-letter codes ("NHNRTO") look like shouted words; only take them after a cue word.
    ("code", re.compile(rf"{_CODE_CONTEXT}\s(?P<v>[A-Z]{{5,8}})\b")),
    ("digits", re.compile(r"\b\d{4,9}\b")),
]


# "ID" is the label of a value, never part of it: "Case ID-48213" holds the number 48213.
_LABEL_PREFIX = re.compile(r"ID-")
# A letter glued to a digit ("B12", "12A"): said as two tokens ("B twelve").
_LETTER_DIGIT = re.compile(r"(?<=[A-Za-z])(?=\d)|(?<=\d)(?=[A-Za-z])")


def _valid_entity(kind: EntityType, text: str) -> bool:
    if kind == "code":
        if _LABEL_PREFIX.match(text):
            return False
        alnum = re.sub(r"[^A-Z0-9]", "", text)
        # "I-9" or "COVID-19"-like tokens are words, not something a caller spells out.
        return len(alnum) >= 4 and (any(c.isdigit() for c in alnum) or "-" not in text)
    return True


def extract_entities(text: str) -> list[Entity]:
    """Key entities in written text, left to right, non-overlapping.

    Earlier patterns in the priority list win an overlap (an employee ID is not also a
    code). Names are out of scope.
    """
    taken: list[tuple[int, int]] = []
    found: list[Entity] = []
    for kind, pattern in _ENTITY_PATTERNS:
        for match in pattern.finditer(text):
            start, end = match.span("v" if "v" in pattern.groupindex else 0)
            span = text[start:end].rstrip(".").rstrip()
            end = start + len(span)
            if any(start < e and s < end for s, e in taken) or not _valid_entity(kind, span):
                continue
            taken.append((start, end))
            value = normalize_spoken(span)
            found.append(Entity(type=kind, value=value, text=span, start=start, end=end))
    return sorted(found, key=lambda e: e.start)


def speak_entity(entity: Entity, code_style: CodeStyle = "letters") -> str:
    """The spoken form of one entity (what a caller says for it)."""
    value = entity.value
    if entity.type in ("code", "employee_id", "ticket_id", "flight_number"):
        return speak_code(entity.text.upper(), code_style)
    if entity.type in ("npi", "digits"):
        return speak_digits(entity.text)
    if entity.type == "amount":
        return speak_amount(value.lstrip("$"))
    if entity.type == "time":
        return speak_time(value)
    if entity.type == "email":
        return speak_email(entity.text)
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", value):
        return speak_date(value)
    month, day = value.split()
    return f"{month.capitalize()} {speak_ordinal(int(day))}"


@lru_cache(maxsize=1 << 15)  # LM corpora render the same lines thousands of times
def render_spoken(text: str, code_style: CodeStyle = "letters") -> str:
    """Rewrite written text as a caller would say it: entities through ``speak_entity``,
    every remaining number in words, so the result contains no digits."""
    pieces: list[str] = []
    cursor = 0
    for entity in extract_entities(text):
        pieces.append(text[cursor : entity.start])
        pieces.append(speak_entity(entity, code_style))
        cursor = entity.end
    pieces.append(text[cursor:])
    joined = "".join(pieces)
    joined = re.sub(r"\$(\d+(?:\.\d+)?)", lambda m: speak_amount(m.group(1)), joined)
    joined = re.sub(r"(\d+)(?:st|nd|rd|th)\b", lambda m: speak_ordinal(int(m.group(1))), joined)
    joined = _LETTER_DIGIT.sub(" ", joined)
    joined = re.sub(r"\d+(?:\.\d+)?", lambda m: speak_number(m.group(0)), joined.replace(",", ", "))
    return re.sub(r"\s+", " ", joined.replace(" ,", ",")).strip()


def entity_heard(entity: Entity, transcript: str) -> bool:
    """True when the entity's canonical value appears as a token sequence in the
    normalised transcript (exact match: a code with one wrong symbol is not heard)."""
    heard = f" {normalize_spoken(transcript)} "
    return f" {entity.value} " in heard
