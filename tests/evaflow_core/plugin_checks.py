"""Run in a fresh interpreter with the example plug-in on sys.path: every kind, found
through its entry point group only, used once; prints one JSON object of what it saw."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import numpy as np
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from perturbations.audio import Clip, VoiceSpec
from perturbations.channel import make_channel
from perturbations.conditions import ConditionSpec, get_condition
from perturbations.noise import load_noise
from scenarios.engines import domain_tools, known_domains
from tasks.judges.base import JUDGES, JudgeTask, make_judge
from tasks.metrics.base import default_metrics
from tasks.simulate.agents import AGENTS
from tasks.simulate.callers import CALLERS
from tasks.simulate.faults.fault_agents import serve_fault_agent
from tasks.voice.stt import Recognizer, SttSpec
from tasks.voice.tts import synthesize


async def mute_call() -> str:
    async with serve_fault_agent("mute", seconds=0.2) as url, connect(url) as ws:
        try:
            await asyncio.wait_for(ws.recv(), timeout=5)
        except ConnectionClosed:
            return "closed by agent"
    return "still open"


def hum_checks() -> dict[str, object]:
    """The ``mains_hum`` kind's hooks: prepared with the channel, humming in a gap whose
    frames join up, and a different phase in the next gap."""
    from evaflow_example_plugin.perturbation import hum_period

    hum_period.cache_clear()
    spec = ConditionSpec.model_validate({"name": "hum", "mains_hum": {"hz": 50}})
    channel = make_channel(spec, seed=4)
    prepared = hum_period.cache_info().currsize
    first = np.concatenate([channel.ambient(0.25, 16000).samples for _ in range(4)])
    whole = make_channel(spec, seed=4).ambient(1.0, 16000).samples
    spectrum = np.abs(np.fft.rfft(first))
    channel.speech(Clip(np.zeros(1600, dtype=np.float32), 16000))  # the next gap begins
    second = channel.ambient(0.25, 16000).samples
    return {
        "prepared": prepared,
        "peak_hz": float(np.fft.rfftfreq(first.size, 1 / 16000)[int(np.argmax(spectrum))]),
        "level": round(float(np.abs(first).max()), 3),
        "frames_join": bool(np.array_equal(first, whole)),
        "next_gap_differs": not np.allclose(second, first[: second.size]),
    }


def main(cache: Path) -> dict[str, object]:
    seen: dict[str, object] = {
        "agent": "polite" in AGENTS.names(),
        "caller": "patient" in CALLERS.names(),
        "metric_in_defaults": "assistant_turns" in default_metrics(),
        "condition_snr": get_condition("quiet-cafe").noise.snr_db,  # type: ignore[union-attr]
        "judges": JUDGES.names(),
        "domains": list(known_domains()),
    }
    offline = make_judge("offline")
    from evaflow_example_plugin.rule import PolitenessInput  # registered by now

    task = JudgeTask(
        metric="politeness", inputs=PolitenessInput(assistant_text="Thank you, please hold")
    )
    verdict = offline.evaluate(task)
    seen["rule"] = {"raw_text": verdict.raw_text, "scope": verdict.scope}
    seen["strict"] = make_judge("strict").evaluate(task).model_dump(include={"judge", "raw_text"})
    forecast = domain_tools("weather")["get_forecast"](
        {"city": "Oslo"}, {"forecasts": {"Oslo": "rain"}}, 0
    )
    seen["tool"] = forecast
    hum = load_noise("hum", 1.0, 8000, np.random.default_rng(0))
    seen["hum_rms"] = round(float(np.sqrt(np.mean(np.square(hum)))), 6)
    recognizer = Recognizer(SttSpec(engine="silence-aware"), ["please hold the line"], cache)
    seen["stt_silence"] = recognizer.recognize(Clip(np.zeros(16000, dtype=np.float32), 16000))
    normal = synthesize("please hold the line", VoiceSpec(), engine="espeak").duration_s
    slow = synthesize("please hold the line", VoiceSpec(), engine="slow-espeak").duration_s
    seen["tts_slower"] = slow > 1.2 * normal
    seen["fault"] = asyncio.run(mute_call())
    quiet = ConditionSpec.model_validate({"name": "far-away", "volume": {"db": -20}})
    loud = Clip(np.full(800, 0.5, dtype=np.float32), 8000)
    seen["volume_peak"] = round(float(make_channel(quiet, seed=1).speech(loud).samples.max()), 4)
    seen["hum"] = hum_checks()
    return seen


if __name__ == "__main__":
    print(json.dumps(main(Path(sys.argv[1]))))
