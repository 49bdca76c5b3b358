"""``sparkeval diversity``: beyond-accuracy measures of a run's recommendation lists.

Measures: inter-user Hamming diversity (exact, mean and per user), mean pairwise
user Jaccard (exact or sampled with CI and bounds), intra-list diversity (item
similarity from ``--item-features`` or co-occurrence in ``--train``), catalog and
distributional coverage, Gini of exposure, novelty and serendipity
(:mod:`sparkeval.diversity.job`), of each run of ``--run`` (a ``run_id`` column;
``--run-id`` picks one). Outputs in ``--out``: ``per_user.parquet`` (``run_id,
query_id, ...``, by run and user) and ``summary.json`` (each run's under ``runs``).

Small local inputs (a Parquet, TREC, CSV or TSV run; Parquet training rows and item
features) are measured in this process, without a JVM (the local
engine, :mod:`sparkeval.diversity.local_job`; ``--engine`` chooses): the same files
and lines as on Spark.

Example::

    sparkeval diversity --run reco.parquet --train train.parquet --k 10 --out div/
"""

from __future__ import annotations

from typing import Any, TextIO

from sparkeval.diversity.options import DiversityConfig
from sparkeval.job.command import Command, LocalEngine, spark_job
from sparkeval.job.engine_choice import run_here_or_on_spark, runs_locally
from sparkeval.output import shown_path


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


def needs_spark(config: DiversityConfig) -> str | None:
    """Why ``config`` needs Spark whatever the size of its inputs, or None: what the
    local engine (:mod:`sparkeval.diversity.local_job`) does not do."""
    from sparkeval.io.readers import detect_format, is_catalog_table
    from sparkeval.storage.uris import is_remote

    paths = config.input_paths()
    if any(is_catalog_table(path) for path in paths):
        return "catalog tables are read through Spark"
    if any(is_remote(path) for path in paths):
        return "remote inputs are read through Spark"
    if detect_format(config.run, None) == "jsonl":
        return "diversity reads a run as Parquet, TREC, CSV or TSV without Spark, not JSON Lines"
    if config.train and detect_format(config.train, None) not in ("parquet", "csv", "tsv"):
        return "diversity reads --train as Parquet, CSV or TSV without Spark"
    if config.item_features and detect_format(config.item_features, None) != "parquet":
        return "diversity reads --item-features only as Parquet without Spark"
    return None


def run_locally(config: DiversityConfig) -> dict[str, Any] | None:
    """The job in this process (:func:`sparkeval.diversity.local_job.run_diversity_locally`);
    None sends an ``auto`` run to Spark when an input needs Spark's readers."""
    from sparkeval.diversity.local_job import run_diversity_locally

    return run_here_or_on_spark(config, run_diversity_locally)


COMMAND = Command(
    name="diversity",
    help="inter-user and intra-list diversity, coverage, Gini, novelty, serendipity",
    description="Beyond-accuracy measures of the recommendation lists of each run of "
    "--run (or of --run-id's). Writes OUT/per_user.parquet (per run and user) and "
    "OUT/summary.json (per run).",
    config=DiversityConfig,
    run=spark_job("sparkeval.diversity.job:run_diversity"),
    show=show,
    local=LocalEngine(lambda config: runs_locally(config, needs_spark), run_locally),
)
