"""Run configuration: one pydantic model, loadable from YAML, validated at the boundary."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from scenarios.engines import known_domains
from tasks.model_list import (
    Deployment,
    dumped,
    env_model_list,
    lift_into_environment,
    refuse_component_secrets,
)
from tasks.systems.spec import ConfigError, SystemSpec

BUILTIN_DEFAULT_LIMIT = 2
DEFAULT_JUDGE_CONCURRENCY = 8
# Dask's network protocols for a scheduler address (distributed.comm.registry).
DASK_SCHEMES = ("tcp", "tls", "ws", "wss", "ucx")


class ScenarioSource(BaseModel):
    """Where scenarios come from: the built-in pack (default) or an EVA checkout."""

    model_config = ConfigDict(extra="forbid")
    eva_root: Path | None = Field(
        default=None,
        description="Root of an EVA checkout (data/, configs/); default: built-in pack",
    )
    pack: Path | None = Field(default=None, description="A scenario pack directory of our format")
    domains: list[str] = Field(
        default_factory=lambda: list(known_domains()), description="Domains to include"
    )
    records: list[str] | None = Field(
        default=None, description="Record ids to include (all if unset)"
    )
    limit: int | None = Field(
        default=None,
        ge=0,
        description="At most this many records per domain (0 = all). Unset: all records, "
        f"except the built-in pack, which defaults to {BUILTIN_DEFAULT_LIMIT} per domain so "
        "the default run stays within minutes",
    )

    def effective_limit(self) -> int | None:
        if self.limit == 0:
            return None
        if self.limit is None and self.eva_root is None and self.pack is None and not self.records:
            return BUILTIN_DEFAULT_LIMIT
        return self.limit

    @field_validator("domains")
    @classmethod
    def _known_domains(cls, value: list[str]) -> list[str]:
        domains = known_domains()
        unknown = [d for d in value if d not in domains]
        if unknown:
            raise ValueError(f"unknown domain(s) {unknown}; valid: {', '.join(domains)}")
        return value


class CallerSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    name: str = Field(default="scripted", description="Caller registry name")
    params: dict[str, Any] = Field(default_factory=dict)


class JudgeSpec(BaseModel):
    """The judge back-end. For ``llm``, ``params.models`` assigns a model name per metric
    (``tasks.judges.models``) and ``params.model_list`` is the run's model list, copied in
    from :attr:`BenchmarkConfig.model_list` so every trial (and a later re-scoring) carries
    it; ``base_url``/``model`` instead name one OpenAI-compatible endpoint for every judge."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    name: str = Field(default="offline", description="Judge back-end: offline or llm")
    params: dict[str, Any] = Field(default_factory=dict)

    def uses_endpoint(self) -> bool:
        """Whether the params name one endpoint (the model list then is not needed)."""
        return "base_url" in self.params


class RunnerSpec(BaseModel):
    """Where trials run. Default: a local Dask cluster of worker *processes*, because the
    speech engines hold the GIL, so threads would use one core however many there are."""

    model_config = ConfigDict(extra="forbid")
    kind: Literal["threads", "dask"] = "dask"
    workers: int = Field(default=2, ge=1, le=256, description="Threads, or local Dask workers")
    dask_address: str | None = Field(
        default=None, description="tcp://HOST:PORT of a Dask scheduler"
    )

    @field_validator("dask_address")
    @classmethod
    def _scheduler_address(cls, value: str | None) -> str | None:
        """A scheduler address Dask can dial, checked here: Dask itself finds a malformed
        one only when the flow connects, after Prefect has started."""
        if value is None:
            return value
        scheme, sep, rest = value.rpartition("://")
        host, _, port = rest.rpartition(":")
        if (sep and scheme not in DASK_SCHEMES) or not host or not port.isdigit():
            raise ValueError(
                f"dask_address {value!r} is not SCHEME://HOST:PORT "
                f"(SCHEME one of {', '.join(DASK_SCHEMES)}), e.g. tcp://10.0.0.5:8786"
            )
        if not 0 < int(port) < 65536:
            raise ValueError(f"dask_address {value!r}: port {port} is not 1-65535")
        return value


