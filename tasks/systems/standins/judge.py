"""A brain that answers evaflow's judge prompts, for the provider stand-ins (rehearsing judges).

It is no judge of quality: it answers in the JSON shape the prompt asks for, built only
from what the request holds, so a judge's whole path (LiteLLM, the provider's protocol,
parsing, scoring, storing) runs offline and every field a metric reads is there:

* the rubric is read from the prompt's ``Shape:`` example (``"dimensions"``,
  ``"corruption_analysis"``, ``{"turns": [...]}``, a per-turn or per-tool-call list), its
  dimension and corruption names from that example, the rating of a clean answer from
  the example's ``"rating"``;
* the ids it rates are the ones the prompt lists (``turn id ... [1, 2]``, ``Turn N:``,
  ``[Turn N]``, ``Tool Call [N]``); a key-entity unit compares its ``Expected`` and
  ``Transcribed`` texts;
* an audio judge's answer needs audio: given none (no audio part, or one the stand-in did
  not hear) it says so in every turn's explanation, as Gemini does when it drops an
  inline payload; given audio, each turn's transcript is what the stand-in's recogniser
  heard and its rating says whether the turn's intended words are in it.

``JudgeBrain()`` is a brain for any stand-in (``messages -> message``); the Gemini stand-in
calls its ``answer_heard`` with the audio parts apart from the prompt's text.
"""

from __future__ import annotations

import json
import re
from typing import Any

from tasks.systems.standins.brain import text_of
from tasks.systems.standins.gemini_contents import Heard, HeardAudio

NO_AUDIO = "No audio was provided with the request, so nothing could be heard."
HEARD_ENOUGH = 0.5  # share of a turn's intended words heard for a clean rating
_WORD = re.compile(r"[a-z0-9]+")


def _shape(prompt: str) -> str:
    """The prompt's JSON example (after its last ``Shape:``)."""
    at = prompt.rfind("Shape:")
    return prompt[at + len("Shape:") :] if at >= 0 else ""


def _clean_rating(shape: str) -> int:
    found = re.search(r'"rating":\s*(\d+)', shape)
    return int(found.group(1)) if found else 1


def _bad_rating(clean: int) -> int:
    return 1 if clean > 1 else 0


def _named_objects(shape: str, outer: str) -> list[str]:
    """The keys of ``outer``'s object in the example (``"name": {`` entries)."""
    return [k for k in re.findall(r'"([a-z_]+)":\s*\{', shape) if k != outer]


def _listed_ids(prompt: str) -> list[int]:
    """Turn ids the prompt lists: a JSON list after "turn id", else its turn headers."""
    listed = re.search(r"turn ids?\b[^\[]{0,40}(\[[\d,\s]*\])", prompt)
    if listed:
        return [int(i) for i in json.loads(listed.group(1))]
    headers = re.findall(r"^\[Turn (\d+)\]|^Turn (\d+):", prompt, flags=re.MULTILINE)
    return list(dict.fromkeys(int(a or b) for a, b in headers))


def _intended(prompt: str) -> dict[int, str]:
    return {int(t): text for t, text in re.findall(r"^Turn (\d+): (.*)$", prompt, re.MULTILINE)}


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def heard_share(intended: str, heard: str) -> float:
    """Share of ``intended``'s words that are in ``heard`` (1.0 when it has none)."""
    wanted = _words(intended)
    got = set(_words(heard))
    return sum(w in got for w in wanted) / len(wanted) if wanted else 1.0


def audio_answer(prompt: str, audio: list[HeardAudio]) -> dict[str, Any]:
    shape = _shape(prompt)
    clean = _clean_rating(shape)
    intended = _intended(prompt)
    heard = " ".join(a.text for a in audio).strip()
    turns = []
    for turn_id in _listed_ids(prompt):
        entry: dict[str, Any] = {"turn_id": turn_id, "language": "en"}
        if not audio:
            turns.append({**entry, "transcript": "", "explanation": NO_AUDIO, "rating": None})
            continue
        share = heard_share(intended.get(turn_id, ""), heard)
        good = share >= HEARD_ENOUGH
        entry |= {
            "transcript": heard,
            "explanation": f"heard {share:.0%} of the turn's words in "
            f"{sum(a.seconds for a in audio):.1f} s of audio",
            "rating": clean if good else _bad_rating(clean),
        }
        if '"has_entities"' in shape:
            entry["has_entities"] = True
        if '"failure_modes"' in shape:
            entry["failure_modes"] = [] if good else ["entity_error"]
        turns.append(entry)
    return {"turns": turns}


