"""The MinHash LSH options that ``similar-users`` and ``near-duplicates`` share, declared once,
and each command's config (:class:`SimilarUsersConfig`, :class:`NearDuplicatesConfig`),
which its job body reads.

:class:`LshOptions` is both a part of those commands' configs and the settings object
the search functions take (``find_similar_users(run, 0.8, lsh=LshOptions(num_perm=256))``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Self

from sparkeval.job.engine_choice import ENGINE_HELP, ENGINES
from sparkeval.job.options import check_positive, check_seed, input_path, option
from sparkeval.job.spark_options import OutputJobConfig, RunListsConfig
from sparkeval.lsh.minhash import DEFAULT_SCHEME, SCHEMES, MinHasher
from sparkeval.lsh.search_stats import DEFAULT_MAX_BUCKET
from sparkeval.lsh.text_units import SHINGLE_KINDS

if TYPE_CHECKING:
    from sparkeval.lsh.banding import BandParams


__all__ = ["check_positive", "check_seed"]

METHODS: tuple[str, ...] = ("minhash", "simhash")


@dataclass(frozen=True, kw_only=True)
class LshOptions:
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

    def check_lsh(self) -> Self:
        """The counts are whole numbers >= 1 and the bucket cap one
        :func:`~sparkeval.lsh.candidates.check_max_bucket` takes (a ConfigError naming
        the key otherwise), checked before Spark starts."""
        from sparkeval.lsh.search_stats import check_max_bucket

        for key in ("num_perm", "bands", "rows"):
            check_positive(getattr(self, key), key)
        check_seed(self.seed)
        check_max_bucket(self.max_bucket)
        return self

    def banding(self, threshold: float | str) -> BandParams:
        """Bands x rows for ``threshold``: the given ones, else chosen for ``recall``."""
        from sparkeval.lsh.banding import choose_bands

        return choose_bands(
            threshold, num_perm=self.num_perm, recall=self.recall, bands=self.bands, rows=self.rows
        )

    def hasher(self) -> MinHasher:
        """The MinHash signature function of these options."""
        return MinHasher(num_perm=self.num_perm, seed=self.seed, scheme=self.scheme)

    def signature(self) -> dict[str, Any]:
        """The signature's settings as a summary reports them."""
        return {"num_perm": self.num_perm, "seed": self.seed, "scheme": self.scheme}


#: the defaults of every option (the search functions' default settings)
DEFAULT_LSH = LshOptions()


@dataclass(frozen=True, kw_only=True)
class NearDuplicatesConfig(LshOptions, OutputJobConfig):
    """A docs table, the method and its threshold, shingling, plus the LSH options."""

    docs: str = input_path("docs table: doc_id and text, or doc_id and tokens [+ weights]")
    method: str = option(
        "minhash",
        choices=METHODS,
        help="minhash (Jaccard of shingle sets, default) or simhash (64-bit Hamming)",
    )
    threshold: str | float = option(
        help="minhash: Jaccard in (0, 1]; simhash: Hamming distance 0..63 or a similarity in (0, 1)"
    )
    shingle: str = option(
        "word", choices=SHINGLE_KINDS, help="shingle unit for text (default word)"
    )
    k: int = option(3, help="units per shingle (default 3)")
    engine: str = option("auto", choices=ENGINES, help=ENGINE_HELP)

    def validate(self) -> Self:
        check_positive(self.k, "k")
        return self.check_lsh()

    def input_paths(self) -> list[str]:
        return [self.docs]


@dataclass(frozen=True, kw_only=True)
class SimilarUsersConfig(LshOptions, RunListsConfig):
    """A run, the Jaccard threshold and the list cutoff, plus the LSH options."""

    threshold: str | float = option(help="Jaccard threshold in (0, 1]")
    k: int | None = option(None, help="use each user's top K items by score (default: whole list)")
    engine: str = option("auto", choices=ENGINES, help=ENGINE_HELP)

    def validate(self) -> Self:
        check_positive(self.k, "k")
        return self.check_lsh()
