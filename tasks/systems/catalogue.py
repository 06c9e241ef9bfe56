"""The systems catalogue: one YAML file per system under test, found by name.

A system is data (docs in ``tasks/systems/catalogue/README.md``)::

    name: gpt-realtime-1.5          # what ``evaflow run --system`` takes
    title: GPT-Realtime-1.5         # as the EVA-Bench paper prints it
    architecture: s2s               # cascade | hybrid | s2s
    description: One line.
    agent: pipecat                  # evaflow agent (AGENTS registry) that runs it
    components:                     # role (stt, llm, tts, realtime) -> component
      realtime: {provider: openai-realtime, model: gpt-realtime-1.5, params: {...}}
    env: [OPENAI_API_KEY]           # variables the system needs

Files come from the built-in ``catalogue/`` directory, then every directory of
``$EVAFLOW_SYSTEMS_PATH`` (``os.pathsep``-separated), then a run config's
``systems_dirs``; a later directory's system replaces an earlier one of the same name, so a
user adapts a shipped system by copying its file. Strings may say ``${VAR}`` or
``${VAR:-default}``; :func:`to_system_spec` resolves them from the environment.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from evaflow_core.registry import Registry
from tasks.systems.spec import (  # noqa: F401 - ARCHITECTURES, architecture_of re-exported
    AGENT_ARCHITECTURES,
    ARCHITECTURES,
    Architecture,
    ConfigError,
    SystemSpec,
    architecture_of,
)

BUILTIN_DIR = Path(__file__).resolve().parent / "catalogue"
PATH_ENV = "EVAFLOW_SYSTEMS_PATH"
Role = Literal["stt", "llm", "tts", "realtime"]
# Which roles each architecture is made of (the contract of issue 12): any one set.
ROLE_SETS: dict[str, tuple[frozenset[str], ...]] = {
    "cascade": (frozenset({"stt", "llm", "tts"}),),
    "hybrid": (frozenset({"llm", "tts"}), frozenset({"realtime"})),
    "s2s": (frozenset({"realtime"}),),
}
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class Component(BaseModel):
    """One part of a system: the provider the bot builds, its model and settings."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    provider: str = Field(min_length=1, description="Provider name the Pipecat bot understands")
    model: str | None = Field(default=None, description="Model id sent to the provider")
    params: dict[str, Any] = Field(
        default_factory=dict, description="Provider settings (base_url, voice, ...)"
    )


