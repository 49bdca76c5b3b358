"""``sparkeval diversity``: beyond-accuracy measures of a run's recommendation lists.

Measures: inter-user Hamming diversity (exact, mean and per user), mean pairwise
user Jaccard (exact or sampled with CI and bounds), intra-list diversity (item
similarity from ``--item-features`` or co-occurrence in ``--train``), catalog and
distributional coverage, Gini of exposure, novelty and serendipity
(:mod:`sparkeval.diversity.job`), of each run of ``--run`` (a ``run_id`` column;
``--run-id`` picks one). Outputs in ``--out``: ``per_user.parquet`` (``run_id,
query_id, ...``, by run and user) and ``summary.json`` (each run's under ``runs``).

Example::

    sparkeval diversity --run reco.parquet --train train.parquet --k 10 --out div/
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Self, TextIO

from sparkeval.diversity.inter_user import DEFAULT_EXACT_PAIR_LIMIT, DEFAULT_SAMPLE_PAIRS
from sparkeval.diversity.intra_list import SIMILARITIES
from sparkeval.errors import ConfigError
from sparkeval.job.command import Command, spark_job
from sparkeval.job.options import input_path, option
from sparkeval.job.spark_options import RunListsConfig
from sparkeval.lsh.options import check_positive, check_seed
from sparkeval.output import shown_path


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


def show(summary: dict[str, Any], config: DiversityConfig, stdout: TextIO) -> None:
    """A line of headline values per run, then what could not be computed and why."""
    runs = summary["runs"]
    several = len(runs) > 1
    if several:
        print(f"diversity: {len(runs)} runs; wrote {shown_path(config.out)}", file=stdout)
    for run_id, block in runs.items():
        inter = block["inter_user"]
        values = (
            f"{inter['users']} users, inter-user diversity "
            f"{inter['inter_user_diversity']:.6f}, distributional coverage "
            f"{block['coverage']['distributional_coverage']:.6f} bits"
        )
        wrote = shown_path(config.out)
        line = f"  run {run_id}: {values}" if several else f"diversity: {values}; wrote {wrote}"
        print(line, file=stdout)
        missing = block.get("items_without_features", {})
        if missing.get("rows"):
            print(
                f"diversity: warning: {f'run {run_id}: ' if several else ''}"
                f"{missing['items']} recommended items ({missing['rows']} rows) have no "
                f"--item-features row (e.g. {', '.join(missing['examples'])}): left out of "
                "intra-list diversity and serendipity",
                file=stdout,
            )
    # what was skipped depends on the inputs, the same for every run
    for name, why in next(iter(runs.values()))["skipped"].items():
        print(f"diversity: {name} not computed: {why}", file=stdout)


COMMAND = Command(
    name="diversity",
    help="inter-user and intra-list diversity, coverage, Gini, novelty, serendipity",
    description="Beyond-accuracy measures of the recommendation lists of each run of "
    "--run (or of --run-id's). Writes OUT/per_user.parquet (per run and user) and "
    "OUT/summary.json (per run).",
    config=DiversityConfig,
    run=spark_job("sparkeval.diversity.job:run_diversity"),
    show=show,
)
