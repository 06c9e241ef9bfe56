"""Scenario-DB normalisation, hashing and structural diff (EVA spec section 3)."""

from __future__ import annotations

import hashlib
import json
import math
from typing import Any

# Lists stored under these keys are compared order-independently (spec section 3).
UNORDERED_LIST_KEYS = frozenset(
    {
        "standby_list",
        "notifications",
        "bookings",
        "system_accounts",
        "group_memberships",
        "asset_recoveries",
    }
)


def _sort_key(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def normalize_db(value: Any, key: str | None = None) -> Any:
    """Recursively normalise a DB value so equal states hash equally."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, float):
        if math.isfinite(value) and value.is_integer():
            return int(value)
        return value
    if isinstance(value, str):
        return None if value.strip().lower() in ("none", "null") else value
    if isinstance(value, dict):
        return {k: normalize_db(v, k) for k, v in value.items()}
    if isinstance(value, list | tuple):
        items = [normalize_db(v) for v in value]
        if key in UNORDERED_LIST_KEYS:
            items.sort(key=_sort_key)
        return items
    return value


def canonical_json(db: dict[str, Any]) -> str:
    """The exact string that is hashed: session dropped, normalised, sorted, compact, ASCII."""
    stripped = {k: v for k, v in db.items() if k != "session"}
    return json.dumps(
        normalize_db(stripped),
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=True,
        default=str,
    )


def db_hash(db: dict[str, Any]) -> str:
    """SHA-256 hex digest of a scenario DB as the reference computes it."""
    return hashlib.sha256(canonical_json(db).encode("utf-8")).hexdigest()
