"""SimHash fingerprints in numpy, and the Hamming thresholds of ``near-duplicates``.

Each shingle s with weight w(s) gets a 64-bit hash h(s) = the first 8 bytes,
little-endian, of BLAKE2b(utf8(s)) with an 8-byte digest. The fingerprint's bit j is
set when the weighted vote over the document's shingles is positive:

    bit_j = 1  iff  sum_s w(s) * (+1 if bit j of h(s) is 1 else -1) > 0

(a tie is 0; a document without shingles gets fingerprint 0). Repeated shingles
vote once per occurrence unless weights are given explicitly.

Spark computes them with these functions in its Python workers
(:func:`sparkeval.lsh.simhash.fingerprint_column`), the local engine in this process:
the same fingerprints either way. No pyspark here.

Example:
    >>> fp = simhash_of([["a b", "b c"], ["a b", "b c"]])
    >>> int(fp[0]) == int(fp[1])
    True
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from sparkeval.errors import ConfigError
from sparkeval.lsh.permuted_tables import FINGERPRINT_BITS

#: tokens x 64 votes held at once while fingerprinting a batch
_CHUNK_TOKENS = 1 << 16
_BIT_SHIFTS = np.arange(FINGERPRINT_BITS, dtype=np.uint64)


def shingle_hashes(shingles: Sequence[Any] | np.ndarray) -> np.ndarray:
    """64-bit BLAKE2b hashes (uint64) of shingles; each distinct shingle hashed once.

    Example:
        >>> int(shingle_hashes(["x"])[0]) == int.from_bytes(
        ...     hashlib.blake2b(b"x", digest_size=8).digest(), "little")
        True
    """
    values = shingles if isinstance(shingles, np.ndarray) else np.asarray(shingles, dtype=object)
    if len(values) == 0:
        return np.zeros(0, dtype=np.uint64)
    codes, uniques = pd.factorize(values, use_na_sentinel=False)
    digest = b"".join(
        hashlib.blake2b(str(s).encode("utf-8"), digest_size=8).digest() for s in uniques
    )
    return np.frombuffer(digest, dtype="<u8").astype(np.uint64)[codes]


def fingerprints(
    values: np.ndarray, offsets: np.ndarray, weights: np.ndarray | None = None
) -> np.ndarray:
    """SimHash fingerprints (uint64) of documents given as flat shingles + offsets.

    Args:
        values: flat shingles of all documents.
        offsets: ``n_docs + 1`` offsets; document i is ``values[offsets[i]:offsets[i+1]]``.
        weights: optional weight per shingle (aligned with ``values``); default 1.

    Returns:
        ``(n_docs,)`` uint64 fingerprints.
    """
    offsets = np.asarray(offsets, dtype=np.int64)
    n_docs = len(offsets) - 1
    out = np.zeros(max(n_docs, 0), dtype=np.uint64)
    if n_docs <= 0 or offsets[-1] == offsets[0]:
        return out
    base = offsets[0]
    hv = shingle_hashes(values[base : offsets[-1]])
    w = None if weights is None else np.asarray(weights, dtype=np.float64)[base : offsets[-1]]
    start = 0
    while start < n_docs:
        end = int(np.searchsorted(offsets, offsets[start] + _CHUNK_TOKENS, side="right")) - 1
        end = min(max(end, start + 1), n_docs)
        lo, hi = offsets[start] - base, offsets[end] - base
        starts = offsets[start:end] - base
        nonempty = offsets[start + 1 : end + 1] - base > starts
        if hi > lo:
            bits = ((hv[lo:hi, None] >> _BIT_SHIFTS) & np.uint64(1)).astype(np.int8)
            votes: np.ndarray = (2 * bits - 1).astype(np.float64 if w is not None else np.int64)
            if w is not None:
                votes *= w[lo:hi, None]
            sums = np.add.reduceat(votes, starts[nonempty] - lo, axis=0)
            packed = np.packbits(sums > 0, axis=1, bitorder="little")
            out[start:end][nonempty] = packed.view("<u8").reshape(-1)
        start = end
    return out


def simhash_of(docs: Iterable[Iterable[Any]], weights: Iterable[Iterable[float]] | None = None):
    """Fingerprints of an iterable of shingle lists (wrapper of :func:`fingerprints`)."""
    lists = [list(d) for d in docs]
    offsets = np.concatenate([[0], np.cumsum([len(d) for d in lists], dtype=np.int64)])
    values = np.empty(int(offsets[-1]), dtype=object)
    values[:] = [s for d in lists for s in d]
    flat_w = None
    if weights is not None:
        flat_w = np.array([x for ws in weights for x in ws], dtype=np.float64)
        if len(flat_w) != len(values):
            raise ValueError("weights must align with the shingles, one weight per shingle")
    return fingerprints(values, offsets, flat_w)


def check_distance(max_distance: int) -> int:
    """Validate a Hamming distance threshold: an integer in [0, 63]."""
    if isinstance(max_distance, bool) or not isinstance(max_distance, int):
        raise ConfigError(f"Hamming distance must be an integer in [0, 63], got {max_distance!r}")
    if not 0 <= max_distance < FINGERPRINT_BITS:
        raise ConfigError(f"Hamming distance must be in [0, 63], got {max_distance}")
    return max_distance


def simhash_distance(threshold: float | int | str) -> int:
    """The Hamming distance h for a SimHash threshold (an integer h or a similarity).

    Example:
        >>> simhash_distance("3"), simhash_distance(0.95)
        (3, 3)
    """
    text = str(threshold).strip()
    try:
        value = float(text)
    except ValueError:
        raise ConfigError(
            f"--threshold for simhash must be a Hamming distance 0..63 or a similarity in "
            f"(0, 1), got {threshold!r}"
        ) from None
    if value.is_integer() and value >= 1:
        return check_distance(int(value))
    if 0.0 < value < 1.0:
        return check_distance(math.floor((1.0 - value) * FINGERPRINT_BITS + 1e-9))
    if value == 0.0:
        return 0
    raise ConfigError(
        f"--threshold for simhash must be a Hamming distance 0..63 or a similarity in (0, 1), "
        f"got {threshold!r}"
    )
