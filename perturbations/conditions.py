"""Named conditions = which perturbations a trial's caller goes through.

Built-ins in ``CONDITIONS``: ``clean``, ``accent``, ``noise``, ``accent+noise``,
``connection``, and EVA's own settings (spec 8.2, ``perturbations.eva_acoustics``):
``eva-static``, ``eva-cafe``, ``eva-street``, ``eva-babble``, ``eva-connection``; the
caller behaviours (``perturbations.behavior``): ``barge-in`` and EVA's personas
``aggressive_impatient``, ``elderly_slow``, ``forgetful_disorganized``. Any
registered names joined by ``+`` are those conditions together (``combine``), e.g.
``eva-static+eva-connection``. Users add combinations in YAML (``load_conditions_yaml``)::

    conditions:
      - name: street-10db
        noise: {source: street, snr_db: 10}
      - name: rp-bad-line
        accent: {voices: [en-gb-x-rp]}
        connection: {packet_loss: {loss_rate: 0.1}, codec: {bitrate_kbps: 8}}

Further keys name registered perturbation kinds (``perturbations.kinds``), e.g.
``volume: {db: -12}``; a spec without them dumps exactly as before they existed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    ValidationError,
    model_serializer,
    model_validator,
)

from evaflow_core.registry import Registry
from perturbations import eva_acoustics  # registers the eva_noise / eva_connection kinds
from perturbations.accent import AccentParams
from perturbations.behavior import BARGE_IN, PERSONAS, InteractionParams, PersonaParams
from perturbations.connection import ConnectionParams
from perturbations.kinds import PERTURBATIONS, PerturbationKind
from perturbations.noise import NoiseParams


class ConditionSpec(BaseModel):
    """One named perturbation condition; every axis is optional (None = untouched).

    Keys beyond the fields are registered perturbation kinds, validated by their own params
    model and kept as extras (so existing specs serialise unchanged)."""

    # Extras are allowed only as registered kinds (checked in ``_registered_kinds``).
    model_config = ConfigDict(frozen=True, extra="allow")

    name: str = Field(min_length=1, description="Condition name, e.g. 'accent+noise'.")
    version: str = Field(default="1", description="Bump when the condition's meaning changes.")
    description: str = Field(default="", description="One line for reports.")
    accent: AccentParams | None = Field(default=None, description="Caller voice draw.")
    noise: NoiseParams | None = Field(default=None, description="Background noise.")
    connection: ConnectionParams | None = Field(default=None, description="Bad phone line.")
    interaction: InteractionParams | None = Field(
        default=None, description="Barge-in and backchannels (perturbations.behavior)."
    )
    persona: PersonaParams | None = Field(
        default=None, description="One of EVA's behaviour personas (perturbations.behavior)."
    )

    @model_validator(mode="before")
    @classmethod
    def _registered_kinds(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        out = dict(data)
        for key in set(data) - set(cls.model_fields):
            if key not in PERTURBATIONS:
                raise ValueError(
                    f"unknown field {key!r}: neither a condition field nor a perturbation"
                    f" kind (registered kinds: {', '.join(PERTURBATIONS.names()) or 'none'})"
                )
            if data[key] is not None:
                out[key] = PERTURBATIONS.get(key).params.model_validate(data[key])
        return out

    @model_serializer(mode="wrap")
    def _behaviour_only_when_set(self, handler: SerializerFunctionWrapHandler) -> Any:
        # The behaviour axes came later: a spec without them dumps exactly as before.
        out = handler(self)
        for axis in ("interaction", "persona"):
            if isinstance(out, dict) and out.get(axis, 0) is None:
                del out[axis]
        return out

    def kinds(self) -> list[tuple[PerturbationKind, BaseModel]]:
        """The registered kinds this condition uses with their params, in chain order."""
        extra = self.model_extra or {}
        used = [(PERTURBATIONS.get(k), p) for k, p in extra.items() if p is not None]
        return sorted(used, key=lambda pair: pair[0].order)

    @property
    def is_clean(self) -> bool:
        """Nothing changes the caller's audio or behaviour."""
        builtin = self.accent is None and self.noise is None and self.connection is None
        behaves = self.interaction is not None or self.persona is not None
        return builtin and not behaves and not self.kinds()


class ConditionRegistry(Registry[ConditionSpec]):
    """Registered conditions; an unregistered ``a+b`` name is its registered parts together
    (``combine``), e.g. ``eva-cafe+eva-connection`` or ``accent+noise+eva-connection``."""

    def _parts(self, name: object) -> list[ConditionSpec] | None:
        """The registered parts of an unregistered ``a+b`` name (None: not such a name)."""
        if not isinstance(name, str) or "+" not in name or Registry.__contains__(self, name):
            return None
        parts = name.split("+")
        if not all(Registry.__contains__(self, p) for p in parts):
            return None
        return [Registry.get(self, p) for p in parts]

    def get(self, name: str) -> ConditionSpec:
        parts = self._parts(name)
        # Two parts setting one axis fail here with a message naming the axis.
        return combine(*parts) if parts else super().get(name)

    def __contains__(self, name: object) -> bool:
        if super().__contains__(name):
            return True
        try:
            parts = self._parts(name)
            return parts is not None and combine(*parts) is not None
        except ValueError:
            return False


CONDITIONS: Registry[ConditionSpec] = ConditionRegistry(
    "condition", entry_point_group="evaflow.conditions"
)