class BenchmarkConfig(BaseModel):
    """Everything that defines a benchmark run; stored with the run so it can be rebuilt."""

    model_config = ConfigDict(extra="forbid")
    run_id: str | None = Field(default=None, description="Reuse to resume a run; auto if unset")
    store: str = Field(
        default="./evaflow-data", description="Store root: a directory or fsspec URL"
    )
    scenarios: ScenarioSource = Field(default_factory=ScenarioSource)
    # Before ``systems``: validating those reads it (catalogue names are looked up there too).
    systems_dirs: list[Path] = Field(
        default_factory=list, description="Extra systems-catalogue directories (*.yaml files)"
    )
    systems: list[SystemSpec] = Field(
        default_factory=lambda: [SystemSpec(name="reference", agent="reference")],
        min_length=1,
        description="Systems under test; a plain string is a systems-catalogue name",
    )
    caller: CallerSpec = Field(default_factory=CallerSpec)
    judge: JudgeSpec = Field(default_factory=JudgeSpec)
    model_list: list[Deployment] | None = Field(
        default=None,
        description="LiteLLM model list (the reference's EVA_MODEL_LIST shape); keys only "
        "as os.environ/NAME references. Default for --judge llm: $EVA_MODEL_LIST",
    )
    judge_concurrency: int | None = Field(
        default=None,
        ge=1,
        description="Most judging stages calling one judge provider at once (a Prefect "
        "global concurrency limit 'judge:<provider>'); unset: the Prefect server's limit "
        f"if it has one, else {DEFAULT_JUDGE_CONCURRENCY}. Offline judges are not limited",
    )
    conditions: list[str] = Field(default_factory=lambda: ["clean", "noise"], min_length=1)
    conditions_file: Path | None = Field(default=None, description="YAML of extra conditions")
    trials: int = Field(default=3, ge=1, le=100, description="Trials per scenario and condition")
    max_attempts: int = Field(default=3, ge=1, le=20, description="Total attempts per trial")
    mode: Literal["text", "audio"] = "audio"
    clock: Literal["virtual", "realtime"] = "virtual"
    max_duration_s: float = Field(default=600.0, ge=10, le=10000)
    seed: int = Field(default=0, ge=0)
    metrics: list[str] | None = Field(
        default=None, description="Metric names; default set if unset"
    )
    runner: RunnerSpec = Field(default_factory=RunnerSpec)
    batch_size: int = Field(default=8, ge=1, le=10000, description="Trials per committed batch")
    report: bool = Field(default=True, description="Write the HTML report at the end")
    score: bool = Field(
        default=True,
        description="Judge the kept attempts (false: simulate and validate only, leaving the "
        "judging to evaflow score)",
    )
    # Part of what the run measures (not an execution field): a rehearsal never resumes
    # into, or mixes with, a real run of the same systems (tasks.systems.rehearsal).
    rehearse: bool = Field(
        default=False,
        description="Run every system against local stand-ins of its providers, with "
        "placeholder keys (nothing reaches a real provider)",
    )

    prices: Path | None = Field(
        default=None,
        description="Price table YAML replacing the shipped one (tasks/costs/prices.yaml; "
        "else $EVAFLOW_PRICES); stored with the run",
    )

    @field_validator("prices")
    @classmethod
    def _readable_prices(cls, value: Path | None) -> Path | None:
        if value is not None:
            from tasks.costs.prices import load_prices

            load_prices(value)  # a PriceError (ValueError) names the file and the row
        return value

    @field_validator("systems", mode="before")
    @classmethod
    def _catalogue_systems(cls, value: Any, info: ValidationInfo) -> Any:
        """``systems: [gpt-realtime-1.5, ...]``: catalogue names become their specs."""
        if not isinstance(value, list):
            return value
        from tasks.systems.catalogue import expand_systems

        return expand_systems(value, info.data.get("systems_dirs") or [])

    @model_validator(mode="after")
    def _judge_gets_model_list(self) -> BenchmarkConfig:
        # The judge travels alone (in each trial's spec, in a re-scoring): it carries the list.
        params = self.judge.params
        if self.judge.name == "llm" and self.model_list and "model_list" not in params:
            params = {**params, "model_list": dumped(self.model_list)}
            self.judge = self.judge.model_copy(update={"params": params})
        return self

    @field_validator("run_id")
    @classmethod
    def _plain_run_id(cls, value: str | None) -> str | None:
        if value is not None and (not value or "/" in value or value.startswith(".")):
            raise ValueError(
                f"run_id {value!r} must be a plain name (no '/', not starting with '.')"
            )
        return value

    def with_run_id(self) -> BenchmarkConfig:
        if self.run_id:
            return self
        stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
        return self.model_copy(update={"run_id": f"{stamp}-{self.fingerprint()[:6]}"})

    def identity(self) -> dict[str, Any]:
        """What the run measures: every field except those in :data:`EXECUTION_FIELDS`."""
        return self.model_dump(mode="json", exclude=set(EXECUTION_FIELDS))

    def fingerprint(self) -> str:
        return hashlib.sha256(json.dumps(self.identity(), sort_keys=True).encode()).hexdigest()


