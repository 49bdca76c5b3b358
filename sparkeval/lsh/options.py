"""The MinHash LSH options that ``similar-users`` and ``near-duplicates`` share, declared once."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Self

from sparkeval.errors import ConfigError
from sparkeval.job.options import option
from sparkeval.job.spark_options import OutputJobConfig
from sparkeval.lsh.candidates import DEFAULT_MAX_BUCKET
from sparkeval.lsh.minhash import DEFAULT_SCHEME, SCHEMES


@dataclass(frozen=True, kw_only=True)
class LshConfig(OutputJobConfig):
    """Signature length, banding, seed, scheme and the hot-bucket cap of MinHash LSH."""

    num_perm: int = option(128, help="MinHash signature length (default 128)")
    bands: int | None = option(
        None, help="number of LSH bands (with --rows; default: chosen for --recall)"
    )
    rows: int | None = option(None, help="signature rows per band (with --bands)")
    recall: float = option(
        0.99,
        help="target probability that a pair exactly at the threshold becomes a candidate, "
        "used to choose bands x rows (default 0.99)",
    )
    seed: int = option(1, help="MinHash permutation seed (default 1)")
    scheme: str = option(
        DEFAULT_SCHEME,
        choices=SCHEMES,
        help="datasketch MinHash scheme (default affine32, datasketch 2.x's)",
    )
    max_bucket: int = option(
        DEFAULT_MAX_BUCKET,
        help="skip LSH buckets with more distinct sets than this, and report them "
        f"(default {DEFAULT_MAX_BUCKET}; 0 = no cap)",
    )

    def validate(self) -> Self:
        for key in ("num_perm", "bands", "rows"):
            check_positive(getattr(self, key), key)
        return self

    def lsh_values(self) -> dict[str, Any]:
        """The LSH options as keyword arguments of the search functions."""
        names = ("num_perm", "bands", "rows", "seed", "recall", "max_bucket", "scheme")
        return {name: getattr(self, name) for name in names}


def check_positive(value: int | None, key: str) -> None:
    """A count option given as 0 or less is a ConfigError naming the key."""
    if value is not None and value < 1:
        raise ConfigError(f"key '{key}': expected a whole number >= 1, got {value}")
