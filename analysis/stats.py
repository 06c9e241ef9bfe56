"""Statistics for the analysis studies (spec 8.3): pure numpy/scipy, no I/O.

Bootstrap CIs and seeds come from ``tasks.aggregate`` (the run aggregation uses the same
routine, so a CI printed by an analysis matches the one in the ``aggregates`` table).

The sign-flip test and Holm's procedure follow spec 8.3, and differ from the reference's
code on purpose in three places (each has a test in ``tests/analysis/test_stats.py``):

* Ties. The spec counts a sign pattern when its |mean| is *at least* the observed |mean|.
  Scenario deltas are differences of trial means (multiples of 1/3 with three trials), so
  many patterns tie the observed value exactly, and a plain float comparison keeps or
  drops each tie by its rounding error. We count ties as ties (a 1e-12 tolerance, far
  below any real difference of such means): on deltas on a 1/3 grid the p-value then
  equals the count in exact integer arithmetic, where the plain comparison is off by up to
  0.12 on 60 random cells of such deltas (the issue 32 comparison saw 0.13 on its data,
  and one Holm decision of 48 moved with it).
* Missing values. A scenario whose arm has no value (all NaN) gives a NaN delta; in the
  reference that makes the observed mean NaN, no pattern compares as extreme, and p is
  0.0: "significant" at any alpha from a missing value. We drop NaN deltas (``n`` says
  how many were used) and test the rest; a cell with no delta left has p NaN, and Holm
  leaves it out of its family.
* Small samples. Up to ``EXACT_MAX_N`` deltas every sign pattern is enumerated (the exact
  p-value); the reference always draws ``n_permutations`` patterns, whose p differs from
  the exact one by Monte Carlo noise only (about 0.005 at 10,000 draws).

Holm's decisions are the reference's: within a family reject while p_(i) <= alpha /
(m - i + 1) in ascending order (equivalently adjusted p <= alpha), a single-test family
rejects iff p < alpha.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, ConfigDict, Field
from scipy import stats as sps

from tasks.aggregate import bootstrap_ci, bootstrap_ci_batched, seed_from_name

__all__ = [
    "EXACT_MAX_N",
    "InverseSqrtFit",
    "PearsonResult",
    "PermutationResult",
    "bootstrap_ci",
    "bootstrap_ci_batched",
    "cell_seed",
    "fit_inverse_sqrt",
    "holm_bonferroni",
    "pareto_front",
    "pearson",
    "sign_flip_test",
    "sign_flip_tests",
    "significance_stars",
]

EXACT_MAX_N = 16
"""Up to this many deltas the sign-flip test enumerates all 2^n sign patterns."""
_TIE = 1e-12  # |permuted mean| >= |observed| - _TIE, so the identity pattern always counts
_BLOCK = 4096  # Monte Carlo permutations per block, to bound memory for large n
# Sign of delta k (k < 8) in a chunk for each byte of sign bits: bit k set means +1.
_BYTE_SIGNS = ((np.arange(256)[:, None] >> np.arange(8)) & 1) * 2.0 - 1.0


class PermutationResult(BaseModel):
    """Outcome of a two-sided paired sign-flip permutation test of mean(deltas) = 0."""

    model_config = ConfigDict(frozen=True)
    observed: float = Field(description="Mean of the deltas (NaN when there are none)")
    p_value: float = Field(description="Share of sign patterns with |mean| >= |observed|")
    n: int = Field(description="Number of paired deltas")
    n_permutations: int = Field(description="Sign patterns evaluated (2^n when exact)")
    exact: bool = Field(description="True when every sign pattern was enumerated")


def sign_flip_test(
    deltas: npt.ArrayLike,
    n_permutations: int = 10_000,
    seed: int = 42,
    exact_max_n: int = EXACT_MAX_N,
) -> PermutationResult:
    """Paired sign-flip permutation test (two-sided); NaNs are dropped.

    Under the null each delta's sign is a fair coin, so the p-value is the share of sign
    patterns whose mean is at least as extreme as the observed one. Small samples are
    enumerated exactly; larger ones use ``n_permutations`` seeded Monte Carlo patterns and,
    as in the reference, the plain share (no +1), so p can be 0. All-zero deltas give p = 1.
    """
    d = np.asarray(deltas, dtype=np.float64)
    d = d[~np.isnan(d)]
    n = int(d.size)
    if n == 0:
        return PermutationResult(
            observed=math.nan, p_value=math.nan, n=0, n_permutations=0, exact=True
        )
    observed = float(d.mean())
    if np.all(d == 0):
        return PermutationResult(observed=0.0, p_value=1.0, n=n, n_permutations=0, exact=True)
    if n <= exact_max_n:
        bits = (np.arange(2**n)[:, None] >> np.arange(n)) & 1
        means = ((1 - 2 * bits) @ d) / n
        hits = int(np.count_nonzero(np.abs(means) >= abs(observed) - _TIE))
        return PermutationResult(
            observed=observed, p_value=hits / 2**n, n=n, n_permutations=2**n, exact=True
        )
    rng = np.random.default_rng(seed)
    hits = 0
    for start in range(0, n_permutations, _BLOCK):
        size = min(_BLOCK, n_permutations - start)
        signs = rng.integers(0, 2, size=(size, n), dtype=np.int8) * 2 - 1
        hits += int(np.count_nonzero(np.abs(signs @ d / n) >= abs(observed) - _TIE))
    return _monte_carlo(observed, hits, n, n_permutations)


def _monte_carlo(observed: float, hits: int, n: int, n_permutations: int) -> PermutationResult:
    return PermutationResult(
        observed=observed,
        p_value=hits / n_permutations,
        n=n,
        n_permutations=n_permutations,
        exact=False,
    )


def sign_flip_tests(
    samples: Sequence[npt.ArrayLike],
    seeds: Sequence[int],
    n_permutations: int = 10_000,
    exact_max_n: int = EXACT_MAX_N,
) -> list[PermutationResult]:
    """``sign_flip_test`` of many samples, each with its own seed: same results, faster.

    Monte Carlo samples use the very sign patterns ``sign_flip_test`` draws (taken from the
    generator's raw words, see ``_sign_codes``) and sum them by table look-up, eight deltas
    per look-up, instead of an (n_permutations x n) float product; the sums differ only by
    rounding, far below the 1e-12 tie tolerance, so the hit counts are the same.
    """
    if len(samples) != len(seeds):
        raise ValueError(f"sign_flip_tests: {len(samples)} samples but {len(seeds)} seeds")
    return [
        _sign_flip_fast(np.asarray(d, dtype=np.float64), seed, n_permutations, exact_max_n)
        for d, seed in zip(samples, seeds, strict=True)
    ]


def _sign_flip_fast(
    deltas: np.ndarray, seed: int, n_permutations: int, exact_max_n: int
) -> PermutationResult:
    d = deltas[~np.isnan(deltas)]
    if d.size <= exact_max_n or np.all(d == 0):
        return sign_flip_test(d, n_permutations, seed, exact_max_n)
    observed = float(d.mean())
    n = int(d.size)
    chunk_sums = _chunk_sums(d)
    rng = np.random.default_rng(seed)
    hits = 0
    for start in range(0, n_permutations, _BLOCK):
        size = min(_BLOCK, n_permutations - start)
        codes = _sign_codes(rng, size, n)
        sums = chunk_sums[0].take(codes[0])
        for chunk in range(1, len(codes)):
            sums += chunk_sums[chunk].take(codes[chunk])
        hits += int(np.count_nonzero(np.abs(sums / n) >= abs(observed) - _TIE))
    return _monte_carlo(observed, hits, n, n_permutations)


def _chunk_sums(d: np.ndarray) -> np.ndarray:
    """(chunks x 256): the signed sum of each run of 8 deltas for every byte of sign bits."""
    padded = np.zeros(-(-d.size // 8) * 8)
    padded[: d.size] = d  # a padding delta is 0, so its (arbitrary) sign bit adds nothing
    return padded.reshape(-1, 8) @ _BYTE_SIGNS.T


def _sign_codes(rng: np.random.Generator, size: int, n: int) -> np.ndarray:
    """(chunks x size) bytes of sign bits: the patterns ``sign_flip_test`` draws, packed.

    ``rng.integers(0, 2, dtype=np.int8)`` returns the top bit of each byte of the
    generator's 32-bit words, four bytes per word, low byte first; reading those bits off
    ``random_raw`` skips the per-byte work. Every block but the last is 4096 x n bytes, a
    whole number of 64-bit words, so the blocks consume the stream as the original's do.
    ``_raw_bits_match`` checks this numpy's generator still works that way.
    """
    if _raw_bits_match():
        bits = _raw_bits(rng, size, n)
    else:
        bits = rng.integers(0, 2, size=(size, n), dtype=np.int8).view(np.uint8)
    return np.ascontiguousarray(np.packbits(bits, axis=1, bitorder="little").T)


def _raw_bits(rng: np.random.Generator, size: int, n: int) -> np.ndarray:
    """(size x n) 0/1: the top bit of each of the next size x n bytes of raw words."""
    words = rng.bit_generator.random_raw(-(-size * n // 8))
    return (np.asarray(words, dtype="<u8").view(np.uint8)[: size * n] >> 7).reshape(size, n)


@functools.cache
def _raw_bits_match() -> bool:
    """Whether int8 coin flips are the raw bytes' top bits (two blocks, as the test draws)."""
    expected, got = np.random.default_rng(7), np.random.default_rng(7)
    for size in (8, 5):  # 8 x 13 bytes is whole words, as a 4096-row block is
        want = expected.integers(0, 2, size=(size, 13), dtype=np.int8).view(np.uint8)
        if not np.array_equal(want, _raw_bits(got, size, 13)):
            return False
    return True


def holm_bonferroni(p_values: npt.ArrayLike, alpha: float = 0.05) -> tuple[list[float], list[bool]]:
    """Holm step-down adjusted p-values and rejections for one family (NaNs left out).

    Adjusted p_(i) = max over j <= i of min(1, (m - j + 1) p_(j)) for the ascending order;
    a hypothesis is rejected when its adjusted p is at most ``alpha`` (adjusted p <= alpha,
    as in the reference's analysis code and the textbook procedure). A single-test family
    keeps the raw p and rejects iff p < alpha, as spec 8.3 step 4 states for that case.
    """
    raw = np.asarray(p_values, dtype=np.float64)
    adjusted = np.full(raw.shape, np.nan)
    present = np.flatnonzero(~np.isnan(raw))
    m = present.size
    running = 0.0
    for rank, idx in enumerate(present[np.argsort(raw[present], kind="stable")]):
        running = max(running, min(1.0, (m - rank) * float(raw[idx])))
        adjusted[idx] = running
    rejects = (lambda a: a < alpha) if m == 1 else (lambda a: a <= alpha)
    rejected = [bool(rejects(a)) if not math.isnan(a) else False for a in adjusted]
    return [float(a) for a in adjusted], rejected


def significance_stars(p_value: float | None) -> str:
    """``***`` p < 0.001, ``**`` p < 0.01, ``*`` p < 0.05, else empty (spec 8.3)."""
    if p_value is None or math.isnan(p_value):
        return ""
    if p_value < 0.001:
        return "***"
    if p_value < 0.01:
        return "**"
    return "*" if p_value < 0.05 else ""


def cell_seed(base_seed: int, *keys: object) -> int:
    """A stable per-cell seed from the base seed and the cell's keys (spec 8.3)."""
    return seed_from_name("|".join([str(base_seed), *(str(k) for k in keys)]))


class PearsonResult(BaseModel):
    model_config = ConfigDict(frozen=True)
    r: float = Field(description="Pearson correlation (NaN if undefined)")
    p_value: float = Field(description="Two-sided p-value of r = 0 (t test, n - 2 dof)")
    n: int = Field(description="Pairs with both values present")


def pearson(x: npt.ArrayLike, y: npt.ArrayLike) -> PearsonResult:
    """Pearson r with its two-sided p-value; NaN when n < 3 or either side is constant."""
    xa, ya = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    keep = ~(np.isnan(xa) | np.isnan(ya))
    xa, ya = xa[keep], ya[keep]
    n = int(xa.size)
    if n < 3 or np.ptp(xa) == 0 or np.ptp(ya) == 0:
        return PearsonResult(r=math.nan, p_value=math.nan, n=n)
    result = sps.pearsonr(xa, ya)
    return PearsonResult(r=float(result.statistic), p_value=float(result.pvalue), n=n)


class InverseSqrtFit(BaseModel):
    """Fit of CI width against k: the k^-1/2 law and a free power law for comparison."""

    model_config = ConfigDict(frozen=True)
    a: float = Field(description="Least-squares a in width = a * k^-1/2")
    r2: float = Field(description="R^2 of the k^-1/2 law on the widths")
    exponent: float = Field(description="b of the free log-log fit width = c * k^b")
    prefactor: float = Field(description="c of the free log-log fit")
    n_points: int


def fit_inverse_sqrt(k: npt.ArrayLike, width: npt.ArrayLike) -> InverseSqrtFit:
    """Fit ``width = a / sqrt(k)`` (through the origin in k^-1/2) and ``width = c k^b``."""
    ka, wa = np.asarray(k, dtype=np.float64), np.asarray(width, dtype=np.float64)
    keep = ~(np.isnan(ka) | np.isnan(wa)) & (ka > 0)
    ka, wa = ka[keep], wa[keep]
    if ka.size == 0:
        return InverseSqrtFit(
            a=math.nan, r2=math.nan, exponent=math.nan, prefactor=math.nan, n_points=0
        )
    x = ka**-0.5
    a = float(x @ wa / (x @ x))
    ss_tot = float(((wa - wa.mean()) ** 2).sum())
    ss_res = float(((wa - a * x) ** 2).sum())
    r2 = 1.0 - ss_res / ss_tot if ss_tot > 0 else math.nan
    exponent, prefactor = math.nan, math.nan
    positive = wa > 0
    if np.unique(ka[positive]).size >= 2:
        b, log_c = np.polyfit(np.log(ka[positive]), np.log(wa[positive]), 1)
        exponent, prefactor = float(b), float(math.exp(log_c))
    return InverseSqrtFit(a=a, r2=r2, exponent=exponent, prefactor=prefactor, n_points=int(ka.size))


def pareto_front(xs: npt.ArrayLike, ys: npt.ArrayLike) -> list[bool]:
    """Which points are not dominated when both coordinates are to be maximised.

    A point is dominated when another is at least as good on both axes and strictly better
    on one. Identical points do not dominate each other; points with a NaN are never on
    the front.
    """
    x, y = np.asarray(xs, dtype=np.float64), np.asarray(ys, dtype=np.float64)
    if x.shape != y.shape:
        raise ValueError(f"pareto_front: {x.size} x values but {y.size} y values")
    ok = ~(np.isnan(x) | np.isnan(y))
    front = []
    for i in range(x.size):
        if not ok[i]:
            front.append(False)
            continue
        better_eq = ok & (x >= x[i]) & (y >= y[i])
        strictly = (x > x[i]) | (y > y[i])
        front.append(not bool(np.any(better_eq & strictly)))
    return front
