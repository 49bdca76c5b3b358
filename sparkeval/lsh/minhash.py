"""MinHash signatures of many sets at once, bit-identical to ``datasketch.MinHash``.

A set S gets ``num_perm`` values ``sig_k = min_{x in S} pi_k(hash(x))``; the chance
that two sets agree on one position equals their Jaccard similarity, so the share
of equal positions estimates it:

    P[sig_k(A) == sig_k(B)] = |A ∩ B| / |A ∪ B|

The permutations and the hashing follow datasketch 2.x exactly (pinned to the
``datasketch>=2,<3`` line), one of its three schemes:

* ``affine32`` (datasketch 2.x default): ``h = sha1_hash32(token)`` (first 4 bytes of
  SHA-1, little-endian), premixed by the MurmurHash3 32-bit finalizer, then
  ``pi_k(h) = a_k * h + b_k mod 2^32`` with odd ``a_k``; values are ``uint32``.
* ``affine64``: the same with ``sha1_hash64`` (8 bytes), the 64-bit finalizer and
  ``mod 2^64``; values are ``uint64``.
* ``legacy`` (datasketch < 2.0): ``h = sha1_hash32(token)``,
  ``pi_k(h) = ((a_k * h + b_k) mod 2^64 mod (2^61 - 1)) & (2^32 - 1)``; ``uint64``.

The permutation parameters are taken from datasketch itself (``MinHash(num_perm,
seed, scheme=...).permutations``); the token hashing and the permutations are then
applied to whole batches of sets with numpy, and the result is checked bit for bit
against datasketch's own ``MinHash.update`` in the tests. A token is the UTF-8
encoding of ``str(item)`` (bytes are used as given). Signatures are exchanged with
datasketch as ``LeanMinHash`` bytes (:func:`to_lean_minhash_bytes`,
:func:`from_lean_minhash_bytes`).

Empty sets: the signature is all ``max_hash`` (the scheme's largest value), as for a
``datasketch.MinHash`` that was never updated. Callers that pair sets (similar
users, near duplicates) leave empty sets out, since their Jaccard is undefined.

Example:
    >>> hasher = MinHasher(num_perm=4, seed=1)
    >>> sig = hasher.signatures_of([["a", "b"], ["a", "b"], []])
    >>> bool((sig[0] == sig[1]).all()), bool((sig[2] == hasher.max_hash).all())
    (True, True)
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from sparkeval.errors import ConfigError

#: the permutation schemes of datasketch 2.x
SCHEMES: tuple[str, ...] = ("affine32", "affine64", "legacy")
#: scheme of ``datasketch.MinHash(num_perm, seed)`` in datasketch 2.x
DEFAULT_SCHEME = "affine32"

MERSENNE_PRIME = np.uint64((1 << 61) - 1)
MAX_HASH_32 = np.uint64((1 << 32) - 1)

# MurmurHash3 finalizer constants (shifts and multipliers), per word width
_FMIX32 = (
    np.uint32(16),
    np.uint32(0x85EBCA6B),
    np.uint32(13),
    np.uint32(0xC2B2AE35),
    np.uint32(16),
)
_FMIX64 = (
    np.uint64(33),
    np.uint64(0xFF51AFD7ED558CCD),
    np.uint64(33),
    np.uint64(0xC4CEB9FE1A85EC53),
    np.uint64(33),
)

#: upper bound on (tokens x permutations) values held at once while hashing a batch
#: (small enough to stay in the CPU caches: 4x faster than 4M values)
_CHUNK_VALUES = 1 << 20


def _fmix(hv: np.ndarray, constants: tuple[Any, ...]) -> np.ndarray:
    """MurmurHash3 finalizer, element-wise; multiplication wraps (mod 2^width)."""
    s1, m1, s2, m2, s3 = constants
    hv = hv ^ (hv >> s1)
    hv = hv * m1
    hv = hv ^ (hv >> s2)
    hv = hv * m2
    return hv ^ (hv >> s3)


def _as_bytes(token: Any) -> bytes:
    if isinstance(token, bytes):
        return token
    return str(token).encode("utf-8")


def sha1_hash(tokens: Iterable[Any], width: int = 32) -> np.ndarray:
    """SHA-1 based token hashes: the first ``width/8`` digest bytes, little-endian.

    Example:
        >>> int(sha1_hash(["a"])[0]) == int.from_bytes(
        ...     hashlib.sha1(b"a").digest()[:4], "little")
        True
    """
    nbytes = width // 8
    dtype = np.dtype("<u4") if width == 32 else np.dtype("<u8")
    digest = b"".join(hashlib.sha1(_as_bytes(t)).digest()[:nbytes] for t in tokens)
    return np.frombuffer(digest, dtype=dtype).astype(np.uint32 if width == 32 else np.uint64)


@dataclass(frozen=True)
class MinHasher:
    """Vectorised MinHash over many sets, equal to ``datasketch.MinHash`` bit for bit.

    Args:
        num_perm: number of permutations (signature length), >= 1.
        seed: seed of ``numpy.random.RandomState`` that draws the permutations.
        scheme: ``affine32`` (datasketch 2.x default), ``affine64`` or ``legacy``.

    Example:
        >>> MinHasher(num_perm=8, seed=3).signatures_of([[1, 2, 3]]).shape
        (1, 8)
    """

    num_perm: int = 128
    seed: int = 1
    scheme: str = DEFAULT_SCHEME
    _a: np.ndarray = field(init=False, repr=False, compare=False)
    _b: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if isinstance(self.num_perm, bool) or not isinstance(self.num_perm, int):
            raise ConfigError(f"num_perm must be an integer, got {self.num_perm!r}")
        if not 1 <= self.num_perm <= 1 << 16:
            raise ConfigError(f"num_perm must be between 1 and 65536, got {self.num_perm}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise ConfigError(f"seed must be a non-negative integer, got {self.seed!r}")
        if self.scheme not in SCHEMES:
            raise ConfigError(
                f"MinHash scheme must be one of {', '.join(SCHEMES)}; got {self.scheme!r}"
            )
        a, b = self._permutations()
        object.__setattr__(self, "_a", a)
        object.__setattr__(self, "_b", b)

    def _permutations(self) -> tuple[np.ndarray, np.ndarray]:
        """The ``(a, b)`` arrays of ``datasketch.MinHash(num_perm, seed, scheme=...)``,
        taken from datasketch itself (its generator for this seed and length)."""
        from datasketch import MinHash

        a, b = MinHash(num_perm=self.num_perm, seed=self.seed, scheme=self.scheme).permutations
        dtype = np.uint32 if self.scheme == "affine32" else np.uint64
        return np.asarray(a, dtype=dtype).copy(), np.asarray(b, dtype=dtype).copy()

    @property
    def permutations(self) -> tuple[np.ndarray, np.ndarray]:
        """The ``(a, b)`` parameter arrays, as datasketch's ``MinHash.permutations``."""
        return self._a.copy(), self._b.copy()

    @property
    def dtype(self) -> type:
        return np.uint32 if self.scheme == "affine32" else np.uint64

    @property
    def max_hash(self) -> int:
        """The largest value of the scheme: every position of an empty set's signature."""
        return {"affine32": (1 << 32) - 1, "affine64": (1 << 64) - 1, "legacy": (1 << 32) - 1}[
            self.scheme
        ]

    def premix(self, raw: np.ndarray) -> np.ndarray:
        """The scheme's premix of raw SHA-1 token hashes (:func:`sha1_hash` values of
        the scheme's width): the MurmurHash3 finalizer for the affine schemes, none
        for ``legacy``."""
        if self.scheme == "affine32":
            return _fmix(raw.astype(np.uint32, copy=False), _FMIX32)
        if self.scheme == "affine64":
            return _fmix(raw.astype(np.uint64, copy=False), _FMIX64)
        return raw.astype(np.uint64, copy=False)

    @property
    def hash_width(self) -> int:
        """Bits of the raw SHA-1 token hash the scheme uses (32 or 64)."""
        return 64 if self.scheme == "affine64" else 32

    def hash_tokens(self, tokens: Sequence[Any] | np.ndarray) -> np.ndarray:
        """Token hashes after the scheme's premix (before the permutations).

        Each distinct token is hashed once (tokens are factorised first).
        """
        values = np.asarray(tokens, dtype=object) if not isinstance(tokens, np.ndarray) else tokens
        if len(values) == 0:
            return np.zeros(0, dtype=self.dtype)
        codes, uniques = pd.factorize(values, use_na_sentinel=False)
        return self.premix(sha1_hash(uniques, self.hash_width))[codes]

    def _permute(self, hv: np.ndarray) -> np.ndarray:
        """All permutations of a run of hashes, one row per permutation:
        shape (num_perm, len(hv)), so that the minimum over each set is a reduction
        along contiguous memory."""
        row = hv.reshape(1, -1)
        a, b = self._a.reshape(-1, 1), self._b.reshape(-1, 1)
        with np.errstate(over="ignore"):
            if self.scheme == "legacy":
                return ((a * row + b) % MERSENNE_PRIME) & MAX_HASH_32
            return a * row + b

    def signatures(self, values: np.ndarray, offsets: np.ndarray) -> np.ndarray:
        """Signatures of sets given as flat ``values`` and segment ``offsets``.

        Set i is ``values[offsets[i]:offsets[i+1]]`` (duplicates are harmless).
        Each distinct token is hashed once; see :meth:`signatures_of_hashes`.

        Args:
            values: flat array of items (any type; tokenised as ``str(item)``).
            offsets: ``n_sets + 1`` non-decreasing offsets into ``values``.

        Returns:
            ``(n_sets, num_perm)`` array of the scheme's dtype.
        """
        offsets = np.asarray(offsets, dtype=np.int64)
        if len(offsets) == 0:
            return self.signatures_of_hashes(np.zeros(0, dtype=self.dtype), offsets)
        hv = self.hash_tokens(values[offsets[0] : offsets[-1]])  # empty when no set has items
        return self.signatures_of_hashes(hv, offsets - offsets[0])

    def signatures_of_hashes(self, hv: np.ndarray, offsets: np.ndarray) -> np.ndarray:
        """Signatures of sets given as premixed token hashes (:meth:`premix`).

        Set i is ``hv[offsets[i]:offsets[i+1]]``. The permutations are applied to
        chunks of whole sets (about :data:`_CHUNK_VALUES` values at a time) and reduced
        with ``np.minimum.reduceat`` along each permutation's row.

        Example:
            >>> hasher = MinHasher(num_perm=4, seed=1)
            >>> raw = sha1_hash(["a", "b"])
            >>> sig = hasher.signatures_of_hashes(hasher.premix(raw), np.array([0, 2]))
            >>> bool((sig == hasher.signatures_of([["a", "b"]])).all())
            True
        """
        offsets = np.asarray(offsets, dtype=np.int64)
        n_sets = len(offsets) - 1
        out: np.ndarray = np.full((max(n_sets, 0), self.num_perm), self.max_hash, dtype=self.dtype)
        if n_sets <= 0 or offsets[-1] == offsets[0]:
            return out
        hv = np.asarray(hv, dtype=self.dtype)
        tokens_per_chunk = max(1, _CHUNK_VALUES // self.num_perm)
        start_set = 0
        while start_set < n_sets:
            # the largest run of whole sets whose tokens fit in one chunk (at least one set)
            limit = offsets[start_set] + tokens_per_chunk
            end_set = int(np.searchsorted(offsets, limit, side="right")) - 1
            end_set = min(max(end_set, start_set + 1), n_sets)
            lo, hi = offsets[start_set], offsets[end_set]
            starts = offsets[start_set:end_set]
            nonempty = offsets[start_set + 1 : end_set + 1] > starts
            if hi > lo:
                phv = self._permute(hv[lo:hi])
                mins = np.minimum.reduceat(phv, starts[nonempty] - lo, axis=1)
                out[start_set:end_set][nonempty] = mins.T
            start_set = end_set
        return out

    def signatures_of(self, sets: Iterable[Iterable[Any]]) -> np.ndarray:
        """Signatures of an iterable of sets (convenience wrapper of :meth:`signatures`)."""
        lists = [list(s) for s in sets]
        lengths = np.fromiter((len(s) for s in lists), dtype=np.int64, count=len(lists))
        offsets = np.concatenate([[0], np.cumsum(lengths)])
        values = np.empty(int(offsets[-1]), dtype=object)
        values[:] = [x for s in lists for x in s]
        return self.signatures(values, offsets)


def estimate_jaccard(sig_a: np.ndarray, sig_b: np.ndarray) -> np.ndarray:
    """Share of equal signature positions, row-wise (the MinHash Jaccard estimate).

    Example:
        >>> float(estimate_jaccard(np.array([[1, 2, 3, 4]]), np.array([[1, 2, 0, 0]]))[0])
        0.5
    """
    return (np.asarray(sig_a) == np.asarray(sig_b)).mean(axis=-1)


def to_lean_minhash_bytes(signatures: np.ndarray, hasher: MinHasher) -> list[bytes]:
    """Each signature row as the bytes of ``datasketch.LeanMinHash.serialize``, which
    ``LeanMinHash.deserialize`` reads back (with this hasher's seed and scheme).

    Example:
        >>> from datasketch import LeanMinHash
        >>> hasher = MinHasher(num_perm=4, seed=1)
        >>> blob = to_lean_minhash_bytes(hasher.signatures_of([["a"]]), hasher)[0]
        >>> LeanMinHash.deserialize(blob).seed
        1
    """
    from datasketch import LeanMinHash

    blobs = []
    for row in np.asarray(signatures):
        lean = LeanMinHash(seed=hasher.seed, hashvalues=row, scheme=hasher.scheme)
        buffer = bytearray(lean.bytesize())
        lean.serialize(buffer)
        blobs.append(bytes(buffer))
    return blobs


def from_lean_minhash_bytes(blobs: Iterable[bytes], hasher: MinHasher) -> np.ndarray:
    """Signatures from ``LeanMinHash`` bytes that datasketch wrote, as rows for this
    hasher; a different seed, scheme or length is an error (the values would not be
    comparable).

    Raises:
        ConfigError: a signature made with other MinHash settings.
    """
    from datasketch import LeanMinHash

    rows: list[np.ndarray] = []
    for index, blob in enumerate(blobs):
        lean = LeanMinHash.deserialize(bytearray(blob))
        scheme = getattr(lean, "scheme", DEFAULT_SCHEME)
        if (lean.seed, scheme, len(lean.hashvalues)) != (
            hasher.seed,
            hasher.scheme,
            hasher.num_perm,
        ):
            raise ConfigError(
                f"signature {index}: seed {lean.seed}, scheme {scheme}, "
                f"{len(lean.hashvalues)} permutations; expected seed {hasher.seed}, "
                f"scheme {hasher.scheme}, {hasher.num_perm} permutations"
            )
        rows.append(np.asarray(lean.hashvalues, dtype=hasher.dtype))
    return np.vstack(rows) if rows else np.zeros((0, hasher.num_perm), dtype=hasher.dtype)
