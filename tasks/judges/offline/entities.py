"""Key entities in what a caller said, and whether another text kept them.

Built on ``tasks.spoken`` (``normalize_spoken`` turns spoken forms into one canonical
written form, ``extract_entities`` finds codes, dates, times, amounts, ... in it). This
module adds what a caller's *spoken* text needs on top: phonetic spelling ("Y as in
Yankee"), spoken emails, flight numbers after an airline word, seats and gates, clock
times without am/pm after a time preposition, durations, phone digit runs, and proper
nouns (names, places, airlines) taken from capitalisation of the original text.

Matching is by canonical value: two mentions are the same entity when their canonical
forms are equal, or one is contained in the other as a token run (``same_entity``).
"""

from __future__ import annotations

import re
from difflib import SequenceMatcher
from functools import lru_cache

from pydantic import BaseModel, Field

from tasks.judges.offline.dates import MONTH_YEAR, fix_month_year, month_day_forms
from tasks.spoken import extract_entities, normalize_spoken
from tasks.spoken.words import CARDINAL_VALUES, MONTHS, NATO, ORDINAL_VALUES

_NATO = set(NATO)
_WEEKDAYS = {"monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"}
# Capitalised words that are not identifiers: greetings and fillers at any position,
# clock/time-zone words, calendar words (dates are found separately), service classes and
# loyalty tiers (policy vocabulary, not something to transcribe exactly), spelling words.
_NOT_PROPER_WORDS = """
    i i'm i'd i'll i've hi hello hey yes yeah no ok okay please thanks thank goodbye
    bye sorry great good fine sure am pm a.m p.m est edt pst pdt cst cdt mst mdt hst
    utc gmt eastern pacific central mountain time standard economy premium basic main
    cabin business first class coach gold silver platinum elite member status as in the
    and or of to for
"""
_NOT_PROPER = (
    set(_NOT_PROPER_WORDS.split())
    | _WEEKDAYS
    | set(MONTHS)
    | _NATO
    | set(CARDINAL_VALUES)
    | set(ORDINAL_VALUES)
)
_AIRLINE_WORDS = r"(?:skyway|sky way|southwest|delta|united|american|jetblue|alaska|sw|sk|flight)"
_TIME_PREP = r"(?:at|by|before|after|around|until|till|the|from|leaving|departing|arriving)"
_SEAT_NATO = r"(?:alpha|alfa|bravo|charlie|delta|echo|foxtrot|golf|hotel|india|juliett?|kilo)"
_TIME_NOUNS = r"(?:flight|booking|departure|arrival|reservation|nonstop|standby|connection)"
_DURATION_UNITS = r"(?:hours?|minutes?|days?|business days|weeks?|months?)"


class CallerEntity(BaseModel):
    """An entity found in a caller's text."""

    type: str = Field(description="code, name, place, airport_code, flight_number, time, ...")
    value: str = Field(description="The entity as it appears in the text (readable)")
    canonical: str = Field(description="Canonical form used for matching")


_PHONETIC = re.compile(r"\b([\w']+)\s+(?:as|like)\s+in\s+[A-Za-z][\w'-]*")
_PHONETIC_RUN = re.compile(
    r"(?:[\w']+\s+(?:as|like)\s+in\s+[A-Za-z][\w'-]*)(?:\s*,?\s*(?:and\s+)?"
    r"[\w']+\s+(?:as|like)\s+in\s+[A-Za-z][\w'-]*)*"
)


def strip_phonetic(text: str) -> str:
    """'Y as in Yankee, T as in Tango' -> 'Y T': the spelling word only confirms a symbol,
    so a phonetic run reads as the symbols it spells."""
    return _PHONETIC_RUN.sub(lambda m: " ".join(_PHONETIC.findall(m.group(0))), text)


_SPOKEN_EMAIL = re.compile(
    r"\b([a-z0-9]+(?:\s+(?:dot|underscore)\s+[a-z0-9]+)*)\s+at\s+"
    r"([a-z0-9]+(?:\s+dot\s+[a-z0-9]+)*\s+dot\s+(?:com|org|net|edu|gov|io|co|us|uk|ca|info|biz))\b",
    re.IGNORECASE,
)


# "jane.doe at gmail.com": a written local part and domain with a spoken "at".
_WRITTEN_DOMAIN = re.compile(r"\b([A-Za-z][\w.+-]*)\s+at\s+([A-Za-z][\w-]*(?:\.[A-Za-z]{2,})+)\b")


