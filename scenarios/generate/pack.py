"""Write a scenario pack: dataset, initial DBs and agent config per domain.

The layout is the flat pack layout ``scenarios.loader.load_scenario_dir`` reads::

    <out>/<domain>_dataset.json
    <out>/<domain>_scenarios/<record id>.json
    <out>/agents/<domain>_agent.yaml

Output depends only on (domain, n, seed): every random draw comes from a stream
seeded with ``"<seed>/<domain>/<index>"`` and files are written with a fixed layout,
so the same arguments give byte-identical files.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import yaml

from scenarios.engines import KNOWN_DOMAINS
from scenarios.generate.agents import AGENT_TEXTS, agent_config
from scenarios.generate.conversation import GenerationError
from scenarios.generate.flowkit import DOMAIN_CASES, Case, FlowContext
from scenarios.generate.record import assemble

DEFAULT_SEED = 7
ID_PREFIX = {"airline": "air", "itsm": "itsm", "medical_hr": "hr"}
MAX_RECORDS = 999


def load_domain(domain: str) -> tuple[Case, ...]:
    """The case catalogue of ``domain`` (the registry imports the domain modules)."""
    return DOMAIN_CASES.get(domain)


def record_id(domain: str, index: int) -> str:
    return f"{ID_PREFIX.get(domain, domain)}-{index + 1:03d}"


def build_records(
    domain: str, n: int, seed: int
) -> tuple[list[dict[str, Any]], dict[str, dict[str, Any]], dict[str, Any]]:
    """(records, initial DB per record id, agent config) of one domain."""
    if not 1 <= n <= MAX_RECORDS:
        raise ValueError(f"n must be between 1 and {MAX_RECORDS}, got {n}")
    cases = load_domain(domain)
    config = agent_config(AGENT_TEXTS.get(domain))
    tools = [tool["id"] for tool in config["tools"]]
    records: list[dict[str, Any]] = []
    dbs: dict[str, dict[str, Any]] = {}
    for index in range(n):
        case = cases[index % len(cases)]
        rid = record_id(domain, index)
        context = FlowContext(rid, random.Random(f"{seed}/{domain}/{index}"), tools)
        try:
            draft = case.build(context)
        except GenerationError as exc:
            raise GenerationError(f"{domain} record {rid} ({case.name}): {exc}") from exc
        if (draft.workflow, draft.path) != (case.workflow, case.path):
            raise GenerationError(f"{case.name} produced {draft.workflow}/{draft.path}")
        record, db = assemble(draft)
        records.append(record)
        dbs[rid] = db
    return records, dbs, config


class _PackDumper(yaml.SafeDumper):
    """Multi-line strings (the policy text) as readable ``|`` blocks."""


def _str_presenter(dumper: yaml.SafeDumper, data: str) -> yaml.ScalarNode:
    style = "|" if "\n" in data else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=style)


_PackDumper.add_representer(str, _str_presenter)


def json_text(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False) + "\n"


def yaml_text(value: Any) -> str:
    return yaml.dump(value, Dumper=_PackDumper, sort_keys=False, allow_unicode=True, width=100)


def generate_pack(domain: str, n: int, seed: int, out_dir: Path) -> list[str]:
    """Generate ``n`` records of ``domain`` into ``out_dir``; returns their ids.

    Replaces this domain's dataset, scenario DBs and agent config in ``out_dir`` and
    leaves other domains alone.
    """
    records, dbs, config = build_records(domain, n, seed)
    out = Path(out_dir)
    db_dir = out / f"{domain}_scenarios"
    db_dir.mkdir(parents=True, exist_ok=True)
    for stale in db_dir.glob("*.json"):
        if stale.stem not in dbs:
            stale.unlink()
    for rid, db in dbs.items():
        (db_dir / f"{rid}.json").write_text(json_text(db), encoding="utf-8")
    (out / f"{domain}_dataset.json").write_text(json_text(records), encoding="utf-8")
    agents = out / "agents"
    agents.mkdir(exist_ok=True)
    (agents / f"{domain}_agent.yaml").write_text(yaml_text(config), encoding="utf-8")
    return [str(r["id"]) for r in records]


def catalogue_size(domain: str) -> int:
    return len(load_domain(domain))


def build_builtin_pack(out_dir: Path, seed: int = DEFAULT_SEED) -> dict[str, list[str]]:
    """The built-in pack: every case of every domain once."""
    return {
        domain: generate_pack(domain, catalogue_size(domain), seed, out_dir)
        for domain in KNOWN_DOMAINS
    }
