"""Which model judges each metric with ``--judge llm``: the reference's assignments.

EVA spec 4.1 ("Judge models / parameters"): text judges ``gpt-5.2`` (``max_tokens``
100000, ``service_tier="flex"``); faithfulness ``us.anthropic.claude-opus-4-6-v1``
(``max_tokens`` 100000, no flex tier); user behavioural fidelity ``gpt-5.2-medium``
(GPT-5.2 at medium reasoning); the audio judges ``gemini-3-flash-preview``
(``temperature`` 0, ``max_tokens`` 40000, ``reasoning_effort="minimal"``). The names are
``model_name`` entries of the user's model list (spec note 29), so an EVA user's list
serves unchanged. Each is overridden per metric by ``--judge-model METRIC=NAME`` over
``judge.params.models`` (run config) over the ``JUDGE_MODEL`` environment variable, which
names the model of every text judge and never of an audio judge (spec 4.1: "metric config
judge_model > env JUDGE_MODEL > class default"; audio judges change only by config).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

ENV_JUDGE_MODEL = "JUDGE_MODEL"
TEXT_MODEL = "gpt-5.2"
FAITHFULNESS_MODEL = "us.anthropic.claude-opus-4-6-v1"
BEHAVIOR_MODEL = "gpt-5.2-medium"
AUDIO_MODEL = "gemini-3-flash-preview"

AUDIO_METRICS = ("agent_speech_fidelity", "user_speech_fidelity", "tts_fidelity")
TEXT_METRICS = (
    "faithfulness",
    "conversation_progression",
    "conciseness",
    "speakability",
    "transcription_accuracy_key_entities",
    "user_behavioral_fidelity",
)
JUDGED_METRICS = TEXT_METRICS + AUDIO_METRICS

DEFAULT_MODELS: dict[str, str] = {
    **dict.fromkeys(TEXT_METRICS, TEXT_MODEL),
    "faithfulness": FAITHFULNESS_MODEL,
    "user_behavioral_fidelity": BEHAVIOR_MODEL,
    **dict.fromkeys(AUDIO_METRICS, AUDIO_MODEL),
}

TEXT_PARAMS: dict[str, Any] = {"max_tokens": 100000, "service_tier": "flex"}
FAITHFULNESS_PARAMS: dict[str, Any] = {"max_tokens": 100000}
AUDIO_PARAMS: dict[str, Any] = {
    "temperature": 0.0,
    "max_tokens": 40000,
    "reasoning_effort": "minimal",
}


def judge_model(metric: str, overrides: Mapping[str, str] | None = None) -> str:
    """The model name judging ``metric``: the override, else the reference's default."""
    chosen = (overrides or {}).get(metric)
    return chosen or DEFAULT_MODELS.get(metric, TEXT_MODEL)


def env_assignments(environ: Mapping[str, str]) -> dict[str, str]:
    """``JUDGE_MODEL``'s assignments: every text judge, no audio judge (spec 4.1)."""
    name = environ.get(ENV_JUDGE_MODEL, "").strip()
    return dict.fromkeys(TEXT_METRICS, name) if name else {}


def with_env_models(params: Mapping[str, Any], environ: Mapping[str, str]) -> dict[str, Any]:
    """An llm judge's ``params`` with ``JUDGE_MODEL`` assigning every text judge that its
    ``models`` (the command line's and the run config's assignments) leave unassigned.
    Endpoint params (``base_url``) name their models themselves and are returned as is."""
    env = env_assignments(environ)
    if not env or "base_url" in params:
        return dict(params)
    models = params.get("models")
    return {**params, "models": {**env, **(models if isinstance(models, Mapping) else {})}}


def default_params(metric: str) -> dict[str, Any]:
    """The reference's request parameters of ``metric``'s judge (copied: callers merge)."""
    if metric in AUDIO_METRICS:
        return dict(AUDIO_PARAMS)
    if metric == "faithfulness":
        return dict(FAITHFULNESS_PARAMS)
    return dict(TEXT_PARAMS)


def unknown_metrics(overrides: Mapping[str, str]) -> list[str]:
    return [m for m in overrides if m not in JUDGED_METRICS]


def parse_assignments(items: list[str]) -> dict[str, str]:
    """``["faithfulness=gpt-5.2", ...]`` -> ``{metric: model}``; ValueError names the item
    that is not ``METRIC=MODEL`` or the metric that has no judge."""
    found: dict[str, str] = {}
    for item in items:
        metric, sep, model = (part.strip() for part in item.partition("="))
        if not sep or not metric or not model:
            raise ValueError(f"--judge-model {item!r}: expected METRIC=MODEL_NAME")
        found[metric] = model
    bad = unknown_metrics(found)
    if bad:
        raise ValueError(
            f"--judge-model: {', '.join(bad)} has no LLM judge; judged metrics: "
            + ", ".join(JUDGED_METRICS)
        )
    return found
