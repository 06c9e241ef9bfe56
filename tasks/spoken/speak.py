"""Render written values the way a caller says them on the phone.

``speak_code("ZK3FFW")`` -> "Z K three F F W"; ``speak_amount(1250.5)`` -> "one thousand two
hundred fifty dollars and fifty cents"; ``speak_date("2026-03-25")`` -> "March twenty fifth,
twenty twenty six". ``tasks.spoken.normalize`` is the inverse.
"""

from __future__ import annotations

import re
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from typing import Literal

from scenarios.spoken_forms import (
    DIGIT_WORDS,
    MONTHS,
    NATO,
    clock_words,
    number_words,
    ordinal_words,
    year_words,
)

CodeStyle = Literal["letters", "nato"]

_NATO_BY_LETTER = {word[0].upper(): word.capitalize() for word in NATO if word != "alfa"}
_NATO_BY_LETTER["X"] = "X-ray"
_NATO_BY_LETTER["J"] = "Juliet"
_NATO_BY_LETTER["W"] = "Whiskey"


# --------------------------------------------------------------------------- speaking


def speak_number(n: int | float | str) -> str:
    """Cardinal number in words, US style without "and" (1250 -> "one thousand two hundred fifty").

    Floats are read with "point" and single digits ("3.25" -> "three point two five").
    """
    text = str(n).replace(",", "").strip()
    if text.startswith("-"):
        return "minus " + speak_number(text[1:])
    if "." in text:
        whole, frac = text.split(".", 1)
        if not (whole or "0").isdigit() or not frac.isdigit():
            raise ValueError(f"speak_number: not a number: {n!r}")
        return f"{_speak_int(int(whole or 0))} point {speak_digits(frac)}"
    if not text.isdigit():
        raise ValueError(f"speak_number: not a number: {n!r}")
    return _speak_int(int(text))


_speak_int = number_words


def speak_ordinal(n: int) -> str:
    """Ordinal in words (25 -> "twenty fifth", 100 -> "one hundredth")."""
    if n <= 0:
        raise ValueError(f"speak_ordinal: ordinals start at 1, got {n}")
    return ordinal_words(n)


def speak_digits(s: str) -> str:
    """Digit by digit ("0148" -> "zero one four eight"); separators become short pauses."""
    groups = [g for g in re.split(r"[^0-9A-Za-z]+", s) if g]
    if not groups:
        raise ValueError(f"speak_digits: no digits in {s!r}")
    spoken = [" ".join(_speak_symbol(c, "letters") for c in group) for group in groups]
    return ", ".join(spoken)


def _speak_symbol(char: str, style: CodeStyle) -> str:
    if char.isdigit():
        return DIGIT_WORDS[int(char)]
    if style == "nato":
        return _NATO_BY_LETTER[char.upper()]
    return char.upper()


def speak_code(code: str, style: CodeStyle = "letters") -> str:
    """Spell a code symbol by symbol: "ZK3FFW" -> "Z K three F F W" or, with
    ``style="nato"``, "Zulu Kilo three Foxtrot Foxtrot Whiskey". Hyphens are said "dash"."""
    if style not in ("letters", "nato"):
        raise ValueError(f"speak_code: style must be 'letters' or 'nato', got {style!r}")
    words: list[str] = []
    for char in code.strip():
        if char.isascii() and char.isalnum():
            words.append(_speak_symbol(char, style))
        elif char == "-":
            words.append("dash")
        elif not char.isspace():
            raise ValueError(f"speak_code: cannot spell character {char!r} in {code!r}")
    if not words:
        raise ValueError(f"speak_code: empty code {code!r}")
    return " ".join(words)


def _to_cents(x: float | int | str) -> int:
    text = str(x).replace("$", "").replace(",", "").strip()
    try:
        value = Decimal(text)
    except InvalidOperation:
        raise ValueError(f"speak_amount: not an amount: {x!r}") from None
    if value < 0:
        raise ValueError(f"speak_amount: negative amount {x!r}")
    return int((value * 100).quantize(Decimal(1), rounding=ROUND_HALF_UP))


def speak_amount(x: float | int | str) -> str:
    """Money in words: 1250.5 or "$1,250.50" -> "one thousand two hundred fifty dollars
    and fifty cents"; whole amounts have no cents part."""
    dollars, cents = divmod(_to_cents(x), 100)
    dollar_part = f"{_speak_int(dollars)} dollar{'' if dollars == 1 else 's'}"
    cent_part = f"{_speak_int(cents)} cent{'' if cents == 1 else 's'}"
    if cents == 0:
        return dollar_part
    if dollars == 0:
        return cent_part
    return f"{dollar_part} and {cent_part}"


def speak_year(year: int) -> str:
    """Years the way people say them: 2026 -> "twenty twenty six", 2005 -> "two thousand
    five", 1988 -> "nineteen eighty eight", 1905 -> "nineteen oh five"."""
    return year_words(year)


def speak_date(iso: str) -> str:
    """ "2026-03-25" -> "March twenty fifth, twenty twenty six"."""
    match = re.fullmatch(r"\s*(\d{4})-(\d{2})-(\d{2})\s*", iso)
    if not match:
        raise ValueError(f"speak_date: expected YYYY-MM-DD, got {iso!r}")
    year, month, day = (int(g) for g in match.groups())
    if not (1 <= month <= 12 and 1 <= day <= 31):
        raise ValueError(f"speak_date: month or day out of range in {iso!r}")
    return f"{MONTHS[month - 1].capitalize()} {speak_ordinal(day)}, {speak_year(year)}"


def speak_time(hhmm: str) -> str:
    """24-hour "HH:MM" in 12-hour speech: "16:00" -> "four PM", "09:05" -> "nine oh five AM"."""
    match = re.fullmatch(r"\s*(\d{1,2}):(\d{2})\s*", hhmm)
    if not match:
        raise ValueError(f"speak_time: expected HH:MM, got {hhmm!r}")
    hour, minute = int(match.group(1)), int(match.group(2))
    if hour > 23 or minute > 59:
        raise ValueError(f"speak_time: hour or minute out of range in {hhmm!r}")
    return clock_words(hour, minute)


def speak_email(email: str) -> str:
    """ "arjun.mehta@company.com" -> "arjun dot mehta at company dot com"."""
    local, _, domain = email.partition("@")
    spoken = local.replace(".", " dot ").replace("_", " underscore ")
    return f"{spoken} at {domain.replace('.', ' dot ')}"
