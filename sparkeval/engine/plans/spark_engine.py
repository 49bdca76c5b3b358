"""The Spark evaluation pass: one hash exchange of run and qrels rows, one Arrow UDF.

Plan (one shuffle, one Python call per partition, all measures at once)::

    run rows   (_run code, query_id, doc_id, score) --+
                                                     union -> repartition(B, query_id)
    qrels rows (-1,        query_id, doc_id, grade) --+      -> mapInArrow(evaluate_tables)
                                                                -> result blobs (cached)

Each partition yields its wide rows (one per (run, query)) and then its exact per-run
partial sums, as Arrow IPC blobs (:mod:`sparkeval.engine.transport.result_blobs`) that Spark
caches without converting them to rows.  The summary collects the partial-sum blobs
only, and ``per_query.parquet`` is written from the evaluated wide rows
(:mod:`sparkeval.engine.transport.per_query_writer`).

Directly-read Parquet inputs skip the union and the row exchange: the workers split
their rows by bucket and ship them as Arrow IPC payloads
(:mod:`sparkeval.engine.transport.arrow_exchange`) or, on a local master (or any master
given ``spark.sparkeval.handoffDirectory``, a directory every executor shares), as files
(:mod:`sparkeval.engine.transport.local_handoff`); each bucket is one partition of the UDF
(with local files, one task of a plain Python job: :mod:`sparkeval.engine.plans.bucket_job`).

Every query lands in exactly one partition with all its run rows (of every run) and
all its qrels rows, so the UDF sees complete queries.  ``evaluate_tables`` sorts,
cuts, joins and computes with vectorised numpy over all queries of the partition.
Rows are not sorted by key before the UDF (a grouped cogroup would sort them).

Memory: a partition is loaded whole into one Python worker.  With B partitions
(``buckets``) a worker holds about rows/B rows; raise ``buckets`` (default
``spark.sql.shuffle.partitions``, at most :data:`BUCKETS_PER_CORE` per core, fewer for an
input under ``B x`` :data:`BYTES_PER_BUCKET`, so that a tiny input is one task) for very
large inputs, and use ``depth`` to cap pathological queries.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc

from sparkeval.engine.aggregation_modes import RunValues, wide_values
from sparkeval.engine.evaluation_report import (
    SUMMARY_COLUMNS,
    as_measures,
    build_report,
    name_labels,
    output_names,
    summary_rows,
)
from sparkeval.engine.long_rows import per_query_rows
from sparkeval.engine.plans.bucket_job import (
    PLAIN_WORKER_SETTINGS,
    evaluate_buckets,
    evaluated_blobs,
)
from sparkeval.engine.plans.driver_plan import (
    PROBE_ROWS,
    DeferredBlobs,
    evaluate_in_driver,
    evaluate_plain_in_driver,
    few_partitions,
    fits_in_driver,
    probed,
)
from sparkeval.engine.plans.near_dup_flags import flag_near_duplicates
from sparkeval.engine.plans.python_rows import made_of_lists
from sparkeval.engine.plans.remote_estimate import remote_plan_bytes
from sparkeval.engine.transport import local_handoff, result_blobs
from sparkeval.engine.transport.arrow_exchange import buckets_for, direct_payloads, unpack_partition
from sparkeval.engine.transport.early_pieces import DRIVER_READ_KEY, read_pieces
from sparkeval.engine.transport.per_query_writer import write_per_query
from sparkeval.engine.transport.result_files import ResultFiles, new_results_directory
from sparkeval.engine.worker.assemble import EvalOptions, check_ties_allowed, per_query_indexes
from sparkeval.engine.worker.exact_summary import combine
from sparkeval.engine.worker.worker_memory import keep_freed_memory
from sparkeval.errors import (
    ConfigError,
    InputError,
    classify_failure,
    input_error_from_spark,
    marked_message,
)
from sparkeval.formats import (
    BAD,
    DEFAULT_RUN_ID,
    DUPLICATE_FLAG,
    EMPTY_RUN_CODE,
    RUN_CODE,
    SHIPPED_VALUE,
    TIE_KEY,
    found_run_ids,
    measure_column,
)
from sparkeval.io.direct_input import QRELS_SCHEMA, RUN_SCHEMA, DirectPlan, NotDirect
from sparkeval.io.readers import (
    check_id_types,
    distinct_values,
    id_column,
    invalid_text_ids,
    numeric_column,
)
from sparkeval.measures import Measure
from sparkeval.measures.near_dup import check_flags_available
from sparkeval.spark import (
    arrow_batches_bounded_by_rows,
    is_connect,
    local_shuffle_partitions,
    parallelism,
    session_settings,
    spark_type,
)

if TYPE_CHECKING:
    from pathlib import Path

    from pyspark.sql import DataFrame, SparkSession

    from sparkeval.engine.transport.early_pieces import ReadyPieces

_RUN_COLUMNS = ("run_id", "query_id", "doc_id", "score", BAD)
#: input bytes per hash bucket, at least, when the caller does not set the count
BYTES_PER_BUCKET = 4 << 20
_QRELS_COLUMNS = ("query_id", "doc_id", "relevance", BAD)


@dataclass
class Evaluation:
    """The result of :func:`evaluate`.

    Attributes:
        per_query: ``run_id, query_id, measure, value`` (value null where undefined).
        summary: ``run_id, measure, value, queries, undefined`` — the ``all`` values.
        report: the summary as a JSON-ready dict (the content of ``summary.json``).
        measures: the evaluated measures, in output order.
        names: output name of every measure (canonical or trec_eval).
        ordered_per_query: ``run_id, query_id, measure, value`` sorted by run, query
            and the measures' order (what ``per_query.parquet`` holds).
        reader: who read the inputs: ``workers`` (Parquet row groups read by the
            Python workers, :mod:`sparkeval.io.direct`), ``driver`` (the same, read by
            the driver's threads: :mod:`sparkeval.engine.transport.early_pieces`) or
            ``spark``.

    The three DataFrames are built when first used (a job that only writes the files
    never builds them). ``summary``, and the per-query frames of an evaluation made in
    the driver (small inputs), are local data built from rows this process holds.
    """

    report: dict[str, Any]
    measures: list[Measure]
    names: list[str]
    reader: str = "spark"
    _blobs: Any = field(default=None, repr=False)
    #: output names of the values the report holds beside ``names``, in ``summary``
    #: without per-query rows: RePlay's aggregation modes (``NDCG-Median@10``) and the
    #: measures of the recommendation set (``Coverage@10``, ...)
    set_names: list[str] = field(default_factory=list)

    def measure_values(self, indexes: Sequence[int]) -> dict[int, RunValues]:
        """The defined per-query values of each measure of ``indexes``, by run,
        collected to the driver by one job (for the modes of
        :mod:`sparkeval.engine.aggregation_modes`; a driver evaluation holds them)."""
        if isinstance(self._blobs, DeferredBlobs):
            return wide_values(self._blobs.wide, indexes)
        columns = [measure_column(i) for i in indexes]
        rows = self._wide.where("evaluated").select("run_id", "evaluated", *columns)
        return wide_values(rows.toArrow(), indexes)

    @property
    def _blob_frame(self):
        """The result blobs as a DataFrame (a driver evaluation creates it now)."""
        if isinstance(self._blobs, (DeferredBlobs, ResultFiles)):
            return self._blobs.frame
        return self._blobs

    @cached_property
    def _wide(self):
        """The wide rows as a DataFrame, decoded from the cached blobs when used."""
        if isinstance(self._blobs, DeferredBlobs):
            spark = self._blobs.sparkSession
            return spark.createDataFrame(self._blobs.wide, _wide_schema(len(self.measures)))
        return wide_frame(self._blob_frame, len(self.measures))

    @cached_property
    def summary(self):
        rows = list(zip(*summary_rows(self.report, [*self.names, *self.set_names]), strict=True))
        columns = rows or [[]] * len(SUMMARY_COLUMNS)
        types = (pa.string(), pa.string(), pa.float64(), pa.int64(), pa.int64())
        table = pa.table(
            [pa.array(column, kind) for column, kind in zip(columns, types, strict=True)],
            names=list(SUMMARY_COLUMNS),
        )
        return self._blobs.sparkSession.createDataFrame(table)

    @cached_property
    def per_query(self):
        if isinstance(self._blobs, DeferredBlobs):
            return self._local_per_query(ordered=False)
        return self._exploded(self._wide.where("evaluated")).drop("_order")

    @cached_property
    def ordered_per_query(self):
        if isinstance(self._blobs, DeferredBlobs):
            return self._local_per_query(ordered=True)
        # sorting the wide rows (one per query) is far cheaper than sorting the long rows;
        # explode keeps the order within each partition, and entries come in measure order
        evaluated = self._wide.where("evaluated").orderBy("run_id", "query_id")
        return self._exploded(evaluated).drop("_order")

    def _local_per_query(self, ordered: bool, with_order: bool = False):
        """The per-query rows of a driver evaluation, built in the driver as local data
        (no job until used, and no Python worker then)."""
        wide = self._blobs.wide
        rows = per_query_rows(wide, self.measures, self.names, ordered, with_order)
        return self._blobs.sparkSession.createDataFrame(rows)

    def _exploded(self, frame: DataFrame):
        from pyspark.sql import functions as F

        chosen = per_query_indexes(self.measures)
        entries = F.array(
            *(
                F.struct(
                    F.lit(self.names[i]).alias("measure"),
                    F.lit(order).alias("_order"),
                    F.col(measure_column(i)).alias("value"),
                )
                for order, i in enumerate(chosen)
            )
        )
        return frame.select("run_id", "query_id", F.explode(entries).alias("_e")).select(
            "run_id", "query_id", "_e.measure", "_e._order", "_e.value"
        )

    def write_per_query(self, directory: str | os.PathLike[str]) -> None:
        """Write the per-query values to the new directory ``directory`` as sorted
        ``part-NNNNN.parquet`` files (:mod:`sparkeval.engine.transport.per_query_writer`)."""
        queries = sum(run["queries"]["evaluated"] for run in self.report["runs"].values())
        wide_files = self._blobs.wide_files if isinstance(self._blobs, ResultFiles) else None
        write_per_query(
            self._blobs.sparkSession,
            lambda: (self._blob_frame, self._wide),  # not made when the files are written
            self.measures,
            self.names,
            Path(directory),
            queries,
            wide_files=wide_files,
        )

    def unpersist(self) -> None:
        """Release the cached per-query results."""
        if self._blobs is not None:
            self._blobs.unpersist()


def _schema(*fields: tuple[str, str]):
    """A StructType built in Python (a DDL string would be parsed by the JVM)."""
    from pyspark.sql import types as T

    kinds = {
        "string": T.StringType(),
        "boolean": T.BooleanType(),
        "long": T.LongType(),
        "double": T.DoubleType(),
    }
    return T.StructType([T.StructField(name, kinds[kind]) for name, kind in fields])


def _wide_schema(n_measures: int):
    meta = [
        ("run_id", "string"),
        ("query_id", "string"),
        ("in_run", "boolean"),
        ("in_qrels", "boolean"),
        ("evaluated", "boolean"),
        ("ret_rows", "long"),
        ("beyond_depth", "long"),
        ("qrels_rows", "long"),
        ("rank_gaps", "long"),
    ]
    measures = ((measure_column(i), "double") for i in range(n_measures))
    return _schema(*meta, *measures)


def wide_frame(blobs, n_measures: int):
    """The wide rows held by the cached ``blobs`` frame, as a DataFrame."""

    def decode(batches):
        for table in result_blobs.tables(batches, result_blobs.WIDE):
            yield from table.to_batches()

    return blobs.mapInArrow(decode, schema=_wide_schema(n_measures))


def _normalised(df: DataFrame, kind: str, value: str, integer: bool):
    """Canonical columns and types; rows from the readers already carry ``_bad``.

    DataFrames handed to the Python API get the same checks as files: ids become
    strings, a text id that is not valid UTF-8 is reported (a DataFrame keeps a
    string's bytes, as Parquet does), and so is a value that is not a number (or not
    an integer grade).
    """
    from pyspark.sql import functions as F

    columns = _RUN_COLUMNS if kind == "run" else _QRELS_COLUMNS
    if kind == "run" and TIE_KEY in df.columns:
        columns = (*columns, TIE_KEY)  # the tie keys of --ties rank travel with the rows
    if BAD in df.columns:
        return df.select(*columns)
    missing = [c for c in columns if c != BAD and c not in df.columns]
    if missing:
        raise InputError(
            f"{kind} DataFrame: missing column(s) {', '.join(missing)}; "
            f"columns are: {', '.join(df.columns)}"
        )
    source = f"{kind} DataFrame"
    ids = [c for c in columns if c not in (BAD, value, TIE_KEY)]
    check_id_types(df, ids, source)
    number, bad = numeric_column(df, source, value, ("query_id", "doc_id"), integer)
    bad = F.coalesce(invalid_text_ids(df, ids, source, decoded=False), bad)
    typed = F.when(bad.isNull(), number.cast(spark_type("long"))) if integer else number
    built = {c: id_column(c) for c in columns if c not in (BAD, value, TIE_KEY)}
    built.update({value: typed, BAD: bad})
    if TIE_KEY in columns:
        built[TIE_KEY] = F.col(TIE_KEY).cast(spark_type("double"))
    return df.select(*(built[c].alias(c) for c in columns))


def _failing_bad_rows(value: str):
    """``value``, or a task failure carrying the row's ``_bad`` message where it is set.

    Bad rows stop the job in the stage that reads them, so their messages never
    travel through the shuffle; the driver recovers the message (see :func:`_recover`).
    """
    from pyspark.sql import functions as F

    bad = F.col(BAD)
    return F.when(bad.isNotNull(), F.raise_error(marked_message(bad))).otherwise(F.col(value))


#: the ``_run`` code of shipped qrels rows
_QRELS_ROW = -1
#: the one value column of the shipped rows: the score of a run row, the grade of a qrels row


def _shipped(run_df: DataFrame, qrels_df: DataFrame | None, run_ids: Sequence[str]):
    """Run and qrels rows as one frame, the way the UDF gets them (only the run rows
    when ``qrels_df`` is None).

    Columns ``_run`` (int code into ``run_ids``; -1 marks a qrels row, -2 a run row
    without a run id and null one whose run is not among ``run_ids``),
    ``query_id``, ``doc_id``, ``_value`` (score, or the grade as a double: grades are
    whole numbers within ±1e9, exact in a double), ``_dup`` when near-duplicate
    flags are present and ``_tie`` when the run rows have tie keys (``--ties rank``).
    No run names and no ``_bad`` messages travel: bad rows fail in the stage that
    reads them.
    """
    run_rows = _shipped_run_rows(run_df, run_ids)
    if qrels_df is None:
        return run_rows
    flags = DUPLICATE_FLAG in run_df.columns
    ties = TIE_KEY in run_df.columns
    return run_rows.unionByName(_shipped_qrels_rows(qrels_df, flags, with_code=True, ties=ties))


def _shipped_parts(
    run_df: DataFrame, qrels_df: DataFrame | None, run_ids: Sequence[str]
) -> list[local_handoff.FramePart]:
    """:func:`_shipped`'s rows as the parts the local handoff writes (run rows, then
    qrels rows), each without a ``_run`` column that holds one value on every row: the
    qrels' ``-1``, and the run's code when Spark folds it to a constant (a run whose run
    id is a literal: one file, or a DataFrame without a run id column). The writing
    tasks put it back, so the files are those of :func:`_shipped`'s frame."""
    from sparkeval.engine.plans.constant_columns import constant_value

    run_rows = _shipped_run_rows(run_df, run_ids)
    constant = constant_value(run_rows, RUN_CODE)
    parts = [
        local_handoff.FramePart(run_rows)
        if constant is None
        else local_handoff.FramePart(run_rows.drop(RUN_CODE), (RUN_CODE, constant.value))
    ]
    if qrels_df is not None:
        flags = DUPLICATE_FLAG in run_df.columns
        ties = TIE_KEY in run_df.columns
        qrels_rows = _shipped_qrels_rows(qrels_df, flags, with_code=False, ties=ties)
        parts.append(local_handoff.FramePart(qrels_rows, (RUN_CODE, _QRELS_ROW)))
    return parts


