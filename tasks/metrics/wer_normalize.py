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

English (``tasks.metrics.wer_english``) follows Whisper's ``EnglishTextNormalizer``:
number words to digits (years, ordinals, decimals), currency and percent as words,
contractions expanded, British spellings American, fillers dropped. It replaces step 3
with evaflow's spelled-code reader, which also joins two-letter and letter-and-digit runs
("Z K three F F W" -> "zk3ffw", as the written "ZK3FFW" stays one token), and reads clock
times ("4:30 PM" and "four thirty p m" -> "4 30 pm"). Other languages get the basic
normaliser (step 3, no number-word conversion): the reference's per-language number
grammars are not ported.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from tasks.metrics.wer_english import english_text

CER_LANGUAGES = frozenset({"ja", "zh", "ko"})

_UNICODE_ESCAPE = re.compile(r"\\u([0-9a-fA-F]{4})")
_APOSTROPHES = re.compile(r"[\u2018\u2019\u02bc\u0060\u00b4\u2032]")
_LETTER_RUN = re.compile(r"\b(?:[A-Za-z] ){2,}[A-Za-z]\b")
_SPOKEN_DASH = re.compile(r"(?<=[A-Za-z0-9]) (?:dash|hyphen) (?=[A-Za-z0-9])", re.IGNORECASE)
_ISO_DATE = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_HYPHEN_GROUP = re.compile(r"\b[\w]+(?:-[\w]+)+\b")
_COMMA_SPLIT = re.compile(r"(?<!\d),|,(?!\d)")
_SPLIT_ORDINAL = re.compile(r"\b(\d+) (st|nd|rd|th)\b")


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


def basic_text(text: str) -> str:
    """Languages without a ported number grammar: step 3, no number conversion."""
    return collapse_letter_runs(text)


LANGUAGE_NORMALIZERS: dict[str, Callable[[str], str]] = {"en": english_text}


def language_base(language: str) -> str:
    return language.split("-")[0].split("_")[0].lower()


def normalize_for_wer(text: str, language: str = "en") -> str:
    """Normalise one utterance; the result is lower-case, space-separated units."""
    text = decode_escapes(text)
    text = _APOSTROPHES.sub("'", text)
    text = _SPOKEN_DASH.sub(" ", text)
    text = rewrite_hyphen_groups(text)
    language_text = LANGUAGE_NORMALIZERS.get(language_base(language), basic_text)
    chunks = [remove_punctuation(language_text(c).lower()) for c in _COMMA_SPLIT.split(text)]
    text = " ".join(c for c in chunks if c)
    text = " ".join(str(int(w)) if w.isdigit() else w for w in text.split())
    return _SPLIT_ORDINAL.sub(r"\1\2", text)


def uses_cer(language: str) -> bool:
    return language_base(language) in CER_LANGUAGES
