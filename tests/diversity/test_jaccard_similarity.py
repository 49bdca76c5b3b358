"""The local Jaccard similarity of label sets, to the bit, against the per-pair share of
Python's own set operations (``len(a & b) / len(a | b)``, written out here)."""

from __future__ import annotations

import random

import numpy as np

from sparkeval.diversity.local_similarity import jaccard_similarity


def _per_pair(sets: list, i: np.ndarray, j: np.ndarray) -> np.ndarray:
    found = np.zeros(len(i))
    for row, (a, b) in enumerate(zip(i.tolist(), j.tolist(), strict=True)):
        union = len(sets[a] | sets[b])
        found[row] = len(sets[a] & sets[b]) / union if union else 0.0
    return found


def test_random_label_sets_score_as_python_sets_do() -> None:
    rng = random.Random(11)
    # labels of several types; 1, 1.0 and True are one label to a Python set
    labels = ["a", "b", "é", 1, 1.0, True, 2.5, (1, 2), *range(10, 90)]
    sets: list = [frozenset(rng.sample(labels, rng.randint(0, 25))) for _ in range(400)]
    sets += [frozenset(), None, frozenset({"only"})]
    scored = [k for k, s in enumerate(sets) if s is not None]
    i = np.array([rng.choice(scored) for _ in range(20000)], dtype=np.int64)
    j = np.array([rng.choice(scored) for _ in range(20000)], dtype=np.int64)
    found = jaccard_similarity(sets)(i, j)
    assert found.dtype == np.float64
    assert found.tobytes() == _per_pair(sets, i, j).tobytes()


def test_hand_worked_shares() -> None:
    sets = [frozenset({"x", "y", "z"}), frozenset({"y", "z", "w"}), frozenset(), frozenset()]
    sim = jaccard_similarity(sets)
    # {y, z} of {x, y, z, w}: 2 / 4; two empty sets: 0; a set with itself: 1
    found = sim(np.array([0, 2, 1, 0]), np.array([1, 3, 1, 2]))
    assert found.tolist() == [0.5, 0.0, 1.0, 0.0]
    assert sim(np.zeros(0, np.int64), np.zeros(0, np.int64)).tolist() == []
