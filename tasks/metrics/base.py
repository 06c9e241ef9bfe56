"""The metric framework (EVA spec 4.1): metric descriptions, the registry and score helpers.

A metric is one module with one decorated compute function::

    INFO = MetricInfo(name="my_metric", category="diagnostic", version="v0.1")

    @register_metric(INFO)
    def compute(ctx: MetricContext, judges: Any) -> MetricScore:
        return make_score(INFO, 1.0, details={...})

The decorator wraps the function in a :class:`Metric` whose :meth:`Metric.compute` stamps
every score it returns with the metric's version, pass@k threshold and ``passed`` flag, so
a metric author cannot forget them. :data:`METRICS` imports every module of the package
on first use (and loads the ``evaflow.metrics`` entry points of installed plug-ins), and
the default set is derived from the registrations, so registering is all a new metric
has to do.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from evaflow_core.registry import Registry
from tasks.records import MetricScore

if TYPE_CHECKING:
    from tasks.metrics.context import MetricContext

Category = Literal["accuracy", "experience", "diagnostic", "validation"]
MetricKind = Literal["code", "judge"]
PipelineType = Literal["cascade", "audio_llm", "s2s"]

ALL_PIPELINES: tuple[str, ...] = ("cascade", "audio_llm", "s2s")
# Comparisons against thresholds use this absolute tolerance everywhere (spec 5.1).
TOLERANCE = 1e-9

# The EVA composites' members, in the order their pass flags are checked (spec 5.1); the
# thresholds are each metric's own (``MetricInfo.threshold``), read by ``tasks.aggregate``.
EVA_A: tuple[str, ...] = ("task_completion", "faithfulness", "agent_speech_fidelity")
EVA_X: tuple[str, ...] = ("conversation_progression", "turn_taking", "conciseness")
_CATEGORY_ORDER = {"accuracy": 0, "experience": 1, "diagnostic": 2, "validation": 3}
# Old runs name the gate metric differently (spec 4.1).
METRIC_ALIASES: dict[str, str] = {"conversation_finished": "conversation_valid_end"}


class MetricInfo(BaseModel):
    """Frozen description of one metric: what it measures and how it is judged a pass."""

    model_config = ConfigDict(frozen=True)

    name: str = Field(description="Registry name, also the MetricScore name")
    category: Category = Field(description="accuracy (EVA-A), experience (EVA-X), ...")
    version: str = Field(description="Metric version; bump on any behaviour change")
    threshold: float = Field(default=0.5, description="pass@k threshold on the normalized score")
    exclude_from_pass_at_k: bool = Field(default=False, description="Diagnostic-only metric")
    exclude_from_default: bool = Field(
        default=False, description="Not run unless asked for (validation gates, opt-in metrics)"
    )
    higher_is_better: bool = Field(default=True, description="Direction of the raw score")
    kind: MetricKind = Field(default="code", description="code = deterministic, judge = judged")
    pipelines: tuple[str, ...] = Field(
        default=ALL_PIPELINES, description="Pipeline types the metric supports"
    )
    description: str = Field(default="", description="One line for humans and reports")


MetricFn = Callable[["MetricContext", Any], MetricScore]


@dataclass(frozen=True)
class Metric:
    """A registered metric: its description plus its compute function."""

    info: MetricInfo
    fn: MetricFn

    def supports(self, pipeline: str) -> bool:
        return pipeline in self.info.pipelines

    def compute(self, ctx: MetricContext, judges: Any = None) -> MetricScore:
        """Run the metric and stamp the result (may raise; the runner catches)."""
        return stamp(self.fn(ctx, judges), self.info)


# Every module of the package is a metric, except the framework's own.
METRICS: Registry[Metric] = Registry(
    "metric",
    package="tasks.metrics",
    entry_point_group="evaflow.metrics",
    skip=("base", "context", "runner", "wer_normalize"),
    tolerate_import_errors=True,
)


def register_metric(info: MetricInfo) -> Callable[[MetricFn], MetricFn]:
    """Decorator registering ``fn`` as the compute function of ``info.name``."""

    def decorator(fn: MetricFn) -> MetricFn:
        METRICS.add(info.name, Metric(info=info, fn=fn))
        return fn

    return decorator


def default_metrics() -> tuple[str, ...]:
    """Spec 4.1 default set, derived from the registrations: every metric not marked
    ``exclude_from_default``; EVA-A in composite order, then by category and name."""
    chosen = [m.info for _, m in METRICS.items() if not m.info.exclude_from_default]

    def rank(info: MetricInfo) -> tuple[int, int, str]:
        in_a = EVA_A.index(info.name) if info.name in EVA_A else len(EVA_A)
        return (_CATEGORY_ORDER[info.category], in_a, info.name)

    return tuple(info.name for info in sorted(chosen, key=rank))


def validation_metrics() -> tuple[str, ...]:
    """The validation gates (category ``validation``), by name."""
    return tuple(n for n, m in METRICS.items() if m.info.category == "validation")


def __getattr__(name: str) -> tuple[str, ...]:
    # Derived on access, so a metric registered by a plug-in is in the set.
    if name == "DEFAULT_METRICS":
        return default_metrics()
    if name == "VALIDATION_METRICS":
        return validation_metrics()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def canonical_metric_name(name: str) -> str:
    return METRIC_ALIASES.get(name, name)


def get_metric(name: str) -> Metric:
    """Look a metric up by name or legacy alias; unknown names list the valid ones."""
    return METRICS.get(canonical_metric_name(name))


def at_least(value: float, threshold: float) -> bool:
    """``value >= threshold`` with the spec's absolute tolerance."""
    return value > threshold or math.isclose(value, threshold, rel_tol=0.0, abs_tol=TOLERANCE)


