"""Spark side of ``sparkeval compare``: paired deltas, statistics, rank distances, exposure.

Inputs:

* a **per-query table** ``run_id, query_id, measure, value`` (``value`` null where
  the measure is undefined), as ``sparkeval evaluate`` writes it;
* optionally a **run table** ``run_id, query_id, doc_id, score`` for rank distances
  between each run and the baseline and for item-exposure distributions.

Scale and memory. The per-query table may hold millions of rows; it stays in Spark
until it is reduced to one row per (run, measure). Pairing is a join on
``(run_id, query_id, measure)`` after the baseline's rows are crossed with the
short list of compared runs (a broadcast of run ids, never of data). The
statistics need the whole vector of paired differences of one (run, measure), so
they run in ``groupBy("run_id", "measure").applyInPandas``: one Python call per
(run, measure), holding that pair's ``n`` paired queries (about 40 bytes each, so
1M queries ≈ 40 MB) plus resampling blocks capped at 4M float64 cells
(:data:`sparkeval.compare.stats._BLOCK_CELLS`, about 32 MB each, a few alive at
once). Only the (run, measure) summary rows and a bounded sample for the plots
reach the driver.

Rank distances need both rankings of a query: rows of both runs, capped at
``depth`` per query, are grouped by ``(run_id, hash(query_id) % B)`` so that one
Python call handles many queries; the per-query work is O(depth²) (Kendall τ).
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import pyarrow as pa

from sparkeval.compare.rank_distance import DISTANCE_FIELDS, rank_distances
from sparkeval.compare.stats import (
    bootstrap_ci,
    holm,
    paired_ttest,
    randomization_test,
    wins_ties_losses,
)
from sparkeval.engine.plans.exact import ExactTotal, exact_totals
from sparkeval.engine.worker.exact_summary import mean_interval
from sparkeval.errors import ConfigError, InputError
from sparkeval.formats import BAD
from sparkeval.information import plogp_terms, plogratio_terms
from sparkeval.spark import spark_type, to_pandas
from sparkeval.spark_order import with_rank
from sparkeval.storage import files
from sparkeval.storage.uris import is_remote, join

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

PER_QUERY_COLUMNS: tuple[str, ...] = ("run_id", "query_id", "measure", "value")
RUN_COLUMNS: tuple[str, ...] = ("run_id", "query_id", "doc_id", "score")

#: a query scored by both the run and the baseline, with defined values on both sides
PAIRED = "paired"
#: the query appears for the run but not for the baseline
RUN_ONLY = "run_only"
#: the query appears for the baseline but not for the run
BASELINE_ONLY = "baseline_only"
#: the query appears on both sides but the value is null on at least one
UNDEFINED = "undefined"
STATUSES: tuple[str, ...] = (PAIRED, RUN_ONLY, BASELINE_ONLY, UNDEFINED)

#: columns of comparison.parquet, in order
COMPARISON_COLUMNS: tuple[str, ...] = (
    "run_id",
    "baseline",
    "measure",
    "mean",
    "baseline_mean",
    "delta",
    "p_ttest",
    "p_randomization",
    "ci_low",
    "ci_high",
    "wins",
    "ties",
    "losses",
    "p_ttest_holm",
    "p_randomization_holm",
    "n_queries",
    "n_run_only",
    "n_baseline_only",
    "n_undefined",
    "randomization_exact",
    "higher_is_better",
)
#: the columns of comparison.parquet that are not doubles: names, counts and flags
_NOT_FLOAT = {"run_id", "baseline", "measure", "randomization_exact", "higher_is_better"}
#: the double columns of comparison.parquet (means, deltas, p-values, CI bounds)
FLOAT_COLUMNS: tuple[str, ...] = tuple(
    c
    for c in COMPARISON_COLUMNS
    if c not in _NOT_FLOAT and c not in ("wins", "ties", "losses") and not c.startswith("n_")
)

#: rows of per-query values/deltas at most pulled to the driver for the plots
PLOT_MAX_ROWS = 200_000

_STATS_SCHEMA = (
    "run_id string, measure string, mean double, baseline_mean double, delta double, "
    "p_ttest double, p_randomization double, randomization_exact boolean, "
    "ci_low double, ci_high double, wins long, ties long, losses long, n_queries long"
)


#: the largest ``--k`` and ``--depth``: Spark compares ranks as 64-bit integers
MAX_RANK = 2**63 - 1


@dataclass(frozen=True)
class CompareOptions:
    """Settings of one comparison.

    Attributes:
        baseline: run id every other run is compared with.
        measures: canonical measure names to compare; ``None`` = all in the table.
        runs: run ids to compare with the baseline; ``None`` = all others.
        permutations: sign vectors of the randomization test (exact when ``2**n`` fit).
        bootstrap: bootstrap resamples of the confidence interval.
        seed: seed of both resampling generators (the same for every run × measure).
        alpha: 1 - confidence level of the interval; significance level of the marks.
        k: depth of Jaccard@k and of the top-k exposure distributions.
        rbo_p: persistence of RBO_ext.
        depth: rankings are cut to this many docs before rank distances.
    """

    baseline: str
    measures: tuple[str, ...] | None = None
    runs: tuple[str, ...] | None = None
    permutations: int = 10_000
    bootstrap: int = 10_000
    seed: int = 0
    alpha: float = 0.05
    k: int = 10
    rbo_p: float = 0.9
    depth: int = 100

    def __post_init__(self) -> None:
        if self.permutations < 1:
            raise ConfigError(f"--permutations must be >= 1, got {self.permutations}")
        if self.bootstrap < 1:
            raise ConfigError(f"--bootstrap must be >= 1, got {self.bootstrap}")
        if not 0.0 < self.alpha < 1.0:
            raise ConfigError(f"--alpha must lie in (0, 1), got {self.alpha}")
        if not 0 <= self.seed < 2**63:
            raise ConfigError(f"--seed must be a whole number from 0 to 2^63-1, got {self.seed}")
        if self.k < 1:
            raise ConfigError(f"--k must be >= 1, got {self.k}")
        if not 0.0 < self.rbo_p < 1.0:
            raise ConfigError(f"--rbo-p must lie in (0, 1), got {self.rbo_p}")
        if self.depth < 1:
            raise ConfigError(f"--depth must be >= 1, got {self.depth}")
        for flag, value in (("--k", self.k), ("--depth", self.depth)):
            if value > MAX_RANK:  # ranks are compared as 64-bit integers in Spark
                raise ConfigError(f"{flag} must be <= 2^63-1, got {value}")


@dataclass
class ComparisonResult:
    """Everything a comparison produced; ``deltas`` and ``rank_distance`` stay in Spark."""

    options: CompareOptions
    runs: list[str]
    measures: list[str]
    comparison: pd.DataFrame
    deltas: Any
    run_summary: dict[str, Any]
    rank_distance: Any = None
    rank_distance_summary: dict[str, Any] | None = None
    exposure: dict[str, Any] | None = None
    plot_values: pd.DataFrame | None = None
    plot_deltas: pd.DataFrame | None = None
    plot_sampled: bool = False
    notes: list[str] = field(default_factory=list)

    def run_means(self) -> dict[str, dict[str, float]]:
        """run → measure → the run's own mean over its defined queries."""
        return {
            run: {m: v["mean"] for m, v in info["measures"].items()}
            for run, info in self.run_summary.items()
        }


