"""Text normalisation for stt_wer (spec 4.6), so formatting differences are not counted as
recognition errors ("twenty three" vs "23", "E M P" vs "EMP", "2026-03-21" vs "March 21st").

The pipeline follows the reference's steps in order:

1. decode literal ``\\uXXXX`` escapes (pure-ASCII text only);
2. unify apostrophe variants;
3. collapse runs of >= 3 single Latin letters ("E M P") into one upper-case token;
4. drop a spoken "dash" between alphanumeric tokens;
5. hyphen groups: ISO dates -> space-separated parts, digit-bearing groups -> hyphens
   removed, pure-letter compounds unchanged;
6. split on commas that are not between digits;
7. per chunk: the language normaliser, then lower-case, remove punctuation, strip;
8. rejoin, and strip leading zeros of numbers;
9. join numbers with split ordinal suffixes ("3 rd" -> "3rd").

English uses ``tasks.spoken.normalize_spoken`` as its number-word engine (number words,
amounts, dates, times and spelled codes to one written form, shared with the voice stack),
plus currency/percent symbols and filler words. It runs on the whole utterance before the
hyphen step and replaces steps 3 and 6: its spelled-symbol rule joins letter *and* digit
runs ("E M P zero four eight" -> "EMP048", which step 3 alone would leave as "EMP 048"),
and it reads "March 21st, 2026" and "1,250" itself, which a comma split would break. ISO
dates are split into parts after it, so "2026-03-21" and "March twenty first twenty twenty
six" meet as "2026 3 21". Other languages get the basic normaliser (steps 3 and 6, no
number-word conversion): the reference's per-language number grammars are not ported.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from tasks.spoken import normalize_spoken

FILLERS_EN = frozenset({"um", "uh", "erm", "er", "ah", "hmm", "mm", "mmm", "mhm"})
CER_LANGUAGES = frozenset({"ja", "zh", "ko"})

_UNICODE_ESCAPE = re.compile(r"\\u([0-9a-fA-F]{4})")
_APOSTROPHES = re.compile(r"[\u2018\u2019\u02bc\u0060\u00b4\u2032]")
_LETTER_RUN = re.compile(r"\b(?:[A-Za-z] ){2,}[A-Za-z]\b")
_SPOKEN_DASH = re.compile(r"(?<=[A-Za-z0-9]) (?:dash|hyphen) (?=[A-Za-z0-9])", re.IGNORECASE)
_ISO_DATE = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_HYPHEN_GROUP = re.compile(r"\b[\w]+(?:-[\w]+)+\b")
_COMMA_SPLIT = re.compile(r"(?<!\d),|,(?!\d)")
_SPLIT_ORDINAL = re.compile(r"\b(\d+) (st|nd|rd|th)\b")
_SYMBOL_WORDS = {"%": " percent ", "€": " euros ", "£": " pounds "}


def decode_escapes(text: str) -> str:
    if not text.isascii():
        return text
    return _UNICODE_ESCAPE.sub(lambda m: chr(int(m[1], 16)), text)


def collapse_letter_runs(text: str) -> str:
    return _LETTER_RUN.sub(lambda m: m[0].replace(" ", "").upper(), text)


def rewrite_hyphen_groups(text: str) -> str:
    text = _ISO_DATE.sub(lambda m: f"{m[1]} {m[2]} {m[3]}", text)

    def group(m: re.Match[str]) -> str:
        return m[0].replace("-", "") if re.search(r"\d", m[0]) else m[0]

    return _HYPHEN_GROUP.sub(group, text)


def remove_punctuation(text: str) -> str:
    """Drop apostrophes inside words, keep decimal points, turn other punctuation to spaces."""
    text = re.sub(r"(?<=\w)'(?=\w)", "", text)
    text = re.sub(r"(?<=\d)\.(?=\d)", "\0", text)
    text = re.sub(r"[^\w\s\0]|_", " ", text)
    text = text.replace("\0", ".")
    return " ".join(text.split())


def english_text(text: str) -> str:
    """English number-word engine: symbols to words, normalize_spoken, fillers dropped."""
    for symbol, word in _SYMBOL_WORDS.items():
        text = text.replace(symbol, word)
    words = [w for w in normalize_spoken(text).split() if w.lower() not in FILLERS_EN]
    return " ".join(words)


def basic_text(text: str) -> str:
    """Languages without a ported number grammar: steps 3 and 6, no number conversion."""
    text = collapse_letter_runs(text)
    return " , ".join(c.strip() for c in _COMMA_SPLIT.split(text))


LANGUAGE_NORMALIZERS: dict[str, Callable[[str], str]] = {"en": english_text}


def language_base(language: str) -> str:
    return language.split("-")[0].split("_")[0].lower()


def normalize_for_wer(text: str, language: str = "en") -> str:
    """Normalise one utterance; the result is lower-case, space-separated units."""
    text = decode_escapes(text)
    text = _APOSTROPHES.sub("'", text)
    text = _SPOKEN_DASH.sub(" ", text)
    text = LANGUAGE_NORMALIZERS.get(language_base(language), basic_text)(text)
    text = remove_punctuation(rewrite_hyphen_groups(text).lower())
    text = " ".join(str(int(w)) if w.isdigit() else w for w in text.split())
    return _SPLIT_ORDINAL.sub(r"\1\2", text)


def uses_cer(language: str) -> bool:
    return language_base(language) in CER_LANGUAGES
