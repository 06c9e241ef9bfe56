"""The published statistics: claims recomputed from the file, Figure 2, a run on the front."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import pytest
from typer.testing import CliRunner

from analysis.base import AnalysisResult
from analysis.published import check_claims, load_published
from analysis.runner import run_published
from tasks.store import Store
from tests.analysis.synthetic import RUN


@pytest.fixture(scope="module")
def raw(stats_file: Path) -> dict:
    return json.loads(stats_file.read_text())


@pytest.fixture(scope="module")
def published(
    stats_file: Path, synth_store: Store, tmp_path_factory: pytest.TempPathFactory
) -> AnalysisResult:
    out = tmp_path_factory.mktemp("published")
    return run_published(stats_file, out, synth_store, [RUN])


def _point(system: dict, key: str) -> float:
    return system["clean"][key]["pooled"]["point"]


def _claims(stats_file: Path) -> dict:
    return {c.id: c for c in check_claims(load_published(stats_file))}


def test_half_on_both_claim_is_computed_from_the_file(stats_file: Path, raw: dict) -> None:
    above = [
        s["id"]
        for s in raw["systems"]
        if _point(s, "EVA-A_pass") > 0.5 and _point(s, "EVA-X_pass") > 0.5
    ]
    claim = _claims(stats_file)["no_system_above_half_on_both"]
    assert claim.holds == (not above)
    assert claim.details["above_both"] == above
    assert claim.details["n_systems"] == len(raw["systems"])
    for system in above:
        assert system in claim.value


@pytest.mark.parametrize(
    ("claim_id", "keys"),
    [
        ("frontier_pass_at_1", ("EVA-A_pass", "EVA-X_pass")),
        ("frontier_pass_pow_k", ("EVA-A_pass_power_k", "EVA-X_pass_power_k")),
    ],
)
def test_frontiers_match_a_brute_force_dominance_check(
    stats_file: Path, raw: dict, claim_id: str, keys: tuple[str, str]
) -> None:
    points = {s["id"]: (_point(s, keys[0]), _point(s, keys[1])) for s in raw["systems"]}
    front = {
        name
        for name, (a, x) in points.items()
        if not any(
            (a2 >= a and x2 >= x and (a2 > a or x2 > x))
            for other, (a2, x2) in points.items()
            if other != name
        )
    }
    claim = _claims(stats_file)[claim_id]
    assert set(claim.details["front"]) == front and front


@pytest.mark.parametrize("dim", ["EVA-A", "EVA-X"])
def test_median_gap(stats_file: Path, raw: dict, dim: str) -> None:
    gaps = [
        _point(s, f"{dim}_pass_at_k") - _point(s, f"{dim}_pass_power_k") for s in raw["systems"]
    ]
    claim = _claims(stats_file)[f"median_gap_{dim}"]
    assert claim.details["median"] == pytest.approx(statistics.median(gaps))
    assert f"{statistics.median(gaps):.3f}" in claim.value


def textbook_holm(raw: list[float]) -> list[float]:
    """Holm written out longhand, independently of ``analysis.stats``."""
    order = sorted(range(len(raw)), key=lambda i: raw[i])
    adjusted, running = [0.0] * len(raw), 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (len(raw) - rank) * raw[i]))
        adjusted[i] = running
    return adjusted


def test_holm_check_agrees_with_a_longhand_holm(
    stats_file: Path, raw: dict, published: AnalysisResult
) -> None:
    check = published.tables["published_holm_check"].set_index(["system", "metric", "family"])
    for system in raw["systems"]:
        for metric, conditions in system["perturbation_delta"].items():
            families: dict[str, list[dict]] = {"pooled": [], "per_domain": []}
            for block in conditions.values():
                families["pooled"].append(block["pooled"])
                families["per_domain"].extend(block["per_domain"].values())
            for family, cells in families.items():
                holm = textbook_holm([c["raw_p"] for c in cells])
                same = all(
                    abs(h - c["corrected_p"]) <= 2e-4 for h, c in zip(holm, cells, strict=True)
                )
                assert check.loc[(system["id"], metric, family), "reproduced"] == same
    claim = _claims(stats_file)["holm_reproduced"]
    assert claim.details["families"] == len(check)
    assert claim.holds == bool(check["reproduced"].all())


def test_figure_two_and_delta_figures_are_drawn(published: AnalysisResult) -> None:
    names = {Path(f).name for f in published.figures}
    assert {"published_pareto.png", "published_pareto.svg"} <= names
    assert any(n.startswith("published_deltas_") and n.endswith(".png") for n in names)
    for f in published.figures:
        assert Path(f).stat().st_size > 1000
    assert Path(published.table_paths["published_points"]).is_file()


def test_a_run_is_placed_on_the_published_front(published: AnalysisResult) -> None:
    overlay = published.tables["published_overlay"]
    assert set(overlay["system"]) == {"steady", "fragile", "mixed"}
    assert set(overlay["view"]) == {"pass@1", "pass^k"}
    assert overlay["on_front"].dtype == bool


def test_system_filter_and_bad_ids(stats_file: Path, raw: dict) -> None:
    first = [s["id"] for s in raw["systems"][:4]]
    assert len(load_published(stats_file, first).systems) == 4
    with pytest.raises(ValueError, match="unknown system"):
        load_published(stats_file, ["not-a-system"])


def test_bad_file_is_named(tmp_path: Path) -> None:
    bad = tmp_path / "stats.json"
    bad.write_text(json.dumps({"systems": [{"name": "no id"}]}))
    with pytest.raises(ValueError, match=r"stats.json: field 'systems.0.id'"):
        load_published(bad)


def test_cli_prints_each_claim_with_its_value(stats_file: Path, raw: dict, tmp_path: Path) -> None:
    import flows.analysis_cli  # noqa: F401 - registers the command
    from flows.cli import app

    # Systems without perturbation deltas keep this run to the one Pareto figure.
    chosen = [s["id"] for s in raw["systems"] if not s.get("perturbation_delta")][:6]
    chosen = chosen if len(chosen) >= 3 else [s["id"] for s in raw["systems"][:3]]

    result = CliRunner().invoke(
        app,
        [
            "analyze",
            "published",
            "--stats",
            str(stats_file),
            "--out",
            str(tmp_path),
            "--no-flow",
            "--systems",
            ",".join(chosen),
        ],
    )
    assert result.exit_code == 0, result.output
    assert "No system exceeds 0.5 on both EVA-A and EVA-X pass@1" in result.output
    assert "Median pass@k - pass^k gap for EVA-X" in result.output
    assert (tmp_path / "published_pareto.png").is_file()
