"""How the generated callers and agents say values on the phone.

Codes are spelled symbol by symbol with digits as words ("Z K three F F W"), digit
strings are read digit by digit, money and dates in words. The conventions match the
voice stack's reader (``tasks.spoken``), so a recognised utterance normalises back to
the written value. The words and the number reading are
:mod:`scenarios.spoken_forms`, which ``tasks.spoken`` uses too.
"""

from __future__ import annotations

from datetime import date

from scenarios.spoken_forms import MONTHS as _MONTHS
from scenarios.spoken_forms import ONES, clock_words, number_words, ordinal_words, year_words
from scenarios.spoken_forms import WEEKDAYS as _WEEKDAYS

# The generator writes month and weekday names capitalised, as its records always had them.
MONTHS = [m.capitalize() for m in _MONTHS]
WEEKDAYS = [d.capitalize() for d in _WEEKDAYS]
number = number_words
ordinal = ordinal_words


def digits(text: str) -> str:
    """Digit by digit: "7294" -> "seven two nine four" (other characters are skipped)."""
    return " ".join(ONES[int(c)] for c in text if c.isdigit())


def spell(code: str) -> str:
    """Symbol by symbol: "TOU-77A" -> "T O U dash seven seven A"."""
    out: list[str] = []
    for char in code:
        if char.isdigit():
            out.append(ONES[int(char)])
        elif char.isalpha():
            out.append(char.upper())
        elif char == "-":
            out.append("dash")
        elif not char.isspace():
            raise ValueError(f"spell: cannot say {char!r} in {code!r}")
    return " ".join(out)


def amount(value: float) -> str:
    """Money in words: 117 -> "one hundred seventeen dollars"; cents when present."""
    cents_total = round(value * 100)
    dollars, cents = divmod(cents_total, 100)
    text = f"{number(dollars)} dollar{'' if dollars == 1 else 's'}"
    if cents:
        text += f" and {number(cents)} cent{'' if cents == 1 else 's'}"
    return text


def year(y: int) -> str:
    """2026 -> "twenty twenty six", 2005 -> "two thousand five", 1988 -> "nineteen eighty eight"."""
    return year_words(y)


def spoken_date(iso: str, with_year: bool = False, weekday: bool = False) -> str:
    """ "2026-04-12" -> "April twelfth" (optionally "Sunday, April twelfth, twenty twenty six")."""
    day = date.fromisoformat(iso)
    text = f"{MONTHS[day.month - 1]} {ordinal(day.day)}"
    if weekday:
        text = f"{WEEKDAYS[day.weekday()]}, {text}"
    if with_year:
        text += f", {year(day.year)}"
    return text


def spoken_time(hhmm: str) -> str:
    """24-hour "HH:MM" in 12-hour speech: "14:30" -> "two thirty PM", "09:05" -> "nine oh five AM"."""
    hour, minute = (int(part) for part in hhmm.split(":"))
    return clock_words(hour, minute)


def hours(value: float) -> str:
    """Hours said plainly: 12 -> "twelve", 11.5 -> "eleven point five"."""
    whole, fraction = divmod(round(value * 10), 10)
    return number(whole) + (f" point {ONES[fraction]}" if fraction else "")


def flight(flight_number: str) -> str:
    """A flight number the way agents read it: "MR214" -> "M R two fourteen"."""
    letters = "".join(c for c in flight_number if c.isalpha())
    num = int("".join(c for c in flight_number if c.isdigit()))
    spoken_number = number(num)
    if 100 <= num < 1000 and num % 100:
        head, tail = divmod(num, 100)
        spoken_number = f"{number(head)} " + (f"oh {ONES[tail]}" if tail < 10 else number(tail))
    return f"{spell(letters)} {spoken_number}"
