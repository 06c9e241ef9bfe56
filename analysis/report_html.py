"""Small HTML building blocks for the static report. Every data string goes through
``esc`` (``html.escape``); markup is only ever produced here, never taken from the data."""

from __future__ import annotations

import hashlib
import html
import json
import math
import re
from collections.abc import Iterable, Sequence
from functools import lru_cache
from pathlib import Path, PurePath
from typing import Any

import pandas as pd
import pyarrow as pa

from scenarios.spoken_forms import DIGIT_WORDS as SPOKEN_DIGITS
from scenarios.spoken_forms import NATO as NATO_WORDS

CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:#1d2330;
background:#fafbfc}
header{background:#243447;color:#fff;padding:14px 28px}header a{color:#cfe3ff}
header h1{margin:0;font-size:20px}header .sub{opacity:.8;font-size:13px}
main{padding:10px 28px 40px;max-width:1400px}
h2{border-bottom:2px solid #dde3ea;padding-bottom:4px;margin-top:34px}
h3{margin-bottom:6px}
table{border-collapse:collapse;margin:8px 0 14px;font-size:13px;background:#fff;display:block;
overflow-x:auto;max-width:100%;width:max-content}
th,td{border:1px solid #dde3ea;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#eef2f6;position:sticky;top:0}
td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.good{background:#e3f4e6}.mid{background:#fff3d6}.bad{background:#fde2e1}
.pill{display:inline-block;border-radius:9px;padding:0 8px;font-size:12px;color:#fff}
.pill.ok{background:#2e7d32}.pill.fail{background:#c62828}.pill.warn{background:#ef6c00}
.pill.info{background:#546e7a}
mark.ent-ok{background:#c8f0cf}mark.ent-miss{background:#ffc9c4;text-decoration:underline wavy #c62828}
pre{background:#f3f5f8;padding:6px 8px;margin:0;white-space:pre-wrap;word-break:break-word;
max-height:320px;overflow:auto;font-size:12px}
figure{margin:10px 0 24px}figure img{max-width:100%;border:1px solid #dde3ea;background:#fff}
figcaption{font-size:12px;color:#555}
.note{color:#666;font-style:italic}.muted{color:#888}
nav.toc a{margin-right:14px}
.turn-user td.role{color:#1f5fa8;font-weight:600}.turn-assistant td.role{color:#b4541a;font-weight:600}
.audio{display:flex;gap:18px;flex-wrap:wrap}.audio div{font-size:12px}
"""


def esc(value: Any) -> str:
    """Text from the data, escaped for HTML (None and NaN become empty)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return html.escape(str(value), quote=True)


def fmt(value: Any, digits: int = 3) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return esc(value)


def score_class(value: Any) -> str:
    """Cell colour like the reference app: >= 0.8 good, >= 0.5 middling, else bad."""
    if value is None or isinstance(value, bool) or not isinstance(value, int | float):
        return ""
    if math.isnan(float(value)):
        return ""
    return "good" if value >= 0.8 else "mid" if value >= 0.5 else "bad"


def with_ci(value: Any, low: Any, high: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if (
        low is None
        or high is None
        or any(isinstance(v, float) and math.isnan(v) for v in (low, high))
    ):
        return f"{value:.3f}"
    return f"{value:.3f} <span class=muted>[{low:.3f}, {high:.3f}]</span>"


def pill(text: str, kind: str) -> str:
    return f'<span class="pill {esc(kind)}">{esc(text)}</span>'


def page(title: str, body: str, css_href: str, subtitle: str = "") -> str:
    return (
        "<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8>"
        '<meta name=viewport content="width=device-width, initial-scale=1">'
        f'<link rel=icon href="data:,"><link rel=stylesheet href="{esc(css_href)}">'
        f"<title>{esc(title)}</title></head><body><header><h1>{esc(title)}</h1>"
        f"<div class=sub>{subtitle}</div></header><main>{body}</main></body></html>\n"
    )


def table(headers: Sequence[str] | None, rows: Iterable[Sequence[str]], cls: str = "") -> str:
    """Rows are already-rendered cell HTML (callers escape data with ``esc``/``fmt``)."""
    if headers is None:
        body = "".join(f"<tr>{''.join(_cell(c) for c in row)}</tr>" for row in rows)
        return f'<table class="{esc(cls)}"><tbody>{body}</tbody></table>'
    head = "".join(f"<th>{esc(h)}</th>" for h in headers)
    body = "".join(f"<tr>{''.join(_cell(c) for c in row)}</tr>" for row in rows)
    return f'<table class="{esc(cls)}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def _cell(cell: str) -> str:
    return cell if cell.startswith("<td") else f"<td>{cell}</td>"


def num_cell(value: Any, digits: int = 3, colour: bool = False) -> str:
    cls = f"num {score_class(value)}" if colour else "num"
    return f'<td class="{cls.strip()}">{fmt(value, digits)}</td>'


def frame_table(frame: pd.DataFrame, digits: int = 3, colour: Sequence[str] = ()) -> str:
    """A DataFrame as an HTML table (every value escaped; numbers right-aligned)."""
    rows = []
    for record in frame.to_dict("records"):
        cells = []
        for col, value in record.items():
            if isinstance(value, int) and not isinstance(value, bool):
                cells.append(num_cell(float(value), 0, col in colour))
            elif isinstance(value, float):
                cells.append(num_cell(value, digits, col in colour))
            else:
                cells.append(esc(value))
        rows.append(cells)
    return table([str(c) for c in frame.columns], rows)


def pretty_json(text: Any) -> str:
    """Pretty-printed JSON (or the raw text if it is not JSON), escaped, in a <pre>."""
    if text is None or (isinstance(text, float) and math.isnan(text)):
        return '<span class="muted">–</span>'
    try:
        shown = json.dumps(json.loads(text), indent=2, ensure_ascii=False, sort_keys=True)
    except (TypeError, ValueError):
        shown = str(text)
    return f"<pre>{esc(shown)}</pre>"


# Regex alternatives per symbol as callers say them ("oh" for zero, NATO spelling variants).
DIGIT_WORDS = ("zero|oh", *SPOKEN_DIGITS[1:])
NATO = {c: "|".join(w for w in NATO_WORDS if w[0] == c) for c in "abcdefghijklmnopqrstuvwxyz"}


def entity_pattern(value: str) -> str:
    """A regex for an entity as written or as spoken character by character.

    Codes are read out ("six three F F E V", "Foxtrot"), so each digit may also appear as
    its word and each letter as its NATO word, with spaces, hyphens or "dash" between them.
    """
    compact = value.strip()
    if not re.fullmatch(r"[A-Za-z0-9-]{2,24}", compact) or not re.search(r"\d", compact):
        return re.escape(compact)
    parts = []
    for ch in compact.replace("-", ""):
        if ch.isdigit():
            parts.append(f"(?:{ch}|{DIGIT_WORDS[int(ch)]})")
        else:
            parts.append(f"(?:{re.escape(ch)}|{NATO[ch.lower()]})")
    return r"\b" + r"(?:[\s,.-]|dash)*".join(parts) + r"\b"


@lru_cache(maxsize=4096)
def _entity_regex(value: str) -> re.Pattern[str]:
    """Compiled once per value: a report highlights the same entities on every turn, and
    the patterns are too many for ``re``'s own cache."""
    return re.compile(entity_pattern(value), flags=re.IGNORECASE)


def highlight(text: str, marks: Sequence[tuple[str, str]]) -> str:
    """Escape ``text`` and wrap case-insensitive occurrences of each needle in <mark>.

    ``marks`` are (entity value, css class); a value also matches its spoken form (see
    ``entity_pattern``); longer values win where they overlap.
    """
    text = text or ""
    spans: list[tuple[int, int, str]] = []
    for needle, cls in sorted(marks, key=lambda m: -len(m[0])):
        if not needle or not needle.strip():
            continue
        for match in _entity_regex(needle).finditer(text):
            start, end = match.span()
            if all(end <= s or start >= e for s, e, _ in spans):
                spans.append((start, end, cls))
    out, pos = [], 0
    for start, end, cls in sorted(spans):
        out.append(esc(text[pos:start]))
        out.append(f'<mark class="{esc(cls)}">{esc(text[start:end])}</mark>')
        pos = end
    out.append(esc(text[pos:]))
    return "".join(out)


def figure_html(png: str, root: Path, name: str) -> str:
    """A figure's PNG linking to its SVG twin, with paths relative to the report ``root``."""
    rel = PurePath(png).relative_to(root).as_posix()
    svg = rel[:-4] + ".svg"
    return (
        f'<figure><a href="{esc(svg)}"><img src="{esc(rel)}" alt="{esc(name)} figure"></a>'
        f"<figcaption>{esc(name)} · {esc(PurePath(png).stem)} (click for SVG)</figcaption>"
        "</figure>"
    )


def slug(text: str) -> str:
    """A file-name-safe, collision-free name for an id (readable prefix + short hash)."""
    readable = re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_.")[:80] or "x"
    return f"{readable}-{hashlib.sha1(text.encode('utf-8')).hexdigest()[:8]}"


def records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """DataFrame rows as dicts with None for nulls (via Arrow: much faster than pandas)."""
    return pa.Table.from_pandas(frame, preserve_index=False).to_pylist()
