"""Item similarities of item-code pairs in this process, as
:func:`~sparkeval.diversity.intra_list.item_similarity` computes them on Spark, to the
bit: the same formulas, the same double operations in the same order (a vector's sums
added left to right, from 0.0, as Spark's ``aggregate`` adds them).

Each builder returns ``sim(i, j)`` over arrays of item codes; a pair Spark finds no
similarity row for (no shared user, vectors of different lengths) scores 0, as
Spark's ``fillna(0.0)`` gives it.

Example (item vectors [1,1,0] and [1,0,1])::

    sim = cosine_similarity(features_of_codes)
    sim(np.array([0]), np.array([1]))  # array([0.5])
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from sparkeval.errors import InputError
from sparkeval.io.direct_input import NotDirect
from sparkeval.lsh.minhash import MinHasher

Similarity = Callable[[np.ndarray, np.ndarray], np.ndarray]
#: pairs scored at once by :func:`cosine_similarity` (times the longest vector)
COSINE_CELLS = 1 << 22


def cooccurrence_similarity(users: np.ndarray, items: np.ndarray, size: int) -> Similarity:
    """``|U_i ∩ U_j| / sqrt(|U_i| |U_j|)`` over the distinct training rows ``(users,
    items)`` (codes; items below ``size``)."""
    rows = pd.DataFrame({"u": users, "item": items}).drop_duplicates()
    n = np.bincount(rows["item"].to_numpy(), minlength=size).astype(np.int64)

    def sim(i: np.ndarray, j: np.ndarray) -> np.ndarray:
        pairs = pd.DataFrame({"i": i, "j": j, "p": np.arange(len(i))})
        left = pairs.merge(rows.rename(columns={"item": "i"}), on="i")
        both = left.merge(rows.rename(columns={"item": "j"}), on=["u", "j"])
        co = np.bincount(both["p"].to_numpy(), minlength=len(i))
        with np.errstate(invalid="ignore", divide="ignore"):
            found = co.astype(np.float64) / np.sqrt((n[i] * n[j]).astype(np.float64))
        return np.where(co > 0, found, 0.0)

    return sim


def _sequential_sums(terms: np.ndarray) -> np.ndarray:
    """Each row's sum added left to right from 0.0 (Spark's ``aggregate``)."""
    start = np.zeros((terms.shape[0], 1))
    return np.cumsum(np.hstack([start, terms]), axis=1)[:, -1]


#: the largest norm whose product with another stays finite (sqrt of the largest double)
_LARGEST_NORM = float(np.sqrt(np.finfo(np.float64).max))


def cosine_similarity(vectors: list[np.ndarray | None]) -> Similarity:
    """``f_i · f_j / (|f_i| |f_j|)`` of the numeric vectors of the item codes (0 for a
    zero vector, or for vectors of different lengths, whose products Spark pads with
    nulls). ``vectors[c]`` is item c's (None: no features; never in a pair)."""
    lengths = np.array([-1 if v is None else len(v) for v in vectors], dtype=np.int64)
    width = max(1, int(lengths.max(initial=0)))
    matrix = np.zeros((len(vectors), width))
    for code, vector in enumerate(vectors):
        if vector is not None:
            matrix[code, : len(vector)] = vector
    norms = np.sqrt(_sequential_sums(matrix * matrix))
    if not np.all(norms < _LARGEST_NORM):
        # a product of two norms (or a dot product) would overflow to a NaN, which
        # Spark's exact means count as a value and these count as a missing one
        raise NotDirect("item feature vectors whose norms overflow a product of doubles")
    step = max(1, COSINE_CELLS // width)

    def sim(i: np.ndarray, j: np.ndarray) -> np.ndarray:
        dots = np.concatenate(
            [np.zeros(0)]
            + [
                _sequential_sums(matrix[i[a : a + step]] * matrix[j[a : a + step]])
                for a in range(0, len(i), step)
            ]
        )
        ni, nj = norms[i], norms[j]
        scored = (ni > 0) & (nj > 0) & (lengths[i] == lengths[j])
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(scored, dots / (ni * nj), 0.0)

    return sim


def jaccard_similarity(sets: list[frozenset[object] | None]) -> Similarity:
    """``|F_i ∩ F_j| / |F_i ∪ F_j|`` of the items' feature sets (0 when both are
    empty): labels, or the positions of a numeric vector's non-zero entries.

    The sets are one sparse item × label matrix of ones (labels coded by Python's own
    equality, as the sets compare them); a pair's intersection is the sum of the
    product of its two rows, its union ``|F_i| + |F_j| - |F_i ∩ F_j|``, and the share
    one double division of these exact counts, as Python's ``int / int`` rounds it.
    """
    from scipy import sparse

    codes: dict[object, int] = {}
    rows, cols = [], []
    for item, found in enumerate(sets):
        for label in found or ():
            rows.append(item)
            cols.append(codes.setdefault(label, len(codes)))
    matrix = sparse.csr_matrix(
        (np.ones(len(rows), dtype=np.int64), (rows, cols)), shape=(len(sets), max(1, len(codes)))
    )
    sizes = np.diff(matrix.indptr)
    missing = np.array([found is None for found in sets], dtype=bool)

    def sim(i: np.ndarray, j: np.ndarray) -> np.ndarray:
        i, j = np.asarray(i, dtype=np.int64), np.asarray(j, dtype=np.int64)
        assert not (missing[i].any() or missing[j].any())  # items without features left out
        if len(i) == 0:
            return np.zeros(0)
        inter = np.asarray(matrix[i].multiply(matrix[j]).sum(axis=1)).ravel().astype(np.int64)
        union = sizes[i] + sizes[j] - inter
        found = np.zeros(len(i))
        np.divide(inter, union, out=found, where=union > 0)
        return found

    return sim


def minhash_similarity(sets: list[frozenset[object] | None], hasher: MinHasher) -> Similarity:
    """The MinHash estimate of the items' Jaccard: the share of equal signature values
    (0 when either set is empty), each set's tokens ``str(item)`` as Spark hashes them
    (a vector's positions as text)."""
    tokens = [[] if found is None else sorted(map(str, found)) for found in sets]
    lengths = np.array([len(t) for t in tokens], dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    values = np.array([token for found in tokens for token in found], dtype=object)
    signatures = hasher.signatures(values, offsets).astype(np.int64)
    empty = lengths == 0
    step = max(1, COSINE_CELLS // hasher.num_perm)

    def sim(i: np.ndarray, j: np.ndarray) -> np.ndarray:
        equal = np.concatenate(
            [np.zeros(0, dtype=np.int64)]
            + [
                (signatures[i[a : a + step]] == signatures[j[a : a + step]]).sum(axis=1)
                for a in range(0, len(i), step)
            ]
        )
        return np.where(empty[i] | empty[j], 0.0, equal / float(hasher.num_perm))

    return sim


def feature_set(values: np.ndarray, numeric: bool) -> frozenset[object]:
    """The set Jaccard compares: a vector's non-zero positions, or distinct labels."""
    if numeric:
        return frozenset(np.flatnonzero(values != 0).tolist())
    return frozenset(values.tolist())


def check_cosine_features(element: str) -> None:
    """Cosine needs numbers.

    Raises:
        InputError: label features, named as on Spark.
    """
    if element in ("string", "binary", "boolean"):
        raise InputError(
            f"cosine similarity needs numeric feature vectors; the features column holds "
            f"{element} values (use --similarity jaccard for label sets)"
        )