def spoken_email_to_written(text: str) -> str:
    def repl(match: re.Match[str]) -> str:
        local = re.sub(r"\s+dot\s+", ".", match.group(1), flags=re.IGNORECASE)
        local = re.sub(r"\s+underscore\s+", "_", local, flags=re.IGNORECASE)
        domain = re.sub(r"\s+dot\s+", ".", match.group(2), flags=re.IGNORECASE)
        return f"{local}@{domain}".lower()

    text = _WRITTEN_DOMAIN.sub(lambda m: f"{m.group(1)}@{m.group(2)}", text)
    return _SPOKEN_EMAIL.sub(repl, text)


def prepare(text: str) -> str:
    """Caller text with phonetic spelling and spoken emails resolved, pauses removed."""
    # A dash between clauses starts a new thought, like a semicolon.
    text = text.replace("\u2019", "'").replace("\u2014", "; ").replace("\u2013", "; ")
    text = re.sub(r"\.{2,}|…", " ", text)
    return spoken_email_to_written(strip_phonetic(text))


@lru_cache(maxsize=8192)
def spoken_norm(text: str) -> str:
    """``normalize_spoken`` of the prepared text, lower-case, with month-year dates repaired
    ("july 20 23" -> "july 2023"); ISO dates and "$" amounts are kept."""
    norm = normalize_spoken(prepare(text)).lower()
    return fix_month_year(re.sub(r"(?<=\d),(?=\d{3})", "", norm))


@lru_cache(maxsize=8192)
def canonical(text: str) -> str:
    """Canonical form of a mention: normalised, lower-case, punctuation-free tokens (emails
    kept whole). Cached: policies and tool results are canonicalised again and again."""
    norm = spoken_norm(text)
    return " ".join(_canonical_token(tok) for tok in norm.split() if _canonical_token(tok))


def written_canonical(text: str) -> str:
    """``canonical`` for machine-written text (tool results): no spoken-number parsing, so
    it is cheap on large JSON payloads; tokens are cleaned the same way."""
    return " ".join(t for t in (_canonical_token(tok) for tok in text.lower().split()) if t)


_NOT_TOKEN = re.compile(r"[^\w.:]")
_LOOSE_DOT = re.compile(r"(?<!\d)\.|\.(?!\d)|:(?!\d)")
_PADDED_HOUR = re.compile(r"\b0(\d)(?=:)")


def _canonical_token(token: str) -> str:
    if token.isalnum():
        return token
    if "@" in token:
        return token.strip(".,;:!?")
    token = _LOOSE_DOT.sub(" ", _NOT_TOKEN.sub(" ", token))
    token = _PADDED_HOUR.sub(r"\1", token)  # 08:55 == 8:55
    return " ".join(token.split())


@lru_cache(maxsize=8192)
def compact(text: str) -> str:
    """Alphanumerics only: 'SW 418' == 'sw418', 'I-810-KI' == 'i810ki'."""
    return re.sub(r"[^a-z0-9@]", "", canonical(text))


def alternatives(label: str) -> list[str]:
    """A labelled value plus forms given in parentheses or after ' / ' or '='."""
    parts = [re.sub(r"\([^)]*\)", " ", label)]
    parts += re.findall(r"\(([^)]*)\)", label)
    out: list[str] = []
    for part in parts:
        out.extend(p for p in re.split(r"\s+/\s+|=", part) if p.strip())
    return out or [label]


def _contains_tokens(small: list[str], big: list[str]) -> bool:
    n = len(small)
    return any(big[i : i + n] == small for i in range(len(big) - n + 1))


def same_entity(a: str, b: str) -> bool:
    """Lenient equality of two mentions: equal canonical/compact forms, or one's tokens a
    contiguous run of the other's (shorter side must have >= 2 characters)."""
    for x in alternatives(a):
        for y in alternatives(b):
            cx, cy = compact(x), compact(y)
            if cx and cx == cy:
                return True
            tx, ty = canonical(x).split(), canonical(y).split()
            short, long_ = (tx, ty) if len(cx) <= len(cy) else (ty, tx)
            if short and len("".join(short)) >= 2 and _contains_tokens(short, long_):
                return True
    return False


def _add(found: list[CallerEntity], kind: str, value: str) -> None:
    canon = canonical(value)
    if not canon or any(_repeats(canon, e.canonical) for e in found):
        return
    found.append(CallerEntity(type=kind, value=value.strip(" ,.;:"), canonical=canon))