def _shipped_run_rows(run_df: DataFrame, run_ids: Sequence[str]):
    """The run rows of :func:`_shipped`."""
    from pyspark.sql import functions as F

    if len(run_ids) == 1:
        code = F.when(F.col("run_id") == F.lit(run_ids[0]), F.lit(0))
    else:
        lookup = F.create_map(*(F.lit(x) for i, r in enumerate(run_ids) for x in (r, i)))
        code = F.try_element_at(lookup, F.col("run_id"))
    code = F.when(F.col("run_id").isNull(), F.lit(EMPTY_RUN_CODE)).otherwise(code)
    flags = DUPLICATE_FLAG in run_df.columns
    return run_df.select(
        code.cast(spark_type("int")).alias(RUN_CODE),
        "query_id",
        "doc_id",
        _failing_bad_rows("score").cast(spark_type("double")).alias(SHIPPED_VALUE),
        *([F.col(DUPLICATE_FLAG)] if flags else []),
        *([F.col(TIE_KEY)] if TIE_KEY in run_df.columns else []),
    )


def _shipped_qrels_rows(qrels_df: DataFrame, flags: bool, with_code: bool, ties: bool = False):
    """The qrels rows of :func:`_shipped` (without their ``_run`` column of ``-1``
    unless ``with_code``; with a null ``_dup`` column when the run rows have flags, and
    a null ``_tie`` column when they have tie keys)."""
    from pyspark.sql import functions as F

    return qrels_df.select(
        *([F.lit(_QRELS_ROW).cast(spark_type("int")).alias(RUN_CODE)] if with_code else []),
        "query_id",
        "doc_id",
        _failing_bad_rows("relevance").cast(spark_type("double")).alias(SHIPPED_VALUE),
        *([F.lit(None).cast(spark_type("boolean")).alias(DUPLICATE_FLAG)] if flags else []),
        *([F.lit(None).cast(spark_type("double")).alias(TIE_KEY)] if ties else []),
    )


