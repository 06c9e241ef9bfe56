"""Placeholder resolution and ITSM alias injection (EVA spec sections 1.5-1.7)."""

from __future__ import annotations

import copy
import json
import re
import unicodedata
from pathlib import Path
from typing import Any

LOC_TOKEN = re.compile(r"<LOC:([^>]+)>")


class PlaceholderError(ValueError):
    """A record lacks the identity values needed to resolve its placeholders."""


def _identity(record: dict[str, Any], lang: str) -> dict[str, str | None]:
    native_all = record.get("culture_overrides") or {}
    if lang not in native_all:
        raise PlaceholderError(
            f"record {record.get('id')!r}: culture_overrides has no entry for language {lang!r}"
        )
    native = native_all[lang] or {}
    roman = (record.get("romanized_culture_overrides") or {}).get(lang) or native
    companion = native.get("companion") or {}
    roman_companion = roman.get("companion") or companion

    def low(value: Any) -> str | None:
        return str(value).lower() if value not in (None, "") else None

    return {
        "<FIRST_NAME_ROMANIZED>": low(roman.get("first_name") or native.get("first_name")),
        "<LAST_NAME_ROMANIZED>": low(roman.get("last_name") or native.get("last_name")),
        "<FIRST_NAME>": native.get("first_name"),
        "<LAST_NAME>": native.get("last_name"),
        "<PHONE>": native.get("phone") or None,
        "<COMPANION_FIRST_NAME_ROMANIZED>": low(
            roman_companion.get("first_name") if isinstance(roman_companion, dict) else None
        ),
        "<COMPANION_FIRST_NAME>": companion.get("first_name")
        if isinstance(companion, dict)
        else None,
    }


def _substitute(text: str, values: dict[str, str | None], loc: dict[str, str] | None) -> str:
    # Order matters: romanized tokens contain the native tokens' text as a prefix.
    for token, value in values.items():
        if value is not None and token in text:
            text = text.replace(token, value)
    if loc is not None:
        text = LOC_TOKEN.sub(lambda m: loc.get(m.group(1), m.group(1)), text)
    return text


def _walk(value: Any, values: dict[str, str | None], loc: dict[str, str] | None) -> Any:
    if isinstance(value, str):
        return _substitute(value, values, loc)
    if isinstance(value, dict):
        return {k: _walk(v, values, loc) for k, v in value.items()}
    if isinstance(value, list):
        return [_walk(v, values, loc) for v in value]
    return value


def resolve_value(value: Any, record: dict[str, Any], lang: str = "en") -> Any:
    """Deep copy of ``value`` with name/phone/companion placeholders replaced (no LOC)."""
    return _walk(copy.deepcopy(value), _identity(record, lang), None)


def resolve_user_goal(
    record: dict[str, Any], lang: str = "en", aliases: dict[str, dict[str, Any]] | None = None
) -> dict[str, Any]:
    """Resolved user goal including ``starting_utterance`` for ``lang``."""
    utterances = record.get("starting_utterances") or {}
    if lang not in utterances:
        raise PlaceholderError(
            f"record {record.get('id')!r}: starting_utterances has no entry for language {lang!r}"
        )
    goal = copy.deepcopy(record.get("user_goal") or {})
    goal["starting_utterance"] = utterances[lang]
    loc = _loc_map(aliases or {}, lang)
    return _walk(goal, _identity(record, lang), loc)


def resolve_localized(
    value: Any,
    record: dict[str, Any],
    lang: str = "en",
    aliases: dict[str, dict[str, Any]] | None = None,
) -> Any:
    """Deep copy of ``value`` resolved like a user goal (names, phone, companion and LOC)."""
    return _walk(copy.deepcopy(value), _identity(record, lang), _loc_map(aliases or {}, lang))


def _loc_map(aliases: dict[str, dict[str, Any]], lang: str) -> dict[str, str]:
    if lang == "en":
        return {}
    out: dict[str, str] = {}
    for name, entry in aliases.items():
        translated = (entry.get("translations") or {}).get(lang) or []
        if translated:
            out[name] = translated[0]
    return out


def load_aliases(aliases_dir: Path | None) -> dict[str, dict[str, Any]]:
    """Alias table keyed by canonical name; empty when the directory does not exist."""
    if aliases_dir is None or not aliases_dir.is_dir():
        return {}
    table: dict[str, dict[str, Any]] = {}
    for path in sorted(aliases_dir.glob("*.json")):
        try:
            entry = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}: invalid JSON ({exc})") from exc
        if not isinstance(entry, dict) or "name" not in entry:
            raise ValueError(f"{path}: alias file needs a 'name' field")
        table[entry["name"]] = entry
    return table


def alias_list(entry: dict[str, Any], lang: str) -> list[str]:
    merged = list(entry.get("base") or []) + list((entry.get("translations") or {}).get(lang) or [])
    return list(dict.fromkeys(merged))


def inject_aliases(db: Any, aliases: dict[str, dict[str, Any]], lang: str = "en") -> Any:
    """Set ``name_aliases`` on every dict whose ``name`` is a canonical alias name (in place)."""
    if isinstance(db, dict):
        name = db.get("name")
        if isinstance(name, str) and name in aliases:
            db["name_aliases"] = alias_list(aliases[name], lang)
        for value in db.values():
            inject_aliases(value, aliases, lang)
    elif isinstance(db, list):
        for value in db:
            inject_aliases(value, aliases, lang)
    return db


def normalize_name(text: str) -> str:
    """Lower-case, drop Unicode punctuation (P*) and symbols (S*), trim (alias matching)."""
    kept = "".join(ch for ch in text.lower() if unicodedata.category(ch)[0] not in "PS")
    return kept.strip()


def current_date_of(current_date_time: str) -> str:
    """The date part (before the first space) of a record's ``current_date_time``."""
    return current_date_time.split(" ", 1)[0]


def resolve_scenario_db(
    raw_db: dict[str, Any],
    record: dict[str, Any],
    lang: str = "en",
    aliases: dict[str, dict[str, Any]] | None = None,
    set_current_date: bool = True,
) -> dict[str, Any]:
    """Initial scenario DB ready for the tool engine: placeholders, aliases, ``_current_date``."""
    db = resolve_value(raw_db, record, lang)
    if aliases:
        inject_aliases(db, aliases, lang)
    if set_current_date and record.get("current_date_time"):
        db["_current_date"] = current_date_of(record["current_date_time"])
    return db