def passed_flag(score: MetricScore, threshold: float) -> bool | None:
    """Pass/fail on the normalized score; None when there is nothing to judge."""
    if score.error is not None or score.skipped or score.normalized_score is None:
        return None
    return at_least(score.normalized_score, threshold)


def stamp(score: MetricScore, info: MetricInfo) -> MetricScore:
    """Stamp version, threshold and passed on a score (sub-metrics get the version)."""
    subs = {
        key: sub.model_copy(update={"version": info.version})
        for key, sub in score.sub_metrics.items()
    }
    return score.model_copy(
        update={
            "name": info.name,
            "version": info.version,
            "threshold": info.threshold,
            "passed": passed_flag(score, info.threshold),
            "sub_metrics": subs,
        }
    )


def round_or_none(value: float | None, digits: int = 4) -> float | None:
    return None if value is None else round(float(value), digits)


def make_score(
    info: MetricInfo,
    score: float | None,
    normalized: float | None | Literal["same"] = "same",
    *,
    details: dict[str, Any] | None = None,
    sub_metrics: dict[str, MetricScore] | None = None,
    judge: str | None = None,
    prompt_hash: str | None = None,
) -> MetricScore:
    """A successful score; ``normalized`` defaults to the raw score (most code metrics)."""
    norm = score if normalized == "same" else normalized
    return stamp(
        MetricScore(
            name=info.name,
            score=score,
            normalized_score=norm,
            details=details or {},
            sub_metrics=sub_metrics or {},
            judge=judge,
            prompt_hash=prompt_hash,
        ),
        info,
    )


def error_score(
    info: MetricInfo, message: str, details: dict[str, Any] | None = None
) -> MetricScore:
    """A failed computation: score 0 with the error text (spec 4.1 runner rule)."""
    return stamp(
        MetricScore(
            name=info.name, score=0.0, normalized_score=0.0, error=message, details=details or {}
        ),
        info,
    )


def skipped_score(
    info: MetricInfo, reason: str, details: dict[str, Any] | None = None
) -> MetricScore:
    """No applicable data (distinct from an error): score and normalized score are null."""
    return stamp(
        MetricScore(
            name=info.name,
            score=None,
            normalized_score=None,
            skipped=True,
            details={"reason": reason, **(details or {})},
        ),
        info,
    )


def sub_score(
    parent: MetricInfo | str,
    key: str,
    score: float | None,
    normalized: float | None | Literal["same"] = "same",
    details: dict[str, Any] | None = None,
) -> MetricScore:
    """A sub-metric named ``<parent>.<key>`` (raw counts/ms pass ``normalized=None``)."""
    parent_name = parent.name if isinstance(parent, MetricInfo) else parent
    return MetricScore(
        name=f"{parent_name}.{key}",
        score=score,
        normalized_score=score if normalized == "same" else normalized,
        details=details or {},
    )
