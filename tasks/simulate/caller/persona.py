"""EVA's behaviour personas in the scripted caller: what it withholds, repeats, asks again.

:class:`PersonaPlay` holds one trial's persona state for :class:`ScriptedCaller`. Every
caller turn draws the same four numbers from its own generator (``rng_for(turn)``, in the
simulation ``behavior_rng(channel_seed, "persona", turn)``), whatever branch the turn
takes, so whether turn *n* withholds or repeats never depends on what earlier turns did
with their draws. What the persona may do is only what spec 4.5 / 8.1 lets a persona do
without corrupting the test:

* ``withheld``: a scripted line that gives values (codes, ids, names, dates) is said
  without one clause of them; the values are pending and the caller gives them as soon as
  the agent asks (:meth:`PersonaPlay.pending_asked`). A value the agent asked for in the
  turn being answered is never withheld.
* ``repeated``: a line is preceded by a short piece the caller already said ("Like I said,
  ..."); never on the first line, never a piece carrying a value (it would say a value
  twice where the agent reads one).
* ``ask_repeat``: the caller asks the agent to say its turn again: at most once per agent
  turn, never twice in a row, never when it heard nothing (the empty-turn path asks).

Each behaviour is stored as a ``persona`` timeline event, so tests and reports count them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from perturbations.behavior import PersonaParams, behavior_rng
from tasks.records import TimelineEvent
from tasks.simulate.dialogue.cues import says_goodbye, words
from tasks.simulate.dialogue.slots import signature, tokens
from tasks.spoken.words import DIGIT_WORDS

if TYPE_CHECKING:
    from tasks.simulate.caller.info import InfoItem

PersonaBehavior = Literal["withheld", "repeated", "ask_repeat"]
RngFactory = Callable[[int], np.random.Generator]

# Phrased as callers phrase it and as ``is_repeat_request`` reads it (and in the agent
# recogniser's generic caller speech: "Can you say that again?").
ASK_REPEAT = "Sorry, can you say that again?"
WITHHOLD = "Hang on, I don't have the rest of it in front of me."
LIKE_I_SAID = "Like I said,"
# Values shorter than this are found by accident inside other words ("yes", "1").
MIN_VALUE_SIGNATURE = 3
PIECE_WORDS = (3, 12)
# A line splits into clauses at commas and sentence ends, and before " and ".
_CLAUSE_SPLIT = re.compile(r"(?<=[,.;!?])\s+|\s+(?=and\s)")
_PIECE_SPLIT = re.compile(r"(?<=[,.;!?])\s+")


@dataclass(frozen=True)
class TurnDraw:
    """One caller turn's draws, taken whether or not they are used."""

    ask_repeat: float
    repeat: float
    withhold: float
    pick: float


def condition_persona(condition: Any) -> PersonaParams | None:
    """The behaviour persona of a condition (a registered name or a ConditionSpec)."""
    if isinstance(condition, str):
        from perturbations.conditions import get_condition

        condition = get_condition(condition)
    persona = getattr(condition, "persona", None)
    return persona if isinstance(persona, PersonaParams) else None


def persona_rngs(seed: int) -> RngFactory:
    """Turn ``n``'s generator from the trial's channel seed (nothing the agent moves)."""
    return lambda turn: behavior_rng(seed, "persona", turn)


def givable(item: InfoItem) -> bool:
    """A value a caller can forget to give: a code, an id, a number, a date, a name."""
    named = "name" in item.label
    return (named or any(c.isdigit() for c in item.value)) and len(
        signature(item.value)
    ) >= MIN_VALUE_SIGNATURE


def _sig(text: str) -> str:
    return "".join(signature(t) for t in tokens(text))


def _carries(clause: str, item: InfoItem) -> bool:
    return signature(item.value) in _sig(clause)


