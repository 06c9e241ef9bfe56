"""What the reference agent asks the caller for, how, and what it knows of the answer.

A :class:`ValueRequest` is a value the agent needs from the caller (never heard, a failed
lookup, or which offered option it was). Everything it carries besides the trace value
(which only keys the request and renders the answer's layout, see
:mod:`tasks.simulate.dialogue.slots`) comes from agent configuration: the parameter's label,
enum and format from the tool schema, and the domain's alias table.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from scenarios.loader import pack_layout
from scenarios.models import AgentConfig, Scenario, ToolParam
from scenarios.resolve import alias_list, load_aliases
from tasks.simulate.dialogue.formats import ParamFormat, param_format
from tasks.simulate.dialogue.values import signature, value_kind
from tasks.voice.stt import Expectation

# Short and with "say that again": any caller takes it as a request to repeat its choice.
WHICH_ONE = "Sorry, which one would you like? Could you say that again?"
MAX_ASKS_PER_VALUE = 2


@dataclass
class ValueRequest:
    """A value the agent needs from the caller (never heard, or a failed lookup)."""

    key: str
    trace_value: Any
    label: str
    enum: list[Any] | None
    purpose: Literal["missing", "retry", "choice"]
    tries: int = 0
    fmt: ParamFormat = ParamFormat()


@dataclass
class Paused:
    """The trace call the agent stopped at, and the values it is asking for."""

    block: int
    step: int
    requests: list[ValueRequest]
    cursor: int = 0


def label(path: str) -> str:
    """How the agent names a parameter when asking for it ("date_of_birth" -> "date of birth")."""
    last = path.split(".")[-1].split("[")[0]
    return last.replace("_", " ").strip() or "answer"


def param_spec(agent: AgentConfig, tool: str, path: str) -> ToolParam | None:
    """The schema of the tool parameter at ``path`` (its top-level name)."""
    spec = agent.tool(tool)
    name = path.split(".")[0].split("[")[0]
    if spec is None:
        return None
    return next(
        (p for p in [*spec.required_parameters, *spec.optional_parameters] if p.name == name),
        None,
    )


def schema_format(agent: AgentConfig, tool: str, path: str, value: Any) -> ParamFormat:
    """The parameter's format from its schema; the kind is the parameter's type."""
    param = param_spec(agent, tool, path)
    kind = value_kind(value)
    if param is None:
        return ParamFormat(kind=kind)
    return param_format(kind, param.name, param.description)


def question(request: ValueRequest, first: bool = False) -> str:
    if request.purpose == "choice":
        return WHICH_ONE
    if request.purpose == "missing":
        return f"Could you please tell me your {request.label}?"
    if first:
        return (
            "I'm sorry, I couldn't find a match for that. Could you please spell your "
            f"{request.label} for me?"
        )
    return f"Thank you. And could you please spell your {request.label}?"


def expectation_for(request: ValueRequest) -> Expectation:
    """What the caller's answer should hold, for the recogniser (see ``Expectation``).

    After asking to spell a value: a code, of its format when the schema gives one
    ("EMP + 6 digits", "4 digits"). After asking for a digits-only value: that many
    digits. Otherwise free speech.
    """
    if request.fmt.kind != "text":
        return None
    shape = request.fmt.shape
    if request.purpose == "retry":
        return f"code:{shape}" if shape else "code"
    return f"code:{shape}" if shape and set(shape) <= {"D", "-"} else None


def domain_aliases(scenario: Scenario) -> dict[str, str]:
    """The domain's alias table (alias signature -> canonical name), agent configuration.

    Read from the domain's alias files of the scenario's source (``<domain>_aliases/``),
    the same for every record of the domain; never from this record's database.
    """
    return dict(_domain_aliases(scenario.source, scenario.domain, scenario.language))


@lru_cache(maxsize=32)
def _domain_aliases(source: str, domain: str, lang: str) -> tuple[tuple[str, str], ...]:
    entries = load_aliases(pack_layout(Path(source)).aliases_dir(domain))
    table: dict[str, str] = {}
    for name, entry in entries.items():
        for alias in [name, *alias_list(entry, lang)]:
            table.setdefault(signature(alias), name)
    return tuple(table.items())
