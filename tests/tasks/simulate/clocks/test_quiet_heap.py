"""Real-time calls run with the heap frozen: no full GC pass walks what was alive at their start."""

from __future__ import annotations

import gc

from tasks.simulate.clocks.quiet_heap import frozen_heap, live_calls


def test_heap_is_frozen_while_a_call_is_live_and_released_after_the_last() -> None:
    gc.unfreeze()
    with frozen_heap():
        assert gc.get_freeze_count() > 0 and live_calls() == 1
        with frozen_heap():  # a second call on the loop
            assert live_calls() == 2
        assert gc.get_freeze_count() > 0, "one call ended, the other is still live"
    assert live_calls() == 0 and gc.get_freeze_count() == 0


def test_young_garbage_is_collected_not_frozen() -> None:
    class Cycle:
        def __init__(self) -> None:
            self.me = self

    gc.unfreeze()
    Cycle()
    before = gc.get_count()[0]
    with frozen_heap():
        assert gc.get_count()[0] <= before
        assert not any(isinstance(o, Cycle) for o in gc.get_objects())


def test_an_error_in_the_call_still_unfreezes() -> None:
    gc.unfreeze()
    try:
        with frozen_heap():
            raise RuntimeError("call failed")
    except RuntimeError:
        pass
    assert live_calls() == 0 and gc.get_freeze_count() == 0
