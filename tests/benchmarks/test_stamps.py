"""Benchmark groups carry the commit they ran on; a group whose code changed is stale."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from benchmarks.__main__ import check, parse_args
from benchmarks.common import BenchOptions, Figure, carried_over, mark_side_file, write_results
from benchmarks.stamps import (
    GROUP_SOURCES,
    git_changed,
    make_stamp,
    sources,
    split_stale,
    staleness,
)


def stamp(group: str, commit: str = "a" * 40, dirty: bool = False) -> dict[str, object]:
    return {"commit": commit, "dirty": dirty, "tree_dirty": dirty, "paths": list(sources(group))}


def unchanged(commit: str, paths: tuple[str, ...]) -> bool | None:
    return False


def changed(commit: str, paths: tuple[str, ...]) -> bool | None:
    return True


def test_every_group_names_the_code_it_measures() -> None:
    assert set(GROUP_SOURCES) == {"store", "run", "rescore", "simulate", "voice"}
    assert "benchmarks/voice.py" in sources("voice") and "tasks/voice" in sources("voice")
    assert "tasks/simulate" in sources("simulate") and "flows" in sources("run")
    assert "benchmarks/rescore.py" in sources("rescore") and "tasks" in sources("rescore")
    assert sources("someone-elses") == (".",)  # unknown: any change makes it stale


@pytest.mark.parametrize(
    ("given", "diff", "expect"),
    [
        (stamp("store"), unchanged, None),
        (stamp("store"), changed, "its code changed since aaaaaaaaaa"),
        (None, unchanged, "no stamp"),
        ({"measured_at": "yesterday"}, unchanged, "no stamp"),
        (stamp("store", dirty=True), unchanged, "uncommitted changes"),
        ({**stamp("store"), "paths": ["tasks/store.py"]}, unchanged, "redefined"),
        (stamp("store"), lambda c, p: None, "unknown to this clone"),
    ],
)
def test_staleness(given: object, diff, expect: str | None) -> None:
    reason = staleness("store", given, diff)
    assert reason == expect if expect is None else expect in str(reason)


def test_the_diff_is_asked_about_the_groups_own_paths() -> None:
    asked: list[tuple[str, tuple[str, ...]]] = []

    def spy(commit: str, paths: tuple[str, ...]) -> bool:
        asked.append((commit, paths))
        return commit == "b" * 40

    fresh, stale = split_stale({"voice": stamp("voice"), "run": stamp("run", "b" * 40)}, spy)
    assert set(fresh) == {"voice"} and set(stale) == {"run"}
    assert sorted(asked) == sorted([("a" * 40, sources("voice")), ("b" * 40, sources("run"))])


def _results(path: Path, stamps: dict[str, object]) -> None:
    figures = [
        Figure(group=g, name=f"{g} figure", value=1.0, unit="s", target=0.5, op="<")
        for g in ("store", "run", "simulate")
    ]
    write_results(figures, BenchOptions(), path, stamps=stamps)


def test_only_current_groups_are_carried_over_and_stale_ones_keep_their_reason(
    tmp_path: Path,
) -> None:
    out = tmp_path / "results.json"
    _results(out, {"store": stamp("store"), "run": stamp("run", dirty=True)})
    kept, extras = carried_over(out, {"simulate"}, unchanged)
    assert [f.group for f in kept] == ["store"]
    assert set(extras["stamps"]) == {"store"}
    assert set(extras["stale"]) == {"run"}
    assert "uncommitted" in extras["stale"]["run"]["reason"]
    assert extras["stale"]["run"]["figures"][0]["name"] == "run figure"
    # Re-running a stale group takes it out of 'stale'; changed code makes the rest stale.
    kept, extras = carried_over(out, {"run"}, changed)
    assert kept == [] and set(extras["stale"]) == {"store", "simulate"}
    assert "no stamp" in extras["stale"]["simulate"]["reason"]


def test_check_moves_stale_groups_out_of_the_figures(tmp_path: Path) -> None:
    out = tmp_path / "results.json"
    _results(out, {})  # written before stamping
    assert check(out) == 0
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["figures"] == [] and data["not_met"] == []
    assert set(data["stale"]) == {"store", "run", "simulate"}
    side = tmp_path / "results_voice.json"
    side.write_text(json.dumps({"figures": [], "stamp": stamp("voice")}), encoding="utf-8")
    assert mark_side_file(side, "voice", unchanged) is None
    assert "stale" not in json.loads(side.read_text(encoding="utf-8"))
    assert "changed" in str(mark_side_file(side, "voice", changed))
    assert "changed" in json.loads(side.read_text(encoding="utf-8"))["stale"]


def test_help_explains_stamps_and_staleness(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        parse_args(["--help"])
    text = capsys.readouterr().out
    assert "git diff --quiet <stamp> HEAD" in " ".join(text.split()) and "--check" in text


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True)
    return done.stdout.strip()


def test_real_git_stamp_and_diff(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "tasks" / "voice").mkdir(parents=True)
    _git(repo, "init", "-q")
    for key, value in (("user.email", "t@example.com"), ("user.name", "t")):
        _git(repo, "config", key, value)
    (repo / "tasks" / "voice" / "stt.py").write_text("A = 1\n", encoding="utf-8")
    (repo / "README.md").write_text("x\n", encoding="utf-8")
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "one")
    first = make_stamp("voice", repo)
    assert first["commit"] == _git(repo, "rev-parse", "HEAD") and not first["dirty"]
    paths = sources("voice")
    (repo / "README.md").write_text("y\n", encoding="utf-8")
    assert make_stamp("voice", repo)["tree_dirty"] and not make_stamp("voice", repo)["dirty"]
    _git(repo, "commit", "-qam", "readme only")
    assert git_changed(str(first["commit"]), paths, repo) is False
    (repo / "tasks" / "voice" / "stt.py").write_text("A = 2\n", encoding="utf-8")
    assert make_stamp("voice", repo)["dirty"]
    _git(repo, "commit", "-qam", "the recogniser")
    assert git_changed(str(first["commit"]), paths, repo) is True
    assert git_changed("f" * 40, paths, repo) is None