# Fields that say how or where a run executes, never what it measures: a run resumes with
# other values of these, and they are left out of its fingerprint.
# ``prices`` too: costs are priced from the table stored with the run, not measured;
# ``judge_concurrency`` paces the judging, the judges' answers do not depend on it.
EXECUTION_FIELDS = frozenset(
    {
        "run_id",
        "runner",
        "report",
        "store",
        "systems_dirs",
        "batch_size",
        "prices",
        "judge_concurrency",
    }
)


def _short(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, default=str)
    return text if len(text) <= 60 else text[:57] + "..."


def value_differences(stored: Any, current: Any, path: str = "") -> list[str]:
    """``field.sub[0].key: stored X, now Y`` for every leaf where the two values differ."""
    if isinstance(stored, dict) and isinstance(current, dict):
        found: list[str] = []
        for key in sorted(set(stored) | set(current), key=str):
            where = f"{path}.{key}" if path else str(key)
            if key not in stored:
                found.append(f"{where}: not set before, now {_short(current[key])}")
            elif key not in current:
                found.append(f"{where}: stored {_short(stored[key])}, now not set")
            else:
                found += value_differences(stored[key], current[key], where)
        return found
    if isinstance(stored, list) and isinstance(current, list) and len(stored) == len(current):
        found = []
        for i, (old, new) in enumerate(zip(stored, current, strict=True)):
            found += value_differences(old, new, f"{path}[{i}]")
        return found
    if stored == current:
        return []
    return [f"{path or '(config)'}: stored {_short(stored)}, now {_short(current)}"]


def config_differences(stored_json: str, current: BenchmarkConfig) -> list[str]:
    """How ``current`` differs from a run's stored configuration (its ``config_json``), in
    the fields that define what the run measures; empty when a resume may continue it."""
    try:
        raw = json.loads(stored_json)
    except json.JSONDecodeError as exc:
        return [f"the stored configuration is not JSON ({exc})"]
    try:
        # Re-validated, so fields added since it was stored compare by their defaults.
        stored = BenchmarkConfig.model_validate(raw).identity()
    except (ValidationError, ValueError):
        stored = {k: v for k, v in raw.items() if k not in EXECUTION_FIELDS}
    return value_differences(stored, current.identity())


