"""The drill-down page of one attempt: verdict, audio, timeline, transcript with misheard
entities highlighted, tool calls, every metric with its details, and the event log."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from analysis.report_html import (
    esc,
    fmt,
    highlight,
    num_cell,
    page,
    pill,
    pretty_json,
    table,
)
from analysis.timeline import timeline_svg

TRACK_ORDER = ("caller", "caller_clean", "agent", "mixed")


Rows = list[dict[str, Any]]


@dataclass
class AttemptView:
    """Everything stored about one attempt, as row dicts sliced from the run's tables."""

    trial: dict[str, Any]
    turns: Rows = field(default_factory=list)
    tool_calls: Rows = field(default_factory=list)
    metrics: Rows = field(default_factory=list)
    entities: Rows = field(default_factory=list)
    events: Rows = field(default_factory=list)
    audio: dict[str, str] = field(default_factory=dict)
    """Track -> path of the extracted WAV, relative to the page."""


def _verdict(trial: dict[str, Any]) -> str:
    valid = trial.get("valid")
    parts = [
        pill("valid", "ok") if valid else pill("invalid", "fail"),
        pill(f"status: {trial.get('status')}", "ok" if trial.get("status") == "ok" else "warn"),
        pill("final attempt" if trial.get("final") else "superseded attempt", "info"),
    ]
    return " ".join(parts)


def summary_section(trial: dict[str, Any]) -> str:
    keys = [
        "system",
        "domain",
        "scenario_id",
        "condition",
        "trial",
        "attempt",
        "mode",
        "clock",
        "end_reason",
        "caller_ended",
        "duration_s",
        "wall_s",
        "n_turns",
        "n_tool_calls",
        "validation_reason",
        "failed_metrics",
        "error",
        "initial_db_hash",
        "final_db_hash",
        "expected_db_hash",
    ]
    rows = [[esc(k), fmt(trial.get(k))] for k in keys]
    final, expected = trial.get("final_db_hash"), trial.get("expected_db_hash")
    if final and expected:
        match = pill("yes", "ok") if final == expected else pill("no", "fail")
        rows.append(["final DB = expected DB", match])
    return f"<p>{_verdict(trial)}</p>" + table(["field", "value"], rows)


def siblings_section(current: str, siblings: Sequence[tuple[str, str, dict[str, Any]]]) -> str:
    if len(siblings) < 2:
        return ""
    links = []
    for attempt_id, href, row in siblings:
        label = f"attempt {row.get('attempt')} ({'valid' if row.get('valid') else 'invalid'})"
        if attempt_id == current:
            links.append(f"<b>{esc(label)}</b>")
        else:
            links.append(f'<a href="{esc(href)}">{esc(label)}</a>')
    return "<h2>Attempts of this trial</h2><p>" + " · ".join(links) + "</p>"


def audio_section(audio: dict[str, str]) -> str:
    if not audio:
        return "<h2>Audio</h2><p class=note>No audio stored for this attempt (text mode).</p>"
    players = [
        f'<div>{esc(track)}<br><audio controls preload="none" src="{esc(audio[track])}">'
        f"</audio></div>"
        for track in sorted(audio, key=_track_rank)
    ]
    return "<h2>Audio</h2><div class=audio>" + "".join(players) + "</div>"


def _track_rank(track: str) -> int:
    return TRACK_ORDER.index(track) if track in TRACK_ORDER else len(TRACK_ORDER)


def timeline_section(view: AttemptView) -> str:
    svg = timeline_svg(view.turns, view.tool_calls)
    if not svg:
        return (
            "<h2>Timeline</h2><p class=note>No speech segments stored (text mode): "
            "no timing to show.</p>"
        )
    legend = (
        "<p class=muted>Blue: caller speech · orange: agent speech · red band: both "
        "talking · line: response latency · green: tool call. Hover for details.</p>"
    )
    return "<h2>Timeline</h2>" + svg + legend


def _entity_marks(entities: Rows, turn_id: int, side: str) -> list[tuple[str, str]]:
    marks = []
    for e in (e for e in entities if e.get("turn_id") == turn_id):
        cls = "ent-ok" if e.get("correct") else "ent-miss"
        value = e.get("expected") if side == "expected" else e.get("heard")
        if isinstance(value, str):
            marks.append((value, cls))
    return marks


TRANSCRIPT_HEADERS = ["speaker", "turn", "intended (said)", "heard (by the other side)",
                      "start s", "latency s", "flags"]  # fmt: skip


def _transcript_row(t: dict[str, Any], entities: Rows) -> list[str]:
    user = t["role"] == "user"
    said_marks = _entity_marks(entities, t["turn_id"], "expected" if user else "heard")
    flags = [name for name, on in (("interrupted", t.get("interrupted")),
                                   ("barge-in", t.get("interrupts"))) if on]  # fmt: skip
    return [
        f'<td class="role">{esc("caller" if user else "agent")}</td>',
        num_cell(t.get("turn_id"), 0),
        highlight(t.get("intended_text") or "", said_marks),
        highlight(t.get("heard_text") or "", _entity_marks(entities, t["turn_id"], "heard")),
        num_cell(t.get("start_s"), 2),
        num_cell(t.get("latency_s"), 2),
        esc(", ".join(flags)),
    ]