# ----------------------------------------------------------------------------- names


def canonical_measure(name: str) -> str:
    """The canonical spelling of a measure name; names the registry lacks stay as given."""
    from sparkeval.measures.names import parse_measure

    try:
        return parse_measure(name).name
    except ValueError:
        return name.strip()


def higher_is_better(name: str) -> bool:
    """Direction of a measure from the registry; unknown names count as higher-is-better."""
    from sparkeval.measures.names import parse_measure

    try:
        return bool(parse_measure(name).spec.higher_is_better)
    except ValueError:
        return True


def direction_known(name: str) -> bool:
    from sparkeval.measures.names import parse_measure

    try:
        parse_measure(name)
    except ValueError:
        return False
    return True


# ----------------------------------------------------------------------------- reading


def resolve_per_query_path(path: str | os.PathLike[str]) -> Path | str:
    """``path`` itself, or ``path/per_query.parquet`` when ``path`` is an evaluate output
    (a local path or a URI of a store)."""
    if is_remote(path):
        uri = os.fspath(path)
        inner = join(uri, "per_query.parquet")
        if files.kind(inner) is not None:
            return inner
        if files.kind(uri) is None:
            raise InputError(f"per-query table {path} does not exist")
        return uri
    p = Path(path)
    if (p / "per_query.parquet").exists():
        return p / "per_query.parquet"
    if not p.exists():
        raise InputError(f"per-query table {path} does not exist")
    return p


def read_per_query(spark: SparkSession, path: str | os.PathLike[str]) -> Any:
    """Read and type-check a per-query Parquet table (file, directory or evaluate output)."""
    from sparkeval.io.readers import read_table

    source = resolve_per_query_path(path)
    return check_per_query(read_table(spark, str(source), "parquet"), str(source))


def check_per_query(df: DataFrame, where: str = "per-query table") -> Any:
    """Require the per-query columns and cast them to their declared types."""
    from pyspark.sql import functions as F

    from sparkeval.errors import marked_message
    from sparkeval.io.readers import check_id_types

    missing = [c for c in PER_QUERY_COLUMNS if c not in df.columns]
    if missing:
        raise InputError(
            f"{where}: missing column(s) {', '.join(missing)}; expected "
            f"{', '.join(PER_QUERY_COLUMNS)} (found {', '.join(df.columns)})"
        )
    check_id_types(df, ["run_id", "query_id"], where)
    value = F.col("value").cast(spark_type("double"))
    message = F.concat(
        F.lit(f"{where}: run "),
        F.col("run_id").cast(spark_type("string")),
        F.lit(" query "),
        F.col("query_id").cast(spark_type("string")),
        F.lit(" measure "),
        F.col("measure").cast(spark_type("string")),
        F.lit(": value "),
        value.cast(spark_type("string")),
        F.lit(" is not a finite number (leave an undefined value out, or null)"),
    )
    not_finite = F.isnan(value) | (F.abs(value) == F.lit(float("inf")))
    return df.select(
        F.col("run_id").cast(spark_type("string")),
        F.col("query_id").cast(spark_type("string")),
        F.col("measure").cast(spark_type("string")),
        F.when(not_finite, F.raise_error(marked_message(message))).otherwise(value).alias("value"),
    )


