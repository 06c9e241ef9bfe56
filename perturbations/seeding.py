"""Stable seeds: the same (run, scenario, trial, condition) hears the same audio everywhere.

Python's ``hash()`` is salted per process, so seeds come from SHA-256 of the parts instead.
"""

from __future__ import annotations

import hashlib

import numpy as np


def derive_seed(*parts: object) -> int:
    """A 63-bit seed from any printable parts, identical across processes and machines.

    Parts are joined with a separator that cannot occur in their ``repr``-free string forms
    ambiguously: ("a", "bc") and ("ab", "c") give different seeds.
    """
    if not parts:
        raise ValueError("derive_seed needs at least one part")
    text = "\x1f".join(f"{type(p).__name__}:{p}" for p in parts)
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "big") >> 1


def make_rng(*parts: object) -> np.random.Generator:
    """A numpy generator seeded with ``derive_seed(*parts)``."""
    return np.random.default_rng(derive_seed(*parts))
