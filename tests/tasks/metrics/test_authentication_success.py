from __future__ import annotations

from tasks.metrics.authentication_success import compute as authentication_success
from tasks.metrics.context import build_context
from tests.tasks.metrics.builders import call, make_scenario, text_record


def test_success_with_first_try_auth() -> None:
    score = authentication_success(build_context(text_record(), make_scenario()))
    assert score.score == 1.0
    subs = score.sub_metrics
    assert subs["auth_first_try_success"].score == 1.0
    assert subs["num_auth_calls"].score == 1.0 and subs["num_auth_calls"].normalized_score is None
    assert subs["authentication_success_rate"].score == 1.0


def test_retries_lower_the_rate() -> None:
    record = text_record()
    record.tool_calls.insert(
        0, call(9, 1, "get_reservation", {"status": "error", "error_type": "not_found"})
    )
    score = authentication_success(build_context(record, make_scenario()))
    assert score.score == 1.0
    assert score.sub_metrics["auth_first_try_success"].score == 0.0
    assert score.sub_metrics["num_auth_calls"].score == 2.0
    assert score.sub_metrics["authentication_success_rate"].score == 0.5


def test_failure_reports_mismatches_and_call_count() -> None:
    record = text_record(final_db={"session": {"confirmation_number": "XYZ999"}})
    score = authentication_success(build_context(record, make_scenario()))
    assert score.score == 0.0
    assert set(score.details["mismatches"]) == {"confirmation_number", "last_name"}
    assert score.sub_metrics["num_auth_calls_on_failure"].score == 1


def test_no_expected_session_is_skipped() -> None:
    scenario = make_scenario(expected_db={"reservations": {}})
    score = authentication_success(build_context(text_record(), scenario))
    assert score.skipped and score.score is None
