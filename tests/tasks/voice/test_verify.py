"""tasks.voice.verify: the forced-choice word graph and a real decode of a wrong digit."""

from __future__ import annotations

import numpy as np

from perturbations.audio import Clip, VoiceSpec
from tasks.spoken import render_spoken
from tasks.voice.stt import lm_tokens
from tasks.voice.tts import synthesize
from tasks.voice.verify import ChoiceDecoder, choice_graph, supported


def words(text: str) -> list[str]:
    return text.split()


def paths(start: int, end: int, arcs: list) -> set[tuple[str, ...]]:  # type: ignore[type-arg]
    out: set[tuple[str, ...]] = set()

    def walk(state: int, words: tuple[str, ...]) -> None:
        if state == end:
            out.add(words)
        for arc in arcs:
            if arc[0] == state:
                walk(arc[1], words + ((arc[3],) if len(arc) == 4 else ()))

    walk(start, ())
    return out


def test_graph_accepts_exactly_the_sequences_and_shares_their_ends() -> None:
    intended = words("code is e m p one two three")
    seqs = [intended] + [intended[:i] + ["nine"] + intended[i + 1 :] for i in range(4, 7)]
    seqs.append(words("code is e m p one two"))  # a shorter one: a prefix of the others
    start, end, arcs = choice_graph(seqs)
    assert paths(start, end, arcs) == {tuple(s) for s in seqs}
    assert all(arc[2] == 1.0 for arc in arcs)  # no path is preferred by the graph itself
    assert len([a for a in arcs if len(a) == 4]) < sum(len(s) for s in seqs) // 2


def test_variants_the_transcript_heard_are_found() -> None:
    intended = words("code is two n one six d j")
    seqs = [intended, words("code is two n one six v j"), words("code is two n one six d k")]
    assert supported(seqs, words("the code is two n one six v j")) == [1]
    assert supported(seqs, words("code is two and one six b j")) == []


def _spoken(text: str) -> Clip:
    clip = synthesize(render_spoken(text), VoiceSpec(voice="en-us+klatt3"))
    pad = np.zeros(int(0.3 * clip.rate))
    return Clip.from_float(np.concatenate([pad, clip.samples, pad]), clip.rate, clip=True)


def test_wrong_digit_beats_the_intended_one_and_the_right_one_wins() -> None:
    intended = "Your employee ID is EMP487647."
    said_wrong = "Your employee ID is EMP417647."
    variants = [intended.replace("487", f"4{d}7") for d in "012345679"]
    seqs = [lm_tokens(t).split() for t in [intended, *variants]]
    decoder = ChoiceDecoder()
    right = decoder.choose(_spoken(intended), seqs)
    wrong = decoder.choose(_spoken(said_wrong), seqs)
    assert right is not None and right.winner == 0 and right.margin == 0.0
    assert wrong is not None and wrong.heard == lm_tokens(said_wrong)
    assert wrong.margin > 0.04