def read_runs(spark: SparkSession, paths: Sequence[str]) -> tuple[Any, list[str]]:
    """Read runs in any input format (TREC text, Parquet, CSV, JSON Lines): the rows
    ``run_id, query_id, doc_id, score`` and their run ids, sorted (as the readers
    found them: no job of their own).

    The readers of :mod:`sparkeval.io` do the parsing; a row they could not parse
    is an error naming the file and line.
    """
    from pyspark.sql import functions as F

    from sparkeval.engine.worker.assemble import missing_score_message
    from sparkeval.io import read_runs as read_run_inputs
    from sparkeval.io.locate import with_line_number

    df, run_ids = read_run_inputs(spark, list(paths))
    # one job finds both kinds of bad row; a row the readers could not parse comes first
    unscored = F.col("score").isNull() | F.isnan("score")
    found = (
        df.where(F.col(BAD).isNotNull() | unscored)
        .agg(
            F.first(BAD, ignorenulls=True).alias("bad"),
            F.first(
                F.when(F.col(BAD).isNull(), F.struct("run_id", "query_id", "doc_id")),
                ignorenulls=True,
            ).alias("unscored"),
        )
        .first()
    )
    if found is not None and found["bad"] is not None:
        raise InputError(with_line_number(found["bad"]))
    if found is not None and found["unscored"] is not None:
        raise InputError(missing_score_message(*found["unscored"]))
    return df.drop(BAD), sorted(run_ids)


# ----------------------------------------------------------------------------- pairing


def _check_duplicates(df: DataFrame, keys: Sequence[str], what: str) -> None:
    from pyspark.sql import functions as F

    dup = df.groupBy(*keys).count().filter(F.col("count") > 1).limit(5).collect()
    if dup:
        raise duplicate_error(dup, keys, what)


def duplicate_error(rows: Sequence[Any], keys: Sequence[str], what: str) -> InputError:
    """The error naming (at most five of) the keys that ``rows`` hold more than once."""
    shown = "; ".join(", ".join(f"{k}={row[k]}" for k in keys) for row in rows[:5])
    return InputError(f"{what}: duplicate rows for the same key ({shown})")


def natural_order(name: str) -> tuple:
    """Sort key reading the numbers in a measure name as numbers: P@10 < P@15 < P@100."""
    import re

    return tuple(
        (0, int(part), "") if part.isdigit() else (1, 0, part)
        for part in re.split(r"(\d+)", name)
        if part
    )


def select_runs_and_measures(
    per_query: Any, options: CompareOptions
) -> tuple[list[str], list[str]]:
    """Validate the baseline, runs and measures against the table; return (runs, measures)."""
    # the table's (run, measure) pairs are few: one job finds both lists
    pairs = per_query.select("run_id", "measure").distinct().collect()
    return choose_runs_and_measures([(row[0], row[1]) for row in pairs], options)


def choose_runs_and_measures(
    pairs: Sequence[tuple[str, str]], options: CompareOptions
) -> tuple[list[str], list[str]]:
    """The runs and measures to compare, checked against the table's distinct
    ``(run_id, measure)`` pairs (:func:`select_runs_and_measures`)."""
    present_runs = sorted({row[0] for row in pairs})
    if options.baseline not in present_runs:
        raise ConfigError(
            f"baseline run {options.baseline!r} is not in the per-query table; runs: "
            + ", ".join(present_runs)
        )
    if options.runs:
        unknown = sorted(set(options.runs) - set(present_runs))
        if unknown:
            raise ConfigError(
                f"run(s) {', '.join(unknown)} not in the per-query table; runs: "
                + ", ".join(present_runs)
            )
        runs = [r for r in dict.fromkeys(options.runs) if r != options.baseline]
    else:
        runs = [r for r in present_runs if r != options.baseline]
    if not runs:
        raise ConfigError(
            f"nothing to compare: the per-query table holds only the baseline {options.baseline!r}"
        )
    present = sorted({row[1] for row in pairs}, key=natural_order)
    if options.measures:
        by_canon = {canonical_measure(m): m for m in present}
        measures = []
        for name in options.measures:
            canon = canonical_measure(name)
            if canon in by_canon:
                measures.append(by_canon[canon])
            elif name in present:
                measures.append(name)
            else:
                raise ConfigError(
                    f"measure {name!r} is not in the per-query table; measures: "
                    + ", ".join(present)
                )
        measures = list(dict.fromkeys(measures))
    else:
        measures = present
    if not measures:
        raise InputError("the per-query table holds no measures")
    return runs, measures


def paired_deltas(
    spark: SparkSession, per_query: Any, baseline: str, runs: Sequence[str], measures: Sequence[str]
) -> Any:
    """One row per (run, query, measure) on either side, paired with the baseline.

    Columns: ``run_id, baseline, query_id, measure, value, baseline_value, delta,
    status`` with ``delta = value - baseline_value`` (null unless ``status`` is
    ``paired``) and ``status`` one of :data:`STATUSES`. A query present on one side
    only keeps its row with the other side null, so nothing is dropped silently.
    """
    from pyspark.sql import functions as F

    pq = per_query.filter(F.col("measure").isin(list(measures)))
    base = pq.filter(F.col("run_id") == baseline).select(
        "query_id",
        "measure",
        F.col("value").alias("baseline_value"),
        F.lit(True).alias("_in_base"),
    )
    run_ids = spark.createDataFrame([(r,) for r in runs], "run_id string")
    base_x = base.crossJoin(F.broadcast(run_ids))
    others = pq.filter(F.col("run_id").isin(list(runs))).withColumn("_in_run", F.lit(True))
    joined = others.join(base_x, on=["run_id", "query_id", "measure"], how="full_outer")
    in_run = F.coalesce(F.col("_in_run"), F.lit(False))
    in_base = F.coalesce(F.col("_in_base"), F.lit(False))
    status = (
        F.when(~in_base, F.lit(RUN_ONLY))
        .when(~in_run, F.lit(BASELINE_ONLY))
        .when(F.col("value").isNull() | F.col("baseline_value").isNull(), F.lit(UNDEFINED))
        .otherwise(F.lit(PAIRED))
    )
    return joined.select(
        "run_id",
        F.lit(baseline).alias("baseline"),
        "query_id",
        "measure",
        "value",
        "baseline_value",
        F.when(status == PAIRED, F.col("value") - F.col("baseline_value")).alias("delta"),
        status.alias("status"),
    )


