"""The real-time clock's lateness decides who owns an agent timeout (issue 29, item 5)."""

from __future__ import annotations

from tasks.simulate.clocks.clock import FRAME_S
from tasks.simulate.clocks.realtime_clock import HARNESS_BEHIND_S, harness_fell_behind

WINDOW_S = 4.0
FRAMES = round(WINDOW_S / FRAME_S)


def test_a_harness_on_time_or_with_a_short_stall_keeps_the_timeout_the_agents() -> None:
    assert harness_fell_behind([], WINDOW_S) is None
    assert harness_fell_behind([0.002] * FRAMES, WINDOW_S) is None
    # One half-second stall, caught up within the window: most frames were on time.
    stall = [0.5 - i * FRAME_S for i in range(25)]
    assert harness_fell_behind([0.002] * (FRAMES - 25) + stall, WINDOW_S) is None


def test_a_harness_behind_for_most_of_the_window_owns_the_timeout() -> None:
    behind = [HARNESS_BEHIND_S * 3] * FRAMES
    why = harness_fell_behind(behind, WINDOW_S)
    assert why is not None
    assert f"{FRAMES} of the last {FRAMES} frames late" in why and "median 300 ms" in why


def test_only_the_window_counts() -> None:
    # Far behind early in the call, on time while the agent was waited for.
    early = [2.0] * 1000
    assert harness_fell_behind(early + [0.001] * FRAMES, WINDOW_S) is None
    assert harness_fell_behind([0.001] * 1000 + [1.0] * FRAMES, WINDOW_S) is not None
