"""Fitting the offline judges' parameters and cross-validating the fit on EVA's labels."""

from __future__ import annotations

from pathlib import Path

import pytest

from tasks.judge_fit import (
    ConcisenessProblem,
    CVReport,
    Item,
    JudgeCV,
    cross_validate,
    cross_validate_items,
    first_caller_line,
    fit,
    fold_of,
    problems,
)
from tasks.judge_validation import KEY_ENTITY_METRIC, validate_judge
from tasks.judges.offline.experience import TurnFeatures

# Cross-validated agreement of the offline judges on EVA's labels (5 folds, seed 0),
# measured 2026-12-07 and rounded down: accuracy / linear-weighted kappa per rated metric,
# lenient F1 / correctness with penalty for key entities. Measured: faithfulness 0.760 /
# 0.713, progression 0.796 / 0.692, conciseness 0.901 / 0.866, key entities 0.957 / 0.864.
CV_FLOORS = {
    "faithfulness": (96, 0.75, 0.70),
    "conversation_progression": (93, 0.78, 0.68),
    "conciseness": (334, 0.89, 0.86),
    KEY_ENTITY_METRIC: (448, 0.95, 0.86),
}


@pytest.fixture(scope="module")
def set_dir(eva_root: Path) -> Path:
    return eva_root / "judge_validation"


@pytest.fixture(scope="module")
def report(set_dir: Path) -> CVReport:
    return cross_validate(set_dir)


def _pair(result: JudgeCV, which: str) -> tuple[int, float | None, float | None]:
    f = getattr(result, which)
    if result.metric == KEY_ENTITY_METRIC:
        return f.n, f.entity_f1_lenient, f.correctness_with_penalty
    return f.n, f.accuracy, f.kappa


def test_cross_validation_holds_its_floors_on_the_eva_labels(report: CVReport) -> None:
    assert (report.k, report.seed) == (5, 0) and set(report.judges) == set(CV_FLOORS)
    for metric, (n, first, second) in CV_FLOORS.items():
        result = report.judges[metric]
        got = _pair(result, "cv")
        assert got[0] == n and got[1] is not None and got[2] is not None, metric
        assert got[1] >= first and got[2] >= second, (metric, got)
        assert [f.fold for f in result.folds] == list(range(5))
        assert sum(f.items for f in result.folds) == result.items


def test_the_shipped_defaults_are_the_fit_on_all_labels(report: CVReport) -> None:
    """A rule or label change that moves the fit shows here: refit and update params.py."""
    for metric, result in report.judges.items():
        assert result.fit_all == {}, (metric, result.fit_all)


def test_in_sample_figures_are_what_the_judge_scores(report: CVReport, set_dir: Path) -> None:
    """The fit's fast path (measure once, decide per parameter set) rates exactly like the
    registered offline judge does through ``validate_judge``."""
    plain = validate_judge(set_dir, "offline")
    for metric, m in plain.metrics.items():
        assert _pair(report.judges[metric], "in_sample") == (m.n, m.accuracy, m.kappa), metric
    ke = plain.key_entity_transcription
    assert ke is not None
    expected = (ke.n, ke.entity_f1_lenient, ke.correctness_with_penalty)
    assert _pair(report.judges[KEY_ENTITY_METRIC], "in_sample") == expected


@pytest.fixture(scope="module")
def progression_items(set_dir: Path) -> list[Item]:
    return problems()["conversation_progression"].items(set_dir)


def test_a_folds_parameters_never_see_its_labels(progression_items: list[Item]) -> None:
    """Flipping the labels of fold 0 changes neither fold 0's parameters nor its ratings
    (only how they score); the other folds' fits, which train on fold 0, may change."""
    problem = problems()["conversation_progression"]
    flip = {1: 3, 2: 1, 3: 2}
    flipped = [
        i.model_copy(update={"labels": [flip[x] for x in i.labels]}) if fold_of(i.group) == 0 else i
        for i in progression_items
    ]
    before = cross_validate_items(problem, progression_items)
    after = cross_validate_items(problem, flipped)
    assert before.folds[0] == after.folds[0]
    train = [i for i in progression_items if fold_of(i.group) != 0]
    assert fit(problem, train).overrides() == before.folds[0].params
    assert before.cv != after.cv  # fold 0 is scored against the flipped labels


def test_conversations_share_a_group_and_folds_are_fixed_by_the_seed(
    progression_items: list[Item],
) -> None:
    a = {"id": 1, "trace": [{"event_type": "user_utterance", "utterance": "Hi,  I need HELP."}]}
    b = {"id": 2, "trace": [{"event_type": "user_utterance", "utterance": "hi, i need help."}]}
    assert first_caller_line(a) == first_caller_line(b)
    groups = {i.group for i in progression_items}
    assert len(groups) < len(progression_items)  # variants of one conversation share a group
    folds = [fold_of(g) for g in sorted(groups)]
    assert set(folds) == set(range(5)) and folds == [fold_of(g) for g in sorted(groups)]
    assert folds != [fold_of(g, seed=1) for g in sorted(groups)]


def _turn(words: int, label: int) -> Item:
    features = TurnFeatures(words=words, sentences=1, figures=0, options=0, fillers=0)
    return Item(group=f"c{words}", labels=[label], measured=[(features, False)])


def test_the_fit_recovers_a_planted_threshold() -> None:
    """Turns longer than 70 words labelled 2, the rest 3: the fit moves max_words from its
    prior to 70 and nothing it does not need to."""
    items = [_turn(w, 2 if w > 70 else 3) for w in range(20, 100, 3)]
    fitted = fit(ConcisenessProblem(), items)
    assert fitted.overrides() != {} and fitted.max_words == 70  # type: ignore[attr-defined]
    moved = {k for k, v in fitted.model_dump().items() if getattr(type(fitted).prior(), k) != v}
    assert moved == {"max_words"}
    figures = ConcisenessProblem().figures(
        items, [ConcisenessProblem().predict(i, fitted) for i in items]
    )
    assert figures.accuracy == 1.0 and figures.kappa == 1.0


def test_bad_arguments_name_the_problem(set_dir: Path) -> None:
    with pytest.raises(ValueError, match="at least 2"):
        cross_validate(set_dir, k=1)
    with pytest.raises(ValueError, match="valid:"):
        cross_validate(set_dir, metrics=["fluency"])
