"""The speech judge's entity check: transcript first, then the forced choice's evidence."""

from __future__ import annotations

from typing import Any

import numpy as np

from perturbations.audio import Clip
from tasks.judges.offline.speech import CHOICE_MARGIN, EntityCheck
from tasks.voice.verify import Choice

INTENDED = "Your confirmation code is K3FW2D."


class FakeChooser:
    """Answers every forced choice with one fixed outcome and records the calls."""

    def __init__(self, winner: int, margin: float, view: float = 1.0) -> None:
        # ``view``: every scored candidate's margin in the second view of the clip.
        margins = dict.fromkeys(range(1, 200), view)
        self.answer = Choice(winner=winner, margin=margin, heard="x", view_margins=margins)
        self.calls = 0

    def choose(self, clip: Any, seqs: Any, heard: Any = ()) -> Choice:
        self.calls += 1
        assert " ".join(seqs[0]) == "your confirmation code is k three f w two d"
        return self.answer


def check(chooser: Any, heard: str) -> tuple[list[str], EntityCheck]:
    entity_check = EntityCheck(chooser)
    entity_check.clip = Clip.from_float(np.zeros(800), 8000)
    return entity_check.missing(INTENDED, heard), entity_check


def test_an_entity_in_the_transcript_is_never_re_checked() -> None:
    chooser = FakeChooser(winner=5, margin=1.0)
    assert check(chooser, "your confirmation code is k three f w two d")[0] == []
    assert chooser.calls == 0


def test_a_variant_that_wins_by_the_margin_is_an_error_else_the_value_is_kept() -> None:
    assert check(FakeChooser(5, CHOICE_MARGIN + 0.01), "code is k three f d two d")[0]
    missing, entity_check = check(FakeChooser(5, CHOICE_MARGIN - 0.01), "code is k three f d two d")
    assert missing == [] and "K3FW2D" in entity_check.note()
    assert check(None, "code is k three f d two d")[0] == ["K3FW2D"]  # transcript check only


def test_a_digit_variant_the_transcript_heard_counts_a_letter_one_does_not() -> None:
    kept = FakeChooser(0, 0.0)
    assert check(kept, "your confirmation code is k three f w two")[0] == []
    heard_digit = "your confirmation code is k three f w nine d"
    assert check(kept, heard_digit)[0] == ["K3FW2D (transcript heard '" + heard_digit + "')"]
    assert check(kept, "your confirmation code is k three f d two d")[0] == []


def test_evidence_the_second_view_does_not_repeat_is_not_an_error() -> None:
    assert check(FakeChooser(5, 1.0, view=-0.01), "code is k three f d two d")[0] == []
    heard_digit = "your confirmation code is k three f w nine d"
    assert check(FakeChooser(0, 0.0, view=-0.01), heard_digit)[0] == []
    no_view = Choice(winner=5, margin=1.0, heard="x")  # a candidate the view did not score
    assert check(FakeChooser(5, 1.0), heard_digit)[0] and not _counts(no_view)


def _counts(choice: Choice) -> bool:
    class Fixed:
        def choose(self, clip: Any, seqs: Any, heard: Any = ()) -> Choice:
            return choice

    return bool(check(Fixed(), "code is k three f d two d")[0])


class BrokenChooser:
    def choose(self, clip: Any, seqs: Any, heard: Any = ()) -> Choice:
        raise RuntimeError("Failed to set FSG in decoder")


def test_a_failed_forced_choice_leaves_the_transcript_verdict_with_the_reason() -> None:
    missing = check(BrokenChooser(), "code is k three f d two d")[0]
    assert missing == ["K3FW2D (forced choice failed: Failed to set FSG in decoder)"]
