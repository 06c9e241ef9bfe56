"""LiteLLM model lists: the reference's shape for naming model deployments.

A model list is what LiteLLM's Router takes (and what an EVA user keeps in
``EVA_MODEL_LIST``): entries ``{model_name, litellm_params: {model, api_key, api_base,
...}, model_info}``. ``model_name`` is the logical name judges are assigned
(``gpt-5.2``); ``litellm_params.model`` is the provider's model (``azure/gpt-5.2``).

Keys live in the environment only. A list may name them as ``os.environ/NAME`` (LiteLLM's
own reference syntax, kept as it is) or hold them literally, as EVA's examples do; a
literal secret is *lifted*: moved to a process environment variable
``EVAFLOW_MODEL_LIST_<i>_<MODEL_NAME>_<PARAM>`` and replaced by its reference, so the list a run
stores, compares and sends to its workers never holds a key (:func:`lift_secrets`).
A :class:`Deployment` refuses a literal secret, so no stored list can carry one.

Pure functions; only :func:`lift_into_environment` writes ``os.environ``.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping, MutableMapping
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, field_validator

from tasks.systems.spec import ConfigError

ENV_MODEL_LIST = "EVA_MODEL_LIST"
ENV_REF = "os.environ/"
LIFTED_PREFIX = "EVAFLOW_MODEL_LIST_"
# LiteLLM params whose value is a credential (api_key, aws_secret_access_key,
# vertex_credentials, azure_ad_token, ...): matched on the name, as the reference redacts.
_SECRET_NAME = re.compile(r"key|secret|token|password|credential", re.IGNORECASE)
# What a provider's client reads when the deployment names no key (LiteLLM's defaults).
# Any one of a tuple suffices (AWS: explicit keys or a profile). Providers not listed
# (a local server, ollama/...) are not checked.
PROVIDER_KEY_VARIABLES: dict[str, tuple[str, ...]] = {
    "openai": ("OPENAI_API_KEY",),
    "azure": ("AZURE_API_KEY",),
    "anthropic": ("ANTHROPIC_API_KEY",),
    "bedrock": ("AWS_SECRET_ACCESS_KEY", "AWS_PROFILE"),
    "gemini": ("GEMINI_API_KEY",),
    "vertex_ai": ("GOOGLE_APPLICATION_CREDENTIALS",),
}
# Params that stand in for the provider's key variable when present.
_CREDENTIAL_PARAMS = ("api_key", "aws_profile_name", "aws_role_name", "vertex_credentials")


def is_secret_param(name: str) -> bool:
    return bool(_SECRET_NAME.search(name))


def env_ref_name(value: Any) -> str | None:
    """``NAME`` of an ``os.environ/NAME`` reference, else None."""
    if isinstance(value, str) and value.startswith(ENV_REF):
        return value[len(ENV_REF) :].strip() or None
    return None


class Deployment(BaseModel):
    """One model deployment of a LiteLLM model list (never holds a literal secret)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    model_name: str = Field(min_length=1, description="Logical name judges are assigned")
    litellm_params: dict[str, Any] = Field(description="LiteLLM completion params; 'model' set")
    model_info: dict[str, Any] | None = Field(default=None, description="Free metadata")

    @field_validator("litellm_params")
    @classmethod
    def _model_and_no_secret(cls, value: dict[str, Any]) -> dict[str, Any]:
        if not isinstance(value.get("model"), str) or not value["model"]:
            raise ValueError("litellm_params needs 'model' (the provider's model name)")
        literal = [k for k, v in value.items() if is_secret_param(k) and _is_literal(v)]
        if literal:
            # The value is never quoted: it is a key.
            raise ValueError(
                f"litellm_params.{literal[0]} holds a literal secret; write os.environ/NAME"
            )
        return value

    @property
    def provider(self) -> str:
        """LiteLLM's provider prefix of ``litellm_params.model`` (``openai`` when none)."""
        model = str(self.litellm_params["model"])
        explicit = self.litellm_params.get("custom_llm_provider")
        if isinstance(explicit, str) and explicit:
            return explicit
        return model.split("/", 1)[0] if "/" in model else "openai"

    def env_variables(self) -> list[tuple[str, ...]]:
        """The environment variables a call needs: each tuple is satisfied by any one."""
        needed: list[tuple[str, ...]] = [
            (n,) for v in self.litellm_params.values() if (n := env_ref_name(v))
        ]
        named = any(self.litellm_params.get(p) for p in _CREDENTIAL_PARAMS)
        if not named and self.provider in PROVIDER_KEY_VARIABLES:
            needed.append(PROVIDER_KEY_VARIABLES[self.provider])
        return needed


def _is_literal(value: Any) -> bool:
    return isinstance(value, str) and bool(value) and env_ref_name(value) is None


def lifted_name(index: int, model_name: str, param: str) -> str:
    """``EVAFLOW_MODEL_LIST_<i>_<MODEL_NAME>_<PARAM>``: the same list lifts to the same
    names in every process (a worker, a later re-scoring given the same list)."""
    parts = (str(index), model_name, param)
    return LIFTED_PREFIX + "_".join(re.sub(r"[^A-Za-z0-9]+", "_", p).upper() for p in parts)


