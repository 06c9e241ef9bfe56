"""An agent served the whole scenario (share_scenario) is marked in rows, report, summary."""

from __future__ import annotations

import asyncio
import itertools
from pathlib import Path
from types import SimpleNamespace

import httpx
import pandas as pd
import pyarrow as pa

import scenarios
from analysis.report_index import shared_systems, summary_section
from flows.progress import SHARED_MARK, summary_table
from scenarios.executor import ToolEngine
from scenarios.loader import load_scenario_dir
from scenarios.models import Scenario
from tasks.simulate import SimulationConfig, simulate_text
from tasks.simulate.tools.bridge import SCENARIO_SHARED, BridgeConfig, serve_tool_bridge
from tasks.simulate.tools.gateway import EngineGateway
from tasks.tables import SCHEMAS, trial_row

PACK_DIR = Path(scenarios.__file__).resolve().parent / "pack"


def _scenario() -> Scenario:
    return load_scenario_dir(PACK_DIR)[0]


def _gateway(scenario: Scenario) -> EngineGateway:
    ticks = itertools.count()
    engine = ToolEngine(scenario.domain, scenario.initial_db, scenario.agent.tool_names)
    return EngineGateway(engine, now=lambda: float(next(ticks)))


def _bridge_events(share: bool, fetch: bool) -> list[str]:
    scenario = _scenario()
    gateway = _gateway(scenario)

    async def run() -> None:
        config = BridgeConfig(mcp=False, share_scenario=share)
        async with serve_tool_bridge(gateway, scenario.agent, config, scenario) as bridge:
            if fetch:
                headers = {"Authorization": f"Bearer {bridge.token}"}
                async with httpx.AsyncClient(headers=headers) as client:
                    await client.get(f"{bridge.base_url}/scenario")

    asyncio.run(run())
    return [e.kind for e in gateway.events]


def test_sharing_and_each_read_are_events_on_the_attempt() -> None:
    assert _bridge_events(share=False, fetch=True) == []
    assert _bridge_events(share=True, fetch=False) == [SCENARIO_SHARED]
    assert _bridge_events(share=True, fetch=True) == [SCENARIO_SHARED, "scenario_read"]


def test_the_trials_row_says_so_and_old_rows_read_null() -> None:
    scenario = _scenario()
    record = simulate_text(scenario, SimulationConfig())
    assert trial_row(record, "b0", "k", True, {})["scenario_shared"] is False
    gateway = _gateway(scenario)

    async def share() -> None:
        config = BridgeConfig(mcp=False, share_scenario=True)
        async with serve_tool_bridge(gateway, scenario.agent, config, scenario):
            pass

    asyncio.run(share())
    record.events.extend(gateway.events)
    row = trial_row(record, "b0", "k", True, {})
    assert row["scenario_shared"] is True
    assert SCHEMAS["trials"].field("scenario_shared").type == pa.bool_()


def _trials(shared: list[bool | None] | None) -> pd.DataFrame:
    frame = pd.DataFrame(
        {
            "system": ["served", "under-test"],
            "final": [True, True],
            "valid": [True, True],
            "condition": ["clean", "clean"],
            "domain": ["airline", "airline"],
            "trial_key": ["a", "b"],
            "status": ["ok", "ok"],
            "end_reason": ["goodbye", "goodbye"],
        }
    )
    if shared is not None:
        frame["scenario_shared"] = shared
    return frame


def test_report_names_the_systems_that_could_read_the_scenario() -> None:
    html = summary_section({"run_id": "r"}, _trials([True, False]))
    assert "SCENARIO SHARED" in html and "served" in html
    assert shared_systems(_trials([True, False])) == ["served"]
    for old in (_trials(None), _trials([None, None])):  # runs stored before the column
        assert shared_systems(old) == []
        assert "SCENARIO SHARED" not in summary_section({"run_id": "r"}, old)


def test_summary_table_marks_the_system() -> None:
    rows = [
        {"system": s, "domain": "all", "condition": "clean", "dimension": "EVA-A_pass", "k": 1}
        for s in ("served", "under-test")
    ]
    summary = SimpleNamespace(run_id="r", aggregates=rows, scenario_shared=["served"])
    table = summary_table(summary)
    cells = list(table.columns[0].cells)
    assert cells == ["served" + SHARED_MARK, "under-test"] and table.caption
    plain = summary_table(SimpleNamespace(run_id="r", aggregates=rows, scenario_shared=[]))
    assert list(plain.columns[0].cells) == ["served", "under-test"] and not plain.caption
