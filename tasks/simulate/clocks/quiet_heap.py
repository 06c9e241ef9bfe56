"""Keep the cyclic garbage collector's full passes off real-time calls.

A full (generation 2) collection walks every container object in the process and holds
the GIL while it does. After the imports a harness process holds >100k of them (functions,
dicts, pydantic schemas), so one full pass took 85 ms on a quiet 2-core machine and 110-585
ms with 32 calls on the loop: every call on that loop stopped for that long. Its agent
frames sent meanwhile were stamped on arrival after the stall, the catch-up ticks played
silence instead, and a reply that had just started was heard as a one-frame blip, then a
gap: the VAD (60 ms of speech to start) put its start after the stall (measured: 202 ms
of latency error on one turn, a gen-2 pass of 282 ms at the same wall time).

:func:`frozen_heap` moves everything alive when a call starts into the permanent
generation (:func:`gc.freeze`), which no collection walks; a full pass then only walks
what the calls themselves made since. Young garbage is collected first, so only live
objects are frozen; when the last call in the process ends, the heap is unfrozen and
collected as usual. Collection never changes what a call computes.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager


class _Calls:
    """Real-time calls live in this process (any thread, any event loop)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.live = 0


_CALLS = _Calls()


@contextmanager
def frozen_heap() -> Iterator[None]:
    """For the length of one call: the heap as it is now is never walked by the GC."""
    with _CALLS.lock:
        gc.collect(1)  # the young generations only: a millisecond, not a full pass
        gc.freeze()
        _CALLS.live += 1
    try:
        yield
    finally:
        with _CALLS.lock:
            _CALLS.live -= 1
            if _CALLS.live == 0:
                gc.unfreeze()  # between calls a full pass stalls nobody


def live_calls() -> int:
    return _CALLS.live