def _split_shipped(rows: pa.Table) -> tuple[pa.Table, pa.Table]:
    """(run table, qrels table) from the shipped rows of one partition."""

    is_qrels = pc.fill_null(pc.equal(rows.column(RUN_CODE), _QRELS_ROW), False)
    run = rows.filter(pc.invert(is_qrels)).rename_columns(
        ["score" if c == SHIPPED_VALUE else c for c in rows.column_names]
    )
    qrels = rows.filter(is_qrels)
    qrels = pa.table(
        {
            "query_id": qrels.column("query_id"),
            "doc_id": qrels.column("doc_id"),
            "relevance": qrels.column(SHIPPED_VALUE).cast(pa.int64()),
        }
    )
    return run, qrels


def _recover(exc: BaseException) -> BaseException:
    """The InputError a worker raised inside ``exc`` (with its line number), else ``exc``."""
    if input_error_from_spark(exc) is None:
        return exc
    return classify_failure(exc) or exc  # the marked message, with its line number


def evaluate(
    spark: SparkSession,
    run_df: DataFrame | None,
    qrels_df: DataFrame | None,
    measures: Sequence[str | Measure] | str,
    *,
    queries: str = "qrels",
    rel_level: int = 1,
    depth: int | None = None,
    names: str | Mapping[str, str] = "canonical",
    run_ids: Sequence[str] | None = None,
    buckets: int | None = None,
    near_duplicates: DataFrame | None = None,
    direct: DirectPlan | None = None,
    ready: ReadyPieces | None = None,
    empty_runs: bool = False,
    ranks: str | None = None,
    ties: str = "doc-id",
) -> Evaluation:
    """Evaluate runs against qrels on Spark; nothing is written.

    Args:
        spark: the SparkSession.
        run_df: ``[run_id,] query_id, doc_id, score`` (a missing run_id means one run, "run").
        qrels_df: ``query_id, doc_id, relevance``.
        measures: names (``["nDCG@10", "map"]``, ``"official"``) or parsed measures.
        queries: ``qrels`` (default), ``both`` or ``run`` — which queries are averaged.
        rel_level: grade >= rel_level is relevant (trec_eval ``-l``).
        depth: keep the first ``depth`` docs of each ranking (trec_eval ``-M``).
        names: ``canonical`` or ``trec`` (trec_eval names wherever trec_eval has the measure).
        run_ids: all run ids, when already known (saves a pass over the run).
        buckets: number of hash buckets (default: :func:`default_buckets`).
        near_duplicates: ``doc_a, doc_b`` pairs; a doc that near-duplicates a higher-ranked
            doc gains nothing, ``NearDup@k`` becomes available and the report gets a
            ``near_duplicates`` entry (see :mod:`sparkeval.engine.plans.near_dup_flags`).
        direct: instead of ``run_df`` and ``qrels_df`` (pass None), the inputs as Parquet
            row groups for the workers to read themselves (:mod:`sparkeval.io.direct`);
            needs ``run_ids``.  Raises :class:`~sparkeval.io.direct_input.NotDirect` when a
            value needs the checks of the Spark readers: read the inputs with them and
            call again.
        ready: ``direct``'s rows already written by bucket in the driver
            (:mod:`sparkeval.engine.transport.early_pieces`); used when this session
            hands files over and the bucket count is the same, else removed.  On a
            local master without it the driver reads them in threads now, unless
            ``spark.sparkeval.driverRead`` is ``false``.
        empty_runs: evaluate a run without rows (its queries retrieved nothing) instead
            of raising :class:`~sparkeval.errors.EmptyRunError`.
        ranks: the run's scores are ``-rank`` of a rank column, read as an ``order``
            or as the ``position`` itself (``EvalOptions.ranks``); None: scores.
        ties: how tied scores are ordered (``EvalOptions.ties``): ``doc-id``, or ``rank``
            by the run rows' ``_tie`` column (the readers' rank, ``--ties rank``); the
            rows are then read by Spark's readers, not by the workers.

    Returns:
        An :class:`Evaluation`; its per-query results are cached until ``unpersist()``.

    Example::

        ev = evaluate(spark, run_df, qrels_df, ["nDCG@10", "AP"])
        ev.summary.show()
    """

    options = EvalOptions(queries=queries, rel_level=rel_level, depth=depth, ranks=ranks, ties=ties)  # type: ignore[arg-type]
    if ties != "doc-id" and direct is not None:
        raise ValueError("direct inputs carry no tie keys: read them with Spark's readers")
    check_ties_allowed(ties, near_duplicates is not None)
    if ties != "doc-id" and run_df is not None and TIE_KEY not in run_df.columns:
        raise ConfigError(
            f"ties {ties}: the run DataFrame has no {TIE_KEY} column (read the run with "
            "sparkeval.evaluate or the readers' ties='rank')"
        )
    measure_list = as_measures(measures)
    names = name_labels(measures, names)
    out_names = output_names(measure_list, names, rel_level)
    if near_duplicates is None:
        check_flags_available(measure_list)

    estimate = None if direct is None else direct.size
    scanned = None
    if direct is None and near_duplicates is None and run_ids is None and ties == "doc-id":
        # DataFrames that only scan Parquet files: the workers read the files themselves;
        # a scan's estimate needs no optimizer, other plans get the optimised one below
        estimate = plan_bytes(run_df, qrels_df, optimized=False)
        scanned = _scanned_plan(spark, run_df, qrels_df, estimate)
        if scanned is not None:
            try:
                return evaluate(
                    spark, None, None, measures, queries=queries, rel_level=rel_level,
                    depth=depth, names=names, run_ids=scanned.run_ids, buckets=buckets,
                    direct=scanned, empty_runs=empty_runs, ranks=ranks,
                )  # fmt: skip
            except NotDirect:
                pass  # a value for the DataFrame path's checks
    # (a Connect server's estimate above is already the optimised plan's)
    if direct is None and scanned is None and not (is_connect(spark) and estimate is not None):
        estimate = plan_bytes(run_df, qrels_df)
    if buckets is None:
        buckets = default_buckets(spark, estimate)
    if buckets < 1:
        raise ConfigError(f"buckets must be >= 1, got {buckets}")
    buckets = capped_buckets(buckets, estimate)
    if direct is not None:
        if near_duplicates is not None or run_ids is None:
            raise ValueError("direct inputs take run_ids and no near_duplicates")
        run_ids = list(run_ids)
        buckets = buckets_for(direct, buckets)
        handoff = local_handoff.handoff_enabled(spark)
        if ready is None and handoff and driver_reads(spark):
            ready = read_in_driver(direct, buckets, spark)
        usable = _usable(ready, direct, buckets, handoff)
        if usable is not None:
            wide, stats = _evaluate_through_files(
                spark,
                lambda target: usable.units_by_bucket,
                lambda pieces, target: local_handoff.bucket_tasks(direct, pieces, target),
                (measure_list, options, run_ids),
                usable.directory,
            )
        elif handoff:
            wide, stats = _evaluate_through_files(
                spark,
                lambda target: local_handoff.write_pieces(spark, direct, run_ids, buckets, target),
                lambda pieces, target: local_handoff.bucket_tasks(direct, pieces, target),
                (measure_list, options, run_ids),
            )
        else:
            payloads = direct_payloads(spark, direct, run_ids, buckets)
            with session_settings(spark, {ADAPTIVE_KEY: "false"}):
                wide, stats = _evaluate_shipped(
                    payloads, unpack_partition, measure_list, options, run_ids
                )
        reader = "workers" if usable is None else "driver"
    else:
        if run_df is None or qrels_df is None:
            raise ValueError("give run_df and qrels_df, or direct")
        wide, stats, flags, run_ids = _evaluate_spark_read_frames(
            spark,
            run_df,
            qrels_df,
            measure_list,
            options,
            run_ids,
            buckets,
            near_duplicates,
            estimate,
        )
        reader = "spark"

    report = build_report(stats, measure_list, out_names, run_ids, options, names, empty_runs)
    if near_duplicates is not None:
        report["near_duplicates"] = flags.report
    return Evaluation(report, measure_list, out_names, reader, wide)