def load_config(
    path: Path,
    overrides: dict[str, Any] | None = None,
    environ: Mapping[str, str] | None = None,
) -> BenchmarkConfig:
    """Load a YAML config; errors name the file and the offending field."""
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except FileNotFoundError:
        raise ConfigError(f"{path}: config file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) else "not UTF-8 text"
        raise ConfigError(f"{path}: cannot read the config file ({reason})") from None
    except yaml.YAMLError as exc:
        # PyYAML's message spans lines (context, then the problem and its mark): one line.
        raise ConfigError(f"{path}: invalid YAML ({' '.join(str(exc).split())})") from None
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: top level must be a mapping of config fields")
    return parse_config(merge_overrides(raw, overrides or {}), source=str(path), environ=environ)


def merge_overrides(raw: dict[str, Any], overrides: dict[str, Any]) -> dict[str, Any]:
    """``raw`` with the command line's ``overrides``; ``--judge``/``--judge-model`` keep
    the config file's judge params (its model assignments merged with the command line's)."""
    merged = {**raw, **overrides}
    old, new = raw.get("judge"), overrides.get("judge")
    if isinstance(old, dict) and isinstance(new, dict):
        old_params, new_params = old.get("params") or {}, new.get("params") or {}
        params = {**old_params, **new_params}
        models = {**old_params.get("models", {}), **new_params.get("models", {})}
        if models:
            params["models"] = models
        merged["judge"] = {"name": new.get("name", old.get("name")), "params": params}
    return merged


def with_model_list(raw: dict[str, Any], environ: Mapping[str, str] | None) -> dict[str, Any]:
    """``raw`` with its model list's literal secrets lifted into the environment and, for
    an llm judge given no list and no endpoint, the list in ``$EVA_MODEL_LIST``."""
    raw = dict(raw)
    judge: dict[str, Any] = raw["judge"] if isinstance(raw.get("judge"), dict) else {}
    params: dict[str, Any] = judge["params"] if isinstance(judge.get("params"), dict) else {}
    wants = judge.get("name") == "llm" and not raw.get("model_list")
    if wants and environ is not None and not {"model_list", "base_url"} & set(params):
        raw["model_list"] = env_model_list(environ)
    if raw.get("model_list") is not None:
        raw["model_list"] = lift_into_environment(raw["model_list"])
    if "model_list" in params:
        lifted = {**params, "model_list": lift_into_environment(params["model_list"])}
        raw["judge"] = {**judge, "params": lifted}
    return with_judge_env(raw, environ)


def with_judge_env(raw: dict[str, Any], environ: Mapping[str, str] | None) -> dict[str, Any]:
    """An llm judge's text judges not assigned by the command line or the file get the model
    ``$JUDGE_MODEL`` names (spec 4.1), written into the config so the run records it."""
    from tasks.judges.models import with_env_models

    judge = raw.get("judge")
    if environ is None or not isinstance(judge, dict) or judge.get("name") != "llm":
        return raw
    params = judge.get("params")
    given: dict[str, Any] = params if isinstance(params, dict) else {}
    return {**raw, "judge": {**judge, "params": with_env_models(given, environ)}}


# Fields whose input may hold a key: an error about them never quotes the input.
SECRET_FIELDS = ("model_list", "judge")


def parse_config(
    raw: dict[str, Any],
    source: str = "<config>",
    environ: Mapping[str, str] | None = None,
) -> BenchmarkConfig:
    """Validate a raw configuration. ``environ`` (the command line passes the process
    environment) supplies ``$EVA_MODEL_LIST`` to an llm judge given no model list."""
    raw = with_model_list(raw, environ)
    refuse_component_secrets(raw, source)
    try:
        return BenchmarkConfig.model_validate(raw)
    except ValidationError as exc:
        lines = []
        for err in exc.errors():
            loc = ".".join(str(p) for p in err["loc"]) or "(top level)"
            # A validator's own message already names the value; pydantic prefixes it.
            msg = err["msg"].removeprefix("Value error, ")
            got = (
                ""
                if err["loc"][:1] and err["loc"][0] in SECRET_FIELDS
                else (f" (got {err.get('input')!r})")
            )
            lines.append(f"{source}: field '{loc}': {msg}{got}")
        raise ConfigError("\n".join(lines)) from None
