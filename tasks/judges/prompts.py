"""Prompt templates of the LLM judge: loading, rendering and hashing.

Templates live in ``prompts.yaml`` next to this module under ``judge.<metric>`` with a
``system_prompt`` and a ``user_prompt``; ``_shared`` strings are globals of every template.
Rendering replaces ``{name}`` only for known names, so JSON braces in the examples stay.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, Field

from tasks.judges.base import prompt_hash

PROMPTS_FILE = Path(__file__).with_name("prompts.yaml")
_VAR = re.compile(r"\{([a-z_][a-z0-9_]*)\}")


class PromptTemplate(BaseModel):
    """One metric's unrendered prompt."""

    metric: str
    system: str = Field(default="", description="System message template")
    user: str = Field(description="User message template")

    @property
    def hash(self) -> str:
        return prompt_hash(self.system + "\n---\n" + self.user)


@lru_cache(maxsize=4)
def _load(path: Path) -> dict[str, Any]:
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    if not isinstance(data.get("judge"), dict):
        raise ValueError(f"{path}: missing top-level 'judge' mapping")
    return data


def template(metric: str, path: Path = PROMPTS_FILE) -> PromptTemplate:
    """The template of ``metric``; unknown metrics raise a KeyError listing valid ones."""
    data = _load(path)
    entry = data["judge"].get(metric)
    if not isinstance(entry, dict) or "user_prompt" not in entry:
        valid = ", ".join(sorted(data["judge"]))
        raise KeyError(f"{path}: no prompt for judge metric {metric!r}; valid: {valid}")
    return PromptTemplate(
        metric=metric, system=entry.get("system_prompt", ""), user=entry["user_prompt"]
    )


def shared_vars(path: Path = PROMPTS_FILE) -> dict[str, str]:
    return {k: str(v).strip() for k, v in (_load(path).get("_shared") or {}).items()}


def render(text: str, variables: dict[str, Any]) -> str:
    """Substitute ``{name}`` for names in ``variables``; leave every other brace alone."""

    def sub(match: re.Match[str]) -> str:
        name = match.group(1)
        return str(variables[name]) if name in variables else match.group(0)

    return _VAR.sub(sub, text)


def render_messages(metric: str, variables: dict[str, Any]) -> tuple[str, str]:
    """(system, user) messages of ``metric`` rendered with ``variables`` plus shared globals."""
    tpl = template(metric)
    merged = {**shared_vars(), **variables}
    return render(tpl.system, merged).strip(), render(tpl.user, merged).strip()


def pipeline_notes(pipeline: str) -> str:
    """How to read user and assistant entries for this pipeline (spec 4.3 disclaimers)."""
    if pipeline == "cascade":
        user = (
            "Caller entries are the agent's speech-recognition transcripts: judge the agent on "
            "what it received. Recognition errors are possible; the agent should clarify "
            "ambiguous values before any change that cannot be undone."
        )
    else:
        user = (
            "Caller entries are what the caller actually said. The agent hears audio directly, "
            "so mishearing letters, numbers, names or codes is the agent's responsibility, "
            "mitigated only by asking for clarification."
        )
    if pipeline == "s2s":
        assistant = (
            "Agent entries are transcripts of the agent's audio: small articulation slips "
            "(a dash, a single character or digit in a long identifier) belong to speech "
            "fidelity, not here, unless they change the structure or matter later."
        )
    else:
        assistant = "Agent entries are the literal text the agent produced."
    return f"{user}\n{assistant}"
