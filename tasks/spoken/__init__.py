"""How people say entities on the phone, and how to read recognised speech back.

Public API (import from ``tasks.spoken``):

* speaking: ``speak_code``, ``speak_digits``, ``speak_amount``, ``speak_date``,
  ``speak_time``, ``speak_number``, ``speak_ordinal``, ``speak_year``, ``speak_email``,
  ``render_spoken`` (whole sentences);
* reading back: ``normalize_spoken`` (canonical written form, inverse of ``speak_*``);
* entities in written text: ``Entity``, ``extract_entities``, ``speak_entity``,
  ``entity_heard``.
"""

from tasks.spoken.entities import (
    Entity,
    EntityType,
    entity_heard,
    extract_entities,
    render_spoken,
    speak_entity,
)
from tasks.spoken.normalize import normalize_spoken
from tasks.spoken.speak import (
    CodeStyle,
    speak_amount,
    speak_code,
    speak_date,
    speak_digits,
    speak_email,
    speak_number,
    speak_ordinal,
    speak_time,
    speak_year,
)

__all__ = [
    "CodeStyle",
    "Entity",
    "EntityType",
    "entity_heard",
    "extract_entities",
    "normalize_spoken",
    "render_spoken",
    "speak_amount",
    "speak_code",
    "speak_date",
    "speak_digits",
    "speak_email",
    "speak_entity",
    "speak_number",
    "speak_ordinal",
    "speak_time",
    "speak_year",
]
