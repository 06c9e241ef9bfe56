"""The pipecat agent's failure paths: a bot that cannot start is a stored attempt, not a hang."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from scenarios.loader import load_eva_scenarios
from tasks.simulate.clocks.realtime import simulate_realtime_async
from tasks.simulate.config import SimulationConfig
from tasks.systems.pipecat_process import VENV_ENV, BotProcess, BotStartError, bot_python

OFFLINE = {
    "stt": {"provider": "evaflow-pocketsphinx"},
    "llm": {"provider": "openai", "model": "m", "params": {"base_url": "http://127.0.0.1:9/v1"}},
    "tts": {"provider": "evaflow-espeak"},
}


def test_a_missing_environment_names_the_make_target(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(VENV_ENV, str(tmp_path / "nowhere" / "python"))
    with pytest.raises(BotStartError, match="make pipecat-env"):
        BotProcess({"components": OFFLINE}).start()


@pytest.mark.skipif(not bot_python().exists(), reason="run `make pipecat-env`")
def test_a_bot_that_cannot_start_is_a_stored_infra_error(eva_root: Path, tmp_path: Path) -> None:
    scenario = load_eva_scenarios(eva_root, record_ids=["airline/5.2.2"])[0]
    params = {"architecture": "cascade", "components": {**OFFLINE, "stt": {"provider": "nope"}}}
    config = SimulationConfig(
        agent="pipecat", agent_params=params, max_duration_s=30, cache_dir=tmp_path
    )
    started = time.perf_counter()
    record = asyncio.run(simulate_realtime_async(scenario, config))
    assert (record.status, record.end_reason, record.clock) == (
        "infra_error",
        "harness_error",
        "realtime",
    )
    assert "unknown stt provider 'nope'" in (record.error or "")
    assert "evaflow-pocketsphinx" in (record.error or "")  # the valid ones are listed
    assert time.perf_counter() - started < 60
