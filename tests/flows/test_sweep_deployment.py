"""The scheduled sweep for real: a local Prefect server, a process worker on a work pool,
``prefect deploy`` from ``prefect.yaml``, the sweep deployment triggered on a tiny
configuration, and the tables it stored.

It runs in the default test run: a Prefect server, a worker and a flow-run process each
import Prefect and the server migrates a fresh database. Another test checks that every
deployment of ``prefect.yaml`` names a flow that exists and parameters that flow accepts.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import yaml

from tasks.store import Store

REPO = Path(__file__).resolve().parents[2]
PREFECT = str(Path(sys.executable).with_name("prefect"))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def stop(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM, then SIGKILL: a worker still tearing down a flow-run process can take longer
    than the test should wait for it."""
    process.terminate()
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=30)


def wait_healthy(api: str, server: subprocess.Popen[bytes], timeout_s: float = 300) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        assert server.poll() is None, "prefect server exited"
        try:
            if httpx.get(f"{api}/health", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    raise AssertionError(f"prefect server not healthy at {api} after {timeout_s} s")


@pytest.fixture
def prefect_env(tmp_path: Path) -> Iterator[dict[str, str]]:
    """A local Prefect server on a free port, with its own PREFECT_HOME."""
    port = free_port()
    env = {
        **os.environ,
        "PREFECT_HOME": str(tmp_path / "prefect-home"),
        "PREFECT_API_URL": f"http://127.0.0.1:{port}/api",
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        "PREFECT_UI_ENABLED": "false",
        "EVAFLOW_HOME": str(REPO),
    }
    log = (tmp_path / "server.log").open("wb")
    server = subprocess.Popen(
        [PREFECT, "server", "start", "--host", "127.0.0.1", "--port", str(port)],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        wait_healthy(env["PREFECT_API_URL"], server)
        yield env
    finally:
        stop(server)
        log.close()


def prefect(env: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        [PREFECT, "--no-prompt", *args],
        env=env,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, f"prefect {' '.join(args)}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def test_every_deployment_names_a_flow_and_parameters_it_accepts() -> None:
    import importlib

    from prefect import Flow

    spec = yaml.safe_load((REPO / "prefect.yaml").read_text(encoding="utf-8"))
    names = set()
    for deployment in spec["deployments"]:
        path, _, attr = deployment["entrypoint"].partition(":")
        module = importlib.import_module(path.removesuffix(".py").replace("/", "."))
        flow = getattr(module, attr)
        assert isinstance(flow, Flow), deployment["entrypoint"]
        flow.validate_parameters(deployment.get("parameters") or {})  # raises if wrong
        assert deployment["work_pool"]["name"] == "local-pool"
        names.add(flow.name)
    assert names == {"evaflow-benchmark", "evaflow-perturbation-sweep"}


@pytest.mark.timeout(900)
def test_the_sweep_deployment_runs_on_a_process_worker(
    prefect_env: dict[str, str], tmp_path: Path
) -> None:
    base = tmp_path / "tiny.yaml"
    base.write_text(
        "mode: text\nscenarios: {domains: [airline], limit: 1}\nreport: false\n"
        "runner: {kind: threads, workers: 1}\n",
        encoding="utf-8",
    )
    store = tmp_path / "store"
    prefect(prefect_env, "work-pool", "create", "local-pool", "--type", "process")
    prefect(prefect_env, "deploy", "--all")
    worker_log = (tmp_path / "worker.log").open("wb")
    worker = subprocess.Popen(
        [PREFECT, "worker", "start", "--pool", "local-pool", "--limit", "1"],
        env=prefect_env,
        cwd=tmp_path,
        stdout=worker_log,
        stderr=subprocess.STDOUT,
    )
    try:
        sweep = {
            "base_config": str(base),
            "conditions": ["clean", "noise"],
            "trials": 1,
            "store": str(store),
            "run_prefix": "nightly",
            "analyze": True,
        }
        out = prefect(
            prefect_env,
            "deployment",
            "run",
            "evaflow-perturbation-sweep/nightly-perturbation-sweep",
            "--params",
            json.dumps({"sweep": sweep}),
            "--watch",
            "--watch-timeout",
            "600",
        )
        assert "Completed" in out, out
    except AssertionError as failed:
        tail = (tmp_path / "worker.log").read_text(errors="replace")[-6000:]
        raise AssertionError(f"{failed}\nworker log:\n{tail}") from None
    finally:
        stop(worker)
        worker_log.close()
    runs = Store(str(store)).run_ids()
    assert len(runs) == 1 and runs[0].startswith("nightly-"), runs
    trials = Store(str(store)).read("trials", runs[0])
    finals = trials[trials["final"]]
    assert set(finals["condition"]) == {"clean", "noise"}
    assert finals["trial_key"].is_unique and len(finals) == 2


def test_no_flow_module_shadows_a_top_level_package() -> None:
    """Prefect runs a deployment's entrypoint as a script and leaves its folder first on
    sys.path, so flows/analysis.py once hid the ``analysis`` package from the sweep."""
    packages = {p.parent.name for p in REPO.glob("*/__init__.py")}
    shadows = sorted(p.stem for p in (REPO / "flows").glob("*.py") if p.stem in packages)
    assert not shadows, shadows
