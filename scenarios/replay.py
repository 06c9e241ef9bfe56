"""Conformance replays: our engines against the reference's golden outputs.

``replay_reference`` runs every call of ``reference_replay/<domain>.json`` (chained
params, exact reference responses, final DB hash) on the resolved initial DB and
counts what matches; ``replay_own_pack`` replays a pack's golden traces with ID
chaining. Both return data (``ReplayReport``) and never raise for an engine problem.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import (
    BaseModel,
    Field,
    SerializationInfo,
    SerializerFunctionWrapHandler,
    model_serializer,
)

from scenarios.chaining import TraceReplay, execute_safely, make_engine, replay_trace
from scenarios.completion import db_diff_lines, diff_dbs
from scenarios.dbhash import db_hash
from scenarios.engines import KNOWN_DOMAINS
from scenarios.loader import (
    ScenarioError,
    load_eva_scenarios,
    load_scenario_dir,
    pack_domains,
    pack_layout,
)
from scenarios.models import Scenario

_MAX_SHOWN = 60


class ReplayFailure(BaseModel):
    record_id: str = Field(description="Record id within the domain")
    call_index: int | None = Field(default=None, description="0-based call; None = whole record")
    tool: str | None = Field(default=None, description="Tool of the failing call")
    first_difference: str = Field(description="'<json path>: expected X, actual Y'")


class DomainReplay(BaseModel):
    records: int = Field(default=0, description="Records replayed")
    hash_match: int = Field(default=0, description="Records whose final DB hash matched")
    calls: int = Field(default=0, description="Tool calls replayed")
    response_match: int = Field(default=0, description="Calls whose response matched exactly")
    failures: list[ReplayFailure] = Field(default_factory=list)
    error: str | None = Field(default=None, description="Why the domain could not be replayed")

    @model_serializer(mode="wrap")
    def _omit_missing_error(
        self, handler: SerializerFunctionWrapHandler, info: SerializationInfo
    ) -> dict[str, Any]:
        # The CLI's JSON shape only carries 'error' for domains that could not run.
        data: dict[str, Any] = handler(self)
        if data.get("error") is None:
            data.pop("error", None)
        return data

    @property
    def ok(self) -> bool:
        return self.error is None and not self.failures


class ReplayReport(BaseModel):
    domains: dict[str, DomainReplay] = Field(default_factory=dict, description="Per domain")

    @property
    def ok(self) -> bool:
        return all(d.ok for d in self.domains.values())


def _show(value: Any) -> str:
    text = json.dumps(value, default=str, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= _MAX_SHOWN else text[: _MAX_SHOWN - 3] + "..."


def first_difference(expected: Any, actual: Any, path: str = "$") -> str | None:
    """The first place two JSON values differ, as '<path>: expected X, actual Y'."""
    if isinstance(expected, dict) and isinstance(actual, dict):
        for key in expected:
            if key not in actual:
                return f"{path}.{key}: missing (expected {_show(expected[key])})"
            found = first_difference(expected[key], actual[key], f"{path}.{key}")
            if found:
                return found
        extra = next((k for k in actual if k not in expected), None)
        return None if extra is None else f"{path}.{extra}: unexpected ({_show(actual[extra])})"
    if isinstance(expected, list) and isinstance(actual, list):
        for index, (e, a) in enumerate(zip(expected, actual, strict=False)):
            found = first_difference(e, a, f"{path}[{index}]")
            if found:
                return found
        if len(expected) != len(actual):
            return f"{path}: expected {len(expected)} items, actual {len(actual)}"
        return None
    same_type = isinstance(expected, bool) == isinstance(actual, bool)
    if expected == actual and same_type:
        return None
    return f"{path}: expected {_show(expected)}, actual {_show(actual)}"


def _as_json(value: Any) -> Any:
    """What the response looks like once written to JSON (tuples -> lists, etc.)."""
    return json.loads(json.dumps(value, default=str))


def _db_difference(expected_db: dict[str, Any], final_db: dict[str, Any]) -> str:
    lines = db_diff_lines(diff_dbs(expected_db, final_db))
    return lines[0] if lines else "hashes differ but no structural difference found"


def _read_reference(path: Path) -> dict[str, Any] | str:
    if not path.is_file():
        return f"{path}: reference file not found"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        return f"{path}: invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
    if not isinstance(data, dict):
        return f"{path}: expected an object keyed by record id"
    return data


def replay_reference_record(
    scenario: Scenario, reference: dict[str, Any], out: DomainReplay
) -> None:
    """Replay one record's reference calls and add the outcome to ``out``."""
    engine = make_engine(scenario.domain, scenario.initial_db, scenario.agent.tool_names)
    if isinstance(engine, str):
        out.error = engine
        return
    out.records += 1
    for index, call in enumerate(reference.get("calls") or []):
        tool = str(call.get("tool"))
        actual = _as_json(execute_safely(engine, tool, call.get("params") or {}))
        out.calls += 1
        difference = first_difference(call.get("response"), actual)
        if difference is None:
            out.response_match += 1
        else:
            out.failures.append(
                ReplayFailure(
                    record_id=scenario.id, call_index=index, tool=tool, first_difference=difference
                )
            )
    expected_hash = reference.get("final_db_sha256") or reference.get("expected_db_sha256")
    if engine.final_hash == expected_hash:
        out.hash_match += 1
    else:
        detail = _db_difference(scenario.expected_db, engine.db)
        out.failures.append(
            ReplayFailure(
                record_id=scenario.id, first_difference=f"final DB hash differs: {detail}"
            )
        )
    if db_hash(scenario.expected_db) != reference.get("expected_db_sha256"):
        out.failures.append(
            ReplayFailure(
                record_id=scenario.id,
                first_difference="resolved expected DB hash differs from the reference's",
            )
        )