def _scanned_plan(
    spark: SparkSession,
    run_df: DataFrame | None,
    qrels_df: DataFrame | None,
    estimate: int | None,
) -> DirectPlan | None:
    """The direct plan of DataFrames that are bare scans of local Parquet files
    (:mod:`sparkeval.io.scan_plan`), unless they are small enough for the
    driver path (one job, cheaper than any read by tasks) or not DataFrames of a JVM."""
    if run_df is None or qrels_df is None or fits_in_driver(estimate) or is_connect(spark):
        return None
    from sparkeval.io.scan_plan import scanned_parquet_plan

    return scanned_parquet_plan(run_df, qrels_df)


#: buckets per core of the session, at most, when the caller does not set the count
BUCKETS_PER_CORE = 4


def default_buckets(spark: SparkSession, estimated_bytes: int | None) -> int:
    """``spark.sql.shuffle.partitions``, at most :data:`BUCKETS_PER_CORE` per core of the
    session, or fewer for a small input: one bucket per :data:`BYTES_PER_BUCKET` of its
    estimated size, at least one.

    Example: 50 rows of a unit test are one bucket (one task), not 200; 10M rows on a
    cluster of two one-core executors (200 shuffle partitions) are 8 buckets, not 43.
    """
    shuffle = int(spark.conf.get("spark.sql.shuffle.partitions") or 200)
    return bucket_count(core_bounded(shuffle, parallelism(spark)), estimated_bytes)


