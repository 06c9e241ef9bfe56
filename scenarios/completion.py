"""Task completion: session auth check, DB hash comparison and structural diff (spec 3)."""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, Field

from scenarios.dbhash import db_hash, normalize_db

MAX_HINTS = 10


class AuthMismatch(BaseModel):
    expected: Any = Field(description="Value in the expected DB's session")
    actual: Any = Field(
        default=None, description="Value in the final DB's session (None = missing)"
    )


class ValueMismatch(BaseModel):
    expected: Any = Field(description="Expected (normalised) value")
    actual: Any = Field(description="Actual (normalised) value")


class TypeMismatch(BaseModel):
    expected_type: str = Field(description="JSON type of the expected value")
    actual_type: str = Field(description="JSON type of the actual value")
    expected: Any = Field(description="Expected value")
    actual: Any = Field(description="Actual value")


class LengthMismatch(BaseModel):
    expected: int = Field(description="Expected list length")
    actual: int = Field(description="Actual list length")


class ValueDiff(BaseModel):
    """How one value differs; only the parts that apply to the value's type are set."""

    fields_added: dict[str, Any] = Field(default_factory=dict, description="Only in actual")
    fields_removed: dict[str, Any] = Field(default_factory=dict, description="Only in expected")
    fields_modified: dict[str, ValueDiff] = Field(default_factory=dict, description="In both")
    type_mismatch: TypeMismatch | None = Field(default=None, description="Different JSON types")
    list_length_mismatch: LengthMismatch | None = Field(default=None, description="Lists only")
    list_differences: dict[int, ValueDiff] = Field(
        default_factory=dict, description="Index-wise differences over the common length"
    )
    value_mismatch: ValueMismatch | None = Field(default=None, description="Scalars only")


class TableDiff(BaseModel):
    """Differences in one top-level table; non-dict tables only set ``value``."""

    records_added: list[str] = Field(default_factory=list, description="Keys only in actual")
    records_removed: list[str] = Field(default_factory=list, description="Keys only in expected")
    records_modified: dict[str, ValueDiff] = Field(default_factory=dict, description="Per key")
    value: ValueDiff | None = Field(default=None, description="Diff of a non-dict table")


class DbDiff(BaseModel):
    tables_added: list[str] = Field(default_factory=list, description="Tables only in actual")
    tables_removed: list[str] = Field(default_factory=list, description="Tables only in expected")
    tables_modified: dict[str, TableDiff] = Field(default_factory=dict, description="Per table")


class CompletionResult(BaseModel):
    """Outcome of the task_completion check for one conversation."""

    score: float = Field(description="1.0 when auth passed and the DB hashes match, else 0.0")
    auth_success: bool = Field(description="Every expected session key matched")
    auth_mismatches: dict[str, AuthMismatch] = Field(default_factory=dict)
    expected_hash: str = Field(description="SHA-256 of the expected DB")
    actual_hash: str = Field(description="SHA-256 of the final DB")
    hash_match: bool
    diff: DbDiff | None = Field(default=None, description="Structural diff when hashes differ")
    summary: str = Field(description="One-line human summary")
    hints: list[str] = Field(default_factory=list, description="First leaf differences")


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list | tuple):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def _same(a: Any, b: Any) -> bool:
    # Plain == treats True == 1; the hash does not, so compare serialisations.
    dump = {"sort_keys": True, "default": str}
    return bool(a == b) and json.dumps(a, **dump) == json.dumps(b, **dump)  # type: ignore[arg-type]


def diff_values(expected: Any, actual: Any) -> ValueDiff | None:
    """Recursive diff of two normalised values; None when they are equal."""
    if _same(expected, actual):
        return None
    kind_e, kind_a = _json_type(expected), _json_type(actual)
    if kind_e != kind_a:
        mismatch = TypeMismatch(
            expected_type=kind_e, actual_type=kind_a, expected=expected, actual=actual
        )
        return ValueDiff(type_mismatch=mismatch)
    if kind_e == "object":
        return ValueDiff(
            fields_added={k: v for k, v in actual.items() if k not in expected},
            fields_removed={k: v for k, v in expected.items() if k not in actual},
            fields_modified=_modified(expected, actual),
        )
    if kind_e == "array":
        length = None
        if len(expected) != len(actual):
            length = LengthMismatch(expected=len(expected), actual=len(actual))
        pairs = enumerate(zip(expected, actual, strict=False))
        diffs = {i: d for i, (e, a) in pairs if (d := diff_values(e, a)) is not None}
        return ValueDiff(list_length_mismatch=length, list_differences=diffs)
    return ValueDiff(value_mismatch=ValueMismatch(expected=expected, actual=actual))


def _modified(expected: dict[str, Any], actual: dict[str, Any]) -> dict[str, ValueDiff]:
    common = (k for k in expected if k in actual)
    return {k: d for k in common if (d := diff_values(expected[k], actual[k])) is not None}


def diff_table(expected: Any, actual: Any) -> TableDiff:
    if isinstance(expected, dict) and isinstance(actual, dict):
        return TableDiff(
            records_added=[k for k in actual if k not in expected],
            records_removed=[k for k in expected if k not in actual],
            records_modified=_modified(expected, actual),
        )
    return TableDiff(value=diff_values(expected, actual))


