"""Statistics on known cases: permutation p-values, Holm, Pearson, the k^-1/2 fit, Pareto."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats as sps

from analysis.stats import (
    fit_inverse_sqrt,
    holm_bonferroni,
    pareto_front,
    pearson,
    sign_flip_test,
    sign_flip_tests,
    significance_stars,
)

# --------------------------------------------------------------------------- sign-flip test


def brute_force_p(deltas: list[float]) -> float:
    """Enumerate sign patterns with itertools: the definition, written independently."""
    observed = abs(sum(deltas) / len(deltas))
    hits = 0
    patterns = list(itertools.product((1, -1), repeat=len(deltas)))
    for signs in patterns:
        mean = sum(s * d for s, d in zip(signs, deltas, strict=True)) / len(deltas)
        hits += abs(mean) >= observed - 1e-12
    return hits / len(patterns)


def test_all_positive_deltas_give_the_two_extreme_patterns() -> None:
    # Only "all +" and "all -" reach |mean| = observed: p = 2 / 2^n.
    for n in (3, 6, 10):
        result = sign_flip_test([0.5] * n)
        assert result.exact
        assert result.p_value == pytest.approx(2 / 2**n)


@pytest.mark.parametrize(
    "deltas",
    [[0.2, -0.1, 0.4, 0.3], [1.0, -1.0, 0.5, 0.25, -0.75], [0.1, 0.2, 0.3, -0.05, 0.0, 0.15, 0.4]],
)
def test_exact_p_matches_enumeration(deltas: list[float]) -> None:
    assert sign_flip_test(deltas).p_value == pytest.approx(brute_force_p(deltas))


def test_symmetric_deltas_are_not_significant_and_zero_deltas_give_one() -> None:
    assert sign_flip_test([1.0, -1.0, 2.0, -2.0]).p_value == 1.0
    zero = sign_flip_test([0.0, 0.0, 0.0])
    assert zero.p_value == 1.0 and zero.observed == 0.0


def test_monte_carlo_is_seeded_and_close_to_exact() -> None:
    rng = np.random.default_rng(3)
    deltas = rng.normal(0.15, 0.5, size=14).tolist()
    exact = sign_flip_test(deltas).p_value
    mc = sign_flip_test(deltas, n_permutations=20_000, seed=7, exact_max_n=0)
    again = sign_flip_test(deltas, n_permutations=20_000, seed=7, exact_max_n=0)
    assert not mc.exact and mc.p_value == again.p_value
    # Binomial standard error of a 20k-draw estimate is below 0.004.
    assert mc.p_value == pytest.approx(exact, abs=0.015)


def test_large_clear_effect_has_tiny_p_and_nans_are_dropped() -> None:
    deltas = [0.3] * 40 + [float("nan")] * 3
    result = sign_flip_test(deltas, n_permutations=5000, seed=1)
    assert result.n == 40 and not result.exact
    assert result.p_value < 0.001
    assert math.isnan(sign_flip_test([]).p_value)


# --------------------------------------------------------------------------- Holm


def test_holm_textbook_example() -> None:
    # Four tests at alpha 0.05 (a standard worked example): sorted p 0.005, 0.01, 0.03, 0.04
    # -> adjusted 4*0.005, 3*0.01, 2*0.03, max(0.06, 0.04) -> reject the first two only.
    corrected, reject = holm_bonferroni([0.01, 0.04, 0.03, 0.005])
    assert corrected == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert reject == [True, False, False, True]


def test_holm_step_down_stops_at_first_failure_and_caps_at_one() -> None:
    corrected, reject = holm_bonferroni([0.001, 0.02, 0.5, 0.9], alpha=0.05)
    assert corrected == pytest.approx([0.004, 0.06, 1.0, 1.0])
    assert reject == [True, False, False, False]


def test_holm_rejects_at_adjusted_p_equal_to_alpha() -> None:
    # Reference and textbook: reject iff adjusted p <= alpha. 2 x 0.025 is exactly 0.05.
    corrected, reject = holm_bonferroni([0.025, 0.5], alpha=0.05)
    assert corrected == [0.05, 0.5]
    assert reject == [True, False]
    # Just above alpha is not rejected.
    assert holm_bonferroni([0.0251, 0.5], alpha=0.05)[1] == [False, False]


def test_holm_single_test_family_rejects_only_below_alpha() -> None:
    # Spec 8.3 step 4: a single-test family keeps the raw p and rejects iff p < alpha.
    assert holm_bonferroni([0.05], alpha=0.05) == ([0.05], [False])
    assert holm_bonferroni([float("nan"), 0.05], alpha=0.05)[1] == [False, False]


def test_holm_single_test_keeps_raw_p_and_skips_nan() -> None:
    assert holm_bonferroni([0.03]) == ([0.03], [True])
    corrected, reject = holm_bonferroni([float("nan"), 0.02, 0.04])
    assert math.isnan(corrected[0]) and not reject[0]
    assert corrected[1:] == pytest.approx([0.04, 0.04])


def test_holm_is_never_below_raw_and_is_monotone_in_rank() -> None:
    rng = np.random.default_rng(0)
    for _ in range(50):
        raw = rng.uniform(0, 0.2, size=rng.integers(1, 12))
        corrected, _ = holm_bonferroni(raw.tolist())
        order = np.argsort(raw)
        assert all(c >= r - 1e-15 for c, r in zip(corrected, raw, strict=True))
        assert np.all(np.diff(np.asarray(corrected)[order]) >= -1e-15)


def test_stars() -> None:
    assert [significance_stars(p) for p in (0.0004, 0.004, 0.04, 0.05, None)] == [
        "***",
        "**",
        "*",
        "",
        "",
    ]


# --------------------------------------------------------------------------- Pearson


def test_pearson_matches_the_t_test_formula() -> None:
    x = [0.1, 0.4, 0.35, 0.8, 0.9, 0.55]
    y = [0.0, 0.0, 1.0, 1.0, 1.0, 0.0]
    result = pearson(x, y)
    r = np.corrcoef(x, y)[0, 1]
    t = r * math.sqrt((len(x) - 2) / (1 - r**2))
    assert result.r == pytest.approx(r)
    assert result.p_value == pytest.approx(2 * sps.t.sf(abs(t), len(x) - 2))


def test_pearson_undefined_cases_are_nan() -> None:
    assert math.isnan(pearson([1, 1, 1, 1], [0, 1, 0, 1]).r)
    assert math.isnan(pearson([0.1, 0.2], [0.3, 0.4]).r)
    assert pearson([1, 2, float("nan"), 4], [2, 4, 5, 8]).n == 3


# --------------------------------------------------------------------------- k^-1/2 fit


def test_inverse_sqrt_fit_recovers_the_law_from_noisy_draws() -> None:
    rng = np.random.default_rng(11)
    ks = np.arange(1, 11)
    widths = 0.4 / np.sqrt(ks) * rng.normal(1.0, 0.02, size=ks.size)
    fit = fit_inverse_sqrt(ks, widths)
    assert fit.a == pytest.approx(0.4, rel=0.03)
    assert fit.exponent == pytest.approx(-0.5, abs=0.05)
    assert fit.r2 > 0.98


def test_inverse_sqrt_fit_on_real_binomial_ci_widths() -> None:
    # Widths of a normal-approximation CI of a mean of k Bernoulli(0.3) draws per unit.
    p, units = 0.3, 400
    ks = np.arange(1, 9)
    widths = 2 * 1.96 * np.sqrt(p * (1 - p) / (units * ks))
    fit = fit_inverse_sqrt(ks, widths)
    assert fit.exponent == pytest.approx(-0.5, abs=1e-9)
    assert fit.a == pytest.approx(widths[0], rel=1e-9)


def test_flat_widths_are_not_inverse_sqrt() -> None:
    fit = fit_inverse_sqrt([1, 2, 3, 4], [0.2, 0.2, 0.2, 0.2])
    assert fit.exponent == pytest.approx(0.0, abs=1e-9)


# --------------------------------------------------------------------------- Pareto


def test_pareto_front_on_hand_made_points() -> None:
    xs = [0.1, 0.5, 0.9, 0.4, 0.5, 0.2, float("nan")]
    ys = [0.9, 0.5, 0.1, 0.4, 0.5, 0.95, 1.0]
    # (0.4, 0.4) is dominated by (0.5, 0.5); (0.1, 0.9) by (0.2, 0.95); the duplicate
    # (0.5, 0.5) points do not dominate each other; NaN is never on the front.
    assert pareto_front(xs, ys) == [False, True, True, False, True, True, False]


def test_pareto_front_ties_on_one_axis() -> None:
    assert pareto_front([0.5, 0.5], [0.2, 0.3]) == [False, True]
    with pytest.raises(ValueError, match="x values"):
        pareto_front([0.1], [0.2, 0.3])


# --------------------------------------------------------------------------- batched sign-flip


def _cases() -> list[np.ndarray]:
    """Monte Carlo sizes with continuous, tied (0 / 0.5 / 1 steps) and rounded deltas."""
    rng = np.random.default_rng(11)
    cases = []
    for n in (17, 24, 50, 83, 213):
        cases.append(rng.normal(0.03, 0.3, n))
        cases.append(rng.choice([-1.0, -0.5, 0.0, 0.5, 1.0], n))
        cases.append(np.round(rng.normal(-0.02, 0.1, n), 2))
    with_nan = rng.normal(0.1, 0.2, 30)
    with_nan[[3, 7]] = np.nan
    return [*cases, with_nan, np.zeros(20), np.array([]), np.array([0.2, -0.1, 0.4])]


@pytest.mark.parametrize("n_permutations", [100, 4096, 10_000, 12_289])
def test_batched_sign_flip_is_the_single_test_exactly(n_permutations: int) -> None:
    # Blocks of 4096 patterns: these cover one partial, one whole, and whole + partial.
    cases = _cases()
    seeds = [1000 + i for i in range(len(cases))]
    batched = sign_flip_tests(cases, seeds, n_permutations)
    single = [sign_flip_test(d, n_permutations, s) for d, s in zip(cases, seeds, strict=True)]
    assert [r.model_dump() for r in batched] == [r.model_dump() for r in single]
    assert not all(r.exact for r in batched)  # the Monte Carlo path is what is compared


def test_raw_words_give_numpys_coin_flips_and_the_fallback_agrees(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import analysis.stats

    assert analysis.stats._raw_bits_match()  # this numpy takes the fast path
    cases, seeds = _cases()[:6], list(range(6))
    fast = sign_flip_tests(cases, seeds, 5000)
    monkeypatch.setattr(analysis.stats, "_raw_bits_match", lambda: False)
    assert [r.model_dump() for r in sign_flip_tests(cases, seeds, 5000)] == [
        r.model_dump() for r in fast
    ]
    with pytest.raises(ValueError, match="seeds"):
        sign_flip_tests(cases, seeds[:2])


# --------------------------------------------------------------------------- the reference's cases
# Issue 32: where our arithmetic and the reference's differ, and why (module docstring).


def _patterns(seed: int, n: int, n_permutations: int) -> np.ndarray:
    """The sign patterns ``sign_flip_test`` draws for ``seed``: blocks of 4096 int8 flips."""
    rng = np.random.default_rng(seed)
    blocks = []
    for start in range(0, n_permutations, 4096):
        size = min(4096, n_permutations - start)
        blocks.append(rng.integers(0, 2, size=(size, n), dtype=np.int8).astype(np.int64) * 2 - 1)
    return np.concatenate(blocks)


def test_ties_count_as_ties_where_float_rounding_would_drop_some() -> None:
    # Deltas of three-trial means lie on a 1/3 grid, so many patterns tie the observed
    # |mean| exactly. Counted in integers (thirds) the ties are exact; our p must be that
    # count. The spec's plain float comparison keeps or drops each tie by rounding.
    rng = np.random.default_rng(1)
    worst = 0.0
    for _ in range(60):
        n = int(rng.integers(17, 40))
        thirds = rng.integers(-3, 4, size=n)
        if not thirds.any():
            continue
        deltas = thirds / 3.0
        signs = _patterns(42, n, 10_000)
        exact = float(np.mean(np.abs(signs @ thirds) >= abs(int(thirds.sum()))))
        assert sign_flip_test(deltas, 10_000, 42).p_value == exact
        assert sign_flip_tests([deltas], [42], 10_000)[0].p_value == exact
        plain = float(np.mean(np.abs(signs @ deltas / n) >= abs(deltas.mean())))
        worst = max(worst, abs(plain - exact))
    # The ties matter on such data: the plain comparison is off by 0.117 at worst here
    # (the figure README.md and analysis/stats.py quote).
    assert worst == pytest.approx(0.1169, abs=1e-9)


def test_exact_enumeration_counts_ties_on_the_grid_too() -> None:
    thirds = np.array([1, 1, -1, 2, 0, 0, 1, -2, 3, 1, -1, 1])
    count = sum(
        abs(sum(s * k for s, k in zip(signs, thirds, strict=True))) >= abs(int(thirds.sum()))
        for signs in itertools.product((1, -1), repeat=thirds.size)
    )
    result = sign_flip_test(thirds / 3.0)
    assert result.exact and result.p_value == count / 2**thirds.size


def test_a_scenario_without_values_is_dropped_not_significant() -> None:
    # One scenario's perturbed arm is all NaN, so its delta is NaN. Under the spec's
    # formula the observed mean is NaN, no pattern compares as extreme and p = 0.0; we
    # test the other deltas.
    deltas = np.array([0.0, 1 / 3, -1 / 3, 0.0, 1 / 3, 0.0, float("nan"), 0.0, -1 / 3, 1 / 3])
    signs = _patterns(42, deltas.size, 10_000)
    with np.errstate(invalid="ignore"):
        assert float(np.mean(np.abs(signs @ deltas / deltas.size) >= abs(deltas.mean()))) == 0.0
    result = sign_flip_test(deltas)
    assert result.n == 9 and result.p_value == sign_flip_test(deltas[~np.isnan(deltas)]).p_value
    assert result.p_value > 0.5
    batched = sign_flip_tests([deltas], [5])[0]
    assert batched.n == 9 and batched.p_value == result.p_value
    # Nothing left to test: p is NaN and Holm leaves the cell out of its family.
    empty = sign_flip_test([float("nan")] * 3)
    assert empty.n == 0 and math.isnan(empty.p_value)
    assert holm_bonferroni([empty.p_value, 0.02, 0.04]) == (
        [pytest.approx(math.nan, nan_ok=True), 0.04, 0.04],
        [False, True, True],
    )


def _step_down(p_values: list[float], alpha: float) -> list[bool]:
    """Holm as the reference decides: ascending, reject while p_(i) <= alpha / (m - i + 1);
    a single test rejects iff p < alpha (spec 8.3)."""
    if len(p_values) == 1:
        return [p_values[0] < alpha]
    order = sorted(range(len(p_values)), key=lambda i: p_values[i])
    reject = [False] * len(p_values)
    for rank, i in enumerate(order):
        if p_values[i] > alpha / (len(p_values) - rank):
            break
        reject[i] = True
    return reject


def test_holm_decisions_match_the_step_down_on_monte_carlo_p_values() -> None:
    # Monte Carlo p-values are multiples of 1/10,000, so boundary values (0.0125 in a
    # family of 4, 0.025 in a family of 2) occur; families of 1, 3 and 9 as in spec 8.3.
    rng = np.random.default_rng(32)
    boundary = 0
    for _ in range(3000):
        m = int(rng.choice([1, 2, 3, 4, 9]))
        grid = rng.integers(0, 800, size=m)
        grid[rng.random(m) < 0.2] = int(rng.choice([100, 125, 250, 500]))
        p = [float(g) / 10_000 for g in grid]
        assert holm_bonferroni(p, 0.05)[1] == _step_down(p, 0.05), p
        boundary += any(abs(0.05 / k - x) < 1e-15 for x in p for k in range(1, m + 1))
    assert boundary > 100
