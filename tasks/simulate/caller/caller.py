"""The scripted caller: the golden trace's caller lines, driven by what it hears.

It says the trace's lines in order, but listens first: when it heard nothing useful it
asks the agent to repeat; when the agent asks for values the next line does not give,
it answers from ``user_goal.information_required`` (spelled when asked to spell), every
part of a compound question it has an answer for; when the agent repeats a request for
a line it already said, it says it again; when the agent gives up, it applies the
failure condition (closes politely and hangs up); after its last line it says goodbye
and ends the call.

With a behaviour persona (:mod:`tasks.simulate.caller.persona`) it also withholds values
until asked, repeats itself and asks the agent to say things again, each turn's draws
from its own generator; ``CallerTurn.behavior`` and the ``persona`` events say what it did.

It never hangs up in the same turn as answering an open question (the EVA simulator's
rule: end the call only after goodbye, never in the turn that gives information or
approval): a last line that answers the agent's question and also says "that's all" is
said, and the call ends after the agent has acted on it. Only an answer to the agent's
wrap-up ("anything else?") or to a turn that asks nothing ends the call at once.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, Field

from perturbations.behavior import PersonaParams
from scenarios.models import Scenario
from tasks.records import TimelineEvent
from tasks.simulate.caller.info import InfoItem, information_items
from tasks.simulate.caller.persona import (
    ASK_REPEAT,
    PersonaBehavior,
    PersonaPlay,
    RngFactory,
    persona_rngs,
)
from tasks.simulate.dialogue.cues import (
    asks_again_which,
    asks_question,
    asks_to_spell,
    clauses,
    gives_up,
    is_empty,
    is_repair,
    is_repeat_request,
    is_request,
    novel_words,
    says_goodbye,
    similarity,
    words,
    wraps_up,
)
from tasks.simulate.dialogue.script import build_script
from tasks.simulate.dialogue.slots import signature, tokens
from tasks.spoken import speak_code, speak_date, speak_digits, speak_time
from tasks.spoken.words import DIGIT_WORDS

CallerTurnKind = Literal["line", "repeat_request", "answer", "repeat", "closing", "give_up"]

REPEAT_REQUEST = "Sorry, I didn't catch that. Could you repeat it?"
CLOSING = "No, that's all I needed. Thank you, goodbye."
NO_ANSWER = "Sorry, I don't have anything more on that."
FAILURE_CLOSING = "Okay, I'll leave it for now then. Thank you, goodbye."
MAX_REPEAT_REQUESTS = 2
MAX_ANSWERS = 12
ON_SCRIPT = 0.5
# Share of the heard words that belong to the expected turn for it to count as that turn.
ON_SCRIPT_PRECISION = 0.8
MIN_KEY_SCORE = 0.5


class CallerTurn(BaseModel):
    """One caller turn in text form."""

    text: str = Field(description="What the caller says")
    kind: CallerTurnKind = Field(default="line", description="What the turn does")
    end_call: bool = Field(default=False, description="The caller hangs up after saying it")
    behavior: list[PersonaBehavior] = Field(
        default_factory=list, description="What the persona did in it (withheld, repeated, ...)"
    )


def say_value(value: str, spell: bool) -> str:
    """A value the way a caller says it: codes and digits symbol by symbol, dates in words."""
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", value):
        return speak_date(value)
    if re.fullmatch(r"\d{1,2}:\d{2}", value):
        return speak_time(value)
    if re.fullmatch(r"[\d -]+", value) and any(c.isdigit() for c in value):
        return speak_digits(value)
    compact = value.replace("-", "")
    code_like = compact.isalnum() and compact.isascii() and any(c.isdigit() for c in compact)
    if code_like or (spell and re.fullmatch(r"[A-Za-z][A-Za-z' -]*", value)):
        # Asked to spell, people fall back on the phonetic alphabet.
        return speak_code(re.sub(r"[' ]", "", value).upper(), "nato" if spell else "letters")
    return value.replace("_", " ")  # an enum-like value ("gluten_free") said as words


# Key words as a listener takes them: digits normalised to figures, homophones a
# recogniser swaps ("phone last four" heard as "phone match for"), and the words agents
# use interchangeably for an identifier ("confirmation number" for a confirmation code).
_SAME_KEY = {
    **{str(i): w for i, w in enumerate(DIGIT_WORDS)},
    "for": "four",
    "fore": "four",
    "to": "two",
    "too": "two",
    "won": "one",
    "ate": "eight",
    "number": "code",
    "id": "code",
    "identifier": "code",
}


def sounds_like(word: str) -> str:
    """The key word ``word`` stands for (itself unless a homophone or a synonym)."""
    return _SAME_KEY.get(word, word)


def heard_part(expected: str, heard: str) -> str:
    """The part of the expected turn a listener can have heard: all of it, or, when it cut
    in early, about as many words as it heard."""
    want, got = words(expected), words(heard)
    return " ".join(want[: max(len(got) + 3, int(len(got) * 1.3))])


class ScriptedCaller:
    """Caller policy over text: ``respond(heard_agent_text) -> CallerTurn``."""

    def __init__(
        self,
        scenario: Scenario,
        persona: PersonaParams | None = None,
        rng_for: RngFactory | None = None,
    ) -> None:
        self.script = build_script(scenario)
        self.info = information_items(scenario.user_goal)
        self.persona = (
            None
            if persona is None
            else PersonaPlay(persona, rng_for or persona_rngs(0), self.info, self._needed())
        )
        self.position = 0
        self.last_text = ""
        self.repeat_requests = 0
        self.answers = 0
        self.ended = False
        self.no_answer_given = False

    def _needed(self) -> list[Any]:
        """The trace's tool-call parameter values (what the agent will act on)."""
        out: list[Any] = []

        def walk(value: Any) -> None:
            if isinstance(value, dict):
                for v in value.values():
                    walk(v)
            elif isinstance(value, list):
                for v in value:
                    walk(v)
            elif isinstance(value, str | int | float) and not isinstance(value, bool):
                out.append(value)

        for block in self.script.blocks:
            for step in block:
                if step.kind == "call":
                    walk(step.params)
        return out

    def respond(self, heard: str) -> CallerTurn:
        if self.ended:
            return self._turn(CLOSING, "closing", end=True)
        if self.persona is not None:
            self.persona.start_turn()
        if is_empty(heard) and self.repeat_requests < MAX_REPEAT_REQUESTS:
            self.repeat_requests += 1
            if self.persona is not None:
                self.persona.heard_nothing()
            return CallerTurn(text=REPEAT_REQUEST, kind="repeat_request")
        self.repeat_requests = 0
        if self.persona is not None and self.persona.asks_repeat():
            return CallerTurn(text=ASK_REPEAT, kind="repeat_request", behavior=["ask_repeat"])
        expected = self.script.agent_text(self.position)
        coverage = similarity(heard, heard_part(expected, heard))
        on_script = coverage >= ON_SCRIPT and similarity(expected, heard) >= ON_SCRIPT_PRECISION
        if not on_script:
            # Only what the agent said beyond its expected turn can ask something new.
            extra = heard if coverage < ON_SCRIPT else novel_words(heard, expected)
            requested = self._requested(extra)
            if requested and self.answers < MAX_ANSWERS:
                self.answers += 1
                # Asked again after being misunderstood, people spell with care.
                spell = asks_to_spell(extra) or is_repair(extra)
                text = ". ".join(say_value(item.value, spell) for item in requested)
                if self.persona is not None:
                    self.persona.given(text)
                return self._turn(f"{text}.", "answer")
            if gives_up(extra):
                return self._turn(FAILURE_CLOSING, "give_up", end=True)
            if (is_repeat_request(extra) or asks_again_which(extra)) and self.last_text:
                return self._turn(self.last_text, "repeat")
        return self._next_line(heard)

    @property
    def events(self) -> list[TimelineEvent]:
        """What the persona did, for the attempt's timeline (none without one)."""
        return [] if self.persona is None else self.persona.events

    def _turn(
        self,
        text: str,
        kind: CallerTurnKind,
        end: bool = False,
        behavior: list[PersonaBehavior] | None = None,
    ) -> CallerTurn:
        self.last_text = text
        self.ended = self.ended or end
        return CallerTurn(text=text, kind=kind, end_call=end, behavior=behavior or [])

    def _next_line(self, heard: str) -> CallerTurn:
        lines = self.script.user_lines
        open_question = asks_question(heard) and not wraps_up(heard)
        if self.position >= len(lines):
            if open_question and not self.no_answer_given:
                # Asked something it has no answer for: say so rather than hang up on it.
                self.no_answer_given = True
                return self._turn(NO_ANSWER, "answer")
            return self._turn(CLOSING, "closing", end=True)
        text = lines[self.position]
        self.position += 1
        last = self.position == len(lines)
        end = last and says_goodbye(text) and not open_question
        if self.persona is None:
            return self._turn(text, "line", end=end)
        said, done = self.persona.shape_line(
            text, lambda item: bool(self._best_items(heard, MIN_KEY_SCORE, [item]))
        )
        return self._turn(said, "line", end=end, behavior=done)

    def _requested(self, heard: str) -> list[InfoItem]:
        """Information items the agent asks for that the next line does not already give."""
        if not is_request(heard):
            return []
        # The items the turn names best, and, for a compound question ("your seat
        # preference and your meal request"), every item a part of it names in full.
        chosen = {item.value: item for item in self._best_items(heard, MIN_KEY_SCORE)}
        for part in clauses(heard):
            minimum = MIN_KEY_SCORE if asks_question(part) else 1.0
            chosen.update((item.value, item) for item in self._best_items(part, minimum))
        pending = self.persona.pending if self.persona is not None else []
        if not chosen:
            # Asked something it cannot place while it owes a value it left out: that
            # (not when asked to say its last turn or its choice again).
            again = is_repeat_request(heard) or asks_again_which(heard)
            return [] if again else list(pending)
        # What it left out is what it knows it owes: given before any other item the
        # question names as well (the colleague's employee id, not its own), and before
        # its next line even when that line says it too: the agent asked for it now, and
        # would take the next line for the answer.
        owed = [item for item in chosen.values() if item in pending]
        if owed:
            return owed
        upcoming = self.script.user_lines[self.position : self.position + 1]
        upcoming_sig = "".join(signature(t) for line in upcoming for t in tokens(line))
        if any(signature(value) in upcoming_sig for value in chosen):
            return []  # the script answers it next
        return list(chosen.values())

    def _best_items(
        self, part: str, minimum: float, among: list[InfoItem] | None = None
    ) -> list[InfoItem]:
        """The information items (of ``among``, default all) whose key the words of
        ``part`` name best (at least ``minimum`` of the key's words)."""
        said = {sounds_like(w) for w in words(part)}
        scored = []
        for item in self.info if among is None else among:
            if item.label:
                score = sum(sounds_like(w) in said for w in item.label) / len(item.label)
                if score >= minimum:
                    scored.append((score, item))
        best = max((score for score, _ in scored), default=0.0)
        return [item for score, item in scored if score == best]
