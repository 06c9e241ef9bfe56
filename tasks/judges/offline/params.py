"""The offline judges' fitted parameters: one model per judged metric (see ``tuning``).

Defaults are the fit on all of the project's labels (``tasks.judge_fit.fit`` over every
item; ``evaflow judges validate --cv 5`` prints any drift and
``tests/tasks/test_judge_fit.py`` fails on it); priors are the spec's figures where EVA_SPEC
states one, else the middle of the grid. A one-value grid is a value the spec fixes.
Override per run through the judge's params, keyed by metric:
``judge: {name: offline, params: {conciseness: {max_words: 50}}}``.

What is *not* here, though it was written while looking at the same labels: the rules'
regular expressions and word lists (filler phrases, ask and self-correction words, entity
patterns). They are structure, not a grid, so cross-validation cannot refit them: its
figures measure how the fitted values generalise, not how those lists do.
"""

from __future__ import annotations

from tasks.judges.offline.tuning import RATINGS, Rating, RuleParams, tunable

_R = RATINGS


class ConcisenessParams(RuleParams):
    """Per assistant turn: within every ``max_*`` is 3, beyond one is 2, beyond a
    ``severe_*`` is 1 (counts from ``experience.turn_features``)."""

    max_words: int = tunable(60, (30, 40, 50, 60, 70, 80), "Words a voice turn may use")
    max_sentences: int = tunable(5, (3, 4, 5, 6), "Spec: 2-4 conversational sentences", 4)
    max_figures: int = tunable(5, (3, 4, 5, 6, 7), "Key figures (times, amounts, codes)")
    max_options: int = tunable(1, (1, 2, 3, 4), "Enumerated options before it is a list")
    filler_words: int = tunable(35, (20, 35, 50, 80), "Filler counts only in turns longer")
    severe_words: int = tunable(160, (80, 95, 110, 125, 140, 160), "Words beyond: rating 1")
    severe_sentences: int = tunable(6, (5, 6, 7, 8, 9), "Sentences beyond: rating 1")
    severe_figures: int = tunable(7, (7, 8, 9, 10, 12), "Figures beyond: rating 1")
    severe_options: int = tunable(5, (3, 4, 5, 6), "Options beyond: rating 1")
    final_words: int = tunable(10, (0, 10, 15, 20, 30), "Spec: a slightly longer wrap-up")
    final_sentences: int = tunable(1, (0, 1, 2), "Extra sentences for the final turn", 1)


class ProgressionParams(RuleParams):
    """What each progression finding costs its dimension (3 = not counted), the thresholds
    its measures are compared with, and how many findings make a dimension 1. Priors: the
    spec's "single minor" (2), severe (1) where the spec calls the case severe."""

    repeat_after_success: Rating = tunable(2, _R, "Identical call after it succeeded", 2)
    repeat_without_news: Rating = tunable(2, _R, "Identical call, nothing new since a failure", 2)
    repeat_write: Rating = tunable(1, _R, "A successful write repeated (done twice)", 1)
    placeholder_call: Rating = tunable(2, _R, "Spec: calls with empty required params", 2)
    known_data_call: Rating = tunable(2, _R, "Spec: calls for already-known data", 2)
    known_share: float = tunable(0.9, (0.7, 0.8, 0.9, 1.0), "Share of the answer already known")
    reask_after_tool: Rating = tunable(2, _R, "Asks for what a tool already used", 2)
    reask_said: Rating = tunable(3, _R, "Spec: re-asking for provided info", 2)
    asks_to_remind: Rating = tunable(1, _R, "Asks the caller to say again what was said", 2)
    repeated_sentence: Rating = tunable(2, _R, "A sentence said again in a later turn", 2)
    repeated_in_turn: Rating = tunable(2, _R, "A sentence said twice in one turn", 2)
    similarity: float = tunable(0.8, (0.6, 0.7, 0.8, 0.9), "Word overlap of a repeated sentence")
    announced_repeat: Rating = tunable(2, _R, "'Just to repeat', 'to recap' mid-call", 2)
    restated_figures: Rating = tunable(3, _R, "Figures said again in a later turn", 2)
    restated_min: int = tunable(4, (2, 3, 4, 5), "Figures restated before it counts")
    bundled_questions: Rating = tunable(2, _R, "Spec: bundling questions", 2)
    questions_min: int = tunable(3, (2, 3, 4), "Question marks in one turn that bundle")
    vague_question: Rating = tunable(2, _R, "Spec: vague question when action was possible", 2)
    write_amid_correction: Rating = tunable(1, _R, "Spec: irreversible act on conflicting input", 1)
    unconfirmed_write: Rating = tunable(3, _R, "Irreversible write without the caller's yes", 2)
    # Fixed by the spec (one-value grids): ">= 3 unnecessary calls => 1", otherwise a
    # dimension is 1 when "multiple" findings (two or more) or a severe one are in it.
    many_tool_calls: int = tunable(3, (3,), "Spec: >= 3 unnecessary calls is 1")
    many_information_loss: int = tunable(2, (2,), "Spec: multiple findings is 1")
    many_redundant: int = tunable(2, (2,), "Spec: multiple findings is 1")
    many_questions: int = tunable(2, (2,), "Spec: multiple findings is 1")


