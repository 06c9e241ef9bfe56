"""What a Dask worker does once it is up, before its first trial (flows.runners.warm_worker)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

SCRIPT = """
import gc, json, sys
from flows.runners import warm_worker
warm_worker({audio})
print(json.dumps({{"frozen": gc.get_freeze_count(), "trial_code": "tasks.simulate" in sys.modules,
                   "dsp": "scipy.signal" in sys.modules}}))
"""


@pytest.mark.parametrize("audio", [False, True])
def test_a_warmed_worker_has_the_trial_code_loaded_and_out_of_the_collectors_reach(
    audio: bool,
) -> None:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT.format(audio=audio)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["trial_code"] is True
    assert seen["dsp"] is audio  # audio trials resample; text trials never load scipy.signal
    # The imported modules' objects are frozen: the worker's collections (and its exit)
    # no longer walk them.
    assert seen["frozen"] > 50_000
