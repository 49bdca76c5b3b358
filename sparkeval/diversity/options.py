"""The config of ``sparkeval diversity`` (:class:`DiversityConfig`), checked before Spark
starts; read by the job body (:func:`sparkeval.diversity.job.run_diversity`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Self

from sparkeval.diversity.definitions import (
    DEFAULT_EXACT_PAIR_LIMIT,
    DEFAULT_SAMPLE_PAIRS,
    SIMILARITIES,
)
from sparkeval.errors import ConfigError
from sparkeval.job.engine_choice import ENGINE_HELP, ENGINES
from sparkeval.job.options import check_positive, check_seed, input_path, option
from sparkeval.job.spark_options import RunListsConfig


@dataclass(frozen=True, kw_only=True)
class DiversityConfig(RunListsConfig):
    """The lists, optional training data and item features, and the sampling settings."""

    train: str | None = input_path("training interactions (user, item)", None)
    item_features: str | None = input_path("item features (item, features)", None)
    similarity: str | None = option(
        None,
        choices=SIMILARITIES,
        help="item similarity for intra-list diversity and serendipity "
        "(default: cosine with --item-features, else cooccurrence with --train)",
    )
    k: int | None = option(
        None, help="use each user's top K items (also the L of inter-user diversity)"
    )
    exact_pair_limit: int = option(
        DEFAULT_EXACT_PAIR_LIMIT,
        help="mean user Jaccard is exact up to this many co-occurring pairs, "
        f"sampled above (default {DEFAULT_EXACT_PAIR_LIMIT})",
    )
    sample_pairs: int = option(
        DEFAULT_SAMPLE_PAIRS, help=f"user pairs sampled otherwise (default {DEFAULT_SAMPLE_PAIRS})"
    )
    seed: int = option(1, help="sampling/MinHash seed (default 1)")
    engine: str = option("auto", choices=ENGINES, help=ENGINE_HELP)

    def validate(self) -> Self:
        check_positive(self.k, "k")
        check_positive(self.sample_pairs, "sample_pairs")
        check_seed(self.seed)
        if self.similarity == "cooccurrence" and not self.train:
            raise ConfigError("--similarity cooccurrence needs --train")
        if self.similarity in ("cosine", "jaccard", "minhash") and not self.item_features:
            raise ConfigError(f"--similarity {self.similarity} needs --item-features")
        return self

    def input_paths(self) -> list[str]:
        return [p for p in (self.run, self.train, self.item_features) if p]

    def requires_score(self) -> bool:
        return self.k is not None

    def dry_run_checks(self) -> list[str]:
        """The run's, the training data's and the item features' columns resolved as
        the real read resolves them (the features an array)."""
        from sparkeval.io.columns import FEATURE_ALIASES, TRAIN_ALIASES
        from sparkeval.job.dry_run import check_list_table, input_schema

        lines = super().dry_run_checks()
        if self.train:
            train = input_schema(self.train)
            lines.append(check_list_table(train, TRAIN_ALIASES, ("query_id", "doc_id")))
        if self.item_features:
            features = input_schema(self.item_features)
            lines.append(
                check_list_table(
                    features, FEATURE_ALIASES, ("doc_id", "features"), arrays=("features",)
                )
            )
        return lines
