"""What the caller knows: the record's ``information_required`` as flat items. The
scripted caller, its persona layer and the callers' hang-up rules all read it."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from tasks.simulate.dialogue.cues import label_words


class InfoItem(BaseModel):
    label: list[str] = Field(description="Words of the information key")
    value: str


def information_items(goal: dict[str, Any]) -> list[InfoItem]:
    """Flattened ``information_required``: one item per scalar value."""
    items: list[InfoItem] = []

    def walk(prefix: str, value: Any) -> None:
        if isinstance(value, dict):
            for k, v in value.items():
                walk(f"{prefix} {k}", v)
        elif isinstance(value, list):
            return
        elif value not in (None, ""):
            items.append(InfoItem(label=label_words(prefix), value=str(value)))

    walk("", goal.get("information_required") or {})
    return items