def _repeats(new: str, old: str) -> bool:
    """``new`` adds nothing to ``old``: same value, a token run inside it, or a fragment
    of an identifier already found (a code spelled again in part)."""
    cn, co = compact(new), compact(old)
    if cn == co or _contains_tokens(new.split(), old.split()):
        return True
    return len(cn) >= 3 and cn in co and any(c.isdigit() for c in co)


def _normalized_rules(norm: str, found: list[CallerEntity]) -> None:
    """Entity patterns on the normalised text (lower-case words, canonical numbers)."""
    for m in re.finditer(rf"\b{_AIRLINE_WORDS}\s+(\d{{2,4}})\b", norm, re.IGNORECASE):
        _add(found, "flight_number", m.group(0))
    # "SkyWay two fifty-five" normalises like a clock time ("skyway 2 55").
    for m in re.finditer(rf"\b({_AIRLINE_WORDS})\s+(\d{{1,2}})\s([0-9]\d)\b(?!:)", norm, re.I):
        _add(found, "flight_number", f"{m.group(1)} {m.group(2)}{m.group(3)}")
    for m in re.finditer(r"\b[A-Z]{2}\s?\d{2,4}\b", norm):
        _add(found, "flight_number", m.group(0))
    for m in re.finditer(
        r"\bgate\s+(?:is\s+|will be\s+|now\s+|changed to\s+)?([a-z])\s?(\d{1,3})\b", norm, re.I
    ):
        _add(found, "gate", f"{m.group(1)}{m.group(2)}".upper())
    for m in re.finditer(
        rf"\bseat\s+(?:(?:is|number|to|in)\s+)?((?:\d\s?){{1,2}})\s?([a-k]|{_SEAT_NATO})\b",
        norm,
        re.I,
    ):
        _add(found, "seat", f"{m.group(1).replace(' ', '')}{m.group(2)[0].upper()}")
    for m in re.finditer(r"\b(\d{1,2})([A-K])\b", norm):
        _add(found, "seat", m.group(0))
    for m in re.finditer(rf"(?<![\d.])(\d+(?:\.\d+)?)\s+(?:(?:1|2)\s+)?{_DURATION_UNITS}\b", norm):
        _add(found, "duration", m.group(0))
    for m in MONTH_YEAR.finditer(norm.lower()):
        _add(found, "month_year", m.group(0))
    for m in re.finditer(r"\b(\d{1,2})\s+o'?clock\b", norm):
        _add(found, "time", m.group(0))
    for m in re.finditer(rf"\b{_TIME_PREP}\s+(\d{{1,2}})\s([0-5]\d)\b", norm):
        _add(found, "time", f"{m.group(1)}:{m.group(2)}")
    for m in re.finditer(rf"\b(\d{{1,2}})\s([0-5]\d)\s+{_TIME_NOUNS}\b", norm):
        _add(found, "time", f"{m.group(1)}:{m.group(2)}")
    for m in re.finditer(r"\b\d{7,15}\b", norm):
        _add(found, "phone", m.group(0))
    for m in re.finditer(r"\b[A-Z][A-Z0-9]{1,14}\b", norm):
        token = m.group(0)
        if token.isalpha() and len(token) < 3:
            continue  # two letters are as often a word read as letters ("a hotel") as a code
        kind = "code" if any(c.isdigit() for c in token) or len(token) >= 5 else "spelled"
        _add(found, kind, token)


# A capitalised word of >= 2 letters ("O'Hare", "McDonald"), or initials like "L.A.";
# a lone capital letter is spelling, not a name.
_PROPER = re.compile(r"[A-Z](?:'[A-Z][a-z]+|[a-zA-Z]+(?:'[A-Z][a-z]+)?|\.(?:[A-Z]\.)+)\.?")


def proper_nouns(text: str) -> list[str]:
    """Capitalised word runs that name something (people, places, companies, airports).

    A sentence-initial word only counts if the same word is capitalised mid-sentence
    somewhere in the text (otherwise it is just the start of a sentence). A lone capital
    letter only continues a run ("Chicago O Hare", "John F Kennedy")."""
    mid_sentence: set[str] = set()
    runs: list[tuple[list[str], bool]] = []
    for sentence in re.split(r"(?<=[.!?;:])\s+|\n+", text):
        words = sentence.split()
        run: list[str] = []
        initial = False
        for i, raw in enumerate(words):
            word = raw.strip('"()[],;:!?')
            core = word.rstrip(".")
            nxt = words[i + 1].strip('"()[],;:!?') if i + 1 < len(words) else ""
            proper = bool(core) and _PROPER.fullmatch(word) and core.lower() not in _NOT_PROPER
            initial_letter = bool(run) and len(core) == 1 and core.isupper() and _PROPER.match(nxt)
            if proper or initial_letter:
                if i > 0:
                    mid_sentence.add(core)
                initial = initial if run else i == 0
                run.append(core)
            if run and (not (proper or initial_letter) or raw.endswith(",")):
                runs.append((run, initial))
                run = []
        if run:
            runs.append((run, initial))
    return [
        " ".join(run)
        for run, initial in runs
        if not initial or len(run) > 1 or run[0] in mid_sentence
    ]


