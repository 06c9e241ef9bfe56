"""How the generated callers and agents say values on the phone.

Codes are spelled symbol by symbol with digits as words ("Z K three F F W"), digit
strings are read digit by digit, money and dates in words. The conventions match the
voice stack's reader (``tasks.spoken``), so a recognised utterance normalises back to
the written value; ``scenarios`` may not import ``tasks``, hence this small copy.
"""

from __future__ import annotations

from datetime import date

ONES = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
]
TENS = ["_", "_", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
IRREGULAR_ORDINALS = {
    "one": "first",
    "two": "second",
    "three": "third",
    "five": "fifth",
    "eight": "eighth",
    "nine": "ninth",
    "twelve": "twelfth",
}
MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]
WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]


def number(n: int) -> str:
    """Cardinal in words, US style without "and": 1250 -> "one thousand two hundred fifty"."""
    if n < 0:
        raise ValueError(f"number: negative value {n}")
    if n < 20:
        return ONES[n]
    if n < 100:
        tens, unit = divmod(n, 10)
        return TENS[tens] + (f" {ONES[unit]}" if unit else "")
    if n < 1000:
        hundreds, rest = divmod(n, 100)
        return f"{ONES[hundreds]} hundred" + (f" {number(rest)}" if rest else "")
    for scale, word in ((1_000_000, "million"), (1_000, "thousand")):
        if n >= scale:
            head, rest = divmod(n, scale)
            return f"{number(head)} {word}" + (f" {number(rest)}" if rest else "")
    raise AssertionError("unreachable")


def ordinal(n: int) -> str:
    """Ordinal in words: 25 -> "twenty fifth"."""
    words = number(n).split()
    last = words[-1]
    if last in IRREGULAR_ORDINALS:
        words[-1] = IRREGULAR_ORDINALS[last]
    elif last.endswith("y"):
        words[-1] = last[:-1] + "ieth"
    else:
        words[-1] = last + "th"
    return " ".join(words)


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
    if 2000 <= y < 2010:
        return number(y)
    head, tail = divmod(y, 100)
    if tail == 0:
        return f"{number(head)} hundred"
    if tail < 10:
        return f"{number(head)} oh {ONES[tail]}"
    return f"{number(head)} {number(tail)}"


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
    suffix = "AM" if hour < 12 else "PM"
    hour12 = hour % 12 or 12
    if minute == 0:
        return f"{number(hour12)} {suffix}"
    minutes = f"oh {ONES[minute]}" if minute < 10 else number(minute)
    return f"{number(hour12)} {minutes} {suffix}"


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
