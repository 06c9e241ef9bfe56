"""Running one call in time: the virtual clock, the real-time clock and text mode.

``clock`` (call time = 20 ms ticks + the agent's measured compute), ``call`` (the caller
side of an audio call), ``audio_mode`` (virtual clock) and ``realtime`` (wall clock),
``text_mode`` (no clock), ``stt_pool`` (recognition in worker processes for wall-clock
calls), ``tracks`` and ``timeline`` (what was recorded and measured), ``call_result``,
``record`` and ``entities`` (from a finished call to its
:class:`~tasks.records.AttemptRecord`).
"""