def clauses(text: str) -> list[str]:
    """Sentences and comma-separated clauses: a spelled code never spans a comma, and
    normalising clauses apart keeps a code and its phonetic repetition from fusing (and a
    year before a colon from fusing with the clock time after it: "twenty twenty-six: ten
    AM")."""
    return [c for c in re.split(r"(?<=[.!?;:])\s+|,\s+|\n+", text) if c.strip()]


def find_entities(text: str) -> list[CallerEntity]:
    """Key entities in a caller's (spoken or written) text, most specific first."""
    prepared = prepare(text)
    found: list[CallerEntity] = []
    for m in re.finditer(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+", prepared):
        _add(found, "email", m.group(0).rstrip("."))
    for clause in clauses(prepared):
        norm = fix_month_year(normalize_spoken(clause))
        _normalized_rules(norm, found)
        for entity in extract_entities(norm):
            _add(found, entity.type, entity.text)
    for m in re.finditer(r"\b([A-Z]{2,4})\b|\b([A-Z]\.){2,}", prepared):
        token = m.group(0)
        if token.lower().strip(".") not in _NOT_PROPER and not token.isdigit():
            _add(found, "airport_code" if len(token) == 3 else "code", token)
    for name in proper_nouns(prepared):
        _add(found, "name", name)
    return found


@lru_cache(maxsize=4096)
def text_forms(text: str) -> str:
    """Every canonical reading of a text that entity extraction may have used: the whole
    text, each clause on its own (a date split from its year by a comma reads as
    'september 28', whole it reads as '1991 09 28') and 'month day' for each ISO date."""
    prepared = prepare(text)
    parts = [canonical(text), *(canonical(c) for c in clauses(prepared))]
    parts.append(month_day_forms(spoken_norm(text)))
    return " | ".join(p for p in parts if p)


def heard_as(entity: CallerEntity, transcript: str) -> tuple[bool, str]:
    """Whether ``transcript`` kept the entity, and the closest transcribed form.

    Kept = the canonical token run appears in a canonical reading of the transcript
    (:func:`text_forms`), or (for codes and other identifiers of >= 4 symbols) the compact
    value appears in the compact transcript."""
    heard = text_forms(transcript)
    tokens = heard.split()
    # A clock time reads as "20:20" or "20 20" depending on the words around it.
    forms = time_variants(entity.canonical) if entity.type == "time" else [entity.canonical]
    for form in forms:
        want = form.split()
        if want and _contains_tokens(want, tokens):
            return True, " ".join(want)
    target = compact(entity.value)
    identifier = entity.type in ("code", "spelled", "flight_number", "phone", "email")
    if identifier and len(target) >= 4 and target in re.sub(r"[^a-z0-9@]", "", heard):
        return True, entity.value
    return False, closest_span(entity.canonical, canonical(transcript))


def closest_span(value: str, heard: str) -> str:
    """The token window of ``heard`` most similar to ``value`` (for the report)."""
    tokens = heard.split()
    n = max(1, len(value.split()))
    best, best_ratio = "", 0.0
    for size in {max(1, n - 1), n, n + 1}:
        for i in range(max(0, len(tokens) - size + 1)):
            window = " ".join(tokens[i : i + size])
            ratio = SequenceMatcher(None, value, window).ratio()
            if ratio > best_ratio:
                best, best_ratio = window, ratio
    return best if best_ratio >= 0.5 else ""


def time_variants(canon: str) -> list[str]:
    """'14:30' -> 14:30, 2:30, '2 30'; "1 o clock" -> 1:00, 13:00 (12/24-hour forms)."""
    m = re.search(r"(\d{1,2})(?::(\d{2})| o clock)", canon)
    if not m:
        return [canon]
    hour, minute = int(m.group(1)), m.group(2) or "00"
    hours = {hour, hour % 12 or 12, (hour % 12) + 12}
    return [f"{h}:{minute}" for h in hours] + [f"{h} {minute}" for h in hours] + [canon]