# ----------------------------------------------------------------------------- statistics


def pair_statistics(
    diffs: np.ndarray,
    values: np.ndarray,
    baseline_values: np.ndarray,
    options: CompareOptions,
    higher: bool,
) -> dict[str, Any]:
    """All statistics of one (run, measure) from its paired per-query values."""
    n = int(diffs.size)
    _, p_t = paired_ttest(diffs)
    rnd = randomization_test(diffs, options.permutations, options.seed)
    low, high = bootstrap_ci(diffs, options.bootstrap, options.alpha, options.seed)
    wins, ties, losses = wins_ties_losses(diffs, higher)
    return {
        "mean": float(values.mean()) if n else math.nan,
        "baseline_mean": float(baseline_values.mean()) if n else math.nan,
        "delta": float(diffs.mean()) if n else math.nan,
        "p_ttest": p_t,
        "p_randomization": rnd.p_value,
        "randomization_exact": rnd.exact,
        "ci_low": low,
        "ci_high": high,
        "wins": wins,
        "ties": ties,
        "losses": losses,
        "n_queries": n,
    }


def group_statistics(
    pdf: pd.DataFrame, options: CompareOptions, directions: Mapping[str, bool]
) -> pd.DataFrame:
    """The statistics row of one (run, measure) from its paired rows ``run_id,
    measure, query_id, delta, value, baseline_value`` (in any order)."""
    pdf = pdf.sort_values("query_id", kind="stable")  # order-independent resampling
    measure = str(pdf["measure"].iloc[0])
    stats = pair_statistics(
        pdf["delta"].to_numpy(np.float64),
        pdf["value"].to_numpy(np.float64),
        pdf["baseline_value"].to_numpy(np.float64),
        options,
        directions.get(measure, True),
    )
    return pd.DataFrame([{"run_id": pdf["run_id"].iloc[0], "measure": measure, **stats}])


def comparison_table(
    deltas: Any, options: CompareOptions, runs: Sequence[str], measures: Sequence[str]
) -> pd.DataFrame:
    """Statistics per (run, measure) with Holm-adjusted p-values (one row per pair)."""
    from pyspark.sql import functions as F

    directions = {m: higher_is_better(m) for m in measures}
    opts = options

    def per_group(pdf: pd.DataFrame) -> pd.DataFrame:
        return group_statistics(pdf, opts, directions)

    paired = deltas.filter(F.col("status") == PAIRED).select(
        "run_id", "measure", "query_id", "delta", "value", "baseline_value"
    )
    stats = paired.groupBy("run_id", "measure").applyInPandas(per_group, _STATS_SCHEMA)
    stats_pdf = to_pandas(stats)
    counts = to_pandas(
        deltas.groupBy("run_id", "measure").agg(
            *[
                F.sum(F.when(F.col("status") == s, 1).otherwise(0)).alias(f"_n_{s}")
                for s in STATUSES
            ]
        )
    )
    return assemble_comparison(stats_pdf, counts, options, runs, measures)


def assemble_comparison(
    stats_pdf: pd.DataFrame,
    counts: pd.DataFrame,
    options: CompareOptions,
    runs: Sequence[str],
    measures: Sequence[str],
) -> pd.DataFrame:
    """``comparison.parquet``'s rows from the statistics of the paired (run, measure)
    pairs (:func:`group_statistics`' rows) and the status counts of every pair
    (``run_id, measure, _n_<status>``): one row per run × measure, Holm-adjusted."""
    directions = {m: higher_is_better(m) for m in measures}
    grid = pd.DataFrame([(r, m) for r in runs for m in measures], columns=["run_id", "measure"])
    table = grid.merge(stats_pdf, on=["run_id", "measure"], how="left").merge(
        counts, on=["run_id", "measure"], how="left"
    )
    for col in ("wins", "ties", "losses", "n_queries"):
        table[col] = table[col].fillna(0).astype("int64")
    table["n_run_only"] = table[f"_n_{RUN_ONLY}"].fillna(0).astype("int64")
    table["n_baseline_only"] = table[f"_n_{BASELINE_ONLY}"].fillna(0).astype("int64")
    table["n_undefined"] = table[f"_n_{UNDEFINED}"].fillna(0).astype("int64")
    table["randomization_exact"] = table["randomization_exact"].astype("boolean")
    table["baseline"] = options.baseline
    table["higher_is_better"] = table["measure"].map(directions).astype(bool)
    table["p_ttest_holm"] = np.nan
    table["p_randomization_holm"] = np.nan
    for _measure, idx in table.groupby("measure").groups.items():
        table.loc[idx, "p_ttest_holm"] = holm(table.loc[idx, "p_ttest"].to_numpy(np.float64))
        table.loc[idx, "p_randomization_holm"] = holm(
            table.loc[idx, "p_randomization"].to_numpy(np.float64)
        )
    for col in FLOAT_COLUMNS:
        table[col] = table[col].astype("float64")
    return table[list(COMPARISON_COLUMNS)].reset_index(drop=True)


def run_summaries(
    per_query: Any,
    baseline: str,
    runs: Sequence[str],
    measures: Sequence[str],
    alpha: float = 0.05,
) -> dict[str, Any]:
    """Each run's own mean per measure over its defined queries, with query counts and
    the ``1 - alpha`` confidence interval of the mean (:func:`mean_interval`)."""
    from pyspark.sql import functions as F

    keep = [baseline, *runs]
    pq = per_query.filter(F.col("run_id").isin(keep) & F.col("measure").isin(list(measures)))
    # exact sums: the same bits for every partitioning
    squared = pq.withColumn("value_squared", F.col("value") * F.col("value"))
    totals = exact_totals(squared, ["value", "value_squared"], ["run_id", "measure"])
    queries = dict(pq.groupBy("run_id").agg(F.countDistinct("query_id").alias("n")).collect())
    return summaries_of_totals(totals, queries, keep, measures, alpha)


