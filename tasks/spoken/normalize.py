"""Read recognised (or written) text back into one canonical written form.

``normalize_spoken`` is the inverse of ``tasks.spoken.speak``: number words become digits,
runs of spelled symbols (letters, digit words, NATO words) become one upper-case token,
"<n> dollars and <m> cents" becomes "$n.mm", month + day (+ year) becomes "march 25" or
"2026-03-25", hour + minutes + AM/PM becomes "16:30", plain words are lower-cased.
Written input takes the same path, so a reference and a transcript meet in one form.

Phases run in a fixed order because the grammars overlap: dates and times first (they
contain numbers and the letters "a m"/"p m"), then amounts, then symbol runs (so "seven
two nine four" is "7294", not "7 2 9 4"), then the remaining numbers.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

from tasks.spoken.words import (
    CARDINAL_VALUES,
    DIGIT_WORDS,
    MONTHS,
    NATO,
    ORDINAL_VALUES,
    SCALES,
    SPOKEN_VOCABULARY,
)
from tasks.spoken.written import format_amount, format_date, format_time, prepare_written

_NATO = set(NATO)
_MONTH_NUMBER = {m: i + 1 for i, m in enumerate(MONTHS)}
_ARTICLE_LETTERS = {"a", "i"}
_AMPM = {"am": "a", "pm": "p"}


@dataclass(frozen=True)
class _Tok:
    low: str  # key used for matching
    out: str  # text emitted if no phase rewrites the token
    final: bool = False  # produced by a phase: later phases leave it alone


_EDGE_PUNCT = ".,!?;:\"'()[]{}<>«»“”…"


def _canonical_case(word: str) -> str:
    low = word.lower()
    if "@" in word or re.fullmatch(r"[1-9]\d*(?:st|nd|rd|th)", low):
        return low
    if re.search(r"\d", word) and re.search(r"[A-Za-z]", word):
        return word.upper()
    if len(word) >= 2 and word.isalpha() and word.isupper() and low not in SPOKEN_VOCABULARY:
        return word
    return low


def _tokenize(text: str) -> list[_Tok]:
    tokens = []
    for raw in text.split():
        word = raw.strip(_EDGE_PUNCT)
        if not word:
            continue
        low = word.lower()
        if low.replace(".", "") in _AMPM:
            low = low.replace(".", "")
        tokens.append(_Tok(low=low, out=_canonical_case(word)))
    return tokens


# --------------------------------------------------------------------------- number grammar


def _is_integer_token(tok: _Tok) -> bool:
    return tok.low.isdigit()


def parse_cardinal(toks: list[_Tok], i: int) -> tuple[int, int] | None:
    """Cardinal number starting at ``toks[i]``: (value, index after it) or None.

    Single digit words in a row ("seven two") are separate numbers, as people say them.
    """
    if i < len(toks) and _is_integer_token(toks[i]):
        return int(toks[i].low), i + 1
    total, current, last, j = 0, 0, "", i
    while j < len(toks):
        word = toks[j].low
        nxt = toks[j + 1].low if j + 1 < len(toks) else ""
        if word in ("a", "an") and not last and nxt in ("hundred", "thousand"):
            current, last = 1, "unit"
        elif word in CARDINAL_VALUES:
            value = CARDINAL_VALUES[word]
            kind = "unit" if value < 10 else "teen" if value < 20 else "tens"
            if last in ("unit", "teen") or (last == "tens" and kind != "unit") or last == "zero":
                break
            if value == 0:
                if last:
                    break
                kind = "zero"
            current, last = current + value, kind
        elif word == "hundred" and last in ("unit", "teen", "tens"):
            current, last = current * 100, "hundred"
        elif word in SCALES and last in ("unit", "teen", "tens", "hundred"):
            total, current, last = total + current * SCALES[word], 0, "scale"
        elif word == "and" and last in ("hundred", "scale") and CARDINAL_VALUES.get(nxt, 0) > 0:
            pass
        else:
            break
        j += 1
    if not last:
        return None
    return total + current, j


def parse_ordinal(toks: list[_Tok], i: int) -> tuple[int, int] | None:
    """Ordinal at ``toks[i]`` ("fifth", "twenty fifth", "25th"): (value, next index)."""
    if i >= len(toks):
        return None
    word = toks[i].low
    written = re.fullmatch(r"([1-9]\d*)(?:st|nd|rd|th)", word)
    if written:
        return int(written[1]), i + 1
    if word in ORDINAL_VALUES:
        return ORDINAL_VALUES[word], i + 1
    if word in CARDINAL_VALUES and CARDINAL_VALUES[word] >= 20 and i + 1 < len(toks):
        unit = ORDINAL_VALUES.get(toks[i + 1].low, 0)
        if 0 < unit < 10:
            return CARDINAL_VALUES[word] + unit, i + 2
    return None


def _ordinal_suffix(n: int) -> str:
    if 10 <= n % 100 <= 20:
        return "th"
    return {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")


# --------------------------------------------------------------------------- phases


_Rule = Callable[[list[_Tok], int], tuple[str, int] | None]


def _rewrite(toks: list[_Tok], rule: _Rule) -> list[_Tok]:
    """Apply ``rule`` left to right; where it matches, replace the span by one token."""
    out: list[_Tok] = []
    i = 0
    while i < len(toks):
        hit = None if toks[i].final else rule(toks, i)
        if hit is None:
            out.append(toks[i])
            i += 1
        else:
            text, i = hit
            out.append(_Tok(low=text.lower(), out=text, final=True))
    return out


def _is_letter_symbol(tok: _Tok) -> bool:
    return (len(tok.low) == 1 and tok.low.isalpha()) or tok.low in _NATO


def _parse_year(toks: list[_Tok], j: int) -> tuple[int, int] | None:
    if j < len(toks) and re.fullmatch(r"\d{4}", toks[j].low):
        return int(toks[j].low), j + 1
    head = CARDINAL_VALUES.get(toks[j].low, 0) if j < len(toks) else 0
    if 10 <= head <= 99 and j + 1 < len(toks):
        nxt = toks[j + 1].low
        if nxt == "hundred":
            return head * 100, j + 2
        if nxt == "oh" and j + 2 < len(toks) and toks[j + 2].low in DIGIT_WORDS[1:]:
            return head * 100 + DIGIT_WORDS.index(toks[j + 2].low), j + 3
        tail = parse_cardinal(toks, j + 1)
        if tail and 10 <= tail[0] <= 99:
            return head * 100 + tail[0], tail[1]
    whole = parse_cardinal(toks, j)
    if whole and 1000 <= whole[0] <= 2999:
        return whole
    return None


def _date_rule(toks: list[_Tok], i: int) -> tuple[str, int] | None:
    """ "march twenty fifth [twenty twenty six]" or "[the] fifth of march [year]"."""
    j = i + 1 if toks[i].low == "the" else i
    ordinal = parse_ordinal(toks, j)
    if ordinal and ordinal[1] + 1 < len(toks) and toks[ordinal[1]].low == "of":
        month_at, day, after = ordinal[1] + 1, ordinal[0], ordinal[1] + 2
        if toks[month_at].low not in _MONTH_NUMBER:
            return None
    elif toks[i].low in _MONTH_NUMBER:
        if i > 0 and (_is_letter_symbol(toks[i - 1]) or toks[i - 1].low in DIGIT_WORDS):
            return None  # "Kilo November three" is part of a spelled code
        month_at = i
        day_hit = parse_ordinal(toks, i + 1) or parse_cardinal(toks, i + 1)
        if day_hit is None or not 1 <= day_hit[0] <= 31:
            return None
        day, after = day_hit
    else:
        return None
    year = _parse_year(toks, after)
    if year is None and after < len(toks) and _symbol(toks[after]) is not None:
        return None  # "November one zero Alpha" is a spelled code, not November 1st
    text = format_date(year[0] if year else None, _MONTH_NUMBER[toks[month_at].low], day)
    if text is None:
        return None
    return text, year[1] if year else after


def _spelled_neighbour(toks: list[_Tok], k: int) -> bool:
    """Is ``toks[k]`` a spelled symbol other than the article/pronoun ("a", "i")?"""
    if not 0 <= k < len(toks) or toks[k].low in _ARTICLE_LETTERS:
        return False
    return _symbol(toks[k]) is not None


def _parse_ampm(toks: list[_Tok], hour_at: int, j: int) -> tuple[str, int] | None:
    if j < len(toks) and toks[j].low in _AMPM:
        return _AMPM[toks[j].low], j + 1
    if j + 1 < len(toks) and toks[j].low in ("a", "p") and toks[j + 1].low == "m":
        # Letter by letter, "A M" next to more spelled symbols belongs to a code
        # ("X one A M" is X1AM); only the bare "one A M" stays a time.
        if _spelled_neighbour(toks, hour_at - 1) or _spelled_neighbour(toks, j + 2):
            return None
        return toks[j].low, j + 2
    return None


def _time_rule(toks: list[_Tok], i: int) -> tuple[str, int] | None:
    """ "four thirty p m", "nine oh five am", "4 pm", "ten o'clock p m"."""
    parts = _time_parts(toks, i)
    if parts is None:
        return None
    hour, minute, ampm, end = parts
    text = format_time(hour, minute, ampm)
    return (text, end) if text else None


def _time_parts(toks: list[_Tok], i: int) -> tuple[int, int, str, int] | None:
    """(hour, minute, "a"/"p", index after) of a 12-hour clock time at ``toks[i]``."""
    word = toks[i].low
    hour = int(word) if word.isdigit() else CARDINAL_VALUES.get(word, -1)
    if not 1 <= hour <= 12:
        return None
    minute, j = 0, i + 1
    if j < len(toks) and toks[j].low in ("o'clock", "oclock"):
        j += 1
    elif j + 1 < len(toks) and toks[j].low == "oh" and toks[j + 1].low in DIGIT_WORDS:
        minute, j = DIGIT_WORDS.index(toks[j + 1].low), j + 2
    elif j < len(toks) and re.fullmatch(r"[0-5]\d", toks[j].low):
        minute, j = int(toks[j].low), j + 1  # written minutes, colon dropped ("4 05 pm")
    else:
        minutes = parse_cardinal(toks, j)
        if minutes and 10 <= minutes[0] <= 59:
            minute, j = minutes
    ampm = _parse_ampm(toks, i, j)
    if ampm is None or minute > 59:
        return None
    return hour, minute, ampm[0], ampm[1]


def _amount_number(toks: list[_Tok], i: int) -> tuple[int, int, int | None] | None:
    if i < len(toks) and re.fullmatch(r"\d+\.\d{2}", toks[i].low):
        whole, frac = toks[i].low.split(".")
        return int(whole), i + 1, int(frac)
    hit = parse_cardinal(toks, i)
    return (hit[0], hit[1], None) if hit else None


def _amount_rule(toks: list[_Tok], i: int) -> tuple[str, int] | None:
    """ "<n> dollars [and <m> cents]" or "<m> cents"."""
    number = _amount_number(toks, i)
    if number is None:
        return None
    value, j, written_cents = number
    unit = toks[j].low if j < len(toks) else ""
    if unit in ("cent", "cents") and value < 100:
        return format_amount(0, value), j + 1
    if unit not in ("dollar", "dollars"):
        return None
    j += 1
    k = j + 1 if j < len(toks) and toks[j].low == "and" else j
    cents = parse_cardinal(toks, k)
    if (
        cents
        and cents[0] < 100
        and cents[1] < len(toks)
        and toks[cents[1]].low in ("cent", "cents")
    ):
        return format_amount(value, cents[0]), cents[1] + 1
    return format_amount(value, written_cents), j


def _symbol(tok: _Tok) -> tuple[str, str] | None:
    """(written symbol, kind) for a token that can be part of a spelled run."""
    low = tok.low
    if len(low) == 1 and low.isalpha():
        return low.upper(), "letter"
    if low in _NATO:
        return low[0].upper(), "nato"
    if low in DIGIT_WORDS:
        return str(DIGIT_WORDS.index(low)), "digit"
    if low == "oh":
        return "0", "oh"
    if low.isdigit():
        return low, "digit"
    return None


def _collect_run(toks: list[_Tok], i: int) -> tuple[list[tuple[str, str, str]], int]:
    run: list[tuple[str, str, str]] = []
    j = i
    while j < len(toks):
        sym = _symbol(toks[j])
        nxt = _symbol(toks[j + 1]) if j + 1 < len(toks) else None
        if sym:
            run.append((sym[0], sym[1], toks[j].low))
            j += 1
        elif run and nxt and toks[j].low in ("dash", "hyphen"):
            j += 1
        elif nxt and toks[j].low in ("double", "triple"):
            repeat = 2 if toks[j].low == "double" else 3
            run.extend([(nxt[0], nxt[1], toks[j + 1].low)] * repeat)
            j += 2
        else:
            break
    return run, j


def _valid_run(run: list[tuple[str, str, str]]) -> bool:
    if len(run) < 2:
        return False
    kinds = [kind for _, kind, _ in run]
    letters = sum(k in ("letter", "nato") for k in kinds)
    articles = sum(kind == "letter" and low in _ARTICLE_LETTERS for _, kind, low in run)
    if "oh" in kinds and "digit" not in kinds and letters - articles < 2:
        return False  # "oh, I see"; among spelled letters "oh" is the letter O
    if "nato" in kinds and letters < 2:
        return False  # "Delta one way" is an airline, not a code
    # Among digits, "a"/"i" are the article and the pronoun ("a two hour wait").
    return not (articles and letters == articles)


def _run_rule(toks: list[_Tok], i: int) -> tuple[str, int] | None:
    """ "Z K three F F W" / "Zulu Kilo three ..." / "seven two nine four" -> one token."""
    run, j = _collect_run(toks, i)
    while run and not _valid_run(run):
        # A trailing article ("... nine four I think") is a word, not a symbol.
        if run[-1][2] in _ARTICLE_LETTERS and len(run) > 2:
            run, j = run[:-1], j - 1
            continue
        return None
    if not run:
        return None
    has_digits = any(kind == "digit" for _, kind, _ in run)
    text = "".join("O" if kind == "oh" and not has_digits else sym for sym, kind, _ in run)
    return text, j


def _number_rule(toks: list[_Tok], i: int) -> tuple[str, int] | None:
    if _is_integer_token(toks[i]):
        return None
    ordinal = parse_ordinal(toks, i)
    # "first" and "second" alone are usually not numbers ("wait a second").
    if ordinal and not (ordinal[1] == i + 1 and toks[i].low in ("first", "second")):
        return f"{ordinal[0]}{_ordinal_suffix(ordinal[0])}", ordinal[1]
    cardinal = parse_cardinal(toks, i)
    if cardinal is None:
        return None
    value, j = cardinal
    if j + 1 < len(toks) and toks[j].low == "point" and toks[j + 1].low in DIGIT_WORDS:
        decimals = ""
        j += 1
        while j < len(toks) and toks[j].low in DIGIT_WORDS:
            decimals += str(DIGIT_WORDS.index(toks[j].low))
            j += 1
        return f"{value}.{decimals}", j
    return str(value), j


_PHASES = (_date_rule, _time_rule, _amount_rule, _run_rule, _number_rule)


def spoken_spans(words: list[str]) -> list[tuple[int, int, str]]:
    """Clock times and spelled codes in a list of words (any case), for the WER normaliser.

    Returns (start, end, canonical) spans, left to right: a 12-hour time becomes "4 30 pm"
    ("four thirty p m", "4 30 pm"), a spelled run that contains a letter becomes one
    upper-case token ("Z K three F F W" -> "ZK3FFW"). Runs of digits alone are not spans:
    number words ("twenty twenty four") are the number normaliser's business.
    """
    toks = [_Tok(low=w.lower(), out=w) for w in words]
    spans: list[tuple[int, int, str]] = []
    i = 0
    while i < len(toks):
        time = _time_parts(toks, i)
        if time is not None:
            hour, minute, ampm, end = time
            clock = f"{hour} {minute} " if minute else f"{hour} "
            spans.append((i, end, clock + ampm + "m"))
            i = end
            continue
        run = _run_rule(toks, i)
        if run is None:
            i += 1
            continue
        text, end = run
        if any(c.isalpha() for c in text):
            spans.append((i, end, text))
        i = max(end, i + 1)
    return spans


# Cached per process: scoring normalises the same texts again and again. Each judge rule
# and metric reads every turn (246 calls per text-mode attempt, 63% repeats; 59% of text
# scoring time, cProfile of 162 EVA attempts), and the speech judges' LM corpora repeat the
# same 1,500 lines in every attempt of a record (40% of an audio attempt's scoring).
@lru_cache(maxsize=1 << 15)
def normalize_spoken(text: str) -> str:
    """Canonical written form of recognised or written text (deterministic, idempotent).

    "Z K three F F W" -> "ZK3FFW"; "twenty five" -> "25"; "one thousand two hundred fifty
    dollars and fifty cents" -> "$1250.50"; "March twenty fifth, twenty twenty six" ->
    "2026-03-25"; "four thirty p m" -> "16:30"; "Hello, THERE" -> "hello there".
    """
    tokens = _tokenize(prepare_written(text))
    for phase in _PHASES:
        tokens = _rewrite(tokens, phase)
    return " ".join(tok.out for tok in tokens)
