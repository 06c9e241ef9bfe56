"""Before any judging: the llm judge can call every model it is assigned.

Shared by ``evaflow run`` (through :mod:`tasks.config_checks`), ``evaflow score`` and
``evaflow judges validate``: there is a model list (or one endpoint), each judge's model
is in it, and each deployment's key variables are set. One line per missing model or
variable, naming the judges that need it. Also how those commands build the llm judge's
parameters from their options (:func:`llm_judge_params`).

Pure functions over parameters and an environment mapping; no Prefect, no LiteLLM.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tasks.config import BenchmarkConfig

NO_LIST = (
    "judge llm has no model list: set EVA_MODEL_LIST (JSON), pass --model-list PATH "
    "or put model_list in the run config"
)


def judged_metrics(config: BenchmarkConfig) -> list[str]:
    """The run's metrics an LLM judge answers: validation always, the rest when scoring;
    the audio judges only in audio mode (text-mode attempts have no audio to judge)."""
    import tasks.metrics  # noqa: F401 - importing the package registers every metric
    from tasks.judges.models import AUDIO_METRICS, JUDGED_METRICS
    from tasks.metrics.base import DEFAULT_METRICS, VALIDATION_METRICS, canonical_metric_name

    chosen = list(config.metrics) if config.metrics is not None else list(DEFAULT_METRICS)
    names = [*VALIDATION_METRICS, *(chosen if config.score else [])]
    wanted = {canonical_metric_name(n) for n in names}
    if config.mode != "audio":
        wanted -= set(AUDIO_METRICS)
    return [m for m in JUDGED_METRICS if m in wanted]


def llm_judge_problems(
    raw_params: Mapping[str, Any],
    metrics: Iterable[str],
    environ: Mapping[str, str] | None = None,
) -> list[str]:
    """What stops the llm judge with ``raw_params`` from judging ``metrics``."""
    from tasks.judges.llm import parse_judge_params
    from tasks.judges.models import ENV_JUDGE_MODEL, judge_model
    from tasks.model_list import first_deployment, missing_variables, model_names

    if "base_url" in raw_params:  # one endpoint: nothing to look up
        return []
    try:
        params = parse_judge_params(raw_params)
    except ValueError as exc:  # names the fields, never quotes a value (it may be a key)
        return [f"field 'judge.params': {exc}"]
    if not params.model_list:
        return [NO_LIST]
    env = os.environ if environ is None else environ
    absent: dict[str, list[str]] = {}
    unset: dict[str, list[str]] = {}
    for metric in metrics:
        name = judge_model(metric, params.models)
        deployment = first_deployment(params.model_list, name)
        if deployment is None:
            absent.setdefault(name, []).append(metric)
            continue
        for variable in missing_variables(deployment, env):
            unset.setdefault(variable, []).append(f"{metric} ({name})")
    valid = ", ".join(model_names(params.model_list))
    from_env = env.get(ENV_JUDGE_MODEL, "").strip()
    return [
        *(
            f"judge {', '.join(metrics)}: model {name!r}"
            + (f" (from {ENV_JUDGE_MODEL})" if name == from_env else "")
            + f" is not in the model list (its model_name values: {valid}); add it or choose"
            f" one with --judge-model {metrics[0]}=NAME"
            for name, metrics in absent.items()
        ),
        *(
            f"judge {', '.join(judges)}: environment variable {variable} is not set"
            for variable, judges in unset.items()
        ),
    ]


def judge_problems(config: BenchmarkConfig, environ: Mapping[str, str] | None = None) -> list[str]:
    """:func:`llm_judge_problems` of a run's judge over the metrics the run judges."""
    if config.judge.name != "llm":
        return []
    return llm_judge_problems(config.judge.params, judged_metrics(config), environ)


def llm_judge_params(
    base: Mapping[str, Any],
    model_list: list[Any] | None,
    models: Mapping[str, str],
    environ: Mapping[str, str],
) -> dict[str, Any]:
    """The llm judge's params for a command: ``base`` (e.g. a stored run's), the command's
    ``--model-list`` over its list, else ``$EVA_MODEL_LIST`` when it has no list and no
    endpoint; ``--judge-model`` assignments over its own, ``$JUDGE_MODEL`` for the text
    judges neither assigns. Literal keys are lifted into the process environment
    (:mod:`tasks.model_list`)."""
    from tasks.judges.models import with_env_models
    from tasks.model_list import env_model_list, lift_into_environment

    params = dict(base)
    if model_list is None and not {"model_list", "base_url"} & set(params):
        model_list = env_model_list(environ)
    if model_list is not None:
        params["model_list"] = lift_into_environment(model_list)
    if models:
        params["models"] = {**params.get("models", {}), **models}
    return with_env_models(params, environ)
