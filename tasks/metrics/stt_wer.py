"""stt_wer (spec 4.6): word error rate of the agent's STT on the caller's turns.

Reference = what the caller meant to say (intended user turn), hypothesis = what the agent
heard (transcribed user turn). Annotation tags in brackets are removed, pairs with an empty
side are dropped, both sides go through :mod:`tasks.metrics.wer_normalize`, and the rate is
corpus-level over all turns (S + D + I over reference units) with jiwer. ja/zh/ko use the
character error rate. Cascade pipelines only: other agents have no STT transcript.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

import jiwer

from tasks.metrics.base import MetricInfo, error_score, make_score, register_metric, sub_score
from tasks.metrics.context import MetricContext
from tasks.metrics.wer_normalize import normalize_for_wer, uses_cer
from tasks.records import MetricScore

INFO = MetricInfo(
    name="stt_wer",
    category="diagnostic",
    version="v0.1",
    exclude_from_pass_at_k=True,
    pipelines=("cascade",),
    description="Word error rate of the agent's speech recognition on caller turns",
)

_BRACKETED = re.compile(r"\[[^\]]*\]")
TOP_ERRORS = 10


def strip_tags(text: str) -> str:
    return " ".join(_BRACKETED.sub(" ", text).split())


def turn_pairs(ctx: MetricContext, language: str) -> dict[int, tuple[str, str]]:
    """turn -> (normalised reference, normalised hypothesis) for comparable turns."""
    pairs: dict[int, tuple[str, str]] = {}
    for turn in sorted(set(ctx.intended_user_turns) & set(ctx.transcribed_user_turns)):
        ref = strip_tags(ctx.intended_user_turns[turn])
        hyp = strip_tags(ctx.transcribed_user_turns[turn])
        if not ref or not hyp:
            continue
        ref_norm = normalize_for_wer(ref, language)
        if ref_norm:  # a reference of only fillers has no units to recognise
            pairs[turn] = (ref_norm, normalize_for_wer(hyp, language))
    return pairs


def _units(text: str, cer: bool) -> list[str]:
    return list(text) if cer else text.split()


def align_errors(ref: str, hyp: str, cer: bool) -> dict[str, Any]:
    """Per-turn rate and error lists from one jiwer alignment."""
    out = jiwer.process_characters(ref, hyp) if cer else jiwer.process_words(ref, hyp)
    r, h = _units(ref, cer), _units(hyp, cer)
    subs: list[dict[str, str]] = []
    dels: list[str] = []
    ins: list[str] = []
    for chunk in out.alignments[0]:
        ref_part = r[chunk.ref_start_idx : chunk.ref_end_idx]
        hyp_part = h[chunk.hyp_start_idx : chunk.hyp_end_idx]
        if chunk.type == "substitute":
            subs += [{"expected": e, "actual": a} for e, a in zip(ref_part, hyp_part, strict=True)]
        elif chunk.type == "delete":
            dels += ref_part
        elif chunk.type == "insert":
            ins += hyp_part
    rate = (len(subs) + len(dels) + len(ins)) / max(len(r), 1)
    return {"rate": round(rate, 3), "substitutions": subs, "deletions": dels, "insertions": ins}


def _summary(per_turn: dict[str, dict[str, Any]]) -> dict[str, Any]:
    subs: Counter[str] = Counter()
    dels: Counter[str] = Counter()
    ins: Counter[str] = Counter()
    for turn in per_turn.values():
        subs.update(f"{s['expected']} -> {s['actual']}" for s in turn["substitutions"])
        dels.update(turn["deletions"])
        ins.update(turn["insertions"])
    return {
        "top_substitutions": subs.most_common(TOP_ERRORS),
        "top_deletions": dels.most_common(TOP_ERRORS),
        "top_insertions": ins.most_common(TOP_ERRORS),
    }


@register_metric(INFO)
def compute(ctx: MetricContext, judges: Any = None) -> MetricScore:
    language = ctx.language
    cer = uses_cer(language)
    pairs = turn_pairs(ctx, language)
    if not pairs:
        return error_score(INFO, "no caller turn has both an intended and a transcribed text")
    refs = [p[0] for p in pairs.values()]
    hyps = [p[1] for p in pairs.values()]
    corpus = jiwer.process_characters(refs, hyps) if cer else jiwer.process_words(refs, hyps)
    n_ref = sum(len(_units(r, cer)) for r in refs)
    errors = corpus.substitutions + corpus.deletions + corpus.insertions
    rate = round(errors / n_ref, 3)
    per_turn = {str(t): align_errors(r, h, cer) for t, (r, h) in pairs.items()}
    details: dict[str, Any] = {
        "cer" if cer else "wer": rate,
        "accuracy": round(1.0 - min(1.0, rate), 3),
        "language": language,
        "use_cer": cer,
        "num_turns": len(pairs),
        "per_turn": per_turn,
        "error_summary": _summary(per_turn),
        "total_substitutions": corpus.substitutions,
        "total_deletions": corpus.deletions,
        "total_insertions": corpus.insertions,
        "reference_units": n_ref,
    }
    subs = {
        f"{kind}_rate": sub_score(INFO, f"{kind}_rate", round(count / n_ref, 4), None)
        for kind, count in (
            ("substitution", corpus.substitutions),
            ("deletion", corpus.deletions),
            ("insertion", corpus.insertions),
        )
    }
    return make_score(INFO, rate, round(1.0 - min(1.0, rate), 3), details=details, sub_metrics=subs)