class SystemEntry(BaseModel):
    """One catalogue file, validated."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    name: str = Field(description="What --system takes: lower-case, no spaces or '/'")
    title: str = Field(min_length=1, description="Name as the EVA-Bench paper prints it")
    architecture: Architecture
    description: str = Field(min_length=1, description="One line")
    agent: str = Field(min_length=1, description="evaflow agent that runs it (e.g. pipecat)")
    components: dict[Role, Component] = Field(default_factory=dict)
    env: list[str] = Field(default_factory=list, description="Environment variables it needs")
    agent_params: dict[str, Any] | None = Field(
        default=None,
        description="For agents with their own parameters (reference, llm): the SystemSpec "
        "params as-is; the components then only describe the system",
    )
    paper_id: str | None = Field(default=None, description="Its id in the paper's leaderboard")
    source: str | None = Field(default=None, description="The file it was read from")

    @field_validator("name")
    @classmethod
    def _plain_name(cls, value: str) -> str:
        if not re.fullmatch(r"[a-z0-9][a-z0-9._+-]*", value):
            raise ValueError(
                f"{value!r} must be lower-case letters, digits and . _ + - (no spaces or '/')"
            )
        return value

    @field_validator("env")
    @classmethod
    def _env_names(cls, value: list[str]) -> list[str]:
        bad = [v for v in value if not _ENV_NAME.match(v)]
        if bad:
            raise ValueError(f"not environment variable names: {bad}")
        return value

    @model_validator(mode="after")
    def _roles_fit_architecture(self) -> SystemEntry:
        roles = frozenset(self.components)
        allowed = ROLE_SETS[self.architecture]
        if roles not in allowed:
            options = " or ".join("+".join(sorted(s)) for s in allowed)
            raise ValueError(
                f"components {'+'.join(sorted(roles)) or '(none)'} do not make a "
                f"{self.architecture} system (needs {options})"
            )
        return self

    def required_env(self) -> list[str]:
        """``env`` plus every ``${VAR}`` (without a default) its settings refer to."""
        names = list(self.env)
        for var, default in _references(self.model_dump(include={"components", "agent_params"})):
            if default is None and var not in names:
                names.append(var)
        return names


def _references(value: Any) -> Iterable[tuple[str, str | None]]:
    if isinstance(value, str):
        for match in _VAR.finditer(value):
            yield match.group(1), match.group(2)
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from _references(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _references(item)


def unresolved(value: Any) -> list[str]:
    """Variables still written as ``${VAR}`` somewhere in ``value`` (a resolved spec has none)."""
    return list(dict.fromkeys(var for var, _ in _references(value)))


def interpolate(value: Any, environ: Mapping[str, str]) -> Any:
    """``value`` with every ``${VAR}`` / ``${VAR:-default}`` whose value is known replaced.

    A reference to an unset variable without a default stays as written, so preflight can
    name it (together with everything else that is missing) instead of failing here.
    """
    if isinstance(value, str):

        def sub(match: re.Match[str]) -> str:
            var, default = match.group(1), match.group(2)
            if var in environ:
                return environ[var]
            return default if default is not None else match.group(0)

        return _VAR.sub(sub, value)
    if isinstance(value, Mapping):
        return {k: interpolate(v, environ) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [interpolate(v, environ) for v in value]
    return value


def to_system_spec(entry: SystemEntry, environ: Mapping[str, str] | None = None) -> SystemSpec:
    """The run's ``SystemSpec`` of a catalogue entry, ``${VAR}`` resolved from ``environ``.

    ``params = {"architecture", "components": {role: {provider, model, params}}}`` as the
    contract says, unless the entry gives ``agent_params`` (agents with a parameter model
    of their own, whose architecture is then the agent's: see :func:`architecture_of`).
    """
    env = os.environ if environ is None else environ
    if entry.agent_params is not None:
        params: dict[str, Any] = dict(entry.agent_params)
    else:
        params = {
            "architecture": entry.architecture,
            "components": {
                role: comp.model_dump(mode="json") for role, comp in entry.components.items()
            },
        }
    return SystemSpec(name=entry.name, agent=entry.agent, params=interpolate(params, env))


def catalogue_dirs(
    extra: Sequence[str | Path] = (), environ: Mapping[str, str] | None = None
) -> list[Path]:
    """Where systems are looked up, in order: built-in, ``$EVAFLOW_SYSTEMS_PATH``, ``extra``."""
    env = os.environ if environ is None else environ
    user = [Path(p) for p in env.get(PATH_ENV, "").split(os.pathsep) if p.strip()]
    return [BUILTIN_DIR, *user, *(Path(p) for p in extra)]


def load_entry(path: Path) -> SystemEntry:
    """One catalogue file; errors name the file and the field."""
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read system file ({exc.strerror})") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: invalid YAML ({exc})") from None
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: a system file must be a mapping (name, architecture, ...)")
    try:
        return SystemEntry.model_validate({**raw, "source": str(path)})
    except ValidationError as exc:
        lines = [
            f"{path}: field '{'.'.join(str(p) for p in err['loc']) or '(top level)'}': {err['msg']}"
            for err in exc.errors(include_url=False)
        ]
        raise ConfigError("\n".join(lines)) from None


def load_catalogue(
    extra_dirs: Sequence[str | Path] = (), environ: Mapping[str, str] | None = None
) -> Registry[SystemEntry]:
    """Every system of every catalogue directory; unknown names list the valid ones."""
    found: dict[str, SystemEntry] = {}
    for directory in catalogue_dirs(extra_dirs, environ):
        if directory != BUILTIN_DIR and not directory.is_dir():
            raise ConfigError(
                f"{directory}: systems directory not found ({PATH_ENV} or systems_dirs)"
            )
        here: dict[str, Path] = {}
        for path in sorted(directory.glob("*.yaml")):
            entry = load_entry(path)
            if entry.name in here:
                raise ConfigError(
                    f"{path}: system {entry.name!r} is already defined in {here[entry.name]}"
                )
            here[entry.name] = path
            found[entry.name] = entry
    registry: Registry[SystemEntry] = Registry("system")
    for name in sorted(found):
        registry.add(name, found[name])
    return registry


def expand_systems(items: Sequence[Any], extra_dirs: Sequence[str | Path] = ()) -> list[Any]:
    """A run config's ``systems`` with every catalogue name (a plain string) made a spec."""
    if not any(isinstance(item, str) for item in items):
        return list(items)
    catalogue = load_catalogue(extra_dirs)
    out: list[Any] = []
    for item in items:
        if isinstance(item, str):
            try:
                entry = catalogue.get(item)
            except KeyError as exc:
                raise ConfigError(str(exc)) from None
            out.append(to_system_spec(entry).model_dump(mode="json"))
        else:
            out.append(item)
    return out