class FaithfulnessParams(RuleParams):
    """What each faithfulness finding costs its dimension (3 = not counted) and the policy-
    claim thresholds. Priors: the spec's severities (read-only lookup 2, write 1, financial
    or irreversible 1), 2 where it gives none."""

    # Fixed by the spec (one-value grids): read-only lookups 2, writes 1.
    ungrounded_read_arg: Rating = tunable(2, (2,), "Spec: wrong value into a read-only tool")
    ungrounded_write_arg: Rating = tunable(1, (1,), "Spec: wrong value into a write tool")
    unsourced_amount: Rating = tunable(1, _R, "Spec: financial impact is 1", 1)
    unsourced_identifier: Rating = tunable(1, _R, "A code, email, seat or gate from nowhere", 2)
    unsourced_flight: Rating = tunable(3, _R, "A flight number from nowhere", 2)
    unsourced_date_time: Rating = tunable(3, _R, "A date or time from nowhere", 2)
    delay_contradicted: Rating = tunable(1, _R, "'No delay' against a tool's delay", 2)
    status_unsourced: Rating = tunable(1, _R, "A flight status no tool reported", 2)
    unknown_brand: Rating = tunable(2, _R, "Spec: wrong brand", 2)
    write_before_answer: Rating = tunable(1, _R, "Spec: irreversible write unconfirmed", 1)
    write_same_breath: Rating = tunable(1, _R, "Spec: write in the same turn as the read", 1)
    write_without_agreement: Rating = tunable(1, _R, "Spec: irreversible write unconfirmed", 1)
    write_cost_open: Rating = tunable(3, _R, "Spec: financial write, question unanswered", 1)
    write_charge_undisclosed: Rating = tunable(1, _R, "Spec: charge never disclosed", 1)
    policy_claim: Rating = tunable(1, _R, "Spec: invented policy", 1)
    claim_unsupported: int = tunable(2, (1, 2, 3), "Unsupported words in a policy claim")
    claim_share: float = tunable(0.34, (0.2, 0.34, 0.5), "Share of its words unsupported")
    sweeping_claim: Rating = tunable(1, _R, "'all members', 'always' with an unsupported word", 1)
    capability_claim: Rating = tunable(1, _R, "Spec: capability no tool supports", 2)
    retry_without_asking: Rating = tunable(2, _R, "Spec: failed lookup retried unasked", 2)
    conflict_read: Rating = tunable(2, _R, "Spec: lookup on contradictory input", 2)
    conflict_write: Rating = tunable(1, _R, "Spec: committing a value several versions of", 1)
    unverified_after_failure: Rating = tunable(2, _R, "Spec: no spelling asked after a failure", 2)


ENTITY_TYPES = (
    "amount",
    "airport_code",
    "code",
    "date",
    "digits",
    "duration",
    "email",
    "flight_number",
    "gate",
    "month_year",
    "name",
    "phone",
    "seat",
    "spelled",
    "time",
)
_B = (False, True)


class KeyEntityParams(RuleParams):
    """Which entity kinds the key-entity judge reports (turns mode), and whether a value
    heard in an adjacent transcript counts as kept (spec: adjacent-turn drift tolerated)."""

    adjacent_drift: bool = tunable(True, (True,), "Spec: adjacent-turn drift tolerated")
    amount: bool = tunable(True, _B, "Report amounts", True)
    airport_code: bool = tunable(True, _B, "Report airport codes", True)
    code: bool = tunable(True, _B, "Report codes", True)
    date: bool = tunable(True, _B, "Report dates", True)
    digits: bool = tunable(True, _B, "Report digit runs", True)
    duration: bool = tunable(True, _B, "Report durations", True)
    email: bool = tunable(True, _B, "Report emails", True)
    flight_number: bool = tunable(True, _B, "Report flight numbers", True)
    gate: bool = tunable(True, _B, "Report gates", True)
    month_year: bool = tunable(True, _B, "Report month-years", True)
    name: bool = tunable(True, _B, "Report names and places", True)
    phone: bool = tunable(True, _B, "Report phone numbers", True)
    seat: bool = tunable(True, _B, "Report seats", True)
    spelled: bool = tunable(True, _B, "Report spelled sequences", True)
    time: bool = tunable(True, _B, "Report clock times", True)

    def reports(self, kind: str) -> bool:
        """Kinds outside ENTITY_TYPES (a new extractor's) are reported."""
        return bool(getattr(self, kind, True)) if kind in ENTITY_TYPES else True


PARAMS: dict[str, type[RuleParams]] = {
    "conciseness": ConcisenessParams,
    "conversation_progression": ProgressionParams,
    "faithfulness": FaithfulnessParams,
    "transcription_accuracy_key_entities": KeyEntityParams,
}
