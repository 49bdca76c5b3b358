"""Choosing LSH bands and rows, and hashing signature bands into join keys.

With b bands of r rows, two sets of Jaccard s share at least one band (become a
candidate pair) with probability

    P(s) = 1 - (1 - s^r)^b          (the S-curve)

whose steepest point, the *LSH threshold*, is near (1/b)^(1/r). Candidates are
verified exactly afterwards, so the bands are chosen for recall: the LSH threshold
lies below the verification threshold T and P(T) reaches a recall target.

Example:
    >>> p = choose_bands(0.8, num_perm=128, recall=0.99)
    >>> (p.bands, p.rows), round(p.estimated_recall_at_threshold, 4)
    ((21, 6), 0.9983)
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from sparkeval.errors import ConfigError

# 64-bit mixing constants (odd multipliers of the splitmix64/xxhash family)
_PRIME_1 = np.uint64(0x9E3779B185EBCA87)
_PRIME_2 = np.uint64(0xC2B2AE3D27D4EB4F)
_MIX_1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX_2 = np.uint64(0x94D049BB133111EB)


def s_curve(similarity: float | np.ndarray, bands: int, rows: int) -> float | np.ndarray:
    """Probability that a pair of the given Jaccard shares at least one band.

    Example:
        >>> round(float(s_curve(0.8, 18, 7)), 4)
        0.9855
    """
    s = np.asarray(similarity, dtype=np.float64)
    with np.errstate(divide="ignore"):
        value = -np.expm1(bands * np.log1p(-(s**rows)))
    value = np.where(s >= 1.0, 1.0, value)
    return float(value) if np.ndim(value) == 0 else value


def lsh_threshold(bands: int, rows: int) -> float:
    """The similarity at the S-curve's steepest point, approximately (1/b)^(1/r)."""
    return (1.0 / bands) ** (1.0 / rows)


@dataclass(frozen=True)
class BandParams:
    """Chosen banding: ``bands`` x ``rows`` <= ``num_perm``, and what it promises.

    Attributes:
        bands: number of bands b.
        rows: signature rows per band r.
        num_perm: signature length the bands are cut from.
        threshold: the verification (Jaccard) threshold T.
        estimated_recall_at_threshold: P(T), the chance that a pair exactly at T is a candidate;
            pairs above T are found at least as often.
        lsh_threshold: (1/b)^(1/r), where the S-curve is steepest (below T).
        chosen: ``"auto"`` when picked for the recall target, ``"explicit"`` when given.
    """

    bands: int
    rows: int
    num_perm: int
    threshold: float
    estimated_recall_at_threshold: float
    lsh_threshold: float
    chosen: str

    def as_dict(self) -> dict[str, object]:
        """The fields by name, as a summary reports them."""
        return dataclasses.asdict(self)


def check_threshold(threshold: float | str, name: str = "threshold") -> float:
    """Validate a similarity threshold in (0, 1]."""
    if isinstance(threshold, bool):
        raise ConfigError(f"{name} must be a number in (0, 1], got {threshold!r}")
    try:
        value = float(threshold)
    except (TypeError, ValueError):
        raise ConfigError(f"{name} must be a number in (0, 1], got {threshold!r}") from None
    if not (0.0 < value <= 1.0) or math.isnan(value):
        raise ConfigError(f"{name} must be in (0, 1] (a Jaccard similarity), got {threshold!r}")
    return value


