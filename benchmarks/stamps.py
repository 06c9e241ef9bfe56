"""What each benchmark group measured: the commit it ran on, and when its figures go stale.

Every group is stamped with the commit it ran on, whether the code it measures (its
``GROUP_SOURCES`` paths) had uncommitted changes, and whether the tree as a whole was dirty.
A group's figures are carried over to a later results file only while
``git diff --quiet <stamp> HEAD -- <its paths>`` says its code is unchanged; otherwise the
group is moved to the ``stale`` section with the reason (never silently kept as current).
Figures without a stamp (written before stamping), measured on uncommitted changes to
their own code, or stamped with a commit this clone does not know are stale too.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]

# Shared by every group: the harness's own timing and the pinned dependencies.
_HARNESS = ("benchmarks/common.py", "benchmarks/memory.py", "pyproject.toml")
GROUP_SOURCES: dict[str, tuple[str, ...]] = {
    "store": (
        *_HARNESS,
        "benchmarks/store_scale.py",
        "benchmarks/synthetic.py",
        "tasks/store.py",
        "tasks/tables.py",
        "tasks/aggregate.py",
        "tasks/writer.py",
        "analysis",
    ),
    "run": (
        *_HARNESS,
        "benchmarks/run_overhead.py",
        "benchmarks/task_floor.py",
        "flows",
        "tasks",
        "scenarios",
        "perturbations",
        "prefect.yaml",
    ),
    "rescore": (
        *_HARNESS,
        "benchmarks/rescore.py",
        "benchmarks/run_overhead.py",
        "flows",
        "tasks",
        "scenarios",
    ),
    "simulate": (
        *_HARNESS,
        "benchmarks/simulate.py",
        "tasks/simulate",
        "tasks/voice",
        "tasks/spoken",
        "tasks/records.py",
        "perturbations",
        "scenarios",
    ),
    "voice": (
        *_HARNESS,
        "benchmarks/voice.py",
        "tasks/voice",
        "tasks/spoken",
        "perturbations",
    ),
}

# (commit, paths) -> True if the paths differ between commit and HEAD, None if unknown.
ChangedFn = Callable[[str, tuple[str, ...]], bool | None]


def sources(group: str) -> tuple[str, ...]:
    """The paths a group measures (an unknown group measures everything: ``.``)."""
    return GROUP_SOURCES.get(group, (".",))


def _git(args: list[str], repo: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", *args], cwd=repo, capture_output=True, text=True, check=False, timeout=60
    )


def git_changed(commit: str, paths: tuple[str, ...], repo: Path = REPO_ROOT) -> bool | None:
    """``git diff --quiet <commit> HEAD -- paths``: True changed, False same, None unknown."""
    result = _git(["diff", "--quiet", commit, "HEAD", "--", *paths], repo)
    return {0: False, 1: True}.get(result.returncode)


def changed_files(commit: str, paths: tuple[str, ...], repo: Path = REPO_ROOT) -> list[str]:
    result = _git(["diff", "--name-only", commit, "HEAD", "--", *paths], repo)
    return result.stdout.split() if result.returncode == 0 else []


def make_stamp(group: str, repo: Path = REPO_ROOT) -> dict[str, Any]:
    """The stamp of a group measured now, on the working tree of ``repo``."""
    paths = sources(group)
    head = _git(["rev-parse", "HEAD"], repo)
    own = _git(["status", "--porcelain", "--", *paths], repo)
    tree = _git(["status", "--porcelain"], repo)
    return {
        "commit": head.stdout.strip() if head.returncode == 0 else None,
        "dirty": bool(own.stdout.strip()) if own.returncode == 0 else True,
        "tree_dirty": bool(tree.stdout.strip()) if tree.returncode == 0 else True,
        "measured_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "paths": list(paths),
    }


def staleness(group: str, stamp: Any, changed: ChangedFn = git_changed) -> str | None:
    """Why ``group``'s figures no longer describe HEAD, or None while they still do."""
    if not isinstance(stamp, dict) or not stamp.get("commit"):
        return "no stamp: measured before results were stamped with their commit"
    commit = str(stamp["commit"])
    if stamp.get("dirty", True):
        return f"measured on uncommitted changes to its code (at {commit[:10]})"
    paths = sources(group)
    if list(stamp.get("paths") or []) != list(paths):
        return f"the code it measures was redefined since {commit[:10]}"
    verdict = changed(commit, paths)
    if verdict is None:
        return f"commit {commit[:10]} is unknown to this clone"
    if verdict:
        return f"its code changed since {commit[:10]}"
    return None


def split_stale(
    groups: dict[str, Any], changed: ChangedFn = git_changed
) -> tuple[dict[str, Any], dict[str, str]]:
    """``{group: stamp}`` into the stamps still current and ``{group: reason}`` for the rest."""
    fresh: dict[str, Any] = {}
    stale: dict[str, str] = {}
    for group, stamp in groups.items():
        reason = staleness(group, stamp, changed)
        if reason is None:
            fresh[group] = stamp
        else:
            stale[group] = reason
    return fresh, stale
