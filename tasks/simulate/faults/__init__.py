"""Fault agents: small misbehaving and calibrated agents speaking raw protocol JSON.

``fault_agents`` (written against the wire format only, for tests and benchmarks).
"""
