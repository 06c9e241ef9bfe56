"""The ``offline`` judge (default): deterministic rules, no network, no model.

Each judged metric has one rule function registered in :data:`OFFLINE_RULES`; it receives
the same :class:`~tasks.judges.base.JudgeTask` an LLM would and answers with the JSON
shape that metric's rubric asks for, so scoring is shared with the ``llm`` judge. Every
rule states what it checks and what it cannot (``scope``), and that statement is stored
with the score (``details["judge_scope"]``) and hashed as the judge's "prompt".
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from pydantic import BaseModel, Field

from evaflow_core.registry import Registry
from tasks.judges.base import JUDGES, JudgeTask, JudgeVerdict, prompt_hash

RULES_VERSION = "offline-v3"  # v3: fitted parameters, cross-validated (issue 31)


class OfflineAnswer(BaseModel):
    """What a rule returns: the rubric-shaped answer, or why it could not judge."""

    output: Any = Field(default=None, description="JSON-serialisable answer in the rubric shape")
    skipped: str | None = Field(default=None, description="Reason the rule could not look")
    error: str | None = None
    extra: dict[str, Any] = Field(default_factory=dict, description="Evidence for details")


class OfflineRule(BaseModel):
    """A registered rule: its scope statement and the function."""

    model_config = {"arbitrary_types_allowed": True}
    metric: str
    scope: str = Field(description="What the rule checks and what it cannot, in plain words")
    fn: Callable[[JudgeTask, Mapping[str, Any]], OfflineAnswer]

    @property
    def hash(self) -> str:
        return prompt_hash(f"{RULES_VERSION}\n{self.metric}\n{self.scope}")


# Rules are the modules of this package that use ``@offline_rule``; the others are helpers.
OFFLINE_RULES: Registry[OfflineRule] = Registry(
    "offline judge rule", package=__name__, entry_point_group="evaflow.judge_rules"
)


def offline_rule(
    metric: str, scope: str
) -> Callable[[Callable[[JudgeTask, Mapping[str, Any]], OfflineAnswer]], Any]:
    """Decorator registering ``fn(task, params) -> OfflineAnswer`` as the rule of ``metric``."""

    def decorator(fn: Callable[[JudgeTask, Mapping[str, Any]], OfflineAnswer]) -> Any:
        OFFLINE_RULES.add(metric, OfflineRule(metric=metric, scope=" ".join(scope.split()), fn=fn))
        return fn

    return decorator


class OfflineJudge:
    """Deterministic judge. ``params`` are passed to every rule (e.g. a recogniser spec, or
    ``{metric: {field: value}}`` overriding a rule's fitted parameters)."""

    name = "offline"

    def __init__(self, params: Mapping[str, Any] | None = None) -> None:
        self.params = dict(params or {})

    def prompt_hash(self, metric: str) -> str:
        """The rule's hash; with parameter overrides for ``metric`` (``params[metric]``, see
        ``tasks.judges.offline.params``) a different one, so the scores are told apart."""
        rule_hash = OFFLINE_RULES.get(metric).hash
        overrides = self.params.get(metric)
        if not overrides:
            return rule_hash
        return prompt_hash(f"{rule_hash}\n{json.dumps(overrides, sort_keys=True, default=str)}")

    def evaluate(self, task: JudgeTask) -> JudgeVerdict:
        rule = OFFLINE_RULES.get(task.metric)
        verdict = JudgeVerdict(
            judge=self.name,
            metric=task.metric,
            prompt_hash=self.prompt_hash(task.metric),
            scope=rule.scope,
        )
        try:
            answer = rule.fn(task, self.params)
        except Exception as exc:  # noqa: BLE001 - a rule bug is a scored error, not a crash
            verdict.error = f"offline rule {task.metric} failed: {type(exc).__name__}: {exc}"
            return verdict
        verdict.skipped, verdict.error, verdict.extra = answer.skipped, answer.error, answer.extra
        if answer.output is not None:
            verdict.raw_text = json.dumps(answer.output, ensure_ascii=False, default=str)
        return verdict


@JUDGES.register("offline")
def make_offline_judge(params: Mapping[str, Any]) -> OfflineJudge:
    return OfflineJudge(params)