def _units(prompt: str) -> dict[int, tuple[str, str]]:
    pattern = r"^Turn (\d+):\nExpected: (.*)\nTranscribed: (.*)$"
    return {int(t): (e, h) for t, e, h in re.findall(pattern, prompt, re.MULTILINE)}


def list_answer(prompt: str) -> list[dict[str, Any]]:
    """A per-turn (or per-tool-call) list: a clean rating, or the entities of each unit."""
    shape = _shape(prompt)
    if '"tool_call_id"' in shape:
        calls = re.findall(r"^Tool Call \[(\d+)\] \(([^)]*)\): (.*)$", prompt, re.MULTILINE)
        return [
            {
                "tool_call_id": int(n),
                "entities": [_entity(name, args, args)],
                "summary": f"arguments of {name}",
            }
            for n, name, args in calls
        ]
    if '"entities"' in shape:
        return [
            {"turn_id": t, "entities": [_entity("utterance", e, h)], "summary": ""}
            for t, (e, h) in _units(prompt).items()
        ]
    entry: dict[str, Any] = {"explanation": "as the rubric's clean answer"}
    if '"failure_modes"' in shape:
        entry["failure_modes"] = []
    rating = _clean_rating(shape)
    return [{"turn_id": t, **entry, "rating": rating} for t in _listed_ids(prompt)]


def _entity(kind: str, value: str, transcribed: str) -> dict[str, Any]:
    same = _words(value) == _words(transcribed)
    return {
        "type": kind,
        "value": value,
        "transcribed_value": transcribed,
        "analysis": "same words" if same else "the words differ",
        "correct": same,
        "skipped": False,
    }


def judge_answer(prompt: str, audio: list[HeardAudio] | None = None) -> Any:
    """The JSON value answering ``prompt`` (the user message); ``audio``: the audio parts
    heard (None: a text-only request)."""
    shape = _shape(prompt)
    if not shape:
        return {"error": "no Shape: example in the prompt"}
    if '"turns"' in shape:
        return audio_answer(prompt, audio or [])
    if shape.lstrip().startswith("["):
        return list_answer(prompt)
    if '"corruption_analysis"' in shape:
        names = _named_objects(shape, "corruption_analysis")
        corruption = {n: {"analysis": "not observed", "detected": False} for n in names}
        return {"corruption_analysis": corruption, "rating": _clean_rating(shape)}
    if '"dimensions"' in shape:
        names = _named_objects(shape, "dimensions")
        dims = {n: {"evidence": "", "flagged": False, "rating": 3} for n in names}
        return {"dimensions": dims, "rating": _clean_rating(shape)}
    return {"rating": _clean_rating(shape)}


def _prompt(messages: list[dict[str, Any]]) -> str:
    return next((text_of(m) for m in reversed(messages) if m.get("role") == "user"), "")


class JudgeBrain:
    """``messages -> message`` answering the last user message's judge prompt as JSON;
    ``answer_heard`` for the Gemini stand-in (audio parts apart from the prompt)."""

    def __call__(self, messages: list[dict[str, Any]]) -> dict[str, Any]:
        return self._reply(judge_answer(_prompt(messages)))

    def answer_heard(self, heard: Heard) -> dict[str, Any]:
        prompt = _prompt(heard.messages)
        for audio in reversed(heard.audio):  # transcripts follow the prompt's text
            prompt = prompt.removesuffix(audio.text).rstrip()
        return self._reply(judge_answer(prompt, heard.audio))

    @staticmethod
    def _reply(value: Any) -> dict[str, Any]:
        return {"role": "assistant", "content": json.dumps(value, ensure_ascii=False)}
