"""Seeded, reproducible degradations of caller audio (accent, noise, connection).

No Prefect and no ``tasks`` imports here: these are pure functions over ``Clip``.
"""