def diff_dbs(expected_db: dict[str, Any], final_db: dict[str, Any]) -> DbDiff:
    """Structural diff of two DBs after normalisation; ``session`` is checked separately."""
    expected = {k: v for k, v in normalize_db(expected_db).items() if k != "session"}
    actual = {k: v for k, v in normalize_db(final_db).items() if k != "session"}
    modified = {
        table: diff_table(expected[table], actual[table])
        for table in expected
        if table in actual and not _same(expected[table], actual[table])
    }
    return DbDiff(
        tables_added=[t for t in actual if t not in expected],
        tables_removed=[t for t in expected if t not in actual],
        tables_modified=modified,
    )


def check_auth(expected_db: dict[str, Any], final_db: dict[str, Any]) -> dict[str, AuthMismatch]:
    """Expected session keys the final session lacks or holds differently (spec 3, step 1).

    As the reference compares: two strings case-insensitively, anything else with Python
    equality, so ``1 == 1.0`` (as the hash's normalisation has it) and ``True == 1``; a key
    the final session lacks reads as None, so an expected None is met by an absent key.
    (The DB hash, where the session plays no part, keeps true and 1 apart.)
    """
    expected = expected_db.get("session") or {}
    actual = final_db.get("session") or {}
    mismatches: dict[str, AuthMismatch] = {}
    for key, want in expected.items():
        got = actual.get(key)
        if isinstance(want, str) and isinstance(got, str):
            equal = want.lower() == got.lower()
        else:
            equal = bool(want == got)
        if not equal:
            mismatches[key] = AuthMismatch(expected=want, actual=got)
    return mismatches


def leaf_differences(diff: ValueDiff, path: str) -> list[str]:
    """Readable 'path: expected X, actual Y' lines for every leaf of a diff."""
    lines: list[str] = []
    if diff.type_mismatch is not None:
        tm = diff.type_mismatch
        lines.append(f"{path}: expected {_brief(tm.expected)}, actual {_brief(tm.actual)}")
    if diff.value_mismatch is not None:
        vm = diff.value_mismatch
        lines.append(f"{path}: expected {_brief(vm.expected)}, actual {_brief(vm.actual)}")
    lines += [f"{path}.{k}: unexpected field ({_brief(v)})" for k, v in diff.fields_added.items()]
    lines += [f"{path}.{k}: missing field" for k in diff.fields_removed]
    for key, sub in diff.fields_modified.items():
        lines += leaf_differences(sub, f"{path}.{key}")
    if diff.list_length_mismatch is not None:
        lm = diff.list_length_mismatch
        lines.append(f"{path}: expected {lm.expected} items, actual {lm.actual}")
    for index, sub in diff.list_differences.items():
        lines += leaf_differences(sub, f"{path}[{index}]")
    return lines


def _brief(value: Any, limit: int = 80) -> str:
    text = json.dumps(value, default=str, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def db_diff_lines(diff: DbDiff) -> list[str]:
    lines = [f"{t}: unexpected table" for t in diff.tables_added]
    lines += [f"{t}: missing table" for t in diff.tables_removed]
    for table, tdiff in diff.tables_modified.items():
        lines += [f"{table}.{k}: unexpected record" for k in tdiff.records_added]
        lines += [f"{table}.{k}: missing record" for k in tdiff.records_removed]
        for key, sub in tdiff.records_modified.items():
            lines += leaf_differences(sub, f"{table}.{key}")
        if tdiff.value is not None:
            lines += leaf_differences(tdiff.value, table)
    return lines


def _summary(auth: dict[str, AuthMismatch], diff: DbDiff | None) -> str:
    parts = []
    if auth:
        parts.append(f"authentication mismatch on {', '.join(sorted(auth))}")
    if diff is not None:
        counts = [
            f"{len(diff.tables_added)} table(s) added",
            f"{len(diff.tables_removed)} removed",
            f"{len(diff.tables_modified)} modified ({', '.join(diff.tables_modified) or '-'})",
        ]
        parts.append("DB hash mismatch: " + ", ".join(counts))
    return "; ".join(parts) if parts else "final DB matches the expected DB"


def check_task_completion(
    expected_db: dict[str, Any], final_db: dict[str, Any], final_hash: str | None = None
) -> CompletionResult:
    """Score a conversation's final DB against the expected one (task_completion, spec 3)."""
    auth = check_auth(expected_db, final_db)
    expected_hash = db_hash(expected_db)
    actual_hash = final_hash or db_hash(final_db)
    hash_match = expected_hash == actual_hash
    diff = None if hash_match else diff_dbs(expected_db, final_db)
    hints = [
        f"session.{k}: expected {_brief(m.expected)}, actual {_brief(m.actual)}"
        for k, m in auth.items()
    ]
    hints += db_diff_lines(diff) if diff is not None else []
    return CompletionResult(
        score=1.0 if hash_match and not auth else 0.0,
        auth_success=not auth,
        auth_mismatches=auth,
        expected_hash=expected_hash,
        actual_hash=actual_hash,
        hash_match=hash_match,
        diff=diff,
        summary=_summary(auth, diff),
        hints=hints[:MAX_HINTS],
    )
