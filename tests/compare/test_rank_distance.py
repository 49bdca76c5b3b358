"""Rank distances against scipy and brute-force definitions over small permutations."""

from __future__ import annotations

import itertools
import math
import random

import pytest
from scipy import stats as sps

from sparkeval.compare.rank_distance import (
    DISTANCE_FIELDS,
    jaccard_at_k,
    order_by_score_then_docid_desc,
    rank_distances,
    rbo_ext,
)


def _brute_cayley(a: tuple, b: tuple) -> int:
    """Fewest swaps of two items turning a into b: breadth-first search."""
    frontier, seen, steps = {a}, {a}, 0
    while b not in frontier:
        steps += 1
        nxt = set()
        for perm in frontier:
            for i, j in itertools.combinations(range(len(perm)), 2):
                q = list(perm)
                q[i], q[j] = q[j], q[i]
                t = tuple(q)
                if t not in seen:
                    seen.add(t)
                    nxt.add(t)
        frontier = nxt
    return steps


def _brute_ulam(a: tuple, b: tuple) -> int:
    """n minus the longest common subsequence, found by trying every subsequence of a."""
    n = len(a)
    for size in range(n, -1, -1):
        for keep in itertools.combinations(range(n), size):
            sub = [a[i] for i in keep]
            it = iter(b)
            if all(any(x == y for y in it) for x in sub):  # sub is a subsequence of b
                return n - size
    return n


def _brute_rbo_ext(s: list, t: list, p: float) -> float:
    """Webber et al. eq. 32 written term by term from prefix sets."""
    if len(s) > len(t):
        s, t = t, s
    sl, ll = len(s), len(t)

    def x(d: int) -> int:
        return len(set(s[:d]) & set(t[:d]))

    first = sum(x(d) / d * p**d for d in range(1, ll + 1))
    second = sum(x(sl) * (d - sl) / (sl * d) * p**d for d in range(sl + 1, ll + 1))
    return (1 - p) / p * (first + second) + ((x(ll) - x(sl)) / ll + x(sl) / sl) * p**ll


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5])
def test_permutation_measures_brute_force(n: int) -> None:
    base = tuple(f"d{i}" for i in range(n))
    for perm in itertools.permutations(base):
        got = rank_distances(list(base), list(perm), k=n, p=0.8)
        pos = {doc: i for i, doc in enumerate(perm)}
        assert got["overlap"] == n
        assert got["footrule"] == sum(abs(i - pos[d]) for i, d in enumerate(base))
        assert got["hamming"] == sum(1 for i in range(n) if base[i] != perm[i])
        assert got["cayley"] == _brute_cayley(base, perm)
        assert got["ulam"] == _brute_ulam(base, perm)
        if n >= 2:
            ra = list(range(n))
            rb = [pos[d] for d in base]
            assert got["kendall_tau"] == pytest.approx(sps.kendalltau(ra, rb).statistic)
            assert got["spearman_rho"] == pytest.approx(sps.spearmanr(ra, rb).statistic)
        else:
            assert math.isnan(got["kendall_tau"]) and math.isnan(got["spearman_rho"])
        assert got["jaccard_at_k"] == 1.0
        assert got["rbo"] == pytest.approx(_brute_rbo_ext(list(base), list(perm), 0.8))


def test_partial_overlap_uses_common_docs() -> None:
    a = ["a", "b", "c", "d", "e"]
    b = ["x", "c", "a", "y", "b"]
    got = rank_distances(a, b, k=3, p=0.9)
    # common docs a, b, c; orders: a: (a, b, c), b: (c, a, b)
    # ranks: a -> (1, 2, 3), b -> (2, 3, 1): footrule 1+1+2 = 4, one 3-cycle -> cayley 2,
    # LIS of (2, 3, 1) is 2 -> ulam 1, all three positions differ -> hamming 3
    assert got["overlap"] == 3
    assert (got["footrule"], got["cayley"], got["ulam"], got["hamming"]) == (4, 2, 1, 3)
    assert got["kendall_tau"] == pytest.approx(sps.kendalltau([1, 2, 3], [2, 3, 1]).statistic)
    # top-3 sets {a, b, c} and {x, c, a}: 2 shared of 4
    assert got["jaccard_at_k"] == 0.5
    assert got["rbo"] == pytest.approx(_brute_rbo_ext(a, b, 0.9))


def test_rbo_hand_values_and_bounds() -> None:
    assert rbo_ext(list("abcd"), list("abcd"), 0.9) == pytest.approx(1.0)
    assert rbo_ext(list("abc"), list("xyz"), 0.9) == 0.0
    # ("a","b") vs ("b","a"), p = 0.5: X_1 = 0, X_2 = 2
    # (1-p)/p * (0 + 2/2 * 0.25) + 2/2 * 0.25 = 0.25 + 0.25 = 0.5
    assert rbo_ext(["a", "b"], ["b", "a"], 0.5) == pytest.approx(0.5)
    # uneven lengths: S = (a), L = (a, b), p = 0.5: X_1 = 1, X_2 = |{a} ∩ {a, b}| = 1
    # (1-p)/p * (1*0.5 + 1/2*0.25 + 1*(2-1)/(1*2)*0.25) + ((1-1)/2 + 1/1)*0.25
    # = 1 * (0.5 + 0.125 + 0.125) + 0.25 = 1.0 (a prefix of the other: full agreement)
    assert rbo_ext(["a"], ["a", "b"], 0.5) == pytest.approx(1.0)
    rng = random.Random(4)
    docs = [f"d{i}" for i in range(30)]
    for _ in range(50):
        s = rng.sample(docs, rng.randint(1, 12))
        t = rng.sample(docs, rng.randint(1, 12))
        p = rng.choice([0.5, 0.8, 0.9, 0.98])
        value = rbo_ext(s, t, p)
        assert 0.0 <= value <= 1.0 + 1e-12
        assert value == pytest.approx(_brute_rbo_ext(s, t, p))
        assert value == pytest.approx(rbo_ext(t, s, p))
    with pytest.raises(ValueError):
        rbo_ext(["a"], ["a"], 1.0)
    with pytest.raises(ValueError):
        rbo_ext(["a", "a"], ["a"], 0.9)


def test_jaccard_and_empty_overlap() -> None:
    assert jaccard_at_k(["a", "b"], ["c"], 5) == 0.0
    got = rank_distances(["a", "b"], ["c", "d"], k=2)
    assert got["overlap"] == 0 and got["footrule"] == 0 and got["rbo"] == 0.0
    assert set(got) == set(DISTANCE_FIELDS)
    with pytest.raises(ValueError):
        jaccard_at_k(["a"], ["a"], 0)


def test_tie_rule_score_desc_then_docid_desc() -> None:
    scores = [1.0, 3.0, 1.0, 1.0, 2.0]
    docs = ["d10", "d1", "d9", "d2", "e"]
    order = order_by_score_then_docid_desc(scores, docs)
    # 3.0 first, then 2.0, then the 1.0 ties by doc id descending: "d9" > "d2" > "d10"
    assert [docs[i] for i in order] == ["d1", "e", "d9", "d2", "d10"]
    # byte-wise, not numeric or case-folded: "Z" (0x5A) < "a" (0x61)
    order = order_by_score_then_docid_desc([0.0, 0.0], ["Z", "a"])
    assert order.tolist() == [1, 0]
