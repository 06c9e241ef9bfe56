"""English language normaliser for stt_wer (spec 4.6, step 7), in the style of Whisper's
``EnglishTextNormalizer``, so that "twenty twenty four" and "2024", "we're" and "we are",
"fifty euros" and "€50", "colour" and "color" meet in one form.

Whisper's rules come from the ``whisper-normalizer`` package (OpenAI's code, MIT), used
piecewise so that two evaflow rules can run between its steps:

* spelled codes and IDs ("Z K three F F W", "E M P zero four eight", "Zulu Kilo three")
  become one token, as written codes ("ZK3FFW", "EMP048") stay one token. Whisper would
  split "zk3ffw" at letter/digit boundaries and leave "z k 3 ffw" for the spelled form;
  the code detector is ``tasks.spoken.spoken_spans``, shared with entity matching;
* clock times: "4:30 PM", "four thirty p m" and "4 30 pm" all become "4 30 pm" (":00" is
  dropped before am/pm), where Whisper would read "four thirty" as 430 and "a.m." as "a m".

Outputs: numbers as digits (years "2024", ordinals "21st", decimals "3.5"; "1" is written
"one" as Whisper does), amounts as "<n> dollars|euros|pounds|cents" and "<n> percent",
contractions expanded, British spellings American, fillers dropped, words in their order
(dates are not reordered: "the 21st of june" stays so).
"""

from __future__ import annotations

import re
from functools import partial
from typing import Any

from whisper_normalizer.basic import remove_symbols_and_diacritics
from whisper_normalizer.english import (
    EnglishNumberNormalizer,
    EnglishSpellingNormalizer,
    EnglishTextNormalizer,
)

from tasks.spoken.normalize import spoken_spans

FILLERS_EN = frozenset({"um", "uh", "erm", "er", "ah", "hmm", "mm", "mmm", "mhm", "uhm"})
CURRENCY_WORDS = {"$": "dollars", "€": "euros", "£": "pounds", "¢": "cents"}

_FILLER = re.compile(r"\b(?:" + "|".join(sorted(FILLERS_EN)) + r")\b", re.I)
_BRACKETS = re.compile(r"[<\[][^>\]]*[>\]]")
# Whisper drops parenthesised asides; a parenthesised area code is part of a number.
_PARENS = re.compile(r"\(([^)]+?)\)")
_OCLOCK = re.compile(r"\bo\s?'\s?clock\b")
_WRITTEN_TIME = re.compile(r"\b(\d{1,2}):(\d{2})\b(\s*(?:[ap]\.?\s?m\b\.?|o'?clock\b))?")
_GLUED_TIME = re.compile(r"\b(\d{1,2})([ap])\.?m\b\.?")
# "50¢", "20 €": the symbol after the number, as some locales write it.
_SUFFIX_CURRENCY = re.compile(r"(\d)\s?([$€£¢])(?!\d)")
_MIXED = re.compile(r"(?=.*[a-z])(?=.*\d)[a-z0-9]+")
# Digits with a suffix that Whisper reads itself: "21st", "10am" ("1960s" stays as it is).
_NUMBER_SUFFIX = re.compile(r"\d+(?:st|nd|rd|th|am|pm)")
_NUMBERISH = re.compile(r"[$€£¢]?\d")
_CURRENCY = re.compile(r"([$€£¢])(one|\d+(?:\.\d+)?)\b")
_PERCENT = re.compile(r"(\d|\bone)%")
_ONE_IN_DECIMAL = re.compile(r"\bone(?=\.\d)|(?<=\d\.)one\b")

_REPLACERS: dict[str, str] = EnglishTextNormalizer().replacers
# Whisper's title abbreviations ("dr" -> "doctor"), kept apart: an upper-case "DR" or "ST"
# is a spelled code, not a title.
_TITLES = {p: r for p, r in _REPLACERS.items() if re.fullmatch(r"\\b[a-z]+\\b", p)}
_CONTRACTIONS = {p: r for p, r in _REPLACERS.items() if p not in _TITLES}


class _Numbers(EnglishNumberNormalizer):  # type: ignore[misc]
    """Whisper's number normaliser; its "1" -> "one" rewrite also hit decimals ("1.5")."""

    def postprocess(self, s: str) -> str:
        return _ONE_IN_DECIMAL.sub("1", str(super().postprocess(s)))


_NUMBERS: Any = _Numbers()
_SPELLINGS: Any = EnglishSpellingNormalizer()