def choose_bands(
    threshold: float | str,
    num_perm: int = 128,
    recall: float = 0.99,
    bands: int | None = None,
    rows: int | None = None,
) -> BandParams:
    """Pick b x r for a verification threshold and a recall target, or check given ones.

    Automatic choice: among all (b, r) with b*r <= num_perm and P(T) >= recall, the
    one with the least expected candidate mass below T (the integral of P(s) over
    [0, T)), i.e. the fewest wasted verifications. If no pair reaches the target
    the one with the highest P(T) is taken (``estimated_recall_at_threshold`` says so).

    Args:
        threshold: verification Jaccard threshold T in (0, 1].
        num_perm: signature length.
        recall: target for P(T), in (0, 1).
        bands: explicit number of bands (needs ``rows`` too).
        rows: explicit rows per band (needs ``bands`` too).

    Raises:
        ConfigError: a value out of range, only one of bands/rows, or b*r > num_perm.
    """
    t = check_threshold(threshold)
    if isinstance(num_perm, bool) or not isinstance(num_perm, int) or num_perm < 1:
        raise ConfigError(f"num_perm must be a positive integer, got {num_perm!r}")
    if (bands is None) != (rows is None):
        raise ConfigError("--bands and --rows go together: give both or neither")
    if bands is not None and rows is not None:
        for name, value in (("bands", bands), ("rows", rows)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ConfigError(f"{name} must be a positive integer, got {value!r}")
        if bands * rows > num_perm:
            raise ConfigError(
                f"bands x rows = {bands} x {rows} = {bands * rows} exceeds num_perm = "
                f"{num_perm}; lower them or raise --num-perm"
            )
        return BandParams(
            bands,
            rows,
            num_perm,
            t,
            float(s_curve(t, bands, rows)),
            lsh_threshold(bands, rows),
            "explicit",
        )
    if isinstance(recall, bool) or not (0.0 < float(recall) < 1.0):
        raise ConfigError(f"recall target must be in (0, 1), got {recall!r}")
    grid = np.linspace(0.0, t, 201)[:-1]
    best: tuple[float, float, int, int] | None = None  # (waste, -P(T), b, r)
    fallback: tuple[float, int, int] | None = None
    for r in range(1, num_perm + 1):
        b = num_perm // r
        p_t = float(s_curve(t, b, r))
        if fallback is None or p_t > fallback[0]:
            fallback = (p_t, b, r)
        if p_t < recall:
            continue
        waste = float(np.mean(s_curve(grid, b, r))) * t
        key = (waste, -p_t, b, r)
        if best is None or key < best:
            best = key
    if best is not None:
        b, r = best[2], best[3]
    elif fallback is not None:
        b, r = fallback[1], fallback[2]
    else:
        b, r = num_perm, 1
    return BandParams(b, r, num_perm, t, float(s_curve(t, b, r)), lsh_threshold(b, r), "auto")


def band_keys(signatures: np.ndarray, bands: int, rows: int) -> np.ndarray:
    """64-bit keys of the signature bands: ``(n_sets, bands)`` int64.

    Band j covers signature positions ``[j*rows, (j+1)*rows)``; its r values are
    folded into one 64-bit word by multiply-xor rounds and a final avalanche. Equal
    bands give equal keys; different bands collide with probability ~2^-64 (and a
    collision only adds a candidate, which exact verification then rejects).

    Example:
        >>> sig = np.array([[1, 2, 3, 4], [1, 2, 9, 9]], dtype=np.uint32)
        >>> k = band_keys(sig, bands=2, rows=2)
        >>> bool(k[0, 0] == k[1, 0]), bool(k[0, 1] == k[1, 1])
        (True, False)
    """
    if bands * rows > signatures.shape[1]:
        raise ConfigError(
            f"bands x rows = {bands * rows} exceeds the signature length {signatures.shape[1]}"
        )
    sig = signatures.astype(np.uint64, copy=False)
    n = sig.shape[0]
    keys = np.empty((n, bands), dtype=np.uint64)
    with np.errstate(over="ignore"):
        for j in range(bands):
            h = np.full(n, np.uint64(rows) * _PRIME_2, dtype=np.uint64)
            for i in range(j * rows, (j + 1) * rows):
                h = (h ^ sig[:, i]) * _PRIME_1
                h = h ^ (h >> np.uint64(29))
            h = (h ^ (h >> np.uint64(30))) * _MIX_1
            h = (h ^ (h >> np.uint64(27))) * _MIX_2
            keys[:, j] = h ^ (h >> np.uint64(31))
    return keys.view(np.int64)
