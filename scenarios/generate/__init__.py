"""Seeded generator of our own scenario pack (EVA record format, our people and words).

Rebuild the committed built-in pack (all three domains, every catalogue case once)::

    python -m scenarios.generate --out scenarios/pack --seed 7

or generate one domain of any size::

    python -m scenarios.generate --domain itsm --n 30 --seed 11 --out /tmp/mypack

``generate_pack(domain, n, seed, out_dir)`` is the API behind both (and behind
``evaflow scenarios generate``). Record ``i`` uses catalogue case ``i mod len(cases)``
and its own random stream, so output is byte-identical for a given (domain, n, seed).

Each record is scripted turn by turn in ``<domain>_*`` flow modules; every tool call in
its golden trace runs on the real engine (``scenarios.executor.ToolEngine``), which gives
the trace's responses and the expected DB. Callers spell codes and read digits, dates
and amounts in words, the way the voice stack expects them.
"""

from scenarios.generate.conversation import GenerationError
from scenarios.generate.flowkit import DOMAIN_CASES, Case
from scenarios.generate.pack import (
    DEFAULT_SEED,
    build_builtin_pack,
    build_records,
    catalogue_size,
    generate_pack,
    load_domain,
)

__all__ = [
    "DEFAULT_SEED",
    "DOMAIN_CASES",
    "Case",
    "GenerationError",
    "build_builtin_pack",
    "build_records",
    "catalogue_size",
    "generate_pack",
    "load_domain",
]
