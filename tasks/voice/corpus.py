"""Training sentences for the domain language model.

``domain_corpus`` turns the scenarios' own utterances into templates: every key entity
(code, ID, date, amount, ...) is re-drawn at random with the same *shape* and the sentence
is rendered the way a caller says it (``tasks.spoken.render_spoken``, spelled letters or
NATO words). The LM thus learns how codes, dates and amounts sound in context without
memorising the values the benchmark will test. Bare entity answers ("Z K three F F W") are
added as well, since callers often answer with the value alone.

Caveat: the non-entity words of the templates are the scenarios' own, so WER measured on
those same sentences is optimistic.
"""

from __future__ import annotations

import datetime as dt
import functools
import random
import re
import string
from pathlib import Path

from tasks.spoken import CodeStyle, Entity, extract_entities, normalize_spoken, render_spoken
from tasks.spoken.words import MONTHS

_BARE_SHARE = 0.3  # fraction of sentences that are a bare entity answer


def _redraw_symbols(text: str, rng: random.Random) -> str:
    """Same length and letter/digit pattern, new symbols; separators kept."""
    out = []
    for char in text:
        if char.isdigit():
            out.append(rng.choice(string.digits))
        elif char.isalpha():
            pool = string.ascii_uppercase if char.isupper() else string.ascii_lowercase
            out.append(rng.choice(pool))
        else:
            out.append(char)
    return "".join(out)


def _redraw_date(text: str, rng: random.Random) -> str:
    day = dt.date(1950, 1, 1) + dt.timedelta(days=rng.randrange(0, 365 * 80))
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
        return day.isoformat()
    if re.fullmatch(r"\d{1,2}/\d{1,2}/\d{4}", text):
        return f"{day.month}/{day.day}/{day.year}"
    with_year = re.search(r"\d{4}\b", text) is not None
    return f"{MONTHS[day.month - 1].capitalize()} {day.day}" + (
        f", {day.year}" if with_year else ""
    )


def _redraw_amount(text: str, rng: random.Random) -> str:
    digits = len(re.sub(r"\D", "", text.split(".")[0])) or 1
    dollars = rng.randrange(1, 10 ** min(digits + 1, 7))
    cents = rng.choice([0, 0, rng.randrange(1, 100)])
    return f"${dollars:,}" + (f".{cents:02d}" if cents else "")


def _redraw_time(rng: random.Random) -> str:
    hour, minute = rng.randrange(6, 22), rng.choice([0, 0, 15, 30, 45, rng.randrange(60)])
    suffix = "AM" if hour < 12 else "PM"
    return f"{hour % 12 or 12}:{minute:02d} {suffix}"


def redraw(entity: Entity, rng: random.Random) -> str:
    """A new written value of the same type and shape as ``entity``, never its own value
    (small value spaces such as times would otherwise hit it by chance)."""
    for _ in range(50):
        value = _redraw_once(entity, rng)
        if entity.type == "email" or normalize_spoken(value) != entity.value:
            return value
    raise ValueError(f"cannot draw a value different from {entity.text!r}")


def _redraw_once(entity: Entity, rng: random.Random) -> str:
    if entity.type == "date":
        return _redraw_date(entity.text, rng)
    if entity.type == "amount":
        return _redraw_amount(entity.text, rng)
    if entity.type == "time":
        return _redraw_time(rng)
    if entity.type == "email":
        return entity.text
    if entity.type in ("employee_id", "ticket_id", "flight_number"):
        prefix = re.match(r"[A-Z]+-?", entity.text)
        head = prefix.group(0) if prefix else ""
        return head + _redraw_symbols(entity.text[len(head) :], rng)
    return _redraw_symbols(entity.text, rng)


def _fill(template: str, entities: list[Entity], rng: random.Random) -> str:
    pieces, cursor = [], 0
    for entity in entities:
        pieces += [template[cursor : entity.start], redraw(entity, rng)]
        cursor = entity.end
    return "".join(pieces) + template[cursor:]


def domain_corpus(texts: list[str], n: int, seed: int) -> list[str]:
    """``n`` spoken-form training sentences drawn from ``texts`` (deterministic in ``seed``)."""
    if n <= 0:
        raise ValueError(f"domain_corpus: n must be positive, got {n}")
    templates = [(t, extract_entities(t)) for t in texts if t and t.strip()]
    if not templates:
        raise ValueError("domain_corpus: no non-empty texts to build templates from")
    bare = [e for _, entities in templates for e in entities if e.type != "email"]
    rng = random.Random(seed)
    out: list[str] = []
    for _ in range(n):
        style: CodeStyle = rng.choice(["letters", "nato"])
        if bare and rng.random() < _BARE_SHARE:
            out.append(render_spoken(redraw(rng.choice(bare), rng), style))
            continue
        template, entities = rng.choice(templates)
        out.append(render_spoken(_fill(template, entities, rng), style))
    return out


# ----------------------------------------------------------------------------- generic names

# Latin-script person providers of Faker: a generic name list of a few thousand names from
# many origins, none of them taken from a scenario.
NAME_LOCALES = ("en_US", "en_GB", "en_IN", "es_ES", "it_IT", "de_DE", "fr_FR", "pt_BR")


@functools.lru_cache(maxsize=1)
def _cmudict_words() -> frozenset[str]:
    from pocketsphinx import get_model_path

    path = Path(get_model_path("en-us/cmudict-en-us.dict"))
    with path.open(encoding="utf-8") as f:
        return frozenset(line.split(" ", 1)[0].split("(")[0] for line in f)


@functools.lru_cache(maxsize=1)
def generic_names() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(first names, surnames) of Faker's ``NAME_LOCALES`` that cmudict can pronounce
    (a word the dictionary lacks is unreachable for the decoder anyway)."""
    import importlib

    known = _cmudict_words()
    firsts: dict[str, None] = {}
    lasts: dict[str, None] = {}
    for locale in NAME_LOCALES:
        provider = importlib.import_module(f"faker.providers.person.{locale}").Provider
        for pool, names in ((firsts, provider.first_names), (lasts, provider.last_names)):
            for name in names:
                if re.fullmatch(r"[A-Z][a-z]+", name) and name.lower() in known:
                    pool[name] = None
    return tuple(firsts), tuple(lasts)


# Every template says both names, so each name of the list occurs in the corpus.
NAME_TEMPLATES = [
    "My name is {first} {last}.",
    "{first} {last}.",
    "This is {first} {last} calling.",
    "It's {first} {last}, last name {last}.",
    "My first name is {first} and my last name is {last}.",
    "The booking is under {first} {last}.",
]


def name_sentences(seed: int) -> list[str]:
    """Name answers over the whole generic name list: every surname and first name occurs."""
    firsts, lasts = generic_names()
    rng = random.Random(seed)
    out = []
    for i in range(max(len(firsts), len(lasts))):
        first, last = firsts[i % len(firsts)], lasts[i % len(lasts)]
        out.append(rng.choice(NAME_TEMPLATES).format(first=first, last=last))
    return out
