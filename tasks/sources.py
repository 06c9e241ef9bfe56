"""Resolve a ``ScenarioSource`` into scenarios: the built-in pack or an EVA checkout."""

from __future__ import annotations

from pathlib import Path

import scenarios
from scenarios.models import Scenario
from tasks.config import ScenarioSource

BUILTIN_PACK = Path(scenarios.__file__).resolve().parent / "pack"


def load_source(source: ScenarioSource) -> list[Scenario]:
    """Scenarios selected by ``source``, in a stable order (domain, then record order)."""
    from scenarios.loader import load_eva_scenarios, load_scenario_dir

    domains = list(source.domains)
    if source.eva_root is not None:
        found = load_eva_scenarios(source.eva_root, domains=domains, record_ids=source.records)
    else:
        pack = source.pack or BUILTIN_PACK
        present = [d for d in domains if pack_has_domain(pack, d)]
        if not present:
            raise ValueError(f"{pack}: no dataset for domains {', '.join(domains)}")
        found = [
            s
            for s in load_scenario_dir(pack, domains=present)
            if source.records is None or s.id in source.records
        ]
    limit = source.effective_limit()
    if limit is not None:
        per_domain: dict[str, int] = {}
        limited = []
        for s in found:
            per_domain[s.domain] = per_domain.get(s.domain, 0) + 1
            if per_domain[s.domain] <= limit:
                limited.append(s)
        found = limited
    return found


def pack_has_domain(pack: Path, domain: str) -> bool:
    """Packs may hold a subset of the domains (flat or EVA-checkout layout)."""
    name = f"{domain}_dataset.json"
    return (pack / name).is_file() or (pack / "data" / name).is_file()