def summaries_of_totals(
    totals: Mapping[tuple[str | None, ...], Mapping[str, ExactTotal]],
    queries: Mapping[str, int],
    keep: Sequence[str],
    measures: Sequence[str],
    alpha: float,
) -> dict[str, Any]:
    """:func:`run_summaries`' block from the exact totals of ``value`` and
    ``value_squared`` per ``(run_id, measure)`` and each run's distinct queries; each
    run's measures in the order of ``measures`` (whatever order the totals came in)."""
    found = {(str(run), str(measure)): columns for (run, measure), columns in totals.items()}
    empty = {"mean": math.nan, "ci_low": math.nan, "ci_high": math.nan}
    out: dict[str, Any] = {}
    for run in keep:
        entries: dict[str, Any] = {}
        for m in measures:
            columns = found.get((run, m))
            if columns is None:
                entries[m] = {**empty, "n_defined": 0, "n_undefined": 0}
                continue
            value = columns["value"]
            low, high = mean_interval(
                value.total, columns["value_squared"].total, value.count, alpha
            )
            entries[m] = {
                "mean": value.mean,
                "ci_low": low,
                "ci_high": high,
                "n_defined": value.count,
                "n_undefined": value.rows - value.count,
            }
        out[run] = {"queries": int(queries.get(run, 0)), "measures": entries}
    return out


# ----------------------------------------------------------------------------- runs


def with_tie_broken_rank(runs: Any, depth: int | None = None) -> Any:
    """Add ``rank`` (1-based) per (run_id, query_id): score desc, then doc_id desc.

    The Spark form of :func:`sparkeval.compare.rank_distance.order_by_score_then_docid_desc`
    (:func:`sparkeval.spark_order.with_rank`). ``depth`` keeps the first
    ``depth`` docs of each ranking.
    """
    return with_rank(runs, ["run_id", "query_id"], depth)


def rank_distance_buckets(spark: SparkSession, runs_df: DataFrame) -> int:
    """Buckets of each run's queries in :func:`rank_distance_table`: ``max(8, 4 × the
    session's cores)``, or one per 4 MiB of Spark's size estimate of the run table when
    that is fewer (each bucket is a Python task; a unit test's table is one per run).

    Example: a 1 MiB run table is 1 bucket; 100 MiB on 2 cores, 8.
    """
    from sparkeval.engine.plans.spark_engine import bucket_count, plan_bytes
    from sparkeval.spark import parallelism

    return bucket_count(max(8, 4 * parallelism(spark)), plan_bytes(runs_df, optimized=False))


def rank_distance_table(
    spark: SparkSession, runs_df: DataFrame, options: CompareOptions, runs: Sequence[str]
) -> Any:
    """Per (run, query): distances between the run's ranking and the baseline's.

    Columns: ``run_id, baseline, query_id, status, n_run, n_baseline`` and the
    :data:`~sparkeval.compare.rank_distance.DISTANCE_FIELDS`. ``status`` is
    ``paired``, ``run_only`` or ``baseline_only``; distances are null unless paired.
    Rankings are cut to ``options.depth`` docs first.
    """
    from pyspark.sql import functions as F

    baseline = options.baseline
    ranked = with_tie_broken_rank(
        runs_df.filter(F.col("run_id").isin([baseline, *runs])), options.depth
    )
    run_ids = spark.createDataFrame([(r,) for r in runs], "run_id string")
    base = (
        ranked.filter(F.col("run_id") == baseline)
        .drop("run_id")
        .crossJoin(F.broadcast(run_ids))
        .withColumn("side", F.lit("b"))
    )
    other = ranked.filter(F.col("run_id").isin(list(runs))).withColumn("side", F.lit("r"))
    buckets = rank_distance_buckets(spark, runs_df)
    both = (
        other.unionByName(base)
        .withColumn("_bucket", F.pmod(F.xxhash64("query_id"), F.lit(buckets)))
        .select("run_id", "_bucket", "query_id", "doc_id", "rank", "side")
    )
    k, p = options.k, options.rbo_p

    def per_bucket(pdf: pd.DataFrame) -> pd.DataFrame:
        return distance_rows(pdf, baseline, k, p)

    return both.groupBy("run_id", "_bucket").applyInPandas(per_bucket, _RD_SCHEMA)


def distance_rows(pdf: pd.DataFrame, baseline: str, k: int, p: float) -> pd.DataFrame:
    """The rows of :func:`rank_distance_table` of one run's queries: ``pdf`` holds the
    run's rows (``side`` ``r``) and the baseline's (``b``) with ``run_id, query_id,
    doc_id, rank, side``; one row per query, sorted by query id."""
    pdf = pdf.sort_values(["query_id", "side", "rank"], kind="stable")
    rows = []
    run_id = str(pdf["run_id"].iloc[0])
    for qid, group in pdf.groupby("query_id", sort=True):
        mine = group.loc[group["side"] == "r", "doc_id"].tolist()
        theirs = group.loc[group["side"] == "b", "doc_id"].tolist()
        row: dict[str, Any] = {
            "run_id": run_id,
            "baseline": baseline,
            "query_id": qid,
            "n_run": len(mine),
            "n_baseline": len(theirs),
        }
        if mine and theirs:
            row["status"] = PAIRED
            row.update(rank_distances(mine, theirs, k=k, p=p))
        else:
            row["status"] = RUN_ONLY if mine else BASELINE_ONLY
            row.update({name: None for name in DISTANCE_FIELDS})
        rows.append(row)
    out = pd.DataFrame(rows, columns=list(_RD_COLUMNS))
    out["overlap"] = out["overlap"].astype("Int64")
    for name in DISTANCE_FIELDS[1:]:
        out[name] = out[name].astype("float64")
    return out


