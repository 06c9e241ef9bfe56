"""The real-time clock's lateness decides who owns an agent timeout or drop (issue 29, item 5),
and its wire re-timing keeps each stored speech span whole."""

from __future__ import annotations

from tasks.records import TimelineEvent
from tasks.simulate.clocks.call_result import speech_spans
from tasks.simulate.clocks.clock import FRAME_S
from tasks.simulate.clocks.realtime_clock import HARNESS_BEHIND_S, harness_fell_behind, wire_time
from tasks.voice.vad import VadEvent

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


def test_a_pause_lost_in_a_burst_of_late_frames_keeps_the_sentence_whole() -> None:
    """A caller sentence with a pause (two VAD spans), its frames sent late in one burst:
    re-timed to the wire, the second span starts before the first ends. The stored span
    is the whole sentence, as the wire carried it, not 20 ms of it."""
    grid = [  # VAD on the grid: "No, that's all I needed." (pause) "Thank you, goodbye."
        VadEvent(kind="speech_start", time_s=10.0, detected_at_s=10.0),
        VadEvent(kind="speech_end", time_s=11.5, detected_at_s=11.5),
        VadEvent(kind="speech_start", time_s=11.9, detected_at_s=11.9),
        VadEvent(kind="speech_end", time_s=13.0, detected_at_s=13.0),
    ]
    # Frames up to 11 s on time; then the harness stalled and sent the rest at once.
    sent = [i * FRAME_S for i in range(550)] + [13.1 + i * 1e-5 for i in range(150)]
    events = [
        TimelineEvent(t_s=e.time_s, source="caller", kind=e.kind)
        for e in (wire_time(event, sent) for event in grid)
    ]
    starts = [e.t_s for e in events if e.kind == "speech_start"]
    ends = [e.t_s for e in events if e.kind == "speech_end"]
    assert starts[1] < ends[0]  # the pause vanished on the wire
    [(begin, end)] = speech_spans(events, "caller")
    assert begin == 10.0 and end == max(ends)
    # Spans apart stay apart; the other track's events are not this one's.
    apart = [
        TimelineEvent(t_s=t, source="caller", kind=k)
        for t, k in [(1.0, "speech_start"), (2.0, "speech_end"), (2.5, "speech_start")]
    ] + [TimelineEvent(t_s=2.6, source="agent", kind="speech_end")]
    apart.append(TimelineEvent(t_s=3.0, source="caller", kind="speech_end"))
    assert speech_spans(apart, "caller") == [(1.0, 2.0), (2.5, 3.0)]
