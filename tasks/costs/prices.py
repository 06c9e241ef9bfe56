"""The price table: one row per (provider, model, unit), its version, and where it comes from.

The shipped table is ``tasks/costs/prices.yaml``; a run config's ``prices:`` field or the
``EVAFLOW_PRICES`` environment variable names a file of the same shape that replaces it.
A run stores the table it ran with (``runs.price_table_json``, ``runs.price_table_version``),
so its costs do not move when the shipped table is updated later.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

PRICES_ENV = "EVAFLOW_PRICES"
DEFAULT_PRICES = Path(__file__).with_name("prices.yaml")

Unit = Literal[
    "input_token",
    "cached_input_token",
    "output_token",
    "audio_input_token",
    "cached_audio_input_token",
    "audio_output_token",
    "stt_second",
    "tts_character",
    "tts_second",
    "call_second",
]
UNITS: tuple[str, ...] = Unit.__args__  # type: ignore[attr-defined]


class PriceError(ValueError):
    """A price table that cannot be read; the message names the file."""


class PriceRow(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    provider: str = Field(description="Provider as the catalogue names it (openai, deepgram...)")
    model: str = Field(description="Model id as the usage reports it")
    unit: Unit
    price: float = Field(ge=0, description="Price of `per` units, as published")
    per: float = Field(default=1.0, gt=0, description="How many units `price` buys")
    currency: str = "USD"
    as_of: str = Field(description="Date the price was read (YYYY-MM-DD)")
    source: str = Field(description="The provider's pricing page")
    via: str | None = Field(default=None, description="Where it was read, if not the source")

    @property
    def unit_price(self) -> float:
        return self.price / self.per


class PriceTable(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    version: int = 1
    currency: str = "USD"
    prices: list[PriceRow] = Field(default_factory=list)
    path: str = Field(default="", exclude=True, description="File it was read from")

    def rows_json(self) -> str:
        """The rows as stored with a run (JSON list, one object per row, unit_price added)."""
        return json.dumps(
            [{**r.model_dump(), "unit_price": r.unit_price} for r in self.prices], sort_keys=True
        )

    @property
    def as_of(self) -> str:
        """The newest as_of of any row (empty for an empty table)."""
        return max((r.as_of for r in self.prices), default="")

    @property
    def version_id(self) -> str:
        """Content hash of the rows plus the newest as_of: ``sha256:<12 hex>@<date>``."""
        digest = hashlib.sha256(self.rows_json().encode()).hexdigest()[:12]
        return f"sha256:{digest}@{self.as_of}"


def load_prices(path: str | Path | None = None) -> PriceTable:
    """The price table at ``path``, else at ``$EVAFLOW_PRICES``, else the shipped one."""
    chosen = Path(path or os.environ.get(PRICES_ENV) or DEFAULT_PRICES).expanduser()
    try:
        raw: Any = yaml.safe_load(chosen.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise PriceError(f"price table {chosen}: cannot read it ({exc})") from exc
    if not isinstance(raw, dict):
        raise PriceError(f"price table {chosen}: expected a mapping with a `prices:` list")
    try:
        table = PriceTable.model_validate({**raw, "path": str(chosen)})
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise PriceError(f"price table {chosen}: {where}: {first['msg']}") from exc
    keys = [(r.provider, r.model, r.unit) for r in table.prices]
    duplicates = sorted({k for k in keys if keys.count(k) > 1})
    if duplicates:
        raise PriceError(f"price table {chosen}: duplicate rows {duplicates}")
    return table