_RD_COLUMNS = ("run_id", "baseline", "query_id", "status", "n_run", "n_baseline", *DISTANCE_FIELDS)
#: the columns of ``deltas.parquet`` as both engines write them (the baseline and the
#: status are never null)
DELTAS_SCHEMA = pa.schema(
    [
        pa.field("run_id", pa.string()),
        pa.field("baseline", pa.string(), nullable=False),
        pa.field("query_id", pa.string()),
        pa.field("measure", pa.string()),
        pa.field("value", pa.float64()),
        pa.field("baseline_value", pa.float64()),
        pa.field("delta", pa.float64()),
        pa.field("status", pa.string(), nullable=False),
    ]
)
#: the rank-distance table's columns, as Arrow types (both engines write them)
RD_ARROW_SCHEMA = pa.schema(
    [
        ("run_id", pa.string()),
        ("baseline", pa.string()),
        ("query_id", pa.string()),
        ("status", pa.string()),
        ("n_run", pa.int64()),
        ("n_baseline", pa.int64()),
        ("overlap", pa.int64()),
        *((name, pa.float64()) for name in DISTANCE_FIELDS[1:]),
    ]
)
_RD_SCHEMA = (
    "run_id string, baseline string, query_id string, status string, n_run long, "
    "n_baseline long, overlap long, " + ", ".join(f"{name} double" for name in DISTANCE_FIELDS[1:])
)


def _by_run(
    totals: dict[tuple[str | None, ...], dict[str, ExactTotal]],
) -> list[tuple[str, dict[str, ExactTotal]]]:
    """:func:`~sparkeval.engine.plans.exact.exact_totals` keyed by ``run_id`` alone, as
    ``(run, totals)`` pairs in run order."""
    return sorted(((str(run), found) for (run,), found in totals.items()), key=lambda p: p[0])


