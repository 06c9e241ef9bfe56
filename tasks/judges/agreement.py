"""Agreement statistics between a judge and human labels.

* accuracy: share of items where judge and label agree;
* macro-F1: unweighted mean over the classes seen (in labels or predictions) of per-class
  F1 (a class never predicted or never labelled has F1 0);
* Cohen's kappa, linearly weighted for ordinal scales (weights |i - j| / (k - 1)); for a
  two-point scale this equals the unweighted kappa. Undefined (None) when the chance
  disagreement is zero (both raters constant on the same value);
* confusion matrix as ``{label: {prediction: count}}`` over the scale.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

T = TypeVar("T")
U = TypeVar("U")


def accuracy(labels: Sequence[int], preds: Sequence[int]) -> float | None:
    if not labels:
        return None
    return sum(1 for a, b in zip(labels, preds, strict=True) if a == b) / len(labels)


def macro_f1(labels: Sequence[int], preds: Sequence[int]) -> float | None:
    if not labels:
        return None
    scores = []
    for cls in sorted(set(labels) | set(preds)):
        tp = sum(1 for a, b in zip(labels, preds, strict=True) if a == cls and b == cls)
        fp = sum(1 for a, b in zip(labels, preds, strict=True) if a != cls and b == cls)
        fn = sum(1 for a, b in zip(labels, preds, strict=True) if a == cls and b != cls)
        scores.append(0.0 if tp == 0 else 2 * tp / (2 * tp + fp + fn))
    return sum(scores) / len(scores)


def weighted_kappa(
    labels: Sequence[int], preds: Sequence[int], scale: Sequence[int], weighting: str = "linear"
) -> float | None:
    """Cohen's kappa with linear (or no) disagreement weights over the ordered ``scale``."""
    n, k = len(labels), len(scale)
    if n == 0 or k < 2:
        return None
    index = {v: i for i, v in enumerate(scale)}
    observed = [[0.0] * k for _ in range(k)]
    for a, b in zip(labels, preds, strict=True):
        observed[index[a]][index[b]] += 1
    rows = [sum(r) for r in observed]
    cols = [sum(observed[i][j] for i in range(k)) for j in range(k)]

    def weight(i: int, j: int) -> float:
        if weighting == "linear":
            return abs(i - j) / (k - 1)
        return 0.0 if i == j else 1.0

    seen = sum(weight(i, j) * observed[i][j] for i in range(k) for j in range(k))
    chance = sum(weight(i, j) * rows[i] * cols[j] / n for i in range(k) for j in range(k))
    return None if chance == 0 else 1.0 - seen / chance


def confusion(
    labels: Sequence[int], preds: Sequence[int], scale: Sequence[int]
) -> dict[str, dict[str, int]]:
    table = {str(a): {str(b): 0 for b in scale} for a in scale}
    for a, b in zip(labels, preds, strict=True):
        table[str(a)][str(b)] += 1
    return table


def max_matching(
    left: Sequence[T], right: Sequence[U], same: Callable[[T, U], bool]
) -> dict[int, int]:
    """Maximum one-to-one matching (left index -> right index) under ``same`` (Kuhn)."""
    edges = [[j for j, r in enumerate(right) if same(item, r)] for item in left]
    owner: dict[int, int] = {}

    def augment(i: int, seen: set[int]) -> bool:
        for j in edges[i]:
            if j in seen:
                continue
            seen.add(j)
            if j not in owner or augment(owner[j], seen):
                owner[j] = i
                return True
        return False

    for i in range(len(left)):
        augment(i, set())
    return {i: j for j, i in owner.items()}
