"""``evaflow judges validate --cv K``: the offline judge's cross-validated agreement, as a
user runs it (in-process through ``flows.cli.main``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from flows.cli import main


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_cv_prints_cross_validated_and_in_sample_figures(
    eva_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = ["judges", "validate", "--set", str(eva_root / "judge_validation")]
    code, out, err = run([*base, "--cv", "5", "--metric", "conciseness", "--json"], capsys)
    assert code == 0, err
    data = json.loads(out)
    assert (data["k"], data["seed"], list(data["judges"])) == (5, 0, ["conciseness"])
    result = data["judges"]["conciseness"]
    assert result["cv"]["n"] == result["in_sample"]["n"] > 0 and len(result["folds"]) == 5
    assert 0.0 < result["cv"]["kappa"] <= 1.0
    code, out, err = run([*base, "--cv", "3", "--seed", "7", "--metric", "conciseness"], capsys)
    assert code == 0, err
    assert "3-fold" in out and "seed 7" in out and "in-sample" in out and "conciseness" in out
    code, out, _ = run([*base, "--metric", "conciseness"], capsys)
    assert code == 0 and "in-sample" in out and "--cv 5" in out  # the plain figures say so


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        (["--cv", "5", "--judge", "llm"], "--cv is for --judge offline"),
        (["--cv", "1"], "at least 2"),
        (["--cv", "5", "--metric", "fluency"], "fluency"),
    ],
)
def test_cv_misuse_is_one_line_and_exit_2(
    eva_root: Path, capsys: pytest.CaptureFixture[str], extra: list[str], expected: str
) -> None:
    argv = ["judges", "validate", "--set", str(eva_root / "judge_validation"), *extra]
    code, _, err = run(argv, capsys)
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and expected in lines[0], lines
