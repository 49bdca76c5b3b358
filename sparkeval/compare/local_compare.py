"""``compare`` of local files in this process, without Spark: the command's local engine
(``--engine local``, and ``auto`` on small local inputs).

Each DataFrame step of :mod:`sparkeval.compare.pipeline` has its pandas form here: the
per-query table read with pyarrow and checked as on Spark, the runs and measures chosen,
duplicate and non-finite values refused, the paired deltas, the statistics per (run,
measure), each run's own means, and the plot samples. Everything that is not a
DataFrame step is shared with the Spark side: the statistics of one pair
(:func:`~sparkeval.compare.pipeline.group_statistics`), the comparison table's assembly
and Holm correction (:func:`~sparkeval.compare.pipeline.assemble_comparison`), the exact
means (:func:`~sparkeval.engine.worker.exact_summary.exact_total`), the rank distances
and exposure of :mod:`sparkeval.compare.local_rank_distance`, the gate, the summary and
the reports (:func:`~sparkeval.compare.outputs.write_outputs`). So the files are those of
a Spark run, byte for byte: ``comparison.parquet``, ``summary.json``, the reports, and
``deltas.parquet`` and ``rank_distance.parquet`` (which a Spark run of at most
:data:`~sparkeval.output.DRIVER_WRITE_ROWS` rows writes from its driver as this engine
does).

What only Spark does ends the local run (:class:`~sparkeval.io.direct_input.NotDirect`):
a per-query file pyarrow cannot read, a partitioned directory, id or value columns of
another type than text, integers or floating point, a null id, and a report whose plots
Spark would sample (more than :data:`~sparkeval.compare.pipeline.PLOT_MAX_ROWS` values).

Example::

    rows = read_per_query_locally("out/eval")
    result = compare_locally(rows, CompareOptions(baseline="bm25"))
    result.comparison[["run_id", "measure", "delta"]]
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from sparkeval.compare.local_rank_distance import (
    cut_at,
    distance_table,
    exposure,
    ranked,
    run_totals,
)
from sparkeval.compare.pipeline import (
    BASELINE_ONLY,
    DELTAS_SCHEMA,
    PAIRED,
    PER_QUERY_COLUMNS,
    PLOT_MAX_ROWS,
    RUN_ONLY,
    STATUSES,
    UNDEFINED,
    CompareOptions,
    ComparisonResult,
    assemble_comparison,
    check_runs_present,
    choose_runs_and_measures,
    direction_notes,
    distance_summary,
    duplicate_error,
    exposure_message,
    group_statistics,
    higher_is_better,
    input_message,
    rank_distance_message,
    resolve_per_query_path,
    stats_message,
    summaries_of_totals,
)
from sparkeval.engine.worker.exact_summary import ExactTotal, exact_total
from sparkeval.errors import InputError
from sparkeval.io.direct_input import NotDirect

#: the statistics columns of one (run, measure) and their pandas types, as Spark's
#: ``applyInPandas`` returns them (:func:`~sparkeval.compare.pipeline.group_statistics`)
_STATS_DTYPES = {
    "run_id": object,
    "measure": object,
    "mean": np.float64,
    "baseline_mean": np.float64,
    "delta": np.float64,
    "p_ttest": np.float64,
    "p_randomization": np.float64,
    "randomization_exact": bool,
    "ci_low": np.float64,
    "ci_high": np.float64,
    "wins": np.int64,
    "ties": np.int64,
    "losses": np.int64,
    "n_queries": np.int64,
}

#: the id columns of the per-query table, read as text (integers written as Spark does)
_ID_COLUMNS = ("run_id", "query_id", "measure")


# ----------------------------------------------------------------------------- reading


def read_per_query_locally(path: str) -> tuple[pd.DataFrame, str]:
    """The per-query table at ``path`` (a file, a directory of Parquet parts, or an
    ``evaluate`` output), checked as :func:`~sparkeval.compare.pipeline.read_per_query`
    checks it, and the name its messages give it.

    Columns: ``run_id, query_id, measure`` (text), ``value`` (float64, NaN where
    null) and ``_finite`` (False where the file holds NaN or an infinity).

    Raises:
        InputError: a missing table or column, named as on Spark.
        NotDirect: what Spark's reader judges (see the module text).
    """
    source = resolve_per_query_path(path)
    where = str(source)
    table = _read_parquet(Path(source))
    missing = [c for c in PER_QUERY_COLUMNS if c not in table.column_names]
    if missing:
        raise InputError(
            f"{where}: missing column(s) {', '.join(missing)}; expected "
            f"{', '.join(PER_QUERY_COLUMNS)} (found {', '.join(table.column_names)})"
        )
    lowered = [name.lower() for name in table.column_names]
    if any(lowered.count(name) > 1 for name in PER_QUERY_COLUMNS):
        raise NotDirect(f"{where}: column names that differ only in case")
    frame = pd.DataFrame({name: _text(table.column(name), where, name) for name in _ID_COLUMNS})
    value = _double(table.column("value"), where)
    frame["value"] = value.to_numpy(zero_copy_only=False)
    not_finite = pc.invert(pc.is_finite(value)).fill_null(False)
    frame["_finite"] = ~not_finite.to_numpy(zero_copy_only=False)
    return frame, where


def _parquet_files(source: Path) -> list[Path]:
    """The Parquet files Spark reads at ``source``: the file, or a directory's files
    whose names do not start with ``_`` or ``.``, sorted."""
    if source.is_file():
        return [source]
    entries = [p for p in source.iterdir() if not p.name.startswith(("_", "."))]
    if any(p.is_dir() for p in entries):
        raise NotDirect(f"{source}: a partitioned directory")
    found = sorted(p for p in entries if p.is_file())
    if not found:
        raise NotDirect(f"{source}: no Parquet file in the directory")
    return found


def _read_parquet(source: Path) -> pa.Table:
    """Every row of the Parquet file(s) at ``source``, in one schema."""
    tables = []
    for file in _parquet_files(source):
        try:
            tables.append(pq.read_table(file))
        except (OSError, pa.ArrowException) as exc:
            raise NotDirect(f"{file}: a Parquet file pyarrow cannot read ({exc})") from None
    first = tables[0].schema.remove_metadata()
    if any(not t.schema.remove_metadata().equals(first) for t in tables[1:]):
        raise NotDirect(f"{source}: Parquet files of different schemas")
    return pa.concat_tables(tables).combine_chunks()


def _text(column: pa.ChunkedArray, where: str, name: str) -> np.ndarray:
    """An id column as Python strings, as Spark casts it to text: a string column as
    it is, an integer column in decimal digits.

    Raises:
        NotDirect: another type (Spark's reader names or converts it) or a null id.
    """
    kind = column.type
    textual = pa.types.is_large_string(kind) or pa.types.is_string(kind)
    whole = pa.types.is_signed_integer(kind) and name != "measure"
    if not (textual or whole):
        raise NotDirect(f"{where}: column {name} of type {kind}")
    text = column.cast(pa.string())
    if text.null_count:
        raise NotDirect(f"{where}: column {name} has nulls")
    return np.asarray(text.to_numpy(zero_copy_only=False), dtype=object)


def _double(column: pa.ChunkedArray, where: str) -> pa.ChunkedArray:
    """The ``value`` column as float64 (exact for float32 and the integers Spark casts
    alike); nulls stay null.

    Raises:
        NotDirect: a value column of another type.
    """
    kind = column.type
    if pa.types.is_null(kind) or pa.types.is_floating(kind) or pa.types.is_signed_integer(kind):
        if pa.types.is_float16(kind):
            raise NotDirect(f"{where}: column value of type {kind}")
        return column.cast(pa.float64(), safe=False)
    raise NotDirect(f"{where}: column value of type {kind}")


# ----------------------------------------------------------------------------- checks


def check_duplicates(rows: pd.DataFrame, keys: Sequence[str], what: str) -> None:
    """No two rows of ``rows`` share their ``keys``.

    Raises:
        InputError: the first five duplicated keys, in key order, named as on Spark.
    """
    doubled = rows[rows.duplicated(list(keys), keep=False)]
    if len(doubled):
        first = doubled.drop_duplicates(list(keys)).sort_values(list(keys), kind="stable")
        raise duplicate_error(first.to_dict("records"), keys, what)


def check_finite(rows: pd.DataFrame, where: str) -> None:
    """Every value of ``rows`` (compared runs and measures only, as on Spark) is finite
    or null.

    Raises:
        InputError: the first non-finite value, named as Spark's check names it.
    """
    bad = np.flatnonzero(~rows["_finite"].to_numpy(dtype=bool))
    if not len(bad):
        return
    row = rows.iloc[int(bad[0])]
    raise InputError(
        f"{where}: run {row['run_id']} query {row['query_id']} measure {row['measure']}: "
        f"value {_spark_text(float(row['value']))} is not a finite number (leave an "
        "undefined value out, or null)"
    )


def _spark_text(value: float) -> str:
    """A non-finite double as Spark casts it to text."""
    if math.isnan(value):
        return "NaN"
    return "Infinity" if value > 0 else "-Infinity"


# ----------------------------------------------------------------------------- steps


def paired_deltas_locally(rows: pd.DataFrame, baseline: str, runs: Sequence[str]) -> pd.DataFrame:
    """:func:`~sparkeval.compare.pipeline.paired_deltas` of the rows of the compared
    measures, sorted by run, measure and query (``deltas.parquet``'s order)."""
    base = rows.loc[rows["run_id"] == baseline, ["query_id", "measure", "value"]]
    base = base.rename(columns={"value": "baseline_value"})
    frames = []
    for run in runs:
        mine = rows.loc[rows["run_id"] == run, ["query_id", "measure", "value"]]
        joined = mine.merge(base, on=["query_id", "measure"], how="outer", indicator=True)
        joined.insert(0, "run_id", run)
        frames.append(joined)
    both = pd.concat(frames, ignore_index=True)
    side = both.pop("_merge").astype(str).to_numpy()
    undefined = both["value"].isna().to_numpy() | both["baseline_value"].isna().to_numpy()
    status = np.where(
        side == "left_only",
        RUN_ONLY,
        np.where(side == "right_only", BASELINE_ONLY, np.where(undefined, UNDEFINED, PAIRED)),
    )
    both["status"] = status.astype(object)
    both["delta"] = np.where(
        status == PAIRED, both["value"].to_numpy() - both["baseline_value"].to_numpy(), np.nan
    )
    both["baseline"] = baseline
    ordered = both.sort_values(["run_id", "measure", "query_id"], kind="stable")
    return ordered[DELTAS_SCHEMA.names].reset_index(drop=True)


def comparison_locally(
    deltas: pd.DataFrame, options: CompareOptions, runs: Sequence[str], measures: Sequence[str]
) -> pd.DataFrame:
    """:func:`~sparkeval.compare.pipeline.comparison_table` of the local deltas."""
    directions = {m: higher_is_better(m) for m in measures}
    paired = deltas[deltas["status"] == PAIRED]
    found = [
        group_statistics(group, options, directions)
        for _, group in paired.groupby(["run_id", "measure"], sort=True)
    ]
    stats = pd.concat(found, ignore_index=True) if found else pd.DataFrame(columns=[*_STATS_DTYPES])
    stats = stats.astype(_STATS_DTYPES)
    counts = pd.DataFrame({f"_n_{s}": (deltas["status"] == s).astype(np.int64) for s in STATUSES})
    counts[["run_id", "measure"]] = deltas[["run_id", "measure"]]
    counts = counts.groupby(["run_id", "measure"], sort=True, as_index=False).sum()
    return assemble_comparison(stats, counts, options, runs, measures)


def run_summaries_locally(
    rows: pd.DataFrame, keep: Sequence[str], measures: Sequence[str], alpha: float
) -> dict[str, Any]:
    """:func:`~sparkeval.compare.pipeline.run_summaries` of the rows of the compared
    runs and measures: the same exact totals."""
    totals: dict[tuple[str | None, ...], dict[str, ExactTotal]] = {}
    for (run, measure), group in rows.groupby(["run_id", "measure"], sort=True):
        value = group["value"].to_numpy(dtype=np.float64)
        totals[(str(run), str(measure))] = {
            "value": exact_total(value),
            "value_squared": exact_total(value * value),
        }
    queries = {str(run): int(n) for run, n in rows.groupby("run_id")["query_id"].nunique().items()}
    return summaries_of_totals(totals, queries, keep, measures, alpha)


def plot_samples_locally(
    rows: pd.DataFrame, deltas: pd.DataFrame
) -> tuple[pd.DataFrame, pd.DataFrame, bool]:
    """:func:`~sparkeval.compare.pipeline.plot_samples` (never sampled: a larger table
    is left to Spark before the comparison starts, :func:`_check_plot_rows`)."""
    values = rows.loc[rows["value"].notna(), ["run_id", "measure", "query_id", "value"]]
    paired = deltas.loc[deltas["status"] == PAIRED, ["run_id", "measure", "query_id", "delta"]]
    return values.reset_index(drop=True), paired.reset_index(drop=True), False


def _check_plot_rows(rows: pd.DataFrame) -> None:
    """The report's plots take every value of ``rows``: Spark samples more than
    :data:`~sparkeval.compare.pipeline.PLOT_MAX_ROWS` by its hash of the query ids.

    Raises:
        NotDirect: more values than that.
    """
    count = int(rows["value"].notna().sum())
    if count > PLOT_MAX_ROWS:
        raise NotDirect(
            f"the report's plots sample {count} per-query values (more than {PLOT_MAX_ROWS}) "
            "by Spark's hash of the query ids (--no-plots does without)"
        )


# ----------------------------------------------------------------------------- top level


def compare_locally(
    rows: pd.DataFrame,
    options: CompareOptions,
    where: str = "per-query table",
    run_rows: pd.DataFrame | None = None,
    run_ids: Collection[str] | None = None,
    with_plots: bool = True,
    say: Callable[[str, str], None] | None = None,
) -> ComparisonResult:
    """:func:`~sparkeval.compare.pipeline.compare` of the per-query rows of
    :func:`read_per_query_locally` (and the run rows of
    :func:`~sparkeval.compare.local_rank_distance.read_runs_locally`), its checks in
    the same order; ``deltas`` and ``rank_distance`` are Arrow tables in their order.

    Raises:
        ConfigError: a baseline, run or measure not in the table.
        InputError: duplicate rows, a non-finite value, a run without run rows.
        NotDirect: plots that Spark would sample.
    """
    log = say or (lambda stage, message: None)
    pairs = rows[["run_id", "measure"]].drop_duplicates()
    runs, measures = choose_runs_and_measures(
        list(zip(pairs["run_id"], pairs["measure"], strict=True)), options
    )
    log("input", input_message(options, runs, measures))
    chosen = rows[rows["measure"].isin(measures)]
    check_duplicates(chosen, ("run_id", "query_id", "measure"), "per-query table")
    keep = [options.baseline, *runs]
    compared = chosen[chosen["run_id"].isin(keep)]
    check_finite(compared, where)
    if with_plots:
        _check_plot_rows(compared)
    deltas = paired_deltas_locally(compared, options.baseline, runs)
    log("pair", "paired queries on query_id with the baseline")
    table = comparison_locally(deltas, options, runs, measures)
    log("stats", stats_message(options, len(table)))
    run_summary = run_summaries_locally(compared, keep, measures, options.alpha)
    arrow_deltas = pa.Table.from_pandas(deltas, schema=DELTAS_SCHEMA, preserve_index=False)
    result = ComparisonResult(
        options, runs, measures, table, arrow_deltas, run_summary, notes=direction_notes(measures)
    )
    if run_rows is not None:
        _rank_distances(result, run_rows, run_ids, keep, log)
    if with_plots:
        values, paired, sampled = plot_samples_locally(compared, deltas)
        result.plot_values, result.plot_deltas, result.plot_sampled = values, paired, sampled
    return result


def _rank_distances(
    result: ComparisonResult,
    run_rows: pd.DataFrame,
    run_ids: Collection[str] | None,
    keep: Sequence[str],
    log: Callable[[str, str], None],
) -> None:
    """The rank distances and exposure of ``result``'s runs against its baseline, from
    the run rows (the same kernels as ``rank-distance``'s local engine)."""
    options = result.options
    mine = run_rows[run_rows["run_id"].isin(keep)]
    check_duplicates(mine, ("run_id", "query_id", "doc_id"), "run table")
    present = set(run_ids) if run_ids is not None else set(run_rows["run_id"])
    check_runs_present(present, options.baseline, result.runs)
    ranks = ranked(mine)
    table = distance_table(cut_at(ranks, options.depth), result.runs, options)
    result.rank_distance = table
    result.rank_distance_summary = distance_summary(run_totals(table), options)
    log("rank-distance", rank_distance_message(options))
    result.exposure = exposure(cut_at(ranks, options.k), result.runs, options)
    log("exposure", exposure_message(options))