def transcript_section(view: AttemptView) -> str:
    if not view.turns:
        return "<h2>Transcript</h2><p class=note>No turns stored.</p>"
    # Turn n pairs caller utterance n with the agent's reply to it: caller first.
    ordered = sorted(view.turns, key=lambda r: (r.get("turn_id") or 0, r.get("role") != "user"))
    body = table(TRANSCRIPT_HEADERS, [_transcript_row(t, view.entities) for t in ordered])
    body = body.replace(
        '<tr><td class="role">caller', '<tr class=turn-user><td class="role">caller'
    )
    body = body.replace(
        '<tr><td class="role">agent', '<tr class=turn-assistant><td class="role">agent'
    )
    legend = (
        '<p class=muted><mark class="ent-ok">entity heard right</mark> '
        '<mark class="ent-miss">entity misheard</mark></p>'
    )
    return "<h2>Transcript</h2>" + legend + body


def entities_section(entities: Rows) -> str:
    if not entities:
        return ""
    rows = [
        [
            num_cell(e.get("turn_id"), 0),
            esc(e.get("type")),
            esc(e.get("expected")),
            esc(e.get("heard")),
            pill("right", "ok") if e.get("correct") else pill("misheard", "fail"),
        ]
        for e in entities
    ]
    right = sum(1 for e in entities if e.get("correct"))
    return (
        f"<h2>Key entities</h2><p>{right / len(entities):.0%} heard right "
        f"({right} of {len(entities)})</p>" + table(["turn", "type", "expected", "heard", ""], rows)
    )


def tool_section(calls: Rows) -> str:
    if not calls:
        return "<h2>Tool calls</h2><p class=note>No tool calls.</p>"
    rows = [
        [
            num_cell(c.get("call_index"), 0),
            num_cell(c.get("turn_id"), 0),
            f"<b>{esc(c.get('tool_name'))}</b>",
            pretty_json(c.get("params_json")),
            pretty_json(c.get("response_json")),
            pill(str(c.get("status")), "ok" if c.get("status") == "success" else "warn"),
            esc(c.get("error_type")),
            num_cell(c.get("t_call_s"), 2),
        ]
        for c in sorted(calls, key=lambda r: r.get("call_index") or 0)
    ]
    return "<h2>Tool calls</h2>" + table(
        ["#", "turn", "tool", "parameters", "response", "status", "error type", "t s"], rows
    )


def _metric_order(name: str) -> tuple[int, str]:
    return (0 if name.startswith("EVA-") else 1, name)


def metrics_section(metrics: Rows) -> str:
    if not metrics:
        return "<h2>Metrics</h2><p class=note>No metrics stored for this attempt.</p>"
    rows = []
    for m in sorted(metrics, key=lambda r: _metric_order(r["metric"])):
        passed = m.get("passed")
        verdict = (
            ""
            if passed is None or (isinstance(passed, float) and math.isnan(passed))
            else pill("pass", "ok")
            if passed
            else pill("fail", "fail")
        )
        name = esc(m["metric"])
        if isinstance(m.get("parent"), str):
            name = f"&nbsp;&nbsp;↳ {name}"
        details = (
            (f"<details><summary>details</summary>{pretty_json(m.get('details_json'))}</details>")
            if m.get("details_json") not in (None, "{}")
            else ""
        )
        rows.append(
            [
                name,
                num_cell(m.get("score")),
                num_cell(m.get("normalized_score"), 3, colour=True),
                verdict,
                num_cell(m.get("threshold"), 2),
                fmt(m.get("skipped")),
                esc(m.get("error")),
                esc(m.get("version")),
                esc(m.get("judge")),
                details,
            ]
        )
    return "<h2>Metrics</h2>" + table(
        [
            "metric",
            "score",
            "normalized",
            "",
            "threshold",
            "skipped",
            "error",
            "version",
            "judge",
            "details",
        ],
        rows,
    )


def events_section(events: Rows) -> str:
    if not events:
        return ""
    rows = [
        [
            num_cell(e.get("t_s"), 3),
            esc(e.get("source")),
            esc(e.get("kind")),
            pretty_json(e.get("data_json")),
        ]
        for e in sorted(events, key=lambda r: r.get("t_s") or 0.0)
    ]
    return (
        f"<h2>Events</h2><details><summary>{len(rows)} events</summary>"
        + table(["t s", "source", "kind", "data"], rows)
        + "</details>"
    )


def attempt_page(
    view: AttemptView, siblings: Sequence[tuple[str, str, dict[str, Any]]], run_id: str
) -> str:
    """The full HTML of one attempt's page (lives in ``trials/``, next to ``audio/``)."""
    t = view.trial
    title = (
        f"{t.get('system')} · {t.get('domain')}/{t.get('scenario_id')} · "
        f"{t.get('condition')} · trial {t.get('trial')} · attempt {t.get('attempt')}"
    )
    subtitle = (
        f'<a href="../index.html">← report of run {esc(run_id)}</a> · '
        f'<a href="../trials.html">all trials</a> · {esc(t.get("attempt_id"))}'
    )
    body = "".join(
        [
            "<h2>Verdict</h2>",
            summary_section(t),
            siblings_section(str(t.get("attempt_id")), siblings),
            audio_section(view.audio),
            timeline_section(view),
            transcript_section(view),
            entities_section(view.entities),
            tool_section(view.tool_calls),
            metrics_section(view.metrics),
            events_section(view.events),
        ]
    )
    return page(title, body, "../report.css", subtitle)
