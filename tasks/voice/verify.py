"""Forced-choice decoding: which of a few word sequences did a clip say, and by how much.

A recogniser with an open vocabulary (``tasks.voice.stt``) confuses spelled letters (W/D,
T/D) in clean eSpeak audio, so "the transcript lacks the code" is weak evidence that the
code was said wrong. Here the decoder is a word graph of the intended sentence whose
entity slot holds the intended value and its plausible variants (one symbol of a code, the
month or day of a date, an amount a little off); the winning path and the log-likelihood
margin by which it beats the intended value are the evidence. The variants are what keeps
this from being an oracle: a grammar of the intended value alone always "hears" it.

PocketSphinx only (the scores are its path scores). Batch cepstral mean normalisation, so
two decodes of the same clip start from the same state and their scores compare.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Sequence
from functools import lru_cache

from pydantic import BaseModel, Field

from perturbations.audio import Clip
from tasks.voice.stt_base import TELEPHONE_VARIANTS, SttSpec, prepare_audio

_ALL = "choices"
_ONE = "intended"
_TINY = 1e-300
# The second view: tempo and pitch 5% up (not tuned). A letter or digit the recogniser
# confuses in clean audio wins by a hair that a small change of voice undoes; a symbol
# spoken wrong keeps winning.
VIEW_SPEED = 1.05


class Choice(BaseModel):
    """Outcome of one forced-choice decode."""

    winner: int = Field(description="Index of the best-scoring sequence (0 = the intended one)")
    margin: float = Field(
        description="Natural-log likelihood by which the winner beats sequence 0 (0 if it won)"
    )
    heard: str = Field(description="The winning path's words")
    view_margins: dict[int, float] = Field(
        default_factory=dict,
        description="Candidate index -> natural-log score by which it beats sequence 0 "
        "in the second view of the clip (played VIEW_SPEED times faster); for the "
        "candidates scored alone (the graph's winner and the variants the transcript heard)",
    )


def _common_ends(seqs: Sequence[Sequence[str]]) -> tuple[int, int]:
    """Lengths of the prefix and suffix shared by every sequence."""
    shortest = min(len(s) for s in seqs)
    pre = 0
    while pre < shortest and all(s[pre] == seqs[0][pre] for s in seqs):
        pre += 1
    suf = 0
    while suf < shortest - pre and all(s[-1 - suf] == seqs[0][-1 - suf] for s in seqs):
        suf += 1
    return pre, suf


Transition = tuple[int, int, float, str] | tuple[int, int, float]


def choice_graph(seqs: Sequence[Sequence[str]]) -> tuple[int, int, list[Transition]]:
    """(start, final, transitions) of the smallest word graph that accepts exactly ``seqs``.

    Shared prefixes and suffixes are merged, so one changed symbol of a nine-symbol code
    costs its alternatives plus one copy of the rest, not nine words per variant. Every
    arc has probability 1: the paths differ only in what the audio says of them, which
    also keeps a path's score equal to that of the same words decoded alone."""
    trie: list[dict[str, int]] = [{}]
    final: set[int] = set()
    for seq in seqs:
        node = 0
        for word in seq:
            if word not in trie[node]:
                trie.append({})
                trie[node][word] = len(trie) - 1
            node = trie[node][word]
        final.add(node)
    canon: dict[int, int] = {}
    classes: dict[tuple[bool, tuple[tuple[str, int], ...]], int] = {}
    for node in reversed(range(len(trie))):  # children are numbered after their parents
        key = (node in final, tuple(sorted((w, canon[c]) for w, c in trie[node].items())))
        canon[node] = classes.setdefault(key, len(classes))
    end = len(classes)
    arcs: set[Transition] = set()
    for node, children in enumerate(trie):
        arcs |= {(canon[node], canon[c], 1.0, w) for w, c in children.items()}
        if node in final:
            arcs.add((canon[node], end, 1.0))
    return canon[0], end, sorted(arcs, key=str)