def lift_secrets(entries: Any) -> tuple[Any, dict[str, str]]:
    """``(entries with every literal secret replaced by an os.environ/ reference, the
    variables to set)``. Anything not shaped like a list of entries is returned as is
    (the model reports it)."""
    if not isinstance(entries, list):
        return entries, {}
    lifted: dict[str, str] = {}
    out = []
    for i, entry in enumerate(entries):
        params = entry.get("litellm_params") if isinstance(entry, dict) else None
        if not isinstance(params, dict):
            out.append(entry)
            continue
        new_params = dict(params)
        for key, value in params.items():
            if is_secret_param(key) and _is_literal(value):
                name = lifted_name(i, str(entry.get("model_name", "")), key)
                lifted[name] = value
                new_params[key] = ENV_REF + name
        out.append({**entry, "litellm_params": new_params})
    return out, lifted


def lift_into_environment(entries: Any, environ: MutableMapping[str, str] | None = None) -> Any:
    """:func:`lift_secrets`, setting the variables (the process environment by default:
    local workers inherit it; a remote worker needs the same list or variables)."""
    out, lifted = lift_secrets(entries)
    target = os.environ if environ is None else environ
    target.update(lifted)
    return out


def parse_model_list_text(text: str, source: str) -> list[Any]:
    """A list from JSON or YAML text: a list of entries, or a mapping with ``model_list``
    (a LiteLLM proxy config). Errors name the source, never its content (it may hold keys)."""
    try:
        raw = yaml.safe_load(text)  # JSON is YAML
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        raise ConfigError(f"{source}: model list is not JSON or YAML{where}") from None
    if isinstance(raw, dict) and "model_list" in raw:
        raw = raw["model_list"]
    if not isinstance(raw, list) or not raw:
        raise ConfigError(
            f"{source}: a model list is a non-empty list of "
            "{model_name, litellm_params, model_info} entries"
        )
    return raw


def read_model_list_file(path: Path) -> list[Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"--model-list {path}: file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) else "not UTF-8 text"
        raise ConfigError(f"--model-list {path}: cannot read it ({reason})") from None
    return parse_model_list_text(text, f"--model-list {path}")


def env_model_list(environ: Mapping[str, str]) -> list[Any] | None:
    """The list in ``EVA_MODEL_LIST``, or None when it is unset or empty."""
    text = environ.get(ENV_MODEL_LIST, "").strip()
    return parse_model_list_text(text, ENV_MODEL_LIST) if text else None


def deployments(entries: Any) -> list[Deployment]:
    return [e if isinstance(e, Deployment) else Deployment.model_validate(e) for e in entries]


def model_names(entries: list[Deployment]) -> list[str]:
    return list(dict.fromkeys(d.model_name for d in entries))


def first_deployment(entries: list[Deployment], model_name: str) -> Deployment | None:
    return next((d for d in entries if d.model_name == model_name), None)


def missing_variables(deployment: Deployment, environ: Mapping[str, str]) -> list[str]:
    """The variables (or alternatives, ``A or B``) a call to ``deployment`` lacks."""
    return [
        " or ".join(options)
        for options in deployment.env_variables()
        if not any(environ.get(name) for name in options)
    ]


def resolve_params(deployment: Deployment, environ: Mapping[str, str]) -> dict[str, Any]:
    """``litellm_params`` with every ``os.environ/`` reference replaced by its value (for
    the call only: never stored, never logged)."""
    resolved = {}
    for key, value in deployment.litellm_params.items():
        name = env_ref_name(value)
        resolved[key] = environ.get(name) if name else value
    return resolved


def dumped(entries: list[Deployment]) -> list[dict[str, Any]]:
    return [json.loads(d.model_dump_json(exclude_none=True)) for d in entries]


def refuse_component_secrets(raw: dict[str, Any], source: str) -> None:
    """An ``llm`` agent's or caller's own ``params.model_list`` names its keys as
    ``os.environ/NAME``: a literal key there would be stored with the run (the run-level
    list's are lifted, but two lists lifting to the same variable would swap keys)."""
    specs = [(f"systems.{i}", s) for i, s in enumerate(raw.get("systems") or [])]
    for where, spec in [*specs, ("caller", raw.get("caller"))]:
        params = spec.get("params") if isinstance(spec, dict) else None
        entries = params.get("model_list") if isinstance(params, dict) else None
        for i, entry in enumerate(entries if isinstance(entries, list) else []):
            litellm = entry.get("litellm_params") if isinstance(entry, dict) else None
            for key, value in (litellm or {}).items():
                literal = isinstance(value, str) and value and env_ref_name(value) is None
                if is_secret_param(key) and literal:  # the value is never quoted: a key
                    raise ConfigError(
                        f"{source}: field '{where}.params.model_list.{i}.litellm_params."
                        f"{key}' holds a literal secret; write os.environ/NAME"
                    )
