"""Grounding rules of the offline judges: amount arithmetic, date arithmetic, identifiers."""

from __future__ import annotations

from datetime import date

import pytest

from tasks.judges.offline.arithmetic import Figures, amount_derivable, count_fields, money_fields
from tasks.judges.offline.dates import Calendar, fix_month_year, spoken_dates
from tasks.judges.offline.grounding import Sources
from tasks.judges.offline.identifiers import code_grounded, email_grounded, mapped_code

FARES = {"change_fee": 75, "fare_paid": 260.0, "fares": {"basic_economy": 304.0, "first": None}}


def test_money_fields_include_entries_below_a_money_key() -> None:
    assert money_fields(FARES) == {75.0, 260.0, 304.0}
    assert money_fields({"seat": "12A", "available_seats": {"economy": 8}}) == set()


def test_counts_come_from_count_fields_and_passenger_lists() -> None:
    response = {"passenger_count": 3, "passengers": [{}, {}], "num_bags": 1, "flight": 412}
    assert count_fields(response) == {2, 3}


@pytest.mark.parametrize(
    ("value", "why"),
    [
        (304, "a figure"),
        (44, "fare difference: 304 - 260"),
        (119, "change fee plus fare difference: 75 + 304 - 260"),
        (379, "two figures added: 75 + 304"),
        (36, "voucher per passenger: 3 x 12"),
        (111, "three vouchers plus the fee: 3 x 12 + 75"),
    ],
)
def test_simple_arithmetic_on_known_figures_is_grounded(value: float, why: str) -> None:
    assert amount_derivable(value, [75, 260, 304, 12], counts=[3]), why


@pytest.mark.parametrize("value", [120, 299, 1000, 50])
def test_amounts_out_of_reach_of_simple_arithmetic_are_not(value: float) -> None:
    assert not amount_derivable(value, [75, 260, 304, 12], counts=[3])


def test_figures_cache_is_rebuilt_when_figures_grow() -> None:
    table = Figures()
    table.add([75])
    assert not table.derivable(119)
    table.add([44])
    assert table.derivable(119)


def test_policy_dollar_figures_written_in_words_are_money() -> None:
    src = Sources("A change costs 75 dollars; cancelling leaves a 100 dollar fee.")
    src.add_tool_response({"fare_paid": 594.0})
    assert src.has_amount(494) and src.has_amount(669)  # 594 - 100, 594 + 75
    assert not src.has_amount(512)


def test_month_year_reading_is_repaired() -> None:
    assert fix_month_year("your laptop is from july 20 23 so") == "your laptop is from july 2023 so"
    assert fix_month_year("on july 20 at 10:30") == "on july 20 at 10:30"


def test_dates_read_out_as_digits_are_dates() -> None:
    assert spoken_dates("born 19910914 or 1997 09 14") == {date(1991, 9, 14), date(1997, 9, 14)}
    assert spoken_dates("call 2025551234") == set()


def test_a_period_of_days_before_a_tool_date_is_derived() -> None:
    cal = Calendar(date(2026, 10, 16))
    cal.add_text("parking can change once every 180 days", anchors=False)
    cal.add_text("next_eligible_date 2027-02-15", machine=True)
    assert cal.date_grounded(8, 19, 2026)  # 2027-02-15 minus 180 days
    assert cal.date_grounded(8, 19)
    assert not cal.date_grounded(8, 22, 2026)


def test_day_periods_are_not_combined_into_nearby_dates() -> None:
    cal = Calendar(date(2026, 3, 10))
    cal.add_text("within 7 days; at most 3 nights", anchors=False)
    assert cal.date_grounded(3, 17) and cal.date_grounded(3, 13)
    assert not cal.date_grounded(3, 14)  # 7 - 3 days is not a stated period


def test_month_counts_from_a_tool_field_and_their_difference() -> None:
    cal = Calendar(date(2026, 10, 19))
    cal.add_text("laptops are replaced after 36 months", anchors=False)
    cal.add_fields({"device_age_months": 15})
    assert cal.date_grounded(6, 30, 2028)  # eligible 21 months from now, month-rounded
    assert cal.month_grounded(7, 2025)  # bought 15 months ago
    assert not cal.date_grounded(6, 30, 2029)


def test_dates_inside_identifiers_of_tool_results_are_anchors() -> None:
    cal = Calendar()
    cal.add_text("fl_sw254_20260413", machine=True)
    assert cal.date_grounded(4, 13)


def sources() -> Sources:
    src = Sources("Employee ID and NPI are checked first.", "", schema="Example: MGH-04B")
    src.add_user("My employee ID is E M P eight four six three eight five, floor two please.")
    src.add_tool_response({"desk_code": "BLD1-FL3-D302", "request_id": "REQ-SW-6ebe937b"})
    src.add_tool_response({"pto_balances": {"pto": 2.0}})
    return src


@pytest.mark.parametrize(
    ("code", "context"),
    [
        ("IDEMP846385", ""),  # "employee I D E M P ...": label word + identifier
        ("2PTO", ""),  # "two P T O days"
        ("FL3BLD1", ""),  # two identifiers read one after the other
        ("MGH04B", ""),  # a format example of the tool schemas
        ("FL2", "floor F L two"),  # "floor two" mapped onto the floor-code format
    ],
)
def test_glued_and_mapped_identifiers_are_grounded(code: str, context: str) -> None:
    assert code_grounded(code, sources(), context)


@pytest.mark.parametrize("code", ["REQSW846385", "EMP846386", "FL7"])
def test_fabricated_identifiers_stay_ungrounded(code: str) -> None:
    # A request ID made up from the employee number, one digit off, a floor nobody said.
    assert not code_grounded(code, sources(), "floor F L seven")


def test_mapped_code_needs_an_abbreviated_context_word_and_a_said_number() -> None:
    src = sources()
    assert mapped_code("BLD2", "building_code", src)
    assert not mapped_code("BLD2", "desk_code", src)


def test_a_website_read_as_an_email_is_grounded_by_its_domain() -> None:
    src = Sources("Run the diagnostic tool at netdiag.company.com.")
    assert email_grounded("tool@netdiag.company.com", src)
    assert not email_grounded("jane.doe@netdiag.company.com", src)
