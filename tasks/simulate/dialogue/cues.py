"""What a turn *does* (asks to repeat, asks for a value, gives up), read from its words.

Both simulated sides classify what they heard with these rules, never with private
signals, so they keep working when the other side is a different agent or caller and
when the words arrive through speech recognition (lower-case, no punctuation).
"""

from __future__ import annotations

import re
from functools import lru_cache

from tasks.spoken import normalize_spoken

_REPEAT = re.compile(
    r"\b(repeat (that|it|yourself|the|your)|say (that|it) again|come again|"
    r"didn'?t (catch|get|hear|understand)|(did not|couldn'?t|could not) (catch|hear|understand)|"
    r"one more time|pardon|sorry what)\b"
)
_SPELL = re.compile(r"\b(spell|spelling|letter by letter|one (letter|character) at a time)\b")
_ASK = re.compile(
    r"\b(tell me|give me|provide|read me|read (it|that|out)|spell|repeat|what is|what's|"
    r"may i have|can i have|could i have|please (say|confirm)|say (your|the)|"
    r"(could|can|would) you( please)?)\b"
)
_GIVE_UP = re.compile(
    r"\b(not able to (help|verify|find|complete|continue|proceed)|unable to "
    r"(help|verify|find|complete|continue|proceed)|can'?t (help|complete|continue|proceed)|"
    r"cannot (help|complete|continue|proceed)|still (can'?t|couldn'?t|could not) (find|verify))\b"
)
_GOODBYE = re.compile(
    r"\b(goodbye|good bye|bye|that'?s all|nothing else|have a (good|great|nice))\b"
)
# A yes/no or choice question, which recognised text (no "?") still shows by its words.
_QUESTION = re.compile(
    r"\b(shall i|should i|can i|may i|would you( like| prefer)?|do you (want|have|need|prefer)|"
    r"is that|are you|does that|which (one|1|flight|option|seat)|what (would|kind|type|seat|meal))\b"
)
# The agent's wrap-up: after it, a goodbye answers everything that is left.
_WRAP_UP = re.compile(r"\b(anything else|something else|any other (questions|thing))\b")
# Where one turn asks the next thing: "..., and ...", "also", a sentence end.
_CLAUSE = re.compile(r"[?.;!]|,|\b(and|also|plus|as well as)\b")
_WORD = re.compile(r"[a-z0-9']+")
# Short filler a recogniser emits for noise or breath; it says nothing.
_EMPTY_WORDS = frozenset({"uh", "um", "hmm", "mm", "ah", "oh", "the", "a", "huh"})
MAX_REPEAT_REQUEST_WORDS = 14


def words(text: str) -> list[str]:
    return list(_words(text))


@lru_cache(maxsize=8192)
def _words(text: str) -> tuple[str, ...]:
    return tuple(_WORD.findall(normalize_spoken(text).lower()))


def plain(text: str) -> str:
    return " ".join(words(text))


def is_repeat_request(text: str) -> bool:
    """A short turn that only asks the other side to say its last turn again."""
    said = words(text)
    return 0 < len(said) <= MAX_REPEAT_REQUEST_WORDS and bool(_REPEAT.search(" ".join(said)))


def asks_to_spell(text: str) -> bool:
    return bool(_SPELL.search(plain(text)))


_REPAIR = re.compile(r"\b(sorry|couldn'?t|could not|didn'?t|no match|match|again|spell)\b")


def is_repair(text: str) -> bool:
    """The listener did not get it: an apology, a failed match, a request to spell."""
    return bool(_REPAIR.search(plain(text)))


def is_request(text: str) -> bool:
    """The turn asks the listener for something (a value, a repetition, a spelling)."""
    said = plain(text)
    return bool(_ASK.search(said) or _REPEAT.search(said) or _SPELL.search(said))


def asks_question(text: str) -> bool:
    """The turn asks the listener something (a value, a yes/no, a choice)."""
    said = plain(text)
    return is_request(text) or bool(_QUESTION.search(said))


_WHICH = re.compile(r"\bwhich (one|1|flight|option|of (them|those))\b")  # "one" normalises to "1"


def asks_again_which(text: str) -> bool:
    """ "Sorry, which one would you like?": the listener missed the choice just made."""
    return bool(_WHICH.search(plain(text))) and is_repair(text)


def wraps_up(text: str) -> bool:
    """The turn closes the business ("anything else I can help you with?")."""
    return bool(_WRAP_UP.search(plain(text)))


def clauses(text: str) -> list[str]:
    """The parts of a turn that may each ask one thing, in order (split before
    normalising, so punctuation still helps when the text has it)."""
    parts = (plain(p) for p in _CLAUSE.split(text.lower()) if p and not _CLAUSE.fullmatch(p))
    return [p for p in parts if p]


def gives_up(text: str) -> bool:
    return bool(_GIVE_UP.search(plain(text)))


def says_goodbye(text: str) -> bool:
    return bool(_GOODBYE.search(plain(text)))


def is_empty(text: str) -> bool:
    """Nothing useful was heard: no words, or only filler."""
    return not [w for w in words(text) if w not in _EMPTY_WORDS]


def similarity(heard: str, expected: str) -> float:
    """Share of the expected words that were heard (0..1), order-insensitive."""
    want = words(expected)
    if not want:
        return 0.0
    got = set(words(heard))
    return sum(w in got for w in want) / len(want)


def novel_words(heard: str, expected: str) -> str:
    """The heard words that are not in the expected text, in order."""
    known = set(words(expected))
    return " ".join(w for w in words(heard) if w not in known)


def label_words(name: str) -> list[str]:
    """Words of a parameter or information key: "otp_code" -> ["otp", "code"]."""
    spaced = re.sub(r"([a-z])([A-Z])", r"\1 \2", name).replace("_", " ").replace("-", " ")
    return [w for w in re.findall(r"[a-z0-9]+", spaced.lower()) if w not in ("the", "of", "a")]
