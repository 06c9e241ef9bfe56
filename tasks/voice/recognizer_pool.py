"""Built recognisers kept for the next call, reset to the state of a new one.

Building a call's recogniser (its domain LM, dictionary and two PocketSphinx decoders) is
0.2-0.5 s of CPU, once per side and call: about a tenth of a short call's whole cost on the
virtual clock. A decoder keeps state between utterances (its live cepstral mean), so a
used one decodes differently from a new one; ``Decoder.reinit_feat()`` rebuilds that
state from the configuration, and a reset decoder decodes exactly as a new one (checked
on hypotheses, scores and the mean after every utterance of a mixed LM/grammar
sequence, and by ``tests/tasks/simulate/clocks/test_speed_determinism.py`` on whole calls).

Only recognisers whose backend can be reset this way are pooled; any other is built anew
each time. A recogniser is checked out by one call at a time.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any

from tasks.voice.stt import Recognizer

IDLE_LIMIT = 4  # idle recognisers kept (a few tens of MB each), least recently used dropped


def content_key(*parts: str) -> str:
    """A short digest of text inputs (scenario or agent configuration JSON) for a pool key."""
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part.encode())
        digest.update(b"\0")
    return digest.hexdigest()[:32]


def _decoders(recognizer: Recognizer) -> list[Any] | None:
    """The backend's decoders if every one of them can be reset, else None."""
    backend = getattr(recognizer, "_backend", None)
    found = [getattr(backend, name, None) for name in ("decoder", "grammar_decoder")]
    decoders = [d for d in found if d is not None]
    if not decoders or not all(hasattr(d, "reinit_feat") for d in decoders):
        return None
    return decoders


def reset_recognizer(recognizer: Recognizer) -> bool:
    """Reset ``recognizer``'s decoders to a new one's state; False if it cannot be reset."""
    decoders = _decoders(recognizer)
    if decoders is None:
        return False
    for decoder in decoders:
        decoder.reinit_feat()
    return True


class RecognizerPool:
    """Idle recognisers by key; thread-safe."""

    def __init__(self, idle_limit: int = IDLE_LIMIT) -> None:
        self.idle_limit = idle_limit
        self.enabled = True
        self._idle: OrderedDict[Hashable, list[Recognizer]] = OrderedDict()
        self._lock = threading.Lock()
        self.built = 0
        self.reused = 0

    def checkout(self, key: Hashable, build: Callable[[], Recognizer]) -> Recognizer:
        """An idle recogniser for ``key`` (reset when it was released), or ``build()``."""
        with self._lock:
            idle = self._idle.get(key)
            if self.enabled and idle:
                self.reused += 1
                recognizer = idle.pop()
                if not idle:
                    del self._idle[key]
                return recognizer
        recognizer = build()
        with self._lock:
            self.built += 1
        return recognizer

    def release(self, key: Hashable, recognizer: Recognizer) -> None:
        """Reset ``recognizer`` and keep it for ``key``; the caller must not use it again.

        Waits for a decode still running on it (a cancelled call's worker thread)."""
        decoders = _decoders(recognizer)
        lock = getattr(recognizer, "_lock", None)
        if not self.enabled or decoders is None or lock is None:
            return
        with lock:
            for decoder in decoders:
                decoder.reinit_feat()
        with self._lock:
            self._idle.setdefault(key, []).append(recognizer)
            self._idle.move_to_end(key)
            while sum(len(v) for v in self._idle.values()) > self.idle_limit:
                oldest = next(iter(self._idle))
                self._idle[oldest].pop(0)
                if not self._idle[oldest]:
                    del self._idle[oldest]

    def clear(self) -> None:
        with self._lock:
            self._idle.clear()


POOL = RecognizerPool()