def _clean(text: str) -> str:
    """Whisper's steps before number reading, plus written times and "o'clock"."""
    for pattern, replacement in _TITLES.items():
        text = re.sub(pattern, partial(_title, replacement=replacement), text, flags=re.I)
    text = _CAPS_WORD.sub(_caps_number_word, text)
    s = _FILLER.sub(_filler, _BRACKETS.sub("", text)).lower()
    s = _PARENS.sub(lambda m: f" {m[1]} " if re.search(r"\d", m[1]) else "", s)
    s = re.sub(r"\s+'", "'", s)
    s = _OCLOCK.sub(" oclock", s)
    s = re.sub(r"\bx-ray\b", "xray", s)  # the NATO word, before hyphens become spaces
    s = _WRITTEN_TIME.sub(_written_time, s)
    s = _GLUED_TIME.sub(r"\1 \2m", s)
    for pattern, replacement in _CONTRACTIONS.items():
        s = re.sub(pattern, replacement, s)
    s = re.sub(r"(\d),(\d)", r"\1\2", s)
    s = _SUFFIX_CURRENCY.sub(lambda m: f"{m[1]} {CURRENCY_WORDS[m[2]]}", s)
    s = re.sub(r"\.([^0-9]|$)", r" \1", s)
    return str(remove_symbols_and_diacritics(s, keep=".%$¢€£"))


_CAPS_WORD = re.compile(r"\b[A-Z]{2,}\b")


def _caps_number_word(m: re.Match[str]) -> str:
    # A written upper-case code that spells a number word ("TEN", "ONE") is a code, said
    # letter by letter ("T E N"), not the number 10 (hypothesis explore seed 72352).
    return " ".join(m[0]) if m[0].lower() in _NUMBERS.words else m[0]


def _filler(m: re.Match[str]) -> str:
    # A written upper-case "ER" or "MM" is a code (as its spelled form "E R" is), not a filler.
    return m[0] if m[0].isupper() else ""


def _title(m: re.Match[str], replacement: str) -> str:
    return m[0] if len(m[0]) > 1 and m[0].isupper() else replacement


def _written_time(m: re.Match[str]) -> str:
    suffix = m[3] or ""
    minutes = "" if m[2] == "00" and suffix else f" {m[2]}"
    return f"{m[1]}{minutes} {suffix.strip()}"


def _protected(words: list[str]) -> dict[int, tuple[int, str]]:
    """start -> (end, text) of the words Whisper's number reader must not touch."""
    spans = {start: (end, text.lower()) for start, end, text in spoken_spans(words)}
    covered = {k for start, (end, _) in spans.items() for k in range(start, end)}
    for k, word in enumerate(words):
        if k in covered:
            continue
        if _MIXED.fullmatch(word) and not _NUMBER_SUFFIX.fullmatch(word):
            spans[k] = (k + 1, word)  # a written code: "zk3ffw", "emp048271"
        elif word in ("oh", "o") and not _next_to_number(words, k):
            spans[k] = (k + 1, word)  # the interjection, not a zero
    return spans


def _next_to_number(words: list[str], k: int) -> bool:
    near = [words[j] for j in (k - 1, k + 1) if 0 <= j < len(words)]
    return any(w in _NUMBERS.words or _NUMBERISH.match(w) for w in near if w not in ("oh", "o"))


def _read_numbers(words: list[str]) -> str:
    """Whisper's number reader on the stretches between protected spans."""
    spans = _protected(words)
    out: list[str] = []
    plain: list[str] = []
    k = 0
    while k < len(words):
        if k in spans:
            out.append(_NUMBERS(" ".join(plain)) if plain else "")
            plain = []
            end, text = spans[k]
            out.append(text)
            k = end
        else:
            plain.append(words[k])
            k += 1
    out.append(_NUMBERS(" ".join(plain)) if plain else "")
    return " ".join(part for part in out if part)


def _currency_words(m: re.Match[str]) -> str:
    word = CURRENCY_WORDS[m[1]]
    return f"{m[2]} {word[:-1] if m[2] == 'one' else word}"


def english_text(text: str) -> str:
    """Normalise one English chunk (lower-case words; punctuation left for the caller)."""
    s = _read_numbers(_clean(text).split())
    s = _SPELLINGS(s)
    s = _CURRENCY.sub(_currency_words, s)
    s = _PERCENT.sub(r"\1 percent", s)
    s = re.sub(r"[.$¢€£]([^0-9])", r" \1", s)  # symbols with no number after them
    s = re.sub(r"[$¢€£]$", " ", s)
    s = re.sub(r"([^0-9])%", r"\1 ", s)
    return " ".join(s.split())
