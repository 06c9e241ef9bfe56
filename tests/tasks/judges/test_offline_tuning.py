"""Fitted parameters of the offline rules: declaration, overrides and the coordinate ascent."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from tasks.judges import JudgeTask, make_judge
from tasks.judges.inputs import ConcisenessInput, TraceItem
from tasks.judges.offline.params import PARAMS, ConcisenessParams
from tasks.judges.offline.tuning import RuleParams, coordinate_ascent, tunable


class Toy(RuleParams):
    cut: int = tunable(5, (1, 3, 5, 7, 9), "a threshold")
    flag: bool = tunable(False, (False, True), "a switch", False)


def test_space_prior_and_overrides() -> None:
    assert Toy.space() == {"cut": (1, 3, 5, 7, 9), "flag": (False, True)}
    assert Toy.prior() == Toy(cut=5, flag=False)  # cut: the middle of its grid
    assert Toy(cut=7).overrides() == {"cut": 7} and Toy().overrides() == {}
    assert Toy.resolve("toy", {"toy": {"flag": True}}) == Toy(flag=True)
    assert Toy.resolve("toy", {"other": {"cut": 1}}) == Toy()
    with pytest.raises(ValidationError):
        Toy.resolve("toy", {"toy": {"nonsense": 1}})
    with pytest.raises(ValueError, match="must be a mapping"):
        Toy.resolve("toy", {"toy": 3})


def test_a_default_or_prior_outside_the_grid_is_refused() -> None:
    with pytest.raises(ValueError, match="grid"):
        tunable(4, (1, 3, 5), "x")
    with pytest.raises(ValueError, match="grid"):
        tunable(3, (1, 3, 5), "x", prior=2)


def test_every_shipped_parameter_is_tunable_with_its_default_and_prior_on_the_grid() -> None:
    for model in PARAMS.values():
        default, prior = model(), model.prior()
        for name, grid in model.space().items():
            assert getattr(default, name) in grid and getattr(prior, name) in grid, name


def test_coordinate_ascent_finds_a_separable_optimum() -> None:
    def objective(p: Toy) -> tuple[float, ...]:
        return (-((p.cut - 7) ** 2) + (2 if p.flag else 0),)

    assert coordinate_ascent(Toy.prior(), objective) == Toy(cut=7, flag=True)


def test_coordinate_ascent_needs_strict_improvement_and_is_deterministic() -> None:
    # A flat objective leaves the start alone; a tie never moves it.
    assert coordinate_ascent(Toy.prior(), lambda p: (0.0,)) == Toy.prior()
    calls: list[Toy] = []

    def objective(p: Toy) -> tuple[float, ...]:
        calls.append(p)
        return (1.0 if p.cut in (3, 9) else 0.0,)

    first = coordinate_ascent(Toy.prior(), objective)
    visited = list(calls)
    calls.clear()
    assert coordinate_ascent(Toy.prior(), objective) == first == Toy(cut=3)  # grid order
    assert calls == visited


def test_coordinate_ascent_follows_an_interaction_across_sweeps() -> None:
    # cut (visited first) only pays once flag has moved: found in the second sweep.
    def objective(p: Toy) -> tuple[float, ...]:
        return (float(p.flag) + 2 * float(p.flag and p.cut == 9),)

    assert coordinate_ascent(Toy.prior(), objective) == Toy(cut=9, flag=True)


def conciseness(params: dict[str, object]) -> tuple[dict[int, dict], str]:
    judge = make_judge({"name": "offline", "params": params})
    long_turn = " ".join(["word"] * 45) + "."
    trace = [
        TraceItem(kind="assistant", turn_id=0, text=long_turn),
        TraceItem(kind="user", turn_id=1, text="Okay."),
        TraceItem(kind="assistant", turn_id=1, text="Bye."),
    ]
    verdict = judge.evaluate(JudgeTask(metric="conciseness", inputs=ConcisenessInput(trace=trace)))
    return {i["turn_id"]: i for i in json.loads(verdict.raw_text or "[]")}, verdict.prompt_hash


def test_a_run_overrides_fitted_parameters_and_the_hash_tells_it_apart() -> None:
    assert ConcisenessParams().max_words > 45
    default, default_hash = conciseness({})
    strict, strict_hash = conciseness({"conciseness": {"max_words": 30}})
    assert default[0]["rating"] == 3 and strict[0]["rating"] == 2
    assert default_hash != strict_hash
    judge = make_judge({"name": "offline", "params": {"conciseness": {"max_wrods": 60}}})
    verdict = judge.evaluate(JudgeTask(metric="conciseness", inputs=ConcisenessInput(trace=[])))
    assert verdict.error and "max_wrods" in verdict.error  # a misspelt field is an error