def with_numpy_terms(
    frame: DataFrame, terms: Callable[[pa.RecordBatch], Mapping[str, np.ndarray]]
) -> DataFrame:
    """``frame`` with double columns that ``terms`` computes from each Arrow batch with
    numpy, in the Python workers (so that a logarithm has the bits it has in process)."""
    from pyspark.sql import types as T

    sample = terms(pa.RecordBatch.from_pylist([], _arrow_schema(frame)))
    fields = [*frame.schema.fields, *(T.StructField(n, T.DoubleType()) for n in sample)]

    def add(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            extra = terms(batch)
            arrays = [*batch.columns, *(pa.array(v, pa.float64()) for v in extra.values())]
            yield pa.RecordBatch.from_arrays(arrays, [*batch.schema.names, *extra])

    return frame.mapInArrow(add, T.StructType(fields))


def _arrow_schema(frame: DataFrame) -> pa.Schema:
    from pyspark.sql.pandas.types import to_arrow_schema

    return to_arrow_schema(frame.schema)


def _doubles(batch: pa.RecordBatch, name: str) -> np.ndarray:
    """A column of a batch as float64 values (nulls as NaN)."""
    return batch.column(name).cast(pa.float64()).to_numpy(zero_copy_only=False)


def _flag(condition: Any) -> Any:
    """1.0 where ``condition`` holds, else null: its count is the rows that hold it."""
    from pyspark.sql import functions as F

    return F.when(condition, F.lit(1.0))


def rank_distance_summary(table: Any, options: CompareOptions) -> dict[str, Any]:
    """Per run: mean of every distance over the paired queries, and the status counts."""
    from pyspark.sql import functions as F

    statuses = (PAIRED, RUN_ONLY, BASELINE_ONLY)
    undefined = F.col("kendall_tau").isNull() & (F.col("status") == PAIRED)
    # one job: exact means (the same bits for every partitioning), and the status
    # counts as the counts of columns that are null on the other rows
    flagged = table.select(
        "run_id",
        *DISTANCE_FIELDS,
        *(_flag(F.col("status") == s).alias(f"_is_{s}") for s in statuses),
        _flag(undefined).alias("_tau_undefined"),
    )
    flags = [f"_is_{s}" for s in statuses]
    totals = exact_totals(flagged, [*DISTANCE_FIELDS, *flags, "_tau_undefined"], ["run_id"])
    return distance_summary(_by_run(totals), options)


def distance_summary(
    found: list[tuple[str, dict[str, ExactTotal]]], options: CompareOptions
) -> dict[str, Any]:
    """The ``rank_distance`` block from each run's exact totals of the distances and of
    the status flags (``_is_<status>``, ``_tau_undefined``), in run order."""
    statuses = (PAIRED, RUN_ONLY, BASELINE_ONLY)
    runs: dict[str, Any] = {}
    for run, totals in found:
        runs[run] = {
            "mean": {
                name: totals[name].mean if totals[name].count else None for name in DISTANCE_FIELDS
            },
            "queries": {s: totals[f"_is_{s}"].count for s in statuses},
            "tau_rho_undefined": totals["_tau_undefined"].count,
        }
    return {
        "baseline": options.baseline,
        "k": options.k,
        "depth": options.depth,
        "rbo": f"RBO_ext (Webber, Moffat & Zobel 2010, eq. 32), p={options.rbo_p}",
        "permutation_measures_over": "docs in both rankings (overlap)",
        "runs": runs,
    }


def exposure_divergence(
    spark: SparkSession, runs_df: DataFrame, options: CompareOptions, runs: Sequence[str]
) -> dict[str, Any]:
    """Top-k item-exposure distributions: entropy per run, JS and KL against the baseline.

    Each run's distribution is the share of its top-k slots (over all queries) that
    each item fills. Entropy is in bits; ``js`` is the Jensen–Shannon divergence
    (base 2, in [0, 1]); ``kl_run_baseline`` is ``D(run || baseline)`` and is
    infinite (written as null, with ``kl_run_baseline_infinite`` true) when the run
    exposes an item the baseline never shows; likewise ``kl_baseline_run``.
    """
    from pyspark.sql import functions as F

    baseline = options.baseline
    ranked = with_tie_broken_rank(
        runs_df.filter(F.col("run_id").isin([baseline, *runs])), options.k
    )
    counts = ranked.groupBy("run_id", "doc_id").agg(F.count(F.lit(1)).alias("c"))
    totals = counts.groupBy("run_id").agg(F.sum("c").alias("slots"))
    shares = counts.join(totals, "run_id").withColumn("p", F.col("c") / F.col("slots"))
    shares = shares.cache()
    # one job: the sums of the terms, exact (the same bits for every partitioning), and
    # each run's slots (the sum of its whole counts, exact below 2**53) and items (rows)
    entropy_terms = exact_totals(
        with_numpy_terms(
            shares.select("run_id", "p", "c"),
            lambda b: {"plogp": plogp_terms(_doubles(b, "p"))},
        ),
        ["plogp", "c"],
        ["run_id"],
    )
    per_run = exposure_entropy(_by_run(entropy_terms))
    run_ids = spark.createDataFrame([(r,) for r in runs], "run_id string")
    q = shares.filter(F.col("run_id") == baseline).select("doc_id", F.col("p").alias("q"))
    qx = q.crossJoin(F.broadcast(run_ids))
    pp = shares.filter(F.col("run_id").isin(list(runs))).select("run_id", "doc_id", "p")
    j = pp.join(qx, ["run_id", "doc_id"], "full_outer").fillna(0.0, subset=["p", "q"])
    p, q = F.col("p"), F.col("q")

    # one job: the terms' sums, exact (the same bits for every partitioning), and the
    # item counts as the counts of columns that are null on the other rows
    terms = with_numpy_terms(
        j.select("run_id", "p", "q"),
        lambda b: divergence_terms(_doubles(b, "p"), _doubles(b, "q")),
    ).select(
        "run_id",
        *DIVERGENCE_TERMS,
        _flag((p > 0) & (q == 0)).alias("only_run"),
        _flag((q > 0) & (p == 0)).alias("only_base"),
        _flag((p > 0) & (q > 0)).alias("shared"),
    )
    sums = exact_totals(terms, [*DIVERGENCE_TERMS, *DIVERGENCE_COUNTS], ["run_id"])
    shares.unpersist()
    return {"k": options.k, "base": 2, "runs": per_run, "vs_baseline": divergences(_by_run(sums))}


#: the divergence terms of :func:`divergence_terms`, and the item counts beside them
DIVERGENCE_TERMS = ("p_m", "q_m", "p_q", "q_p")
DIVERGENCE_COUNTS = ("only_run", "only_base", "shared")


def divergence_terms(p: np.ndarray, q: np.ndarray) -> dict[str, np.ndarray]:
    """The per-item terms of JS (``p_m``, ``q_m``, m the mean of p and q) and of both
    KLs (``p_q``, ``q_p``), from the item's shares ``p`` (run) and ``q`` (baseline)."""
    m = (p + q) / 2.0
    return {
        "p_m": plogratio_terms(p, m),
        "q_m": plogratio_terms(q, m),
        "p_q": plogratio_terms(p, q),
        "q_p": plogratio_terms(q, p),
    }


def exposure_entropy(found: list[tuple[str, dict[str, ExactTotal]]]) -> dict[str, Any]:
    """Each run's exposure entropy, slots and items from the exact totals of its
    ``plogp`` terms and ``c`` counts (one row per item)."""
    return {
        run: {
            "entropy": -totals["plogp"].total,
            "slots": int(totals["c"].total),
            "items": totals["c"].rows,
        }
        for run, totals in found
    }


def divergences(found: list[tuple[str, dict[str, ExactTotal]]]) -> dict[str, Any]:
    """JS and both KLs of each run against the baseline from the exact totals of the
    :data:`DIVERGENCE_TERMS` and the counts of :data:`DIVERGENCE_COUNTS`."""
    vs: dict[str, Any] = {}
    for run, totals in found:
        total = {name: totals[name].total for name in DIVERGENCE_TERMS}
        only_run, only_base = totals["only_run"].count, totals["only_base"].count
        js = 0.5 * total["p_m"] + 0.5 * total["q_m"]
        vs[run] = {
            "js": min(1.0, max(0.0, js)),
            "kl_run_baseline": math.inf if only_run else max(0.0, total["p_q"]),
            "kl_run_baseline_infinite": bool(only_run),
            "kl_baseline_run": math.inf if only_base else max(0.0, total["q_p"]),
            "kl_baseline_run_infinite": bool(only_base),
            "items_shared": totals["shared"].count,
            "items_run_only": only_run,
            "items_baseline_only": only_base,
        }
    return vs


# ----------------------------------------------------------------------------- plots data


def plot_samples(
    per_query: Any, deltas: Any, baseline: str, runs: Sequence[str], measures: Sequence[str]
) -> tuple[pd.DataFrame, pd.DataFrame, bool]:
    """Per-query values and paired deltas for the plots, at most ~:data:`PLOT_MAX_ROWS` each.

    Larger tables are thinned by a deterministic hash of ``query_id`` (the same
    queries for every run and measure), and the third value says so.
    """
    from pyspark.sql import functions as F

    values = per_query.filter(
        F.col("run_id").isin([baseline, *runs])
        & F.col("measure").isin(list(measures))
        & F.col("value").isNotNull()
    ).select("run_id", "measure", "query_id", "value")
    paired = deltas.filter(F.col("status") == PAIRED).select(
        "run_id", "measure", "query_id", "delta"
    )
    n_values = values.count()
    sampled = n_values > PLOT_MAX_ROWS
    if sampled:
        modulus = math.ceil(n_values / PLOT_MAX_ROWS)
        keep = F.pmod(F.xxhash64("query_id"), F.lit(modulus)) == 0
        values = values.filter(keep)
        paired = paired.filter(keep)
    return to_pandas(values), to_pandas(paired), sampled


# ----------------------------------------------------------------------------- top level


def input_message(options: CompareOptions, runs: Sequence[str], measures: Sequence[str]) -> str:
    """The ``input`` progress line: the baseline, the runs and the measures compared."""
    return (
        f"baseline {options.baseline}; {len(runs)} run(s) compared: "
        f"{', '.join(runs)}; {len(measures)} measure(s): {', '.join(measures)}"
    )


def stats_message(options: CompareOptions, pairs: int) -> str:
    """The ``stats`` progress line: the tests run on ``pairs`` run × measure pairs."""
    return (
        f"t-test, randomization ({options.permutations} permutations, seed "
        f"{options.seed}), bootstrap ({options.bootstrap} resamples) for {pairs} "
        "run × measure pairs"
    )


def rank_distance_message(options: CompareOptions) -> str:
    """The ``rank-distance`` progress line."""
    return (
        f"τ, ρ, footrule, Cayley, Ulam, Hamming, Jaccard@{options.k}, "
        f"RBO_ext(p={options.rbo_p}) at depth {options.depth}"
    )


def exposure_message(options: CompareOptions) -> str:
    """The ``exposure`` progress line."""
    return f"top-{options.k} exposure entropy, JS and KL against the baseline"


def direction_notes(measures: Sequence[str]) -> list[str]:
    """A note for each measure whose direction the registry does not know."""
    return [
        f"direction of measure {m} is unknown; treated as higher-is-better"
        for m in measures
        if not direction_known(m)
    ]


def check_runs_present(present: Collection[str], baseline: str, runs: Sequence[str]) -> None:
    """Every compared run and the baseline have rows in the run table(s).

    Raises:
        InputError: the runs without rows, named.
    """
    missing = [r for r in [baseline, *runs] if r not in present]
    if missing:
        raise InputError(f"run table: no rows for run(s) {', '.join(missing)}")


def compare(
    spark: SparkSession,
    per_query: Any,
    options: CompareOptions,
    runs_df: DataFrame | None = None,
    with_plots: bool = True,
    say: Any = None,
    run_ids: Collection[str] | None = None,
) -> ComparisonResult:
    """Compare every run of a per-query table with the baseline.

    Args:
        spark: the SparkSession.
        per_query: Spark DataFrame ``run_id, query_id, measure, value``.
        options: what to compare and how.
        runs_df: optional run table ``run_id, query_id, doc_id, score`` for rank
            distances and exposure.
        with_plots: also collect the (bounded) samples the report plots need.
        say: ``say(stage, message)`` progress callback.
        run_ids: the run ids ``runs_df`` holds, when the caller knows them (as
            :func:`read_runs` returns them); else one job finds them.

    Returns:
        the comparison; ``result.deltas`` is a cached Spark DataFrame (unpersist it
        when done).

    Example::

        opts = CompareOptions(baseline="bm25")
        result = compare(spark, per_query_df, opts)
        result.comparison[["run_id", "measure", "delta"]]
    """
    log = say or (lambda stage, message: None)
    per_query = check_per_query(per_query)
    runs, measures = select_runs_and_measures(per_query, options)
    log("input", input_message(options, runs, measures))
    _check_duplicates(
        per_query.filter(per_query["measure"].isin(list(measures))),
        ("run_id", "query_id", "measure"),
        "per-query table",
    )
    notes = direction_notes(measures)
    deltas = paired_deltas(spark, per_query, options.baseline, runs, measures).cache()
    log("pair", "paired queries on query_id with the baseline")
    table = comparison_table(deltas, options, runs, measures)
    log("stats", stats_message(options, len(table)))
    run_summary = run_summaries(per_query, options.baseline, runs, measures, options.alpha)
    result = ComparisonResult(options, runs, measures, table, deltas, run_summary, notes=notes)
    if runs_df is not None:
        _check_duplicates(
            runs_df.filter(runs_df["run_id"].isin([options.baseline, *runs])),
            ("run_id", "query_id", "doc_id"),
            "run table",
        )
        present = (
            set(run_ids)
            if run_ids is not None
            else {r[0] for r in runs_df.select("run_id").distinct().collect()}
        )
        check_runs_present(present, options.baseline, runs)
        result.rank_distance = rank_distance_table(spark, runs_df, options, runs).cache()
        result.rank_distance_summary = rank_distance_summary(result.rank_distance, options)
        log("rank-distance", rank_distance_message(options))
        result.exposure = exposure_divergence(spark, runs_df, options, runs)
        log("exposure", exposure_message(options))
    if with_plots:
        values, plot_deltas, sampled = plot_samples(
            per_query, deltas, options.baseline, runs, measures
        )
        result.plot_values, result.plot_deltas, result.plot_sampled = values, plot_deltas, sampled
    return result
