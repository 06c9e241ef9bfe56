"""Bad names stop the flow itself (the Python API, the sweep) before anything is stored."""

from __future__ import annotations

from pathlib import Path

import pytest

from flows.benchmark import run_benchmark
from tasks.config import BenchmarkConfig, ConfigError, ScenarioSource
from tasks.config_checks import load_checked, name_problems


def test_every_unknown_name_is_reported_at_once() -> None:
    config = BenchmarkConfig.model_validate(
        {
            "conditions": ["clean", "nonsense-cond"],
            "systems": [{"name": "a", "agent": "nope"}, {"name": "b", "agent": "text"}],
            "caller": {"name": "robot"},
            "metrics": ["vibes"],
        }
    )
    problems = name_problems(config)
    assert [p.split(":")[0] for p in problems] == [
        "field 'conditions'",
        "field 'systems[0].agent'",
        "field 'systems[1].agent'",  # the text agent cannot speak audio
        "field 'caller.name'",
        "field 'metrics'",
    ]
    assert name_problems(BenchmarkConfig()) == []


def test_the_callers_tts_is_a_known_engine_and_only_espeak_takes_an_accent(
    tmp_path: Path,
) -> None:
    def problems(tts: str, conditions: list[str], **extra: object) -> list[str]:
        config = {"conditions": conditions, "caller": {"name": "scripted", "params": {"tts": tts}}}
        return name_problems(BenchmarkConfig.model_validate({**config, **extra}))

    assert problems("espeak", ["clean", "accent", "accent+noise"]) == []
    assert problems("openai", ["clean", "noise", "barge-in"]) == []
    assert problems("robot", ["clean"]) == [
        "field 'caller.params.tts': unknown TTS engine 'robot'; valid names: "
        "cartesia, elevenlabs, espeak, openai, piper"
    ]
    [accented] = problems("openai", ["clean", "accent", "noise+accent"])
    assert "engine 'openai' cannot speak an accent (condition accent, noise+accent)" in accented
    custom = tmp_path / "conditions.yaml"
    custom.write_text("conditions:\n  - name: mine\n    accent: {voices: [en-gb]}\n")
    [accented] = problems("cartesia", ["mine"], conditions_file=str(custom))
    assert "(condition mine)" in accented


def test_an_eva_record_that_does_not_exist_lists_the_valid_ids(eva_root: Path) -> None:
    source = ScenarioSource(eva_root=eva_root, domains=["airline"], records=["1.1.2", "9.9.9"])
    with pytest.raises(ConfigError, match=r"unknown record '9\.9\.9'; valid names: 1\.1\.2"):
        load_checked(source)


def test_the_flow_refuses_bad_names_before_any_store_write(tmp_path: Path) -> None:
    config = BenchmarkConfig(store=str(tmp_path / "store"), conditions=["nonsense-cond"])
    with pytest.raises(ConfigError, match="unknown condition 'nonsense-cond'"):
        run_benchmark(config)
    assert not (tmp_path / "store").exists()


IMPORTS_SCRIPT = """
import json, sys
from tasks.config import BenchmarkConfig
from tasks.config_checks import name_problems
from tasks.trial import preload_trial_modules
problems = name_problems(BenchmarkConfig())
checked = "scipy.signal" in sys.modules
preload_trial_modules(audio=False)
text = "scipy.signal" in sys.modules
preload_trial_modules(audio=True)
print(json.dumps({"problems": problems, "checked": checked, "text": text,
                  "audio": "scipy.signal" in sys.modules}))
"""


def test_checking_names_leaves_audio_dsp_to_the_workers_that_use_it() -> None:
    """The flow's process checks every name (importing every plug-in) while the Dask
    workers start on the same cores: scipy.signal (0.6 s) is loaded only by the workers of
    an audio run, before their first trial."""
    import json
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", IMPORTS_SCRIPT], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen == {"problems": [], "checked": False, "text": False, "audio": True}
