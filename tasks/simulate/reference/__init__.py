"""The reference agent: follows the golden trace, but only with what it heard.

``policy`` (what it says and which tools it calls), ``choices`` (which offered option the
caller chose), ``recovery`` (when to re-ask after a failed lookup), ``cascade`` (the same
policy as a real VAD -> STT -> policy -> TTS cascade served on loopback).
"""