_DEFAULT_NOISE = NoiseParams(source="cafe", snr_db=15.0)
_BUILTIN = [
    ConditionSpec(name="clean", description="No perturbation."),
    ConditionSpec(name="accent", accent=AccentParams(), description="English accent voices."),
    ConditionSpec(name="noise", noise=_DEFAULT_NOISE, description="Cafe noise at 15 dB SNR."),
    ConditionSpec(
        name="accent+noise",
        accent=AccentParams(),
        noise=_DEFAULT_NOISE,
        description="Accent voices in cafe noise at 15 dB SNR.",
    ),
    ConditionSpec(
        name="connection",
        connection=ConnectionParams(),
        description="Band limit, gain swings, 3% packet loss, jitter dropouts.",
    ),
]
for _spec in _BUILTIN:
    CONDITIONS.add(_spec.name, _spec)


def combine(*specs: ConditionSpec) -> ConditionSpec:
    """Conditions applied together, named ``a+b``; two parts may not set the same axis."""
    merged: dict[str, Any] = {}
    for spec in specs:
        axes = spec.model_dump(exclude={"name", "version", "description"}, exclude_none=True)
        for key in axes:
            if key in merged:
                raise ValueError(f"conditions {[s.name for s in specs]} both set {key!r}")
            merged[key] = getattr(spec, key)
    description = "; ".join(s.description.rstrip(".") for s in specs if s.description)
    name, version = "+".join(s.name for s in specs), "+".join(s.version for s in specs)
    return ConditionSpec.model_validate(
        {"name": name, "version": version, "description": description, **merged}
    )


def _eva_noise(name: str, source: str, stands_for: str) -> ConditionSpec:
    params = eva_acoustics.EvaNoiseParams(source=source)
    rule = (
        f"EVA's noise rule at {params.snr_db:g} dB SNR per {params.chunk_ms} ms chunk"
        " (ambient at 3000/32768 x 10^(-snr/20))"
    )
    return ConditionSpec.model_validate(
        {"name": name, "eva_noise": params, "description": f"{rule} {stands_for}."}
    )


_EVA = [
    _eva_noise(
        "eva-static", eva_acoustics.STATIC, "with its Gaussian bad_connection_static, exact"
    ),
    _eva_noise(
        "eva-cafe", "cafe", "over our generated cafe noise (coffee_shop.wav is not shipped)"
    ),
    _eva_noise(
        "eva-street", "street", "over our generated street noise (nyc_street.wav is not shipped)"
    ),
    _eva_noise(
        "eva-babble", "babble", "over our TTS babble (a crowd, e.g. airport_gate; not shipped)"
    ),
    ConditionSpec.model_validate(
        {
            "name": "eva-connection",
            "eva_connection": eva_acoustics.EvaConnectionParams(),
            "description": "EVA's connection: G.711 mu-law round trip, 3% of 20 ms segments"
            " zeroed, gain U[0.5, 1.2] per 100 ms chunk, clip",
        }
    ),
]
# Looked up here, not in CONDITIONS: a lookup would load plug-ins mid-import.
_NAMED = {s.name: s for s in _BUILTIN + _EVA}
for _parts in [("eva-static", "eva-connection"), ("accent", "eva-connection")]:
    _EVA.append(combine(*(_NAMED[p] for p in _parts)))
for _spec in _EVA:
    CONDITIONS.add(_spec.name, _spec)

_BEHAVIOR = [
    ConditionSpec(
        name="barge-in",
        interaction=BARGE_IN,
        description="The caller cuts into about half of the long agent turns and backchannels"
        " every 3-6 s of agent speech",
    ),
    *(
        ConditionSpec(
            name=name,
            persona=persona,
            interaction=interaction,
            description=f"EVA's {name} behaviour persona",
        )
        for name, (persona, interaction) in PERSONAS.items()
    ),
]
for _spec in _BEHAVIOR:
    CONDITIONS.add(_spec.name, _spec)


def get_condition(name: str) -> ConditionSpec:
    """A registered condition (unknown names list the valid ones)."""
    return CONDITIONS.get(name)


def _describe(error: ValidationError) -> str:
    parts = []
    for item in error.errors():
        field = ".".join(str(x) for x in item["loc"]) or "(root)"
        parts.append(f"field '{field}': {item['msg']} (got {item.get('input')!r})")
    return "; ".join(parts)


def load_conditions_yaml(path: Path | str, register: bool = False) -> list[ConditionSpec]:
    """Conditions from a YAML file (a ``conditions:`` list, a bare list, or a mapping of
    name -> spec). ``register=True`` also adds them to ``CONDITIONS``.

    Errors name the file, the entry and the field.
    """
    path = Path(path)
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise FileNotFoundError(f"conditions file not found: {path}") from None
    except yaml.YAMLError as exc:
        raise ValueError(f"{path}: not valid YAML: {exc}") from None
    if isinstance(raw, dict) and "conditions" in raw:
        raw = raw["conditions"]
    if isinstance(raw, dict):
        raw = [{"name": name, **(body or {})} for name, body in raw.items()]
    if not isinstance(raw, list) or not raw:
        raise ValueError(f"{path}: expected a non-empty list of conditions under 'conditions'")
    specs: list[ConditionSpec] = []
    for i, entry in enumerate(raw):
        label = entry.get("name", "?") if isinstance(entry, dict) else "?"
        if not isinstance(entry, dict):
            raise ValueError(f"{path}: conditions[{i}] must be a mapping, got {entry!r}")
        try:
            specs.append(ConditionSpec.model_validate(entry))
        except ValidationError as exc:
            raise ValueError(f"{path}: conditions[{i}] ({label}): {_describe(exc)}") from None
    names = [s.name for s in specs]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ValueError(f"{path}: duplicate condition names {duplicates}")
    if register:
        for spec in specs:
            CONDITIONS.add(spec.name, spec)
    return specs
