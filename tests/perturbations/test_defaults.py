"""perturbations on its own, with its own defaults (issue 17): ``NoiseParams()`` names
``babble``, which evaflow provides through its ``evaflow.noise`` entry point."""

from __future__ import annotations

import json
import subprocess
import sys

SCRIPT = """
import json, sys
import numpy as np
from perturbations.audio import Clip
from perturbations.noise import NoiseParams, apply_background_noise
before = sorted(m for m in sys.modules if m.split('.')[0] == 'tasks')
clip = Clip(np.zeros(8000, dtype=np.float32), 8000)
out = apply_background_noise(clip, NoiseParams(loop_s=2), np.random.default_rng(1))
rms = float(np.sqrt(np.mean(np.square(out.samples))))
print(json.dumps({"before": before, "babble": "tasks.voice.babble" in sys.modules, "rms": rms}))
"""


def test_default_noise_params_work_without_importing_tasks_first() -> None:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["before"] == []  # nothing of tasks was imported by perturbations itself
    assert seen["babble"] and seen["rms"] > 0  # found through the entry point, mixed in
