"""Plausible wrong versions of an entity, for the speech judge's forced choice."""

from __future__ import annotations

from tasks.judges.offline.entities import find_entities
from tasks.judges.offline.speech_variants import variant_sentences


def variants(text: str, kind: str) -> list[str]:
    entity = next(e for e in find_entities(text) if e.type == kind)
    return variant_sentences(text, entity)


def test_code_variants_change_one_symbol_of_the_same_kind() -> None:
    found = variants("Your confirmation code is K3FW2D.", "code")
    codes = [v.split()[-1].rstrip(".") for v in found]
    assert len(codes) == 4 * 25 + 2 * 9
    assert "K3FW2B" in codes and "K4FW2D" in codes and "K3FW2D" not in codes
    assert all(sum(a != b for a, b in zip(c, "K3FW2D", strict=True)) == 1 for c in codes)
    assert not any(c[1].isalpha() or c[0].isdigit() for c in codes)  # same kind per position


def test_phone_with_dash_keeps_its_form() -> None:
    found = variants("Call 555-0101 to confirm.", "phone")
    assert "Call 555-0102 to confirm." in found and len(found) == 7 * 9


def test_amount_date_and_time_variants() -> None:
    amounts = variants("The change fee is $245.", "amount")
    assert {"The change fee is $246.", "The change fee is $145.", "The change fee is $24."} <= set(
        amounts
    )
    assert "The change fee is $245." not in amounts
    dates = variants("Your new flight is on March 5, 2026.", "date")
    assert "Your new flight is on April 5, 2026." in dates
    assert "Your new flight is on March 6, 2026." in dates and len(dates) == 11 + 30
    iso = variants("Born 1988-02-17.", "date")
    assert "Born 1988-02-18." in iso and "Born 1988-03-17." in iso
    times = variants("It leaves at 3:45 PM.", "time")
    assert {"It leaves at 4:45 PM.", "It leaves at 3:46 PM.", "It leaves at 3:45 AM."} <= set(times)


def test_no_variants_for_emails_or_entities_not_in_the_text() -> None:
    text = "Write to jane.doe@gmail.com today."
    assert variant_sentences(text, next(e for e in find_entities(text) if e.type == "email")) == []
    other = next(e for e in find_entities("Your code is ZZ9QQ1.") if e.type == "code")
    assert variant_sentences("Your code is K3FW2D.", other) == []