def core_bounded(shuffle_partitions: int, cores: int) -> int:
    """The shuffle partitions, at most :data:`BUCKETS_PER_CORE` per core: a bucket is
    one Spark task, which costs its setup, so more buckets than the cores need for an
    even load only add time (a larger input also gets one bucket per
    :data:`~sparkeval.engine.transport.arrow_exchange.BUCKET_BYTES` when the workers
    read it, which bounds a worker's memory).

    Example: ``core_bounded(200, 2)`` is 8; ``core_bounded(3, 2)`` is 3.
    """
    return min(shuffle_partitions, BUCKETS_PER_CORE * max(1, cores))


def local_default_buckets(settings: Mapping[str, str], cores: int) -> int | None:
    """The default bucket count (before the input's size) of the local session that
    :func:`~sparkeval.spark.build_session` starts with the config's ``settings`` on
    ``cores`` cores: what :func:`default_buckets` will find there (the driver's early
    read, :func:`sparkeval.evaluation.job.start_early_read`, splits the rows by it);
    None when a setting is not a whole number.

    Example: ``local_default_buckets({"spark.default.parallelism": "1"}, 2)`` is 4.
    """
    shuffle = settings.get("spark.sql.shuffle.partitions") or local_shuffle_partitions()
    try:
        return core_bounded(int(shuffle), int(settings.get("spark.default.parallelism") or cores))
    except ValueError:
        return None


