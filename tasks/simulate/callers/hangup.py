"""When a model caller's ``end_call`` may be honoured (spec 7.3, the OpenAI caller's rules).

Shared by the ``llm`` and ``openai_realtime`` callers: hang up only after saying goodbye
(in this turn or the one before), and never in the turn that gives information. The rules
are checked here in code, not only asked for in the prompt.
"""

from __future__ import annotations

from scenarios.models import Scenario
from tasks.simulate.caller.info import information_items
from tasks.simulate.dialogue.cues import says_goodbye
from tasks.simulate.dialogue.slots import signature, tokens
from tasks.simulate.llm_prompts import CALLER_REFUSAL_GOODBYE, CALLER_REFUSAL_INFORMATION

# Shorter values ("yes", "1") would be found by accident inside ordinary words.
MIN_INFO_SIGNATURE = 4


class HangupRules:
    """The end_call rules over one scenario's information values."""

    def __init__(self, scenario: Scenario) -> None:
        self.info_signatures = {
            sig
            for item in information_items(scenario.user_goal)
            if len(sig := signature(item.value)) >= MIN_INFO_SIGNATURE
        }

    def refusal(self, text: str, last_said: str, silent_ok: bool = True) -> str | None:
        """Why ``end_call`` may not be honoured with these words (None: hang up).

        ``last_said``: the caller's previous turn (a goodbye there counts). ``silent_ok``:
        a hang-up without words is honoured (the ``llm`` caller then says a goodbye for
        it); a caller whose audio is its own cannot be given words, so it needs one said."""
        if not text and silent_ok:
            return None
        if self.gives_information(text):
            return CALLER_REFUSAL_INFORMATION
        if not (says_goodbye(text) or says_goodbye(last_said)):
            return CALLER_REFUSAL_GOODBYE
        return None

    def gives_information(self, text: str) -> bool:
        """The words carry one of the caller's information values (codes spelled or not)."""
        said = "".join(signature(tok) for tok in tokens(text))
        return any(sig in said for sig in self.info_signatures)
