"""Task completion: hash normalisation (spec 3), auth check and the structural diff."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from scenarios.completion import (
    check_auth,
    check_task_completion,
    diff_dbs,
    diff_values,
)
from scenarios.dbhash import UNORDERED_LIST_KEYS, db_hash


def base_db() -> dict[str, Any]:
    return {
        "_current_date": "2026-03-10",
        "session": {"confirmation_number": "ABC123", "last_name": "smith"},
        "reservations": {
            "ABC123": {
                "status": "confirmed",
                "fare_paid": 260.0,
                "bookings": [{"journey_id": "J1"}, {"journey_id": "J2"}],
                "segments": [{"seat": "22A"}, {"seat": "4C"}],
                "meal": None,
            }
        },
        "notifications": [{"to": "a"}, {"to": "b"}],
    }


# ---- hash normalisation --------------------------------------------------------------


def test_whole_floats_hash_like_integers() -> None:
    other = base_db()
    other["reservations"]["ABC123"]["fare_paid"] = 260
    assert db_hash(other) == db_hash(base_db())


def test_fractional_floats_still_count() -> None:
    other = base_db()
    other["reservations"]["ABC123"]["fare_paid"] = 260.5
    assert db_hash(other) != db_hash(base_db())


@pytest.mark.parametrize("text", ["none", "null", " NULL ", "None"])
def test_none_and_null_strings_hash_like_null(text: str) -> None:
    other = base_db()
    other["reservations"]["ABC123"]["meal"] = text
    assert db_hash(other) == db_hash(base_db())


@pytest.mark.parametrize("key", sorted(UNORDERED_LIST_KEYS))
def test_unordered_list_keys_ignore_order(key: str) -> None:
    db = {"table": {key: [{"id": 1}, {"id": 2}, "x"]}}
    flipped = {"table": {key: list(reversed(db["table"][key]))}}
    assert db_hash(flipped) == db_hash(db)


def test_other_lists_are_ordered() -> None:
    other = base_db()
    other["reservations"]["ABC123"]["segments"].reverse()
    assert db_hash(other) != db_hash(base_db())


def test_session_is_dropped_from_the_hash() -> None:
    other = base_db()
    other["session"] = {"anything": True}
    assert db_hash(other) == db_hash(base_db())
    other.pop("session")
    assert db_hash(other) == db_hash(base_db())


def test_nested_session_key_is_not_dropped() -> None:
    other = base_db()
    other["reservations"]["ABC123"]["session"] = "x"
    assert db_hash(other) != db_hash(base_db())


def test_current_date_is_hashed() -> None:
    other = base_db()
    other["_current_date"] = "2026-03-11"
    assert db_hash(other) != db_hash(base_db())


# ---- auth check and score ------------------------------------------------------------


def test_identical_dbs_score_one() -> None:
    result = check_task_completion(base_db(), base_db())
    assert (result.score, result.auth_success, result.hash_match) == (1.0, True, True)
    assert result.diff is None and result.expected_hash == result.actual_hash


def test_session_strings_compare_case_insensitively() -> None:
    final = base_db()
    final["session"] = {"confirmation_number": "abc123", "last_name": "SMITH", "extra": 1}
    assert check_auth(base_db(), final) == {}
    assert check_task_completion(base_db(), final).score == 1.0


def test_auth_mismatch_fails_even_with_equal_hash() -> None:
    final = base_db()
    final["session"] = {"confirmation_number": "ABC123"}
    result = check_task_completion(base_db(), final)
    assert result.hash_match and not result.auth_success
    assert result.score == 0.0
    assert set(result.auth_mismatches) == {"last_name"}
    assert result.auth_mismatches["last_name"].actual is None
    assert "last_name" in result.summary


def test_non_string_session_values_compare_with_python_equality() -> None:
    # The reference's session check (issue 32): 1 == 1.0 and True == 1 hold there.
    expected = {"session": {"otp_auth": True, "attempts": 1}}
    assert check_auth(expected, {"session": {"otp_auth": 1, "attempts": 1.0}}) == {}
    assert check_auth(expected, {"session": {"otp_auth": True, "attempts": 1}}) == {}
    wrong = check_auth(expected, {"session": {"otp_auth": False, "attempts": 2}})
    assert set(wrong) == {"otp_auth", "attempts"}
    # Different types that Python does not equate still differ.
    assert set(check_auth(expected, {"session": {"otp_auth": "true", "attempts": "1"}})) == {
        "otp_auth",
        "attempts",
    }


def test_expected_none_is_met_by_an_absent_key() -> None:
    expected = {"session": {"employee_id": "E1", "otp_verified": None}}
    assert check_auth(expected, {"session": {"employee_id": "e1"}}) == {}
    assert check_auth(expected, {"session": {"employee_id": "e1", "otp_verified": None}}) == {}
    missed = check_auth(expected, {"session": {"employee_id": "e1", "otp_verified": True}})
    assert missed["otp_verified"].model_dump() == {"expected": None, "actual": True}
    # A non-None expectation is still not met by an absent key.
    assert set(check_auth(expected, {"session": {}})) == {"employee_id"}


def test_no_expected_session_means_auth_passes() -> None:
    expected = base_db()
    expected.pop("session")
    assert check_task_completion(expected, base_db()).auth_success


def test_final_hash_argument_is_trusted() -> None:
    result = check_task_completion(base_db(), base_db(), final_hash="0" * 64)
    assert result.actual_hash == "0" * 64 and result.score == 0.0


# ---- structural diff -------------------------------------------------------------------


def changed_db() -> dict[str, Any]:
    db = copy.deepcopy(base_db())
    res = db["reservations"]["ABC123"]
    res["status"] = "cancelled"  # value mismatch
    res["fare_paid"] = "260"  # type mismatch (number -> string)
    res["refund"] = 10  # field added
    del res["meal"]  # field removed
    res["segments"][1]["seat"] = "5D"  # list difference
    res["bookings"].append({"journey_id": "J3"})  # list length
    db["reservations"]["XYZ999"] = {"status": "confirmed"}  # record added
    db["hotel_vouchers"] = {}  # table added
    db["notifications"] = [{"to": "a"}]  # non-dict table
    del db["_current_date"]  # table removed
    return db


def test_diff_reports_every_kind_of_change() -> None:
    diff = diff_dbs(base_db(), changed_db())
    assert diff.tables_added == ["hotel_vouchers"]
    assert diff.tables_removed == ["_current_date"]
    assert set(diff.tables_modified) == {"reservations", "notifications"}
    reservations = diff.tables_modified["reservations"]
    assert reservations.records_added == ["XYZ999"] and reservations.records_removed == []
    record = reservations.records_modified["ABC123"]
    assert record.fields_added == {"refund": 10}
    assert record.fields_removed == {"meal": None}
    fields = record.fields_modified
    assert fields["status"].value_mismatch is not None
    assert (fields["status"].value_mismatch.expected, fields["status"].value_mismatch.actual) == (
        "confirmed",
        "cancelled",
    )
    type_mismatch = fields["fare_paid"].type_mismatch
    assert type_mismatch is not None
    assert (type_mismatch.expected_type, type_mismatch.actual_type) == ("number", "string")
    assert list(fields["segments"].list_differences) == [1]
    length = fields["bookings"].list_length_mismatch
    assert length is not None and (length.expected, length.actual) == (2, 3)
    notifications = diff.tables_modified["notifications"]
    assert notifications.value is not None and notifications.value.list_length_mismatch


def test_diff_ignores_differences_removed_by_normalisation() -> None:
    other = base_db()
    other["reservations"]["ABC123"]["fare_paid"] = 260
    other["reservations"]["ABC123"]["meal"] = "null"
    other["notifications"].reverse()
    other["session"] = {}
    diff = diff_dbs(base_db(), other)
    assert diff.tables_modified == {} and diff.tables_added == diff.tables_removed == []


def test_booleans_are_not_numbers() -> None:
    diff = diff_values({"flag": True}, {"flag": 1})
    assert diff is not None and diff.fields_modified["flag"].type_mismatch is not None


def test_mismatch_result_has_summary_hints_and_serialises() -> None:
    result = check_task_completion(base_db(), changed_db())
    assert result.score == 0.0 and not result.hash_match and result.diff is not None
    assert "reservations" in result.summary
    assert any(h.startswith("reservations.ABC123.status") for h in result.hints)
    dumped = json.loads(json.dumps(result.model_dump(mode="json")))
    assert set(dumped["diff"]) == {"tables_added", "tables_removed", "tables_modified"}
    record = dumped["diff"]["tables_modified"]["reservations"]["records_modified"]["ABC123"]
    assert "1" in record["fields_modified"]["segments"]["list_differences"]
