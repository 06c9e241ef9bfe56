from __future__ import annotations

from scenarios.dbhash import db_hash
from tasks.metrics.context import build_context
from tasks.metrics.task_completion import compute as task_completion
from tests.tasks.metrics.builders import SESSION, make_scenario, text_record


def _score(**record_fields: object):
    return task_completion(build_context(text_record(**record_fields), make_scenario()))


def test_matching_db_and_session_scores_one() -> None:
    score = _score()
    assert score.score == 1.0 and score.normalized_score == 1.0 and score.passed
    assert score.details["auth_success"] is True and score.details["hash_match"] is True


def test_float_vs_int_and_session_case_are_normalised() -> None:
    final = {
        "reservations": {"ABC123": {"status": "rebooked"}},
        "session": {"confirmation_number": "abc123", "last_name": "DOE"},
    }
    assert _score(final_db=final).score == 1.0


def test_wrong_state_scores_zero_with_diff() -> None:
    final = {"reservations": {"ABC123": {"status": "cancelled"}}, "session": SESSION}
    score = _score(final_db=final)
    assert score.score == 0.0 and score.passed is False
    modified = score.details["diff"]["tables_modified"]["reservations"]["records_modified"]
    assert "ABC123" in modified


def test_auth_mismatch_scores_zero_even_if_hash_matches() -> None:
    final = {
        "reservations": {"ABC123": {"status": "rebooked"}},
        "session": {"confirmation_number": "ABC123"},
    }
    score = _score(final_db=final)
    assert score.score == 0.0
    assert score.details["auth_success"] is False
    assert "last_name" in score.details["auth_mismatches"]


def test_stored_final_hash_is_used_when_present() -> None:
    expected = make_scenario().expected_db
    score = _score(final_db={"session": SESSION}, final_db_hash=db_hash(expected))
    assert score.score == 1.0


def test_missing_final_db_is_an_error() -> None:
    score = _score(final_db={}, final_db_hash="")
    assert score.error is not None and score.score == 0.0