class PersonaPlay:
    """One trial's persona: draws per turn, pending withheld values, behaviour events."""

    def __init__(
        self,
        params: PersonaParams,
        rng_for: RngFactory,
        info: list[InfoItem],
        needed: Iterable[Any] = (),
    ):
        self.params, self.rng_for = params, rng_for
        # Values the agent will act on (the trace's tool-call parameters and the goal's
        # values): withholding a clause may take away only the values it withholds.
        self.needed = {signature(v) for v in [*needed, *(it.value for it in info)]}
        self.needed = {s for s in self.needed if len(s) >= MIN_VALUE_SIGNATURE}
        self.info = [item for item in info if givable(item)]
        self.values = [it for it in info if len(signature(it.value)) >= MIN_VALUE_SIGNATURE]
        self.turn = -1
        self.draw = TurnDraw(1.0, 1.0, 1.0, 0.0)
        self.pending: list[InfoItem] = []
        self.withheld_once: set[str] = set()
        self.last_asked = False
        self.said: list[str] = []
        self.events: list[TimelineEvent] = []

    def start_turn(self) -> None:
        self.turn += 1
        u = self.rng_for(self.turn).random(4)
        self.draw = TurnDraw(float(u[0]), float(u[1]), float(u[2]), float(u[3]))

    def record(self, behavior: PersonaBehavior, **data: Any) -> None:
        payload = {"behavior": behavior, "persona": self.params.behavior, "turn": self.turn}
        self.events.append(
            TimelineEvent(t_s=0.0, source="caller", kind="persona", data={**payload, **data})
        )

    def asks_repeat(self) -> bool:
        """This turn asks the agent to say it again (not twice in a row)."""
        ask = not self.last_asked and self.draw.ask_repeat < self.params.ask_repeat_rate
        self.last_asked = ask
        if ask:
            self.record("ask_repeat")
        return ask

    def heard_nothing(self) -> None:
        """The caller asked to repeat because it heard nothing: the next turn must not."""
        self.last_asked = True

    def shape_line(
        self, line: str, asked: Callable[[InfoItem], bool]
    ) -> tuple[str, list[PersonaBehavior]]:
        """The scripted line as this persona says it this turn (``asked``: the agent asked
        for the item in the turn being answered)."""
        first = not self.said
        text = self._withhold(line, asked)
        done: list[PersonaBehavior] = []
        if text != line:
            done.append("withheld")
        if not first and self.draw.repeat < self.params.repeat_rate:
            piece = self._piece()
            if piece:
                text = f"{LIKE_I_SAID} {piece}. {text}"
                done.append("repeated")
                self.record("repeated", piece=piece)
        self.said.append(line)
        self.given(text)
        return text, done

    def _withhold(self, line: str, asked: Callable[[InfoItem], bool]) -> str:
        if self.draw.withhold >= self.params.withhold_rate:
            return line
        parts = [p for p in _CLAUSE_SPLIT.split(line) if p.strip()]
        if len(parts) < 2:
            return line  # nothing would be left of the line but the excuse
        held = [[it for it in self.info if _carries(p, it)] for p in parts]
        choices = [
            i
            for i, items in enumerate(held)
            if items
            and not any(asked(it) or it.value in self.withheld_once for it in items)
            # a value that also sits in another clause would still be said
            and not any(_carries(p, it) for j, p in enumerate(parts) if j != i for it in items)
            and not self._takes_more(line, parts, i, items)
        ]
        if not choices:
            return line
        cut = choices[min(int(self.draw.pick * len(choices)), len(choices) - 1)]
        for item in held[cut]:
            self.pending.append(item)
            self.withheld_once.add(item.value)
        self.record(
            "withheld",
            labels=[" ".join(it.label) for it in held[cut]],
            values=[it.value for it in held[cut]],
        )
        kept = " ".join(p for i, p in enumerate(parts) if i != cut).strip()
        kept = re.sub(r"^and\s+", "", kept)
        kept = re.sub(r"[,;]\s*$", ".", kept)
        if kept and kept[-1] not in ".!?":
            kept += "."
        kept = f"{kept[:1].upper()}{kept[1:]}"
        # The excuse goes on the far side of the gap, so a listener aligning the line
        # with what it expected finds the value missing, not replaced by the excuse.
        return f"{kept} {WITHHOLD}" if cut < len(parts) / 2 else f"{WITHHOLD} {kept}"

    def _takes_more(self, line: str, parts: list[str], cut: int, items: list[InfoItem]) -> bool:
        """Leaving out clause ``cut`` would also take away a value the caller cannot give
        when asked: what it called for ("a desk", "parking", an enum word the agent reads
        from the line) or a part of another value ("F L three" inside a room code)."""
        kept = " ".join(p for j, p in enumerate(parts) if j != cut)
        line_sig, kept_sig = _sig(line), _sig(kept)
        held = {signature(it.value) for it in items}
        return any(s in line_sig and s not in kept_sig for s in self.needed - held)

    def _piece(self) -> str:
        """A short value-free clause of an earlier line (drawn), or '' when there is none."""
        pieces = []
        for line in self.said:
            for part in _PIECE_SPLIT.split(line):
                part = re.sub(r"^(and|so|but|or)\s+", "", part.strip().rstrip(",.;!?"), flags=re.I)
                n = len(words(part))
                if not PIECE_WORDS[0] <= n <= PIECE_WORDS[1] or says_goodbye(part):
                    continue
                if any(c.isdigit() for c in part) or any(_carries(part, it) for it in self.values):
                    continue
                said = words(part)
                letters = [w for w in said if len(w) == 1 and w not in ("i", "a")]
                if letters or any(w in DIGIT_WORDS for w in said):
                    continue  # a spelled code, a number or a choice said in words
                pieces.append(part)
        if not pieces:
            return ""
        piece = pieces[min(int(self.draw.pick * len(pieces)), len(pieces) - 1)]
        return piece if piece.startswith("I ") else f"{piece[:1].lower()}{piece[1:]}"

    def given(self, text: str) -> None:
        """Values said in ``text`` are no longer pending."""
        said = "".join(signature(t) for t in tokens(text))
        self.pending = [it for it in self.pending if signature(it.value) not in said]
