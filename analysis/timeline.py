"""The call timeline of one attempt as inline SVG: both speakers' speech segments, the
response latency of every agent turn, overlaps (both talking) and tool calls.

Hand-written SVG rather than matplotlib: a report can hold thousands of trial pages,
and a few hundred bytes of markup per page render instantly and stay crisp.
"""

from __future__ import annotations

import json
import math
from typing import Any

from analysis.report_html import esc

WIDTH, LEFT, RIGHT = 960, 74, 16
LANES = {"user": 24, "assistant": 74, "tools": 122}
LANE_LABELS = {"user": "caller", "assistant": "agent", "tools": "tools"}
BAR = 22
HEIGHT = 170
STEPS = (0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300, 600)


Rows = list[dict[str, Any]]


def segments_of(turns: Rows) -> list[dict[str, Any]]:
    """Every speech segment with its role, turn id and text (for the tooltip)."""
    out = []
    for row in turns:
        try:
            spans = json.loads(row.get("segments_json") or "[]")
        except ValueError:
            spans = []
        for start, end in spans:
            out.append(
                {
                    "role": row["role"],
                    "turn_id": row["turn_id"],
                    "start": float(start),
                    "end": float(end),
                    "text": row.get("intended_text") or "",
                }
            )
    return out


def overlaps(segments: list[dict[str, Any]], min_s: float = 0.001) -> list[tuple[float, float]]:
    """Intervals where caller and agent speech intersect by more than ``min_s``."""
    users = [s for s in segments if s["role"] == "user"]
    agents = [s for s in segments if s["role"] == "assistant"]
    found = []
    for u in users:
        for a in agents:
            start, end = max(u["start"], a["start"]), min(u["end"], a["end"])
            if end - start > min_s:
                found.append((start, end))
    return sorted(found)


def _step(span: float) -> float:
    return next((s for s in STEPS if span / s <= 12), STEPS[-1])


def _number(value: Any) -> float | None:
    if value is None:
        return None
    number = float(value)
    return None if math.isnan(number) else number


def timeline_svg(turns: Rows, tool_calls: Rows | None = None) -> str:
    """The SVG, or an empty string when the attempt has no timed segments (text mode)."""
    segments = segments_of(turns)
    if not segments:
        return ""
    calls = [
        (t, str(r.get("tool_name")))
        for r in tool_calls or []
        if (t := _number(r.get("t_call_s"))) is not None
    ]
    span = max([s["end"] for s in segments] + [t for t, _ in calls]) * 1.02 or 1.0

    def x(t: float) -> float:
        return LEFT + max(0.0, t) / span * (WIDTH - LEFT - RIGHT)

    parts = [
        f'<text x="4" y="{y + 15}" class="lane">{LANE_LABELS[k]}</text>' for k, y in LANES.items()
    ]
    for start, end in overlaps(segments):
        parts.append(
            f'<rect x="{x(start):.1f}" y="{LANES["user"] - 4}" width="'
            f'{max(1.0, x(end) - x(start)):.1f}" height="{LANES["assistant"] - LANES["user"] + BAR + 8}"'
            f' class="overlap"><title>overlap {end - start:.2f} s</title></rect>'
        )
    for s in segments:
        y = LANES["user" if s["role"] == "user" else "assistant"]
        tip = (
            f"turn {s['turn_id']} {s['role']} {s['start']:.2f}-{s['end']:.2f} s: {s['text'][:160]}"
        )
        parts.append(
            f'<rect x="{x(s["start"]):.1f}" y="{y}" width="'
            f'{max(1.0, x(s["end"]) - x(s["start"])):.1f}" height="{BAR}" class="seg '
            f'{esc(s["role"])}"><title>{esc(tip)}</title></rect>'
        )
    parts += _latencies(turns, x)
    for t, name in calls:
        cx, cy = x(t), LANES["tools"] + BAR / 2
        parts.append(
            f'<path d="M{cx:.1f},{cy - 7} l7,7 l-7,7 l-7,-7 z" class="tool">'
            f"<title>{esc(name)} at {t:.2f} s</title></path>"
        )
    parts += _axis(span, x)
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" '
        f'width="100%" role="img" aria-label="call timeline"><style>{_STYLE}</style>'
        + "".join(parts)
        + "</svg>"
    )


def _latencies(turns: Rows, x: Any) -> list[str]:
    out = []
    y = (LANES["user"] + BAR + LANES["assistant"]) / 2
    for row in (r for r in turns if r.get("role") == "assistant"):
        latency, start = _number(row.get("latency_s")), _number(row.get("start_s"))
        if latency is None or start is None:
            continue
        left, right = sorted((start - latency, start))
        neg = " neg" if latency < 0 else ""
        out.append(
            f'<line x1="{x(left):.1f}" x2="{x(right):.1f}" y1="{y}" y2="{y}" '
            f'class="lat{neg}"/><text x="{x(right) + 2:.1f}" y="{y - 3}" '
            f'class="latt{neg}">{latency:.2f} s</text>'
        )
    return out


def _axis(span: float, x: Any) -> list[str]:
    step = _step(span)
    y = HEIGHT - 14
    out = [f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y}" y2="{y}" class="axis"/>']
    for i in range(int(span / step) + 1):
        t = i * step
        out.append(
            f'<line x1="{x(t):.1f}" x2="{x(t):.1f}" y1="{y}" y2="{y + 4}" class="axis"/>'
            f'<text x="{x(t):.1f}" y="{y + 13}" class="tick">{t:g} s</text>'
        )
    return out


_STYLE = (
    ".lane{font:12px sans-serif;fill:#333}.tick{font:10px sans-serif;fill:#555;"
    "text-anchor:middle}.axis{stroke:#888}.seg.user{fill:#4C72B0}.seg.assistant{fill:#DD8452}"
    ".overlap{fill:#C44E52;opacity:.22}.lat{stroke:#555;stroke-width:1.5}"
    ".latt{font:10px sans-serif;fill:#555}.lat.neg{stroke:#C44E52}.latt.neg{fill:#C44E52}"
    ".tool{fill:#55A868}"
)
