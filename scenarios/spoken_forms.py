"""The spoken form of numbers, months and letters: the one home of these tables.

English number words, the NATO alphabet and month names, shared by everything that says
or hears values: the scenario generator (``scenarios.generate.spoken``), the voice stack's
speaker and normaliser (``tasks.spoken``), the caller's value matching and the report's
entity highlighting. It lives in ``scenarios``, the lowest package that needs it.
"""

from __future__ import annotations

ONES: list[str] = [
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
TENS: list[str] = [
    "",
    "",
    "twenty",
    "thirty",
    "forty",
    "fifty",
    "sixty",
    "seventy",
    "eighty",
    "ninety",
]
DIGIT_WORDS: list[str] = ONES[:10]
SCALES: dict[str, int] = {"thousand": 1_000, "million": 1_000_000, "billion": 1_000_000_000}

# Ordinals whose form is not "<cardinal>th"; the rest are derived.
ORDINAL_ONES: dict[str, str] = {
    "first": "one",
    "second": "two",
    "third": "three",
    "fifth": "five",
    "eighth": "eight",
    "ninth": "nine",
    "twelfth": "twelve",
}

NATO: list[str] = [
    "alpha",
    "alfa",
    "bravo",
    "charlie",
    "delta",
    "echo",
    "foxtrot",
    "golf",
    "hotel",
    "india",
    "juliet",
    "juliett",
    "kilo",
    "lima",
    "mike",
    "november",
    "oscar",
    "papa",
    "quebec",
    "romeo",
    "sierra",
    "tango",
    "uniform",
    "victor",
    "whiskey",
    "whisky",
    "x-ray",
    "xray",
    "yankee",
    "zulu",
]

MONTHS: list[str] = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
]
MONTH_ABBREVIATIONS: dict[str, int] = {m[:3]: i + 1 for i, m in enumerate(MONTHS)} | {"sept": 9}

CARDINAL_VALUES: dict[str, int] = {w: i for i, w in enumerate(ONES)} | {
    w: 10 * i for i, w in enumerate(TENS) if w
}


def _ordinal_values() -> dict[str, int]:
    values: dict[str, int] = {}
    for word, value in CARDINAL_VALUES.items():
        if word == "zero":
            continue
        base = {v: k for k, v in ORDINAL_ONES.items()}.get(word)
        if base is None:
            base = word[:-1] + "ieth" if word.endswith("y") else word + "th"
        values[base] = value
    values["hundredth"] = 100
    values["thousandth"] = 1000
    return values


ORDINAL_VALUES: dict[str, int] = _ordinal_values()

WEEKDAYS: list[str] = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]

# Words the normaliser interprets; an all-caps token made of them is speech, not an acronym.
SPOKEN_VOCABULARY: set[str] = (
    set(CARDINAL_VALUES) | set(ORDINAL_VALUES) | set(NATO) | set(MONTHS) | set(SCALES)
) | {"hundred", "dollars", "dollar", "cents", "cent", "am", "pm", "oh", "dash", "and", "point"}


def number_words(n: int) -> str:
    """Cardinal in words, US style without "and": 1250 -> "one thousand two hundred fifty"."""
    if n < 0:
        raise ValueError(f"number_words: negative value {n}")
    if n < 20:
        return ONES[n]
    if n < 100:
        tens, unit = divmod(n, 10)
        return TENS[tens] + (f" {ONES[unit]}" if unit else "")
    if n < 1000:
        hundreds, rest = divmod(n, 100)
        return f"{ONES[hundreds]} hundred" + (f" {number_words(rest)}" if rest else "")
    for value, word in sorted(((v, w) for w, v in SCALES.items()), reverse=True):
        if n >= value:
            head, rest = divmod(n, value)
            return f"{number_words(head)} {word}" + (f" {number_words(rest)}" if rest else "")
    raise AssertionError("unreachable")


def ordinal_words(n: int) -> str:
    """Ordinal in words: 25 -> "twenty fifth", 100 -> "one hundredth"."""
    if n <= 0:
        raise ValueError(f"ordinal_words: ordinals start at 1, got {n}")
    words = number_words(n).split()
    last = words[-1]
    ordinal_of = {w: o for o, w in ORDINAL_ONES.items()}
    if last in ordinal_of:
        words[-1] = ordinal_of[last]
    elif last.endswith("y"):
        words[-1] = last[:-1] + "ieth"
    else:
        words[-1] = last + "th"
    return " ".join(words)


def year_words(year: int) -> str:
    """Years the way people say them: 2026 -> "twenty twenty six", 2005 -> "two thousand
    five", 1988 -> "nineteen eighty eight", 1905 -> "nineteen oh five"."""
    if 2000 <= year < 2010 or year < 1000 or year > 9999:
        return number_words(year)
    head, tail = divmod(year, 100)
    if tail == 0:
        return f"{number_words(head)} hundred"
    if tail < 10:
        return f"{number_words(head)} oh {ONES[tail]}"
    return f"{number_words(head)} {number_words(tail)}"


def clock_words(hour: int, minute: int) -> str:
    """24-hour time in 12-hour speech: (16, 0) -> "four PM", (9, 5) -> "nine oh five AM"."""
    suffix = "AM" if hour < 12 else "PM"
    hour12 = hour % 12 or 12
    if minute == 0:
        return f"{number_words(hour12)} {suffix}"
    minutes = f"oh {ONES[minute]}" if minute < 10 else number_words(minute)
    return f"{number_words(hour12)} {minutes} {suffix}"
