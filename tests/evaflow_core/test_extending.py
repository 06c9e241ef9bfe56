"""docs/extending.md, run: its code blocks become a plug-in package that evaflow finds
through entry points only (a ``.dist-info`` on ``PYTHONPATH``, as ``pip install`` would
leave it), and each kind is used: in an ``evaflow run`` (agent, caller, metric,
condition) and in a fresh interpreter (the others)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from evaflow_core.registry import Registry

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "extending.md"
PLUGIN = "evaflow_example_plugin"
BLOCK = re.compile(r"^```(\w+)([^\n]*)\n(.*?)^```", re.S | re.M)


def doc_blocks() -> tuple[dict[str, str], dict]:
    """(module name -> code) of the ``python module=NAME`` blocks, and the TOML block."""
    modules: dict[str, str] = {}
    tomls = []
    for lang, info, body in BLOCK.findall(DOC.read_text(encoding="utf-8")):
        if lang == "python" and "module=" in info:
            modules[info.split("module=", 1)[1].strip()] = body
        elif lang == "toml":
            tomls.append(body)
    assert len(tomls) == 1, f"{DOC}: expected one toml block, found {len(tomls)}"
    return modules, tomllib.loads(tomls[0])


def build_plugin(root: Path) -> Path:
    """The package and its dist-info, as an installer would write them."""
    modules, pyproject = doc_blocks()
    package = root / PLUGIN
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    for name, code in modules.items():
        (package / f"{name}.py").write_text(code)
    project = pyproject["project"]
    info = root / f"{PLUGIN}-{project['version']}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {project['name']}\nVersion: {project['version']}\n"
    )
    lines = []
    for group, points in project["entry-points"].items():
        lines += [f"[{group}]", *(f"{k} = {v}" for k, v in points.items()), ""]
    (info / "entry_points.txt").write_text("\n".join(lines))
    return root


def evaflow_registries() -> list[Registry]:
    import perturbations.conditions
    import perturbations.kinds
    import perturbations.noise
    import scenarios.engines
    import tasks.judges.base
    import tasks.judges.offline
    import tasks.metrics.base
    import tasks.simulate.agents
    import tasks.simulate.callers
    import tasks.simulate.faults.fault_agents
    import tasks.voice.stt
    import tasks.voice.tts

    return [
        tasks.simulate.agents.AGENTS,
        tasks.simulate.callers.CALLERS,
        tasks.metrics.base.METRICS,
        tasks.judges.offline.OFFLINE_RULES,
        tasks.judges.base.JUDGES,
        scenarios.engines.DOMAIN_TOOLS,
        perturbations.conditions.CONDITIONS,
        perturbations.kinds.PERTURBATIONS,
        perturbations.noise.NOISE_GENERATORS,
        tasks.voice.stt.STT_ENGINES,
        tasks.voice.tts.TTS_ENGINES,
        tasks.simulate.faults.fault_agents.FAULT_AGENTS,
    ]


def run(args: list[str], plugin_root: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(plugin_root), str(ROOT)])}
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def plugin_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_plugin(tmp_path_factory.mktemp("plugin"))


def test_the_doc_has_one_example_per_kind() -> None:
    modules, pyproject = doc_blocks()
    groups = pyproject["project"]["entry-points"]
    assert set(groups) == {r.entry_point_group for r in evaflow_registries()}
    for group, points in groups.items():
        for value in points.values():
            module = value.removeprefix(f"{PLUGIN}.")
            assert module in modules, f"{group}: no code block for module {module!r}"


def test_every_kind_plugs_in_through_its_entry_point(plugin_root: Path, tmp_path: Path) -> None:
    checks = Path(__file__).with_name("plugin_checks.py")
    done = run([sys.executable, str(checks), str(tmp_path)], plugin_root, tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["agent"] and seen["caller"] and seen["metric_in_defaults"]
    assert seen["condition_snr"] == 25.0
    assert {"offline", "llm", "strict"} <= set(seen["judges"])
    assert seen["domains"] == ["airline", "itsm", "medical_hr", "weather"]
    assert json.loads(seen["rule"]["raw_text"]) == {"rating": 2}
    assert seen["rule"]["scope"].startswith("Counts 'please'")
    assert seen["strict"] == {"judge": "strict", "raw_text": '{"rating": 1}'}
    assert seen["tool"] == {"status": "success", "forecast": "rain"}
    assert seen["hum_rms"] == pytest.approx(1.0, abs=1e-6)
    assert seen["stt_silence"] == ""
    assert seen["tts_slower"] is True
    assert seen["fault"] == "closed by agent"
    assert seen["volume_peak"] == 0.05  # -20 dB
    assert seen["hum"] == {
        "prepared": 1,  # made with the channel, before any audio
        "peak_hz": 50.0,
        "level": 0.02,
        "frames_join": True,
        "next_gap_differs": True,
    }


def test_plugin_agent_caller_metric_and_condition_in_an_evaflow_run(
    plugin_root: Path, tmp_path: Path
) -> None:
    store = tmp_path / "data"
    flags = ["--mode", "text", "--agent", "polite", "--caller", "patient"]
    flags += ["--conditions", "quiet-cafe", "--domains", "itsm", "--limit", "1", "--trials", "1"]
    flags += ["--runner", "threads", "--workers", "1", "--store", str(store), "--no-report"]
    done = run([sys.executable, "-m", "flows", "run", *flags], plugin_root, tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    sql = (
        "SELECT t.system, t.condition, m.score, r.config_json LIKE '%patient%' AS caller "
        "FROM trials t JOIN metrics m ON m.attempt_id = t.attempt_id "
        "JOIN runs r ON r.run_id = t.run_id "
        "WHERE m.metric = 'assistant_turns' ORDER BY t.condition"
    )
    query = [sys.executable, "-m", "flows", "query", sql, "--store", str(store)]
    done = run([*query, "--format", "json"], plugin_root, tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    rows = json.loads(done.stdout)
    assert [(r["system"], r["condition"], r["caller"]) for r in rows] == [
        ("polite", "quiet-cafe", True)
    ]
    assert rows[0]["score"] >= 2  # the greeting and at least one answer
