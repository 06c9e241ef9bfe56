"""The judge interface: one task in, one verdict out, whatever the back-end.

A judged metric builds a :class:`JudgeTask` (its name and a typed input model), asks the
configured judge for a :class:`JudgeVerdict` and scores the verdict with the spec's rules
(``tasks.judges.scoring``). Both back-ends answer in the same JSON shape, the one the
reference's LLM prompts ask for, so a metric scores an offline verdict and an LLM verdict
with the same code: the offline judges serialise their structured answer to JSON text and
it goes through the same parser.

Back-ends are registered in :data:`JUDGES` as factories ``(params) -> Judge``: a module
of this package (or an ``evaflow.judges`` entry point) with ``@JUDGES.register(name)``.
This module imports no back-end; the registry finds them on first lookup.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field, SerializeAsAny

from evaflow_core.registry import Registry

DEFAULT_JUDGE = "offline"


def prompt_hash(template: str) -> str:
    """First 12 hex digits of SHA-256 of an *unrendered* prompt template (spec 4.1)."""
    return hashlib.sha256(template.encode("utf-8")).hexdigest()[:12]


class JudgeConfig(BaseModel):
    """Which judge back-end to use and its parameters (same shape as ``tasks.config.JudgeSpec``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    name: str = Field(default=DEFAULT_JUDGE, description="Judge back-end: offline or llm")
    params: dict[str, Any] = Field(default_factory=dict, description="Back-end parameters")


class TokenUsage(BaseModel):
    """One model call made by an LLM judge, stored with the metric details."""

    model: str = Field(description="The provider's model (what the price table names)")
    model_name: str | None = Field(default=None, description="The model list's name for it")
    input_tokens: int = Field(default=0, description="usage.prompt_tokens of the response")
    output_tokens: int = Field(default=0, description="usage.completion_tokens of the response")
    input_audio_tokens: int = Field(default=0, description="Audio tokens inside input_tokens")
    cached_input_tokens: int = Field(default=0, description="Cached tokens inside input_tokens")
    cost_usd: float | None = Field(
        default=None,
        description="LiteLLM's cost of the call (None: model not in its map); the costs "
        "view uses it when the price table lacks the model",
    )
    attempts: int = Field(default=1, description="Logical calls (LiteLLM's retries inside)")
    latency_s: float = Field(default=0.0, description="Wall time of the call incl. retries")
    timestamp: str = Field(default="", description="UTC ISO time the call finished")


class AudioInput(BaseModel):
    """Audio a speech-fidelity judge listens to: one track and where each turn lies in it."""

    path: Path = Field(description="WAV file of the speaker's track (call time starts at 0)")
    segments: dict[int, list[tuple[float, float]]] = Field(
        default_factory=dict, description="turn_id -> speech segments (seconds from call start)"
    )


class JudgeInput(BaseModel):
    """Base class of the per-metric judge inputs (see ``tasks.judges.inputs``)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)


class JudgeTask(BaseModel):
    """What a metric asks a judge: the metric name selects the rubric, ``inputs`` the evidence."""

    metric: str = Field(description="Judged metric name, e.g. 'faithfulness'")
    inputs: SerializeAsAny[JudgeInput] = Field(description="Metric-specific input model")
    audio: AudioInput | None = Field(default=None, description="Track for audio judges")


class JudgeVerdict(BaseModel):
    """A judge's answer. ``raw_text`` holds JSON in the shape the metric's rubric asks for."""

    judge: str = Field(description="Back-end name, stored on the MetricScore")
    metric: str
    raw_text: str = Field(default="", description="The judge's response text (JSON inside)")
    error: str | None = Field(default=None, description="Why no usable response was obtained")
    skipped: str | None = Field(
        default=None, description="Why the judge could not look at all (e.g. no audio)"
    )
    prompt_hash: str | None = Field(default=None, description="Hash of the rubric/prompt used")
    scope: str | None = Field(
        default=None, description="Offline judges: what the rules check and what they cannot"
    )
    model: str | None = Field(default=None, description="LLM model name, if any")
    usage: list[TokenUsage] = Field(default_factory=list, description="One entry per LLM call")
    extra: dict[str, Any] = Field(default_factory=dict, description="Back-end specific details")


@runtime_checkable
class Judge(Protocol):
    """A judge back-end. Implementations never raise for a bad response: they return it."""

    name: str

    def evaluate(self, task: JudgeTask) -> JudgeVerdict: ...

    def prompt_hash(self, metric: str) -> str: ...


JudgeFactory = Callable[[Mapping[str, Any]], Judge]

JUDGES: Registry[JudgeFactory] = Registry(
    "judge", package="tasks.judges", entry_point_group="evaflow.judges"
)


def make_judge(spec: Any = None) -> Judge:
    """Build a judge from a name, a ``JudgeConfig``/``JudgeSpec``-like object or a dict.

    ``None`` gives the default offline judge; an object that already is a judge is returned.
    Unknown names raise ``UnknownNameError`` listing the registered back-ends.
    """
    if spec is None:
        return JUDGES.get(DEFAULT_JUDGE)({})
    if isinstance(spec, Judge):
        return spec
    if isinstance(spec, str):
        return JUDGES.get(spec)({})
    if isinstance(spec, Mapping):
        spec = JudgeConfig.model_validate(spec)
    name = getattr(spec, "name", None)
    if not isinstance(name, str):
        raise TypeError(f"cannot build a judge from {type(spec).__name__}: expected name + params")
    return JUDGES.get(name)(dict(getattr(spec, "params", {}) or {}))


def resolve_judge(judges: Any, metric: str) -> Judge:
    """The judge a metric should use. ``judges`` may be None (offline), a name, a spec,
    a judge, or a mapping ``metric -> any of those`` with an optional ``"default"`` key."""
    if isinstance(judges, Mapping) and "name" not in judges:
        chosen = judges.get(metric, judges.get("default"))
        return make_judge(chosen)
    return make_judge(judges)
