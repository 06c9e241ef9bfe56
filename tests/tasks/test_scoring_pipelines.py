"""An attempt is scored as its system's architecture and the stored rows say which.

The catalogue's cascade / hybrid / s2s are the reference's cascade / audio_llm / s2s
pipeline types (EVA spec 0, 4.2); the runner leaves out metrics that do not support the
attempt's pipeline (spec 4.1).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tasks.config import CallerSpec, JudgeSpec, parse_config
from tasks.metrics.base import DEFAULT_METRICS
from tasks.scoring import score_attempt
from tasks.store import Store
from tasks.systems.catalogue import load_catalogue, to_system_spec
from tasks.systems.spec import ConfigError, SystemSpec, pipeline_of
from tasks.tables import to_table, trial_row
from tasks.trial_spec import TrialSpec
from tests.tasks.judges.fakes import with_tracks
from tests.tasks.metrics.builders import audio_record, make_scenario

CASCADE_ONLY = {"stt_wer"}
NOT_FOR_S2S = {"stt_wer", "speakability", "tts_fidelity"}


def test_every_catalogue_system_maps_to_its_pipeline() -> None:
    expected = {"cascade": "cascade", "hybrid": "audio_llm", "s2s": "s2s"}
    catalogue = load_catalogue()
    for name, entry in catalogue.items():
        spec = to_system_spec(entry, environ={})
        assert pipeline_of(spec) == expected[entry.architecture], name
    assert pipeline_of(to_system_spec(catalogue.get("ultravox-realtime"))) == "audio_llm"
    assert pipeline_of(to_system_spec(catalogue.get("gpt-realtime-1.5"))) == "s2s"


@pytest.mark.parametrize("agent", ["reference", "text", "llm", "never_yield"])
def test_in_process_agents_are_cascades(agent: str) -> None:
    assert pipeline_of(SystemSpec(name="a", agent=agent)) == "cascade"


def test_an_external_agent_is_a_cascade_unless_its_user_says_otherwise() -> None:
    url = "ws://127.0.0.1:9/ws"
    assert pipeline_of(SystemSpec(name="x", agent=url)) == "cascade"
    stated = SystemSpec(name="x", agent=url, params={"architecture": "s2s"})
    assert pipeline_of(stated) == "s2s"
    hybrid = {"name": "h", "agent": "external", "params": {"url": url, "architecture": "hybrid"}}
    assert pipeline_of(hybrid) == "audio_llm"


@pytest.mark.parametrize(
    ("system", "says"),
    [
        ({"name": "x", "agent": "ws://h:1/ws", "params": {"architecture": "s2s-ish"}}, "unknown"),
        ({"name": "r", "agent": "reference", "params": {"architecture": "s2s"}}, "is a cascade"),
    ],
)
def test_a_wrong_architecture_is_refused_at_config_time_in_one_line(
    system: dict[str, Any], says: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config({"systems": [system]}, source="run.yaml")
    message = str(caught.value)
    assert "\n" not in message and "field 'systems.0'" in message and says in message


def _spec(system: SystemSpec, params: dict[str, Any]) -> TrialSpec:
    return TrialSpec(
        run_id="run",
        system=system,
        domain="airline",
        scenario_id="1.1.1",
        condition="clean",
        trial=0,
        seed=0,
        mode="audio",
        clock="virtual",
        caller=CallerSpec(),
        judge=JudgeSpec(name="offline", params=params),
        max_attempts=1,
        max_duration_s=600,
        metrics=[*DEFAULT_METRICS, "tts_fidelity"],
    )


SYSTEMS = {
    "cascade": SystemSpec(name="c", agent="reference"),
    "audio_llm": SystemSpec(
        name="h", agent="pipecat", params={"architecture": "hybrid", "components": {}}
    ),
    "s2s": SystemSpec(name="s", agent="pipecat", params={"architecture": "s2s", "components": {}}),
}


@pytest.mark.parametrize("pipeline", list(SYSTEMS))
def test_score_attempt_runs_the_metrics_of_the_systems_pipeline(
    tmp_path: Path, pipeline: str
) -> None:
    record = with_tracks(audio_record(), tmp_path)
    # Tone tracks carry no words: a recogniser that hears none stands in for PocketSphinx.
    spec = _spec(SYSTEMS[pipeline], {"transcriber": lambda samples, rate: ""})
    scores, verdict = score_attempt(spec, make_scenario(), record)
    names = {s.name for s in scores}
    absent = {"cascade": set(), "audio_llm": CASCADE_ONLY, "s2s": NOT_FOR_S2S}[pipeline]
    assert names.isdisjoint(absent)
    assert names >= {*DEFAULT_METRICS, "tts_fidelity"} - absent
    # The validation gates and the EVA composites are scored for every pipeline.
    assert {"conversation_valid_end", "user_speech_fidelity", "user_behavioral_fidelity"} <= names
    assert {"EVA-A_pass", "EVA-X_pass", "EVA-overall_mean"} <= names
    assert verdict["pipeline"] == pipeline
    assert trial_row(record, "b1", "k", True, verdict)["pipeline"] == pipeline


def test_the_stored_pipeline_column_reads_as_null_for_older_runs(tmp_path: Path) -> None:
    store = Store(str(tmp_path))
    key = {"run_id": "old", "attempt_id": "old/a1", "trial_key": "k", "final": True}
    old = to_table("trials", [{**key, "batch": "b1"}]).drop_columns(["pipeline"])
    store.write_batch("old", "b1", {"trials": old})
    assert store.read("trials", "old")["pipeline"].isna().all()
    assert store.query("SELECT pipeline FROM trials")["pipeline"].isna().all()
    new = to_table("trials", [{**key, "batch": "b2", "pipeline": "s2s"}])
    store.write_batch("old", "b2", {"trials": new})
    both = store.read("trials", "old").set_index("batch")["pipeline"]
    assert both.isna()["b1"] and both["b2"] == "s2s"
