"""Judge validation: agreement statistics and a small constructed set (the EVA sets: the
cross-validation in test_judge_fit.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tasks.judge_validation import format_report, validate_judge
from tasks.judges.agreement import accuracy, confusion, macro_f1, max_matching, weighted_kappa


def test_agreement_statistics_by_hand() -> None:
    labels, preds = [1, 1, 2, 3, 3], [1, 2, 2, 3, 1]
    assert accuracy(labels, preds) == 0.6
    # F1 per class: 1 -> 2*1/(2+1+1)=0.5, 2 -> 2/(2+1)=0.667, 3 -> 2/(2+0+1)=0.667
    assert macro_f1(labels, preds) == pytest.approx((0.5 + 2 / 3 + 2 / 3) / 3)
    assert confusion(labels, preds, [1, 2, 3])["3"] == {"1": 1, "2": 0, "3": 1}


def test_kappa_values() -> None:
    assert weighted_kappa([1, 2, 3], [1, 2, 3], [1, 2, 3]) == 1.0
    # Unweighted binary kappa: po = 0.5, pe = 0.5 -> 0.
    assert weighted_kappa([0, 0, 1, 1], [0, 1, 0, 1], [0, 1]) == pytest.approx(0.0)
    # Linear weights: an off-by-one costs half an off-by-two.
    near = weighted_kappa([1, 2, 3, 3], [1, 2, 2, 3], [1, 2, 3])
    far = weighted_kappa([1, 2, 3, 3], [1, 2, 1, 3], [1, 2, 3])
    assert near is not None and far is not None and near > far
    assert weighted_kappa([2, 2], [2, 2], [1, 2, 3]) is None  # no chance disagreement


def test_max_matching_finds_the_larger_assignment() -> None:
    left, right = ["ab", "a"], ["a", "ab"]
    pairs = max_matching(left, right, lambda x, y: y in x)
    assert len(pairs) == 2


def write_set(directory: Path) -> Path:
    directory.mkdir()
    conciseness = {
        "id": 1,
        "conv_turns": [
            {"position": 1, "role": "user", "content": "Can you rebook me?"},
            {
                "position": 2,
                "role": "agent",
                "content": "Sure. What is your confirmation code?",
                "expected_rating": 3,
                "failure_modes": [],
            },
        ],
    }
    entities = {
        "user_tts": ["My code is Z K three F F W, last name Rodriguez.", "Goodbye."],
        "transcription": ["My code is ZK3FF, last name Rodriguez."],
        "labels": [
            {
                "turn_id": 0,
                "entities": [
                    {"type": "confirmation_code", "value": "Z K three F F W", "correct": False},
                    {"type": "name", "value": "Rodriguez", "correct": True},
                ],
            },
            {"turn_id": 1, "entities": []},
        ],
    }
    (directory / "conciseness.jsonl").write_text(json.dumps(conciseness) + "\n")
    (directory / "key_entity_transcription.jsonl").write_text(json.dumps(entities) + "\n")
    return directory


def test_constructed_set(tmp_path: Path) -> None:
    report = validate_judge(write_set(tmp_path / "set"), "offline")
    data = report.model_dump()
    assert (
        data["metrics"]["conciseness"]["n"] == 1
        and data["metrics"]["conciseness"]["accuracy"] == 1.0
    )
    entity = data["key_entity_transcription"]
    assert entity["n"] == 2 and entity["entity_f1_lenient"] == 1.0
    assert entity["correctness_with_penalty"] == 1.0
    assert "faithfulness" in report.skipped and "agent_speech_fidelity" in report.skipped
    assert "key entities" in format_report(report)


def test_bad_inputs_name_the_problem(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="nowhere"):
        validate_judge(tmp_path / "nowhere")
    with pytest.raises(ValueError, match="valid:"):
        validate_judge(write_set(tmp_path / "set"), "offline", ["fluency"])
    (tmp_path / "set" / "conciseness.jsonl").write_text("{not json\n")
    with pytest.raises(ValueError, match="conciseness.jsonl:1"):
        validate_judge(tmp_path / "set", "offline", ["conciseness"])


# The offline judge's agreement on the EVA labels is in-sample (its parameters are fitted
# to them); tests/tasks/test_judge_fit.py holds floors on the cross-validated figures.


def test_llm_judge_through_validation(tmp_path: Path) -> None:
    from tests.tasks.judges.fakes import running_server

    entity_answer = [
        {
            "turn_id": 0,
            "entities": [
                {"type": "code", "value": "ZK3FFW", "transcribed_value": "ZK3FF", "correct": False},
                {
                    "type": "name",
                    "value": "Rodriguez",
                    "transcribed_value": "Rodriguez",
                    "correct": True,
                },
                {"type": "name", "value": "Smith", "transcribed_value": "", "correct": False},
            ],
        }
    ]
    with running_server() as server:
        server.reply(json.dumps([{"turn_id": 1, "rating": 2, "failure_modes": []}]))
        server.reply(json.dumps(entity_answer))
        report = validate_judge(
            write_set(tmp_path / "set"),
            "llm",
            judge_params={"base_url": server.base_url, "model": "m"},
        )
    assert report.judge == "llm"
    assert report.metrics["conciseness"].confusion["3"]["2"] == 1
    entity = report.key_entity_transcription
    assert entity is not None and entity.precision == pytest.approx(2 / 3)
    assert entity.correctness_with_penalty == pytest.approx((2 - 0.5) / 2)
