"""Checks of a parsed run configuration that need more than the model: names looked up in
the registries, records in the scenario source, and the configuration a stored run id was
first run with. Each raises :class:`tasks.config.ConfigError` naming the field and the
valid values, before anything is stored (no trial, no ``runs`` row).

Pure functions over the configuration (and the store's ``runs`` rows); no Prefect.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from tasks.config import BenchmarkConfig, ConfigError, ScenarioSource, config_differences
from tasks.judge_checks import judge_problems

if TYPE_CHECKING:
    from scenarios.models import Scenario
    from tasks.store import Store

MAX_LISTED = 40  # valid names shown in one message


def _valid(names: Iterable[str]) -> str:
    ordered = sorted(set(names))
    shown = ", ".join(ordered[:MAX_LISTED])
    more = len(ordered) - MAX_LISTED
    return shown + (f", ... ({more} more)" if more > 0 else "") if ordered else "(none)"


def _unknown(field: str, kind: str, bad: list[str], valid: Iterable[str]) -> str:
    names = ", ".join(repr(b) for b in dict.fromkeys(bad))
    return f"field '{field}': unknown {kind} {names}; valid names: {_valid(valid)}"


def condition_problems(config: BenchmarkConfig) -> list[str]:
    from perturbations.conditions import CONDITIONS, load_conditions_yaml

    valid = set(CONDITIONS.names())
    if config.conditions_file is not None:
        try:
            valid |= {c.name for c in load_conditions_yaml(Path(config.conditions_file))}
        except (OSError, ValueError) as exc:
            return [f"field 'conditions_file': {exc}"]
    # ``c in CONDITIONS`` also accepts registered parts joined by '+' (e.g. 'eva-cafe+connection').
    bad = [c for c in config.conditions if c not in valid and c not in CONDITIONS]
    return [_unknown("conditions", "condition", bad, valid)] if bad else []


def system_problems(config: BenchmarkConfig) -> list[str]:
    from tasks.simulate.agents import AGENTS, UnsupportedModeError, get_agent
    from tasks.simulate.wire.external import EXTERNAL, is_url

    problems = []
    for i, system in enumerate(config.systems):
        field = f"systems[{i}].agent"
        if is_url(system.agent) or system.agent == EXTERNAL:
            url = system.agent if is_url(system.agent) else str(system.params.get("url") or "")
            if not is_url(url):
                problems.append(f"field '{field}': agent 'external' needs params.url (ws://...)")
            elif config.mode != "audio":
                problems.append(f"field '{field}': {url} is an external agent: audio mode only")
            continue
        if system.agent not in AGENTS:
            valid = [*AGENTS.names(), "ws://HOST:PORT/PATH"]
            problems.append(_unknown(field, "agent", [system.agent], valid))
            continue
        try:
            get_agent(system.agent, config.mode)
        except UnsupportedModeError as exc:
            problems.append(f"field '{field}': {exc}")
    return problems


def caller_judge_problems(config: BenchmarkConfig) -> list[str]:
    import tasks.judges.llm
    import tasks.judges.offline  # noqa: F401 - importing the back-ends registers them
    from tasks.judges.base import JUDGES
    from tasks.simulate.callers import CALLERS

    problems = []
    if config.caller.name not in CALLERS:
        problems.append(_unknown("caller.name", "caller", [config.caller.name], CALLERS.names()))
    else:  # a caller may say what it needs (a key, the real-time clock) before any trial
        checks = getattr(CALLERS.get(config.caller.name)(), "problems", None)
        problems += checks(config) if callable(checks) else []
    if config.judge.name not in JUDGES:
        problems.append(_unknown("judge.name", "judge", [config.judge.name], JUDGES.names()))
    return problems


def accent_conditions(config: BenchmarkConfig) -> list[str]:
    """The run's conditions that draw an accent, the conditions file's included (unknown
    names and a bad file are reported by :func:`condition_problems`)."""
    from perturbations.conditions import ConditionSpec, get_condition, load_conditions_yaml

    custom: dict[str, ConditionSpec] = {}
    if config.conditions_file is not None:
        with contextlib.suppress(OSError, ValueError):
            custom = {c.name: c for c in load_conditions_yaml(Path(config.conditions_file))}
    found = []
    for name in config.conditions:
        with contextlib.suppress(KeyError, ValueError):
            if (custom.get(name) or get_condition(name)).accent is not None:
                found.append(name)
    return found


def caller_tts_problems(config: BenchmarkConfig) -> list[str]:
    """The caller's ``tts`` param names a registered engine, and only eSpeak takes an
    accent: an accent is an eSpeak voice variant, which a hosted or Piper voice would
    silently ignore, storing a condition that was never applied."""
    from tasks.voice.tts import TTS_ENGINES

    engine = str(config.caller.params.get("tts", "espeak"))
    if engine not in TTS_ENGINES:
        return [_unknown("caller.params.tts", "TTS engine", [engine], TTS_ENGINES.names())]
    accented = accent_conditions(config)
    if engine != "espeak" and accented:
        listed = ", ".join(accented)
        return [
            f"field 'caller.params.tts': engine {engine!r} cannot speak an accent "
            f"(condition {listed}); accents are eSpeak voices: use tts 'espeak' for them"
        ]
    return []


def metric_problems(config: BenchmarkConfig) -> list[str]:
    import tasks.metrics  # noqa: F401 - importing the package registers every metric
    from tasks.metrics.base import METRIC_ALIASES, METRICS, canonical_metric_name

    if config.metrics is None:
        return []
    bad = [m for m in config.metrics if canonical_metric_name(m) not in METRICS]
    valid = [*METRICS.names(), *METRIC_ALIASES]
    return [_unknown("metrics", "metric", bad, valid)] if bad else []


def store_problem(root: str, must_exist: bool = False) -> str | None:
    """Why ``root`` cannot be a store: it is a file, or (``must_exist``, for reading) it is
    not there. A run creates its store; a query of a mistyped path would answer nothing."""
    import fsspec

    try:
        fs, base = fsspec.core.url_to_fs(root)
        exists = fs.exists(base)
        if exists and not fs.isdir(base):
            return f"{root} is a file, not a store directory"
    except (OSError, ValueError, ImportError) as exc:  # unknown protocol, unreachable host
        return f"{root}: cannot open the store ({' '.join(str(exc).split())})"
    if must_exist and not exists:
        return f"{root}: no store there (no directory)"
    return None


def name_problems(config: BenchmarkConfig) -> list[str]:
    """Every unknown name in ``config``. Domains and catalogue systems are checked by the
    model itself (:class:`tasks.config.ScenarioSource`, :class:`BenchmarkConfig`)."""
    return [
        *condition_problems(config),
        *system_problems(config),
        *caller_judge_problems(config),
        *judge_problems(config),
        *caller_tts_problems(config),
        *metric_problems(config),
        *[f"field 'store': {p}" for p in [store_problem(config.store)] if p],
    ]


def check_names(config: BenchmarkConfig, source: str = "configuration") -> None:
    """Raise one :class:`ConfigError` listing every unknown name, with the valid ones."""
    problems = name_problems(config)
    if problems:
        raise ConfigError("\n".join(f"{source}: {p}" for p in problems))


def _selects(selector: str, scenario: Scenario) -> bool:
    return selector in (scenario.id, scenario.key)


def record_problems(source: ScenarioSource, loaded: list[Scenario] | None) -> list[str]:
    """Requested records that ``loaded`` (the scenarios the source gave; None: the loader
    refused the selection) does not contain."""
    if not source.records:
        return []
    missing = [r for r in source.records if not any(_selects(r, s) for s in loaded or [])]
    if not missing:
        return []
    from tasks.sources import load_source

    everything = load_source(source.model_copy(update={"records": None, "limit": 0}))
    unknown = [r for r in missing if not any(_selects(r, s) for s in everything)]
    problems = []
    if unknown:
        valid = [s.id for s in everything]
        problems.append(_unknown("scenarios.records", "record", unknown, valid))
    if loaded is not None and (cut := [r for r in missing if r not in unknown]):
        problems.append(
            f"field 'scenarios.records': {', '.join(cut)} left out by "
            f"scenarios.limit={source.limit}; raise the limit (0 = all) or drop them"
        )
    return problems


def load_checked(source: ScenarioSource) -> list[Scenario]:
    """The source's scenarios; a requested record that is not there is a ConfigError naming
    it and the valid ids (the EVA loader's own error does not list them)."""
    from scenarios.loader import ScenarioError
    from tasks.sources import load_source

    try:
        loaded = load_source(source)
    except ScenarioError:
        if not source.records or not record_problems(source, None):
            raise
        loaded = None
    problems = record_problems(source, loaded)
    if problems:
        raise ConfigError("\n".join(problems))
    return loaded or []


# ------------------------------------------------------------------------------ resume


def stored_config_json(store: Store, run_id: str) -> str | None:
    """The configuration a run was first stored with, or None for a new run id."""
    runs = store.read("runs", run_id)
    if not len(runs):
        return None
    return str(runs.sort_values("created_at")["config_json"].iloc[0])


def resume_config(
    store: Store, config: BenchmarkConfig, new_run_if_changed: bool = False
) -> BenchmarkConfig:
    """The configuration to run. Resuming a stored run id with another configuration would
    mix two configurations' results under one id: it is an error naming the fields that
    differ or, with ``new_run_if_changed``, a new run id (``<id>-<fingerprint>``, itself
    resumable)."""
    run_id = config.run_id or ""
    stored = stored_config_json(store, run_id)
    differences = config_differences(stored, config) if stored is not None else []
    if not differences:
        return config
    if new_run_if_changed:
        new_id = f"{run_id}-{config.fingerprint()[:8]}"
        return resume_config(store, config.model_copy(update={"run_id": new_id}))
    raise ConfigError(
        f"run {run_id!r} in {config.store} was stored with another configuration; "
        "resuming it would mix the two. Fields that differ:\n  "
        + "\n  ".join(differences)
        + "\nUse another --run-id, or --new-run-if-changed to start a new run id."
    )
