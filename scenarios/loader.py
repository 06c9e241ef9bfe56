"""Load EVA-format scenario records into resolved :class:`Scenario` objects (spec 1.1-1.7).

One loader serves both an EVA checkout (``data/`` + ``configs/agents/``) and our own
scenario packs, which use the same record format and either the same layout or a flat
one (``<domain>_dataset.json``, ``<domain>_scenarios/``, ``agents/<domain>_agent.yaml``).
Every problem with the input raises :class:`ScenarioError` naming file, record and field.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from scenarios.engines import KNOWN_DOMAINS
from scenarios.eva import EvaRecord
from scenarios.models import AgentConfig, Scenario
from scenarios.resolve import (
    current_date_of,
    load_aliases,
    resolve_localized,
    resolve_scenario_db,
    resolve_user_goal,
    resolve_value,
)

MAX_LISTED_ERRORS = 5


class ScenarioError(ValueError):
    """Bad scenario input; the message names the file, the record id and the field."""

    def __init__(
        self,
        problem: str,
        *,
        file: Path | str | None = None,
        record_id: str | None = None,
        field: str | None = None,
    ) -> None:
        self.problem = problem
        self.file = str(file) if file is not None else None
        self.record_id = record_id
        self.field = field
        parts = [self.file] if self.file else []
        if record_id is not None:
            parts.append(f"record {record_id!r}")
        if field:
            parts.append(f"field {field!r}")
        super().__init__(": ".join([*parts, problem]))


class ScenarioLayout(BaseModel):
    """Where the files of one scenario source live."""

    model_config = ConfigDict(frozen=True)
    data_dir: Path = Field(description="Holds <domain>_dataset.json, _scenarios/, _aliases/")
    agents_dir: Path = Field(description="Holds <domain>_agent.yaml")
    source: str = Field(description="Recorded as Scenario.source")

    def dataset_file(self, domain: str) -> Path:
        return self.data_dir / f"{domain}_dataset.json"

    def scenario_db_file(self, domain: str, record_id: str) -> Path:
        return self.data_dir / f"{domain}_scenarios" / f"{record_id}.json"

    def aliases_dir(self, domain: str) -> Path:
        return self.data_dir / f"{domain}_aliases"

    def agent_file(self, domain: str) -> Path:
        return self.agents_dir / f"{domain}_agent.yaml"


def eva_layout(eva_root: Path) -> ScenarioLayout:
    root = Path(eva_root)
    return ScenarioLayout(
        data_dir=root / "data", agents_dir=root / "configs" / "agents", source=str(root)
    )


def pack_layout(pack_dir: Path, source: str | None = None) -> ScenarioLayout:
    """Layout of a scenario pack: the EVA layout if present, else the flat one."""
    root = Path(pack_dir)
    data_dir = root / "data" if (root / "data").is_dir() else root
    nested_agents = root / "configs" / "agents"
    agents_dir = nested_agents if nested_agents.is_dir() else root / "agents"
    return ScenarioLayout(data_dir=data_dir, agents_dir=agents_dir, source=source or str(root))


def _validation_problem(exc: ValidationError, prefix: str = "") -> tuple[str, str]:
    """(field of the first error, readable list of the errors) of a pydantic error."""
    errors = exc.errors()
    fields = [prefix + ".".join(str(p) for p in err["loc"]) for err in errors]
    listed = [
        f"{f or '(record)'}: {err['msg']} (got {_short(err.get('input'))})"
        for f, err in zip(fields, errors, strict=True)
    ][:MAX_LISTED_ERRORS]
    more = len(errors) - len(listed)
    text = "; ".join(listed) + (f"; and {more} more" if more > 0 else "")
    return fields[0], text


def _short(value: Any, limit: int = 60) -> str:
    text = json.dumps(value, default=str, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def read_json(path: Path, record_id: str | None = None) -> Any:
    """Parse a JSON file; a missing or malformed file raises :class:`ScenarioError`."""
    if not path.is_file():
        raise ScenarioError("file not found", file=path, record_id=record_id)
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ScenarioError(
            f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}",
            file=path,
            record_id=record_id,
        ) from exc
    except UnicodeDecodeError as exc:
        raise ScenarioError(f"not UTF-8 text ({exc})", file=path, record_id=record_id) from exc


def load_agent_config(path: Path) -> AgentConfig:
    """Read ``<domain>_agent.yaml`` (spec 2.1)."""
    path = Path(path)
    if not path.is_file():
        raise ScenarioError("agent config not found", file=path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise ScenarioError(f"invalid YAML: {exc}", file=path) from exc
    if not isinstance(data, dict):
        raise ScenarioError(f"expected a mapping, got {type(data).__name__}", file=path)
    try:
        return AgentConfig.model_validate(data)
    except ValidationError as exc:
        field, text = _validation_problem(exc)
        raise ScenarioError(text, file=path, field=field) from exc


def check_domain(domain: str) -> str:
    if domain not in KNOWN_DOMAINS:
        raise ScenarioError(f"unknown domain {domain!r}; valid domains: {', '.join(KNOWN_DOMAINS)}")
    return domain


def read_dataset(path: Path) -> list[dict[str, Any]]:
    """The raw record dicts of a dataset file (shape checked, content not yet)."""
    data = read_json(path)
    if not isinstance(data, list):
        raise ScenarioError(
            f"expected a JSON array of records, got {type(data).__name__}", file=path
        )
    seen: set[str] = set()
    for index, raw in enumerate(data):
        if not isinstance(raw, dict):
            raise ScenarioError(
                f"record #{index} is a {type(raw).__name__}, expected an object", file=path
            )
        record_id = raw.get("id")
        if isinstance(record_id, str):
            if record_id in seen:
                raise ScenarioError(
                    "duplicate record id", file=path, record_id=record_id, field="id"
                )
            seen.add(record_id)
    return data


def parse_record(raw: dict[str, Any], file: Path, index: int) -> EvaRecord:
    try:
        return EvaRecord.model_validate(raw)
    except ValidationError as exc:
        field, text = _validation_problem(exc)
        record_id = raw.get("id") if isinstance(raw.get("id"), str) else f"#{index}"
        raise ScenarioError(text, file=file, record_id=record_id, field=field) from exc


def _check_language(record: EvaRecord, file: Path, lang: str) -> None:
    for field, table in (
        ("culture_overrides", record.culture_overrides),
        ("starting_utterances", record.starting_utterances),
    ):
        if lang not in table:
            raise ScenarioError(
                f"no entry for language {lang!r} (available: {', '.join(sorted(table))})",
                file=file,
                record_id=record.id,
                field=f"{field}.{lang}",
            )


def _check_current_date(
    record: EvaRecord, raw_db: dict[str, Any], dataset: Path, db_file: Path
) -> None:
    """The DBs must agree with current_date_time, or hashes can never match (spec 1.8)."""
    date = current_date_of(record.current_date_time)
    initial = raw_db.get("_current_date")
    if initial is not None and initial != date:
        raise ScenarioError(
            f"{initial!r} differs from current_date_time date {date!r}",
            file=db_file,
            record_id=record.id,
            field="_current_date",
        )
    expected = record.ground_truth.expected_scenario_db.get("_current_date")
    if expected != date:
        raise ScenarioError(
            f"{expected!r} differs from current_date_time date {date!r}",
            file=dataset,
            record_id=record.id,
            field="ground_truth.expected_scenario_db._current_date",
        )


def build_scenario(
    raw: dict[str, Any],
    record: EvaRecord,
    domain: str,
    layout: ScenarioLayout,
    agent: AgentConfig,
    aliases: dict[str, dict[str, Any]],
    lang: str,
) -> Scenario:
    """Resolve one validated record for ``lang`` into a ready-to-run Scenario."""
    dataset = layout.dataset_file(domain)
    _check_language(record, dataset, lang)
    db_file = layout.scenario_db_file(domain, record.id)
    raw_db = read_json(db_file, record_id=record.id)
    if not isinstance(raw_db, dict):
        raise ScenarioError(
            f"scenario DB must be a JSON object, got {type(raw_db).__name__}",
            file=db_file,
            record_id=record.id,
        )
    _check_current_date(record, raw_db, dataset, db_file)
    trace = record.ground_truth.expected_trace
    events = [event.model_dump() for event in trace.trace] if trace else []
    return Scenario(
        id=record.id,
        domain=domain,  # type: ignore[arg-type]  # checked by check_domain
        source=layout.source,
        language=lang,
        current_date_time=record.current_date_time,
        user_goal=resolve_user_goal(raw, lang, aliases),
        user_config=resolve_value(raw["user_config"], raw, lang),
        scenario_context=resolve_value(raw["scenario_context"], raw, lang),
        initial_db=resolve_scenario_db(raw_db, raw, lang, aliases),
        expected_db=resolve_scenario_db(
            raw["ground_truth"]["expected_scenario_db"], raw, lang, aliases, set_current_date=False
        ),
        expected_trace=resolve_localized(events, raw, lang, aliases),
        expected_end_reason=trace.end_reason if trace else None,
        agent=agent,
    )


def _selected(domain: str, record_id: str, wanted: set[str] | None) -> str | None:
    """The selector that picks this record ('id' or 'domain/id'), or None."""
    if wanted is None:
        return record_id
    for key in (record_id, f"{domain}/{record_id}"):
        if key in wanted:
            return key
    return None


def load_domain(
    layout: ScenarioLayout, domain: str, record_ids: set[str] | None = None, lang: str = "en"
) -> tuple[list[Scenario], set[str]]:
    """Scenarios of one domain, and the record selectors that matched."""
    check_domain(domain)
    dataset = layout.dataset_file(domain)
    raws = read_dataset(dataset)
    agent = load_agent_config(layout.agent_file(domain))
    try:
        aliases = load_aliases(layout.aliases_dir(domain))
    except ValueError as exc:
        raise ScenarioError(str(exc), file=layout.aliases_dir(domain)) from exc
    scenarios: list[Scenario] = []
    matched: set[str] = set()
    for index, raw in enumerate(raws):
        key = _selected(domain, str(raw.get("id")), record_ids)
        if key is None:
            continue
        record = parse_record(raw, dataset, index)
        scenarios.append(build_scenario(raw, record, domain, layout, agent, aliases, lang))
        matched.add(key)
    return scenarios, matched


def load_layout(
    layout: ScenarioLayout,
    domains: list[str],
    record_ids: list[str] | None = None,
    lang: str = "en",
) -> list[Scenario]:
    wanted = set(record_ids) if record_ids is not None else None
    scenarios: list[Scenario] = []
    matched: set[str] = set()
    for domain in domains:
        found, keys = load_domain(layout, domain, wanted, lang)
        scenarios.extend(found)
        matched |= keys
    missing = sorted(wanted - matched) if wanted is not None else []
    if missing:
        raise ScenarioError(
            f"unknown record id(s) {', '.join(missing)} in domain(s) {', '.join(domains)}",
            file=layout.data_dir,
        )
    return scenarios


def load_eva_scenarios(
    eva_root: Path,
    domains: list[str] | None = None,
    record_ids: list[str] | None = None,
    lang: str = "en",
) -> list[Scenario]:
    """Resolved scenarios of an EVA checkout; ``record_ids`` take 'id' or 'domain/id'."""
    chosen = list(domains) if domains is not None else list(KNOWN_DOMAINS)
    for domain in chosen:
        check_domain(domain)
    return load_layout(eva_layout(eva_root), chosen, record_ids, lang)


def pack_domains(layout: ScenarioLayout) -> list[str]:
    """Domains of a pack, found from its ``<domain>_dataset.json`` files."""
    suffix = "_dataset.json"
    found = sorted(p.name[: -len(suffix)] for p in layout.data_dir.glob(f"*{suffix}"))
    if not found:
        raise ScenarioError(f"no *{suffix} file found", file=layout.data_dir)
    return found


def load_scenario_dir(
    path: Path,
    domains: list[str] | None = None,
    record_ids: list[str] | None = None,
    lang: str = "en",
    source: str | None = None,
) -> list[Scenario]:
    """Resolved scenarios of a scenario pack (our own format, identical to EVA's)."""
    layout = pack_layout(path, source)
    chosen = list(domains) if domains is not None else pack_domains(layout)
    for domain in chosen:
        check_domain(domain)
    return load_layout(layout, chosen, record_ids, lang)
