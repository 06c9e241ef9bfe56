"""Speech recognition in worker processes, for calls paced by the wall clock.

PocketSphinx keeps the GIL while it decodes (measured here: a 5 s clip took 0.8 s and
stalled the event loop for 0.4-0.5 s even from a worker thread), and building the
caller's domain language model is 0.5 s of pure Python. On the real-time clock either
would delay every other call's frames, so the harness's recognizers live in a small
process pool instead; each worker builds a recognizer once per (scenario, spec, seed).
"""

from __future__ import annotations

import atexit
import functools
import multiprocessing
import os
import threading
from concurrent.futures import Future, ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from perturbations.audio import Clip
from scenarios.models import Scenario
from tasks.voice.stt import Expectation, SttSpec

_POOL: ProcessPoolExecutor | None = None
_POOL_LOCK = threading.Lock()


def worker_count() -> int:
    """``EVAFLOW_STT_WORKERS`` or one fewer than the cores (the event loop keeps one)."""
    configured = os.environ.get("EVAFLOW_STT_WORKERS")
    if configured:
        return max(1, int(configured))
    return max(1, min(4, (os.cpu_count() or 2) - 1))


def shared_pool() -> ProcessPoolExecutor:
    global _POOL
    with _POOL_LOCK:
        if _POOL is None:
            # spawn: the parent runs an event loop and threads, which fork would copy badly.
            context = multiprocessing.get_context("spawn")
            _POOL = ProcessPoolExecutor(max_workers=worker_count(), mp_context=context)
            atexit.register(_POOL.shutdown, wait=False, cancel_futures=True)
        return _POOL


@functools.lru_cache(maxsize=16)
def _cached_recognizer(key: str, recipe: bytes) -> Any:
    import pickle

    from tasks.simulate.voices import caller_recognizer

    scenario, spec, cache_dir, seed = pickle.loads(recipe)
    return caller_recognizer(scenario, spec, Path(cache_dir), seed)


def _recognize(
    key: str, recipe: bytes, samples: np.ndarray | None, rate: int, expect: str | None
) -> str:
    """Worker side: decode one clip (``samples=None`` only builds the recognizer)."""
    recognizer = _cached_recognizer(key, recipe)
    if samples is None:
        return ""
    text: str = recognizer.recognize(Clip(samples, rate), expect)  # type: ignore[arg-type]
    return text


class PooledCallerRecognizer:
    """The caller's recognizer (:func:`tasks.simulate.voices.caller_recognizer`), decoding
    in a worker process. ``recognize`` blocks its calling thread, never the event loop."""

    def __init__(self, scenario: Scenario, spec: SttSpec, cache_dir: Path, seed: int) -> None:
        import pickle

        self.key = "|".join([scenario.source, scenario.key, spec.model_dump_json(), str(seed)])
        self.recipe = pickle.dumps((scenario, spec, str(cache_dir), seed))

    def warm(self) -> Future[str]:
        """Build the recognizer in a worker ahead of the call."""
        return shared_pool().submit(_recognize, self.key, self.recipe, None, 0, None)

    def recognize(self, clip: Clip, expect: Expectation = None) -> str:
        future = shared_pool().submit(
            _recognize, self.key, self.recipe, clip.samples, clip.rate, expect
        )
        return future.result()
