"""English number, letter and calendar vocabulary shared by speaking and normalising."""

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

# Words the normaliser interprets; an all-caps token made of them is speech, not an acronym.
SPOKEN_VOCABULARY: set[str] = (
    set(CARDINAL_VALUES) | set(ORDINAL_VALUES) | set(NATO) | set(MONTHS) | set(SCALES)
) | {"hundred", "dollars", "dollar", "cents", "cent", "am", "pm", "oh", "dash", "and", "point"}