class ChoiceDecoder:
    """One PocketSphinx decoder for forced choices; calls are serialised with a lock."""

    def __init__(self, spec: SttSpec | None = None) -> None:
        from pocketsphinx import Decoder

        self.spec = spec or SttSpec()
        # The full cmudict: a grammar search is built in milliseconds whatever its size.
        self._decoder = Decoder(lm=None, cmn="batch", compallsen=True, loglevel="FATAL")
        if self.spec.telephone_variants:
            for word, variants in TELEPHONE_VARIANTS.items():
                for number, phones in enumerate(variants, start=2):
                    self._decoder.add_word(f"{word}({number})", phones, True)
        self._lock = threading.Lock()

    def known_words(self, words: Sequence[str]) -> list[str]:
        """The words the decoder can say: an out-of-dictionary word (a rare name) cannot be
        forced; dropping it leaves its audio to the neighbours, the same for every path."""
        return [w for w in words if self._decoder.lookup_word(w) is not None]

    def _decode(
        self, name: str, seqs: Sequence[Sequence[str]], pcm: bytes
    ) -> tuple[str, float] | None:
        start, end, arcs = choice_graph(seqs)
        fsg = self._decoder.create_fsg(name, start, end, arcs)
        self._decoder.add_fsg(name, fsg)
        self._decoder.activate_search(name)
        self._decoder.start_utt()
        self._decoder.process_raw(pcm, no_search=False, full_utt=True)
        self._decoder.end_utt()
        hyp = self._decoder.hyp()
        if hyp is None:
            return None
        # The binding returns exp(path score); its log is the score in natural-log units.
        words = " ".join(w.split("(")[0] for w in hyp.hypstr.split())
        return words, math.log(max(hyp.score, _TINY))

    def choose(
        self, clip: Clip, seqs: Sequence[Sequence[str]], heard: Sequence[str] = ()
    ) -> Choice | None:
        """Which of ``seqs`` (word lists, the intended one first) the clip fits best.

        ``heard``: an open-vocabulary transcript of the clip; the variants it contains are
        also scored alone, since the graph search can prune the right path among many
        near-identical ones. None when the decoder found no path through the graph (e.g.
        the clip is far shorter than the sentence)."""
        if len(seqs) < 2 or not seqs[0]:
            raise ValueError(f"choose: need the intended sequence and variants, got {seqs!r}")
        pcm = prepare_audio(clip, self.spec).tobytes()
        with self._lock:
            seqs = [self.known_words(s) for s in seqs]
            best = self._decode(_ALL, seqs, pcm)
            if best is None:
                return None
            words, _ = best
            texts = [" ".join(s) for s in seqs]
            winner = texts.index(words) if words in texts else -1
            others = {i for i in supported(seqs, heard) if i != 0}
            others |= {winner} if winner > 0 else set()
            if not others:
                return Choice(winner=0, margin=0.0, heard=words)
            # Every candidate scored alone: path scores of single-path searches compare
            # (all senones are scored each frame), a path's score inside the graph can
            # lose to pruning.
            alone = self._decode(_ONE, seqs[:1], pcm)
            view = self._view_margins(clip, seqs, others)
            scored = [
                (found[1], i, found[0])
                for i in sorted(others)
                if (found := self._decode(_ONE, seqs[i : i + 1], pcm)) is not None
            ]
        if not scored:
            return Choice(winner=0, margin=0.0, heard=words)
        score, winner, words = max(scored)
        if alone is None:
            return Choice(winner=winner, margin=float("inf"), heard=words, view_margins=view)
        return Choice(
            winner=winner,
            margin=score - alone[1],
            heard=words,
            view_margins=view,
        )

    def _view_margins(
        self, clip: Clip, seqs: Sequence[Sequence[str]], others: set[int]
    ) -> dict[int, float]:
        """Score of each of ``others`` minus the intended one's on the clip played
        ``VIEW_SPEED`` times faster (tempo and pitch): a second look at the same speech."""
        fast = Clip(clip.samples, round(clip.rate * VIEW_SPEED))
        pcm = prepare_audio(fast, self.spec).tobytes()
        base = self._decode(_ONE, seqs[:1], pcm)
        if base is None:  # as in ``choose``: no path for the intended words at all
            return dict.fromkeys(sorted(others), float("inf"))
        out = {}
        for i in sorted(others):
            found = self._decode(_ONE, seqs[i : i + 1], pcm)
            out[i] = float("-inf") if found is None else found[1] - base[1]
        return out


def supported(seqs: Sequence[Sequence[str]], heard: Sequence[str]) -> list[int]:
    """Indices of the variants (``seqs[1:]``) whose change, with one word of context on
    each side (or the start or end of the sentence), appears as a run of words in
    ``heard``."""
    found = []
    text = f"^ {' '.join(heard)} $"
    for i, seq in enumerate(seqs[1:], start=1):
        pre, suf = _common_ends([seqs[0], seq])
        window = ["^", *seq, "$"][pre : len(seq) + 2 - suf]
        if f" {' '.join(window)} " in f" {text} ":
            found.append(i)
    return found


def changed_words(intended: Sequence[str], variant: Sequence[str]) -> list[str]:
    """The words of either sequence that the other does not share at its ends."""
    pre, suf = _common_ends([intended, variant])
    return [*intended[pre : len(intended) - suf], *variant[pre : len(variant) - suf]]


@lru_cache(maxsize=4)
def shared_decoder(spec: SttSpec) -> ChoiceDecoder:
    """One decoder per recogniser configuration for the process (building one loads the
    acoustic model, ~0.5 s); it serialises its calls."""
    return ChoiceDecoder(spec)
