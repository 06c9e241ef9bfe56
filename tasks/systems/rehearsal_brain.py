"""The stand-ins' brain and ears for a rehearsal (``evaflow run --rehearse``).

A rehearsal runs catalogue systems against local stand-ins of their providers
(:mod:`tasks.systems.standins`). One set of stand-ins serves every call of the run, so
the brain behind them cannot be built around one record the way a test's is: it has to
tell which of the run's scenarios a call belongs to from the request alone.

:class:`RehearsalBrain` does that from what the model is sent, nothing else:

* the DOMAIN from the system prompt. The Pipecat agent sends each call the domain agent's
  prompt (:func:`tasks.simulate.llm_prompts.agent_system_prompt`: the agent's role,
  service description and policy), which is the same for every scenario of a domain and
  differs between domains; the domain whose agent texts share the most words with it wins;
* within a domain holding several of the run's scenarios, the SCENARIO whose scripted
  first caller line (``user_goal.starting_utterance``) shares the most words with what the
  caller was heard to say so far (the user messages, as transcribed by the system under
  test). Before the caller has spoken, every scenario of the domain greets alike.

It then answers with :func:`tasks.systems.standins.brain.next_message`, the reference
policy replayed over the history. So the stand-in's brain is the REFERENCE POLICY of the
inferred scenario: which scenario is inferred, but every caller-supplied value (codes,
names, dates) still comes only from what the stand-in heard, and every tool runs in the
harness. A mis-identified scenario shows up as a wrong final DB, never as a hidden answer.

The stand-ins' ears are :mod:`tasks.systems.rehearsal_ears`.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from typing import Any

from scenarios.models import Scenario
from tasks.systems.standins.brain import expectation_after, next_message, text_of
from tasks.voice.stt import Expectation

_WORD = re.compile(r"[a-z0-9']+")


def words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


def overlap(a: set[str], b: set[str]) -> float:
    """Share of ``a``'s words found in ``b`` (0 when ``a`` is empty)."""
    return len(a & b) / len(a) if a else 0.0


def domain_texts(scenario: Scenario) -> str:
    """What the agent prompt says of a domain (role, service, policy)."""
    agent = scenario.agent
    return " ".join(str(t or "") for t in (agent.role, agent.description, agent.instructions))


def _system_text(messages: list[dict[str, Any]]) -> str:
    return " ".join(text_of(m) for m in messages if m.get("role") in ("system", "developer"))


def _heard(messages: list[dict[str, Any]]) -> str:
    return " ".join(text_of(m) for m in messages if m.get("role") == "user")


def _first_line(scenario: Scenario) -> str:
    return str(scenario.user_goal.get("starting_utterance") or "")


class RehearsalBrain:
    """``messages -> next assistant message`` over the run's scenarios (see module doc).

    Callable like a stand-in's brain; ``identified`` counts which scenario each request
    was answered as (for the run's log and tests)."""

    def __init__(self, scenarios: Sequence[Scenario]) -> None:
        if not scenarios:
            raise ValueError("a rehearsal brain needs at least one scenario")
        self.scenarios = list(scenarios)
        self.by_domain: dict[str, list[Scenario]] = {}
        for scenario in self.scenarios:
            self.by_domain.setdefault(scenario.domain, []).append(scenario)
        self.domain_words = {
            d: words(domain_texts(group[0])) for d, group in self.by_domain.items()
        }
        self.identified: dict[str, int] = {}
        self._lock = threading.Lock()

    def domain_of(self, messages: list[dict[str, Any]]) -> str | None:
        """The domain whose agent texts the system prompt shares most; None if it names
        none (no system prompt, or no word in common)."""
        if len(self.by_domain) == 1:
            return next(iter(self.by_domain))
        prompt = words(_system_text(messages))
        scores = {d: overlap(w, prompt) for d, w in self.domain_words.items()}
        best = max(scores, key=lambda d: scores[d])
        return best if scores[best] > 0 else None

    def scenario_of(self, messages: list[dict[str, Any]]) -> Scenario:
        """The scenario a request belongs to: its domain, then the first caller line that
        best matches what was heard (ties: the run's order)."""
        domain = self.domain_of(messages)
        candidates = self.by_domain[domain] if domain is not None else self.scenarios
        if len(candidates) == 1:
            return candidates[0]
        heard = words(_heard(messages))
        return max(candidates, key=lambda s: overlap(words(_first_line(s)), heard))

    def __call__(self, messages: list[dict[str, Any]]) -> dict[str, Any]:
        scenario = self.scenario_of(messages)
        with self._lock:
            self.identified[scenario.key] = self.identified.get(scenario.key, 0) + 1
        return next_message(scenario, messages)

    def expectation(self, messages: list[dict[str, Any]]) -> Expectation:
        """What the next caller turn should hold (:func:`.standins.brain.expectation_after`)."""
        return expectation_after(self.scenario_of(messages), messages)