def bucket_count(default: int, estimated_bytes: int | None) -> int:
    """``default`` buckets, or one per :data:`BYTES_PER_BUCKET` of a smaller input.

    Example: ``bucket_count(200, 10 << 20)`` is 3.
    """
    if estimated_bytes is None:
        return default
    return max(1, min(default, -(-estimated_bytes // BYTES_PER_BUCKET)))


#: the smallest input share worth a bucket of its own when ``buckets`` is given
MIN_BYTES_PER_BUCKET = 64 << 10


def capped_buckets(requested: int, estimated_bytes: int | None) -> int:
    """``requested``, lowered to one bucket per :data:`MIN_BYTES_PER_BUCKET` of the
    input (each bucket is a Spark task: 100,000 of them for 3 lines would run for
    minutes); says so on stderr when it lowers it.

    Example: ``--buckets 100000`` on a 200-byte input runs 1 bucket.
    """
    useful = useful_buckets(requested, estimated_bytes)
    if requested <= useful:
        return requested
    from sparkeval.status import status

    status(
        f"buckets lowered from {requested} to {useful} "
        f"(one per {MIN_BYTES_PER_BUCKET >> 10} KiB of the {estimated_bytes}-byte input)"
    )
    return useful


def direct_buckets(requested: int | None, default: int, direct: DirectPlan) -> int:
    """The buckets :func:`evaluate` splits ``direct``'s rows into, for ``buckets=requested``
    in a session whose :func:`core_bounded` shuffle partitions are ``default`` (no
    status line)."""
    buckets = requested if requested is not None else bucket_count(default, direct.size)
    return buckets_for(direct, useful_buckets(buckets, direct.size))


def useful_buckets(requested: int, estimated_bytes: int | None) -> int:
    """``requested``, at most one bucket per :data:`MIN_BYTES_PER_BUCKET` of the input
    (what :func:`capped_buckets` keeps, without saying so)."""
    if estimated_bytes is None:
        return requested
    return min(requested, max(1, -(-estimated_bytes // MIN_BYTES_PER_BUCKET)))


def plan_bytes(*frames: DataFrame | None, optimized: bool = True) -> int | None:
    """Spark's size estimate of the frames (file sizes, in-memory data), without a job;
    None where the plan is not reachable or any frame is missing. A Spark Connect
    frame's estimate is asked of its server (:mod:`~sparkeval.engine.plans.remote_estimate`).

    ``optimized=False`` estimates the analysed plan with cached data in place, without
    the optimizer (whose first run in a new session takes about 0.2 s): the same
    figure for a scan under selections and filters, maybe another for other plans.
    """
    total = 0
    for frame in frames:
        if frame is None:
            return None
        try:
            execution = frame._jdf.queryExecution()
            plan = execution.optimizedPlan() if optimized else execution.withCachedData()
            stats = plan.stats()
            total += int(str(stats.sizeInBytes()))
        except Exception:  # a Connect DataFrame has no JVM handle
            remote = remote_plan_bytes(frame)
            if remote is None:
                return None
            total += remote
    return total


def _evaluate_spark_read_frames(
    spark: SparkSession,
    run_df: DataFrame,
    qrels_df: DataFrame,
    measure_list,
    options,
    run_ids,
    buckets,
    pairs,
    estimate: int | None = None,
):
    """(wide rows, statistics, near-duplicate flags or None, run ids) of Spark-read inputs.

    Small inputs (by Spark's ``estimate`` of their size) without near-duplicate pairs
    are collected in one job and evaluated in the driver
    (:mod:`sparkeval.engine.plans.driver_plan`).
    """
    from pyspark.sql import functions as F

    in_driver = pairs is None and fits_in_driver(estimate)
    untied = TIE_KEY not in run_df.columns  # the plain rows carry no tie keys
    # inputs of unknown size (an RDD made a DataFrame): maybe small, which reading a
    # list's rows back, or one job collecting at most PROBE_ROWS + 1 rows of each of
    # few partitions, tells
    probe = (
        untied
        and pairs is None
        and not in_driver
        and probed(estimate)
        and (few_partitions(run_df, qrels_df) or made_of_lists(run_df, qrels_df))
    )
    if (in_driver and untied) or probe:
        task = (measure_list, options, run_ids)
        limit = PROBE_ROWS if probe else None
        plain = evaluate_plain_in_driver(spark, run_df, qrels_df, task, estimate, limit)
        if plain is not None:
            wide, stats, run_ids = plain
            return wide, stats, None, run_ids
    if "run_id" not in run_df.columns:
        run_df = run_df.withColumn("run_id", F.lit(DEFAULT_RUN_ID))
        run_ids = run_ids or [DEFAULT_RUN_ID]  # one run: no job to find the run ids
    scanned_qrels = qrels_df
    run_df = _normalised(run_df, "run", "score", integer=False)
    qrels_df = _normalised(qrels_df, "qrels", "relevance", integer=True)
    if in_driver:
        checks = (_failing_bad_rows, _recover)
        task = (measure_list, options, run_ids)
        wide, stats, run_ids = evaluate_in_driver(spark, run_df, qrels_df, task, checks, estimate)
        return wide, stats, None, run_ids
    run_ids = list(found_run_ids(distinct_values(run_df, "run_id")) if run_ids is None else run_ids)
    flags = None
    if pairs is not None:
        flags = flag_near_duplicates(run_df, pairs, run_ids)
        run_df = flags.run_df
    # Spark's rows reach the workers as Arrow batches: no size measuring after each row
    with arrow_batches_bounded_by_rows(spark):
        try:
            handoff = local_handoff.handoff_enabled(spark)
            read_qrels = None
            if handoff and flags is None:
                read_qrels = _read_scanned_qrels(spark, scanned_qrels, buckets)
            if read_qrels is not None:
                wide, stats = _evaluate_with_read_qrels(
                    spark, run_df, read_qrels, buckets, (measure_list, options, run_ids)
                )
            elif handoff:
                parts = _shipped_parts(run_df, qrels_df, run_ids)

                def frame_tasks(pieces, target):
                    tasks, rows_of = local_handoff.frame_bucket_tasks(pieces, target)
                    return tasks, lambda index: _split_shipped(rows_of(index))

                wide, stats = _evaluate_through_files(
                    spark,
                    lambda target: local_handoff.write_frame_pieces(parts, buckets, target),
                    frame_tasks,
                    (measure_list, options, run_ids),
                )
            else:
                # one exchange: every query's run and qrels rows land in the same partition,
                # whole (no sort by key, unlike a grouped cogroup)
                rows = _shipped(run_df, qrels_df, run_ids).repartition(buckets, "query_id")
                wide, stats = _evaluate_shipped(
                    rows, _split_shipped, measure_list, options, run_ids
                )
        finally:
            if flags is not None:
                flags.release()
    return wide, stats, flags, run_ids


def read_in_driver(direct: DirectPlan, buckets: int, spark: SparkSession) -> ReadyPieces | None:
    """``direct``'s rows written by bucket now, by one thread of this (the driver's)
    process per local core, as the local handoff's read job would (None: let that job
    read them)."""
    parent = local_handoff.scratch_parent(spark)
    return read_pieces(direct, buckets, parallelism(spark), parent)


def driver_reads(spark: SparkSession) -> bool:
    """Whether the driver may read directly-read inputs itself for the handoff
    (:data:`DRIVER_READ_KEY`): on a local master unless the setting is ``false``; on
    other masters (a shared handoff directory) only when it is ``true``, since there
    the executors' read job spreads the reading over the cluster."""
    setting = spark.conf.get(DRIVER_READ_KEY, "")
    if (spark.sparkContext.master or "").startswith("local"):
        return local_handoff.switched_on(setting)
    return (setting or "").strip().lower() == "true"


def _read_scanned_qrels(
    spark: SparkSession, qrels_df: DataFrame, buckets: int
) -> ReadyPieces | None:
    """The qrels written by bucket in the driver, as the direct read writes them, when
    ``qrels_df`` (as the caller gave it) is a bare scan of local Parquet files
    (:mod:`sparkeval.io.scan_plan`) and every row passes the direct read's
    checks; None otherwise (Spark then reads them with the run, and reports a bad row).

    Example: a pipeline's computed run DataFrame and ``spark.table("qrels")``: only the
    run's rows are converted by Spark, the qrels' are read from their files.
    """
    if is_connect(spark) or not driver_reads(spark):
        return None
    from sparkeval.io.scan_plan import scanned_input

    source = scanned_input(qrels_df, "qrels")
    if source is None:
        return None
    return read_in_driver(DirectPlan((), source, ()), buckets, spark)


def _evaluate_with_read_qrels(
    spark: SparkSession, run_df: DataFrame, read_qrels: ReadyPieces, buckets: int, task
):
    """(cached result blobs, summary statistics) of the normalised ``run_df``, whose
    rows Spark computes and job 1 hands over as files, and qrels already written by
    bucket in the driver (:func:`_read_scanned_qrels`); the qrels' files are removed
    at the end, whatever happens."""
    qrels_directory = read_qrels.directory

    def bucket_tasks(pieces, target):
        tasks, rows_of = local_handoff.frame_and_read_bucket_tasks(
            (pieces, target), (read_qrels.units_by_bucket, qrels_directory)
        )

        def unpack(index: int) -> tuple[pa.Table, pa.Table]:
            run_rows, qrels = rows_of(index)
            run = RUN_SCHEMA.empty_table() if run_rows is None else _split_shipped(run_rows)[0]
            return run, QRELS_SCHEMA.empty_table() if qrels is None else qrels

        return tasks, unpack

    try:
        _, _, run_ids = task
        parts = _shipped_parts(run_df, None, run_ids)
        return _evaluate_through_files(
            spark,
            lambda target: local_handoff.write_frame_pieces(parts, buckets, target),
            bucket_tasks,
            task,
        )
    finally:
        shutil.rmtree(qrels_directory, ignore_errors=True)


def _usable(
    ready: ReadyPieces | None, direct: DirectPlan, buckets: int, handoff: bool
) -> ReadyPieces | None:
    """``ready`` when it holds ``direct``'s rows in ``buckets`` buckets and this session
    hands files over; otherwise its files are removed and None is returned."""
    if ready is None:
        return None
    if handoff and ready.plan == direct and ready.buckets == buckets:
        return ready
    shutil.rmtree(ready.directory, ignore_errors=True)
    return None


def _evaluate_through_files(
    spark: SparkSession, write, bucket_tasks, task, directory: Path | None = None
):
    """(result blobs, summary statistics) of inputs whose buckets are handed to the
    evaluation as local files (:mod:`sparkeval.engine.transport.local_handoff`).

    Args:
        write: ``write(directory)`` runs job 1, which writes the files, and returns
            the units of each bucket.
        bucket_tasks: ``bucket_tasks(pieces, directory)``, job 2's number of tasks (one
            per bucket) and the function that turns a task's index into its (run rows,
            qrels rows).
        task: the measures, the options and the run ids.
        directory: the files' directory when they exist already (``write`` returns
            their units); by default a new one.

    Job 2 is :func:`~sparkeval.engine.plans.bucket_job.evaluate_buckets`; job 1 runs
    with :data:`~sparkeval.engine.plans.bucket_job.PLAIN_WORKER_SETTINGS`, so that both
    jobs' tasks run in the same Python workers.  A bad row
    fails job 1 with its message (a directly-read value for the Spark readers, with
    :class:`NotDirect`); the files are removed once evaluated, or the evaluation failed.
    """
    if directory is None:
        directory = local_handoff.new_directory(spark)
    results = new_results_directory(spark)
    try:
        try:
            with session_settings(spark, PLAIN_WORKER_SETTINGS):
                pieces = write(directory)
            tasks, unpack = bucket_tasks(pieces, directory)
            return evaluate_buckets(spark, tasks, unpack, task, results)
        except Exception as exc:
            raise _task_failure(exc) from exc
    except BaseException:
        shutil.rmtree(results, ignore_errors=True)
        raise
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def _task_failure(exc: BaseException) -> BaseException:
    """What to raise for a failed job: :class:`NotDirect` when a directly-read value
    needs the Spark readers, an :class:`InputError` for a bad input row, else ``exc``."""
    return NotDirect.found_in(exc) or _recover(exc)


#: Spark's adaptive query execution: off for the direct read's exchange, whose plan
#: (the workers' row groups, an exchange into a fixed number of buckets, the
#: evaluation) leaves it nothing to adapt, while it runs the shuffle's map stage and
#: the cached evaluation's scan as jobs of their own.  Two-executor standalone cluster,
#: 10M rows, 5 alternating pairs: 0.905x the time (median of the pairs' ratios).  A
#: DataFrame of the caller's keeps it: its own plan may need it (joins, skew).
ADAPTIVE_KEY = "spark.sql.adaptive.enabled"


def _evaluate_shipped(rows, unpack, measure_list, options, run_ids):
    """(cached result blobs, summary statistics) of shipped ``rows`` (one partition per bucket).

    ``unpack`` turns a partition's Arrow rows into (run table, qrels table).  Each
    partition emits its wide rows and then its partial sums as blobs
    (:func:`~sparkeval.engine.plans.bucket_job.evaluated_blobs`); the summary reads only
    the partial sums back from the cache.

    Raises:
        NotDirect: a directly-read input holds a value for the Spark readers to judge.
    """
    from pyspark.sql import functions as F

    task = (measure_list, options, run_ids)

    def evaluate_partition(batches):
        from sparkeval.faults import in_task

        in_task()  # fault injection for reliability tests; off unless SPARKEVAL_FAULT is set
        keep_freed_memory()
        batches = list(batches)
        if not batches:
            return
        run_table, qrels_table = unpack(pa.Table.from_batches(batches))
        yield from evaluated_blobs(run_table, qrels_table, task, None)

    blobs = rows.mapInArrow(evaluate_partition, schema=result_blobs.blob_schema()).persist()
    try:
        collected = blobs.where(F.col("kind") == result_blobs.PARTIAL).collect()
        partials = [row for r in collected for row in result_blobs.decode(r.blob).to_pylist()]
        return blobs, combine(partials, measure_list)
    except Exception as exc:
        blobs.unpersist()
        raise _task_failure(exc) from exc
