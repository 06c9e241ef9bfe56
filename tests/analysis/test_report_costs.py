"""The report's cost section on the run with planted costs (tests/tasks/costs/planted.py)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from analysis.data import load_run_data
from analysis.report_costs import costs_section
from tasks.costs.summary import dollars, system_costs
from tasks.store import Store
from tests.tasks.costs.planted import PRICES, RUN, write_costed_run


def test_the_cost_section_shows_dollars_per_success_beside_the_pass_rate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("EVAFLOW_PRICES", raising=False)
    store = Store(str(tmp_path / "store"))
    write_costed_run(store)
    html = costs_section(load_run_data(store, [RUN]), RUN)
    rows = {m.group(1): m.group(0) for m in re.finditer(r"<tr><td>(\w+)</td>.*?</tr>", html, re.S)}
    assert sorted(rows) == ["cascade", "reference", "s2s", "silent"]
    s2s = next(c for c in system_costs(store, RUN) if c.system == "s2s")
    assert s2s.total is not None and s2s.total > 0
    # trials, attempts, passes with their rate, then $ per trial and per success.
    cells = re.findall(r"<td[^>]*>(.*?)</td>", rows["s2s"], re.S)
    assert cells[1:6] == ["1", "2", "1/1 (1.00)", dollars(s2s.per_trial), dollars(s2s.total)]
    assert "unknown" in rows["cascade"] and "unpriced-llm input_token" in rows["cascade"]
    assert "no usage reported" in rows["silent"]
    assert PRICES.version_id in html