def replay_reference_domain(eva_root: Path, reference_dir: Path, domain: str) -> DomainReplay:
    out = DomainReplay()
    reference = _read_reference(Path(reference_dir) / f"{domain}.json")
    if isinstance(reference, str):
        out.error = reference
        return out
    try:
        scenarios = load_eva_scenarios(eva_root, [domain])
    except ScenarioError as exc:
        out.error = str(exc)
        return out
    for scenario in scenarios:
        if scenario.id not in reference:
            out.failures.append(
                ReplayFailure(
                    record_id=scenario.id, first_difference="record missing from the reference file"
                )
            )
            continue
        replay_reference_record(scenario, reference[scenario.id], out)
        if out.error is not None:
            return out
    known = {s.id for s in scenarios}
    out.failures += [
        ReplayFailure(record_id=rid, first_difference="reference record not in the dataset")
        for rid in reference
        if rid not in known
    ]
    return out


def replay_reference(
    eva_root: Path, reference_dir: Path, domains: list[str] | None = None
) -> ReplayReport:
    """Replay ``reference_dir/<domain>.json`` for each domain against our engines."""
    chosen = list(domains) if domains is not None else list(KNOWN_DOMAINS)
    return ReplayReport(
        domains={d: replay_reference_domain(eva_root, reference_dir, d) for d in chosen}
    )


def summarize_trace_replays(
    replays: list[TraceReplay], scenarios: list[Scenario], strict_responses: bool = False
) -> DomainReplay:
    """Fold per-record trace replays into the report shape of one domain."""
    out = DomainReplay()
    for replay, scenario in zip(replays, scenarios, strict=True):
        if replay.error is not None:
            out.error = replay.error
            return out
        out.records += 1
        out.calls += len(replay.calls)
        for call in replay.calls:
            difference = first_difference(call.trace_response, _as_json(call.response))
            if difference is None:
                out.response_match += 1
            elif strict_responses:
                out.failures.append(
                    ReplayFailure(
                        record_id=scenario.id,
                        call_index=call.index,
                        tool=call.tool,
                        first_difference=difference,
                    )
                )
        if replay.hash_match:
            out.hash_match += 1
        else:
            detail = _db_difference(scenario.expected_db, replay.final_db)
            out.failures.append(
                ReplayFailure(
                    record_id=scenario.id, first_difference=f"final DB hash differs: {detail}"
                )
            )
    return out


def replay_own_pack(
    pack_dir: Path, domains: list[str] | None = None, strict_responses: bool = False
) -> ReplayReport:
    """Replay each pack record's golden trace (with ID chaining) to its expected DB hash.

    Response mismatches against the trace are counted; they are failures only with
    ``strict_responses`` (EVA traces are known to abbreviate some responses).
    """
    chosen = list(domains) if domains is not None else pack_domains(pack_layout(pack_dir))
    report = ReplayReport()
    for domain in chosen:
        try:
            scenarios = load_scenario_dir(pack_dir, [domain])
        except ScenarioError as exc:
            report.domains[domain] = DomainReplay(error=str(exc))
            continue
        replays = [replay_trace(s) for s in scenarios]
        report.domains[domain] = summarize_trace_replays(replays, scenarios, strict_responses)
    return report
