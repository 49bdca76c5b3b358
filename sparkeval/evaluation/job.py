"""The `evaluate` job body: read inputs, evaluate on Spark, write outputs atomically."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import TYPE_CHECKING

from sparkeval import faults
from sparkeval.compat import CompatPlan, how_computed
from sparkeval.engine.plans.recommend import evaluate_plan
from sparkeval.engine.plans.spark_engine import Evaluation
from sparkeval.errors import ConfigError, EmptyRunError, InputError, SparkevalError
from sparkeval.evaluation.options import input_order_refusal
from sparkeval.evaluation.run_rows import read_evaluated_runs
from sparkeval.io.direct import all_direct_formats
from sparkeval.io.direct_input import DirectPlan, NotDirect
from sparkeval.io.direct_plan import plan_direct_inputs
from sparkeval.io.pairs import read_pairs
from sparkeval.io.readers import check_exists, default_run_id, no_rows_message
from sparkeval.io.truth import RelevanceRule, read_truth
from sparkeval.job.runner import log
from sparkeval.output import atomic_output_dir, check_output_path, write_summary
from sparkeval.spark import is_connect

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from sparkeval.engine.local_files import LocalFileEvaluation
    from sparkeval.engine.transport.early_pieces import EarlyPieces, ReadyPieces
    from sparkeval.evaluation.intent_aware import IntentAwareResults
    from sparkeval.evaluation.options import EvaluateConfig
    from sparkeval.evaluation.set_measures import SetResults

READ_BY = {
    "local": "this process, without Spark (Parquet row groups or text ranges, as Arrow)",
    "workers": "the Python workers (Parquet row groups or text ranges, as Arrow)",
    "driver": "the driver's threads (Parquet row groups or text ranges, as Arrow)",
    "spark": "Spark's readers",
}


def start_early_read(config: EvaluateConfig) -> EarlyPieces | None:
    """Start reading the inputs in the driver while Spark starts, when this process has
    no session yet, the new one will be local and hand files over, and the workers
    would read the inputs without a Spark job first (no ``--where``, no run id
    column): :mod:`sparkeval.engine.transport.early_pieces`.  None when it does not
    apply, or ``spark.sparkeval.driverRead`` is ``false``."""
    from sparkeval.engine.plans.spark_engine import direct_buckets, local_default_buckets
    from sparkeval.engine.transport.early_pieces import DRIVER_READ_KEY, EarlyPieces
    from sparkeval.engine.transport.local_handoff import (
        HANDOFF_KEY,
        settings_parent,
        switched_on,
    )
    from sparkeval.spark import local_session_cores, session_running

    settings = dict(config.spark)
    cores = local_session_cores(config.master, config.remote)
    if cores is None or session_running():
        return None  # no local session to start: nothing to read beside
    if not all(switched_on(settings.get(key)) for key in (HANDOFF_KEY, DRIVER_READ_KEY)):
        return None
    if config.buckets is not None and config.buckets < 1:
        return None
    default = local_default_buckets(settings, cores)
    if default is None:
        return None  # Spark judges its own settings

    return EarlyPieces.start(
        lambda: _direct_plan(None, config, config.plan()),
        lambda direct: direct_buckets(config.buckets, default, direct),
        cores,
        settings_parent(settings),
    )


def run_evaluate(
    spark: SparkSession, config: EvaluateConfig, early: EarlyPieces | None = None
) -> Evaluation:
    """Run the evaluate job described by ``config``; returns the evaluation, still cached.

    Writes ``OUT/per_query.parquet`` (``run_id, query_id, measure, value``, sorted by
    run, query and measure order, in ``part-NNNNN.parquet`` files), ``OUT/summary.json``
    and a ``_SUCCESS`` marker, all or nothing.  The same inputs and settings give
    byte-identical files; the elapsed time is logged to stderr, not written.  The
    caller prints the table (:func:`sparkeval.commands.evaluate.show`) and releases
    the cached results with ``evaluation.unpersist()``.  ``early`` is the read
    :func:`start_early_read` started before Spark (used when it fits this session).
    """
    target = check_output_path(config.out, config.input_paths(), config.overwrite)
    plan = config.plan()
    if plan.ties == "input-order":
        raise ConfigError(input_order_refusal("--ties"))
    sets = _spark_set_values(spark, config)
    ready = early.result() if early is not None else None
    direct = ready.plan if ready is not None else _direct_plan(spark, config, plan)
    evaluation = None
    try:
        if direct is not None:
            evaluation = _evaluate_direct(spark, config, plan, direct, ready)
        if evaluation is None:
            evaluation = _evaluate_spark_read(spark, config, plan, announce=direct is None)
    except EmptyRunError as exc:
        raise _no_rows(exc, config) from None
    except InputError as exc:
        raise _with_partition_hint(exc, config) from None
    finally:
        if ready is not None:  # the engine removes it once used; not if it failed first
            shutil.rmtree(ready.directory, ignore_errors=True)
    intent_aware = _spark_intent_aware_values(spark, config, evaluation)
    _add_set_values(config, evaluation, sets)
    _add_intent_aware_values(config, evaluation, intent_aware)
    _write_outputs(config, target, plan, evaluation, sets, intent_aware)
    return evaluation


def run_evaluate_locally(config: EvaluateConfig) -> LocalFileEvaluation:
    """Run the evaluate job in this process, without Spark
    (:mod:`sparkeval.engine.local_files`); the same outputs as :func:`run_evaluate`.

    Raises:
        InputError: an input path that is missing or cannot be read.
        NotDirect: a value (or an input's plan) needs Spark's readers; nothing was written.
    """
    from sparkeval.engine.held_near_dups import read_local_pairs
    from sparkeval.engine.local_files import evaluate_direct
    from sparkeval.engine.local_processes import worker_count

    target = check_output_path(config.out, config.input_paths(), config.overwrite)
    for path in config.input_paths():
        check_exists(path)  # named as Spark's readers name it, not as a plan left to them
    plan = config.plan()
    why_not: list[str] = []
    direct = _direct_plan(None, config, plan, why_not, flags_here=True)
    if direct is None:
        raise NotDirect(why_not[0] if why_not else "an input the direct readers do not plan")
    sets = _local_set_values(config, direct)
    intent_aware = _local_intent_aware_values(config, direct)
    pairs = None
    if config.near_duplicates:  # flagged in one process
        pairs = read_local_pairs(config.near_duplicates, config.near_duplicates_format)
    workers = 1 if pairs is not None else worker_count(config.local_workers, direct.size)
    processes = f" in {workers} processes" if workers > 1 else ""
    log(f"evaluating {len(direct.run_ids)} run(s){processes}: {', '.join(direct.run_ids)}")
    try:
        evaluation = evaluate_direct(
            direct, plan, rel_level=config.rel_level, depth=config.depth, names=config.names,
            workers=workers, pairs=pairs,
        )  # fmt: skip
    except EmptyRunError as exc:
        raise _no_rows(exc, config) from None
    except InputError as exc:
        raise _with_partition_hint(exc, config) from None
    _add_set_values(config, evaluation, sets)
    _add_intent_aware_values(config, evaluation, intent_aware)
    _write_outputs(config, target, plan, evaluation, sets, intent_aware)
    return evaluation


def _spark_intent_aware_values(
    spark: SparkSession, config: EvaluateConfig, evaluation: Evaluation
) -> IntentAwareResults | None:
    """The intent-aware means of the runs on Spark, or None without them (the
    evaluation's cache is released on failure)."""
    if not config.intent_aware_measures():
        return None
    from sparkeval.evaluation.intent_aware import spark_intent_aware_values

    log(
        f"measuring {', '.join(m.name for m in config.intent_aware_measures())} with "
        f"{config.subtopic_qrels}"
    )
    try:
        values = spark_intent_aware_values(spark, config)
    except BaseException:
        evaluation.unpersist()
        raise
    _log_skipped(values)
    return values


def _log_skipped(results: IntentAwareResults) -> None:
    """A status line per run whose queries were not all scored by the intent-aware
    measures (those of one input only)."""
    for run_id, blocks in results.values.items():
        counts = next(iter(blocks.values()))
        if counts["run_only"] or counts["qrels_only"]:
            log(
                f"run {run_id}: intent-aware measures over {counts['queries']} queries; "
                f"skipped {counts['run_only']} without subtopic qrels and "
                f"{counts['qrels_only']} of the subtopic qrels not in the run"
            )


def _local_intent_aware_values(
    config: EvaluateConfig, direct: DirectPlan
) -> IntentAwareResults | None:
    """The intent-aware means of the runs in this process, or None without them."""
    if not config.intent_aware_measures():
        return None
    from sparkeval.evaluation.intent_aware import local_intent_aware_values

    log(
        f"measuring {', '.join(m.name for m in config.intent_aware_measures())} with "
        f"{config.subtopic_qrels}"
    )
    values = local_intent_aware_values(config, direct)
    _log_skipped(values)
    return values


def _add_intent_aware_values(
    config: EvaluateConfig,
    evaluation: Evaluation | LocalFileEvaluation,
    results: IntentAwareResults | None,
) -> None:
    """The intent-aware means added to the evaluation's report (nothing without them)."""
    if results is None:
        return
    from sparkeval.evaluation.intent_aware import add_intent_aware_values

    try:
        add_intent_aware_values(
            evaluation, config.intent_aware_measures(), results.values, config.names,
            config.subtopic_qrels,
        )  # fmt: skip
    except BaseException:
        evaluation.unpersist()
        raise


def _local_set_values(config: EvaluateConfig, direct: DirectPlan) -> SetResults | None:
    """The set measures (``Coverage@k``, ...) read and measured in this process, or
    None without them (:func:`sparkeval.evaluation.set_measures.local_set_values`).

    Raises:
        NotDirect: inputs whose rows Spark's readers give.
    """
    if not config.set_measures():
        return None
    from sparkeval.evaluation.set_measures import local_set_values

    return local_set_values(config, direct)


def _spark_set_values(spark: SparkSession, config: EvaluateConfig) -> SetResults | None:
    """The set measures measured on Spark, or None without them."""
    if not config.set_measures():
        return None
    from sparkeval.evaluation.set_measures import spark_set_values

    log(f"measuring {', '.join(m.name for m in config.set_measures())} {config.set_inputs()}")
    return spark_set_values(spark, config)


def _add_set_values(
    config: EvaluateConfig, evaluation: Evaluation | LocalFileEvaluation, sets: SetResults | None
) -> None:
    """The set measures added to the evaluation's report (nothing without them)."""
    if sets is None:
        return
    from sparkeval.evaluation.set_measures import add_set_measures

    try:
        add_set_measures(evaluation, config, sets.values)
    except BaseException:
        evaluation.unpersist()
        sets.unpersist()
        raise


def _write_outputs(
    config: EvaluateConfig,
    target: Path | str,
    plan: CompatPlan,
    evaluation: Evaluation | LocalFileEvaluation,
    sets: SetResults | None = None,
    intent_aware: IntentAwareResults | None = None,
) -> None:
    """Write ``per_query.parquet``, ``summary.json`` and ``summary.parquet`` (and
    ``per_user_set.parquet`` with per-user set measures, ``per_query_intent_aware.parquet``
    with intent-aware measures) to ``target``, all or nothing; the evaluation's cache is
    released on failure."""
    files = "per_query.parquet, summary.json, summary.parquet"
    try:
        report = dict(evaluation.report)
        if _evaluation_finds_empty_qrels(plan) and not report["qrels"]["rows"]:
            raise InputError(no_rows_message(config.qrels_input(), "qrels", config.qrels_where))
        log(f"inputs read by {READ_BY[evaluation.reader]}")
        log(_evaluated(report))
        if "compat" in report:
            log(how_computed(report["compat"]))
        report["inputs"] = {"runs": config.run_inputs(), "qrels": config.qrels_input()}
        if config.train:
            report["inputs"]["train"] = config.train
        if config.item_categories:
            report["inputs"]["item_categories"] = config.item_categories
        if config.subtopic_qrels:
            report["inputs"]["subtopic_qrels"] = config.subtopic_qrels
        if config.near_duplicates:
            report["inputs"]["near_duplicates"] = config.near_duplicates
            counts = report.pop("near_duplicates")
            report["near_duplicates"] = {"path": config.near_duplicates, **counts}
        with atomic_output_dir(target) as staging:
            evaluation.write_per_query(staging / "per_query.parquet")
            if sets is not None and sets.write(staging):
                files += ", per_user_set.parquet"
            if intent_aware is not None:
                files += ", " + _write_intent_aware(config, intent_aware, staging)
            faults.in_driver("write")
            write_summary(staging, report, "evaluate", config.input_paths())
        if sets is not None and config.per_query:
            evaluation.set_rows = sets.rows()
    except BaseException:
        evaluation.unpersist()
        raise
    finally:
        if sets is not None:
            sets.unpersist()
    log(f"results in {target} ({files})")


def _write_intent_aware(
    config: EvaluateConfig, results: IntentAwareResults, directory: Path
) -> str:
    """Write ``per_query_intent_aware.parquet`` into ``directory``; its name."""
    from sparkeval.evaluation.intent_aware import FILE_NAME
    from sparkeval.output import write_arrow_parquet

    table = results.table(config.intent_aware_measures(), config.names)
    write_arrow_parquet(table, directory / FILE_NAME)
    return FILE_NAME


def _evaluate_direct(
    spark: SparkSession,
    config: EvaluateConfig,
    plan: CompatPlan,
    direct: DirectPlan,
    ready: ReadyPieces | None = None,
) -> Evaluation | None:
    """Evaluate inputs the Python workers read (or the driver, ``ready``); None when a
    value needs Spark's readers."""
    log(f"evaluating {len(direct.run_ids)} run(s): {', '.join(direct.run_ids)}")
    try:
        return _evaluate_with_plan(
            spark, config, plan, direct=direct, run_ids=direct.run_ids, ready=ready
        )
    except NotDirect as exc:
        log(f"{exc.reason}; the inputs are read by Spark instead")
        return None


def _evaluate_spark_read(
    spark: SparkSession, config: EvaluateConfig, plan: CompatPlan, announce: bool
) -> Evaluation:
    """Evaluate inputs read by Spark's readers (every format, every check).

    An input without rows is reported from what the evaluation reads (a run by
    :class:`EmptyRunError`, graded qrels by :func:`run_evaluate`), not by a job of
    its own before it.
    """
    run_df, run_ids = read_evaluated_runs(spark, config, ties=plan.ties)
    qrels_format = config.qrels_format or config.format
    qrels_df = read_truth(
        spark,
        config.qrels_input(),
        plan.relevance,
        qrels_format,
        config.qrels_columns,
        config.qrels_where,
        check_rows=not _evaluation_finds_empty_qrels(plan),
    )
    pairs_df = None
    if config.near_duplicates:
        pairs_format = config.near_duplicates_format or config.format
        pairs_df = read_pairs(spark, config.near_duplicates, pairs_format)
    if announce:
        log(f"evaluating {len(run_ids)} run(s): {', '.join(run_ids)}")
    ranks = run_ranks(spark, config, plan)
    evaluation = _evaluate_with_plan(
        spark, config, plan, run_df, qrels_df, run_ids=run_ids, near_duplicates=pairs_df,
        ranks=ranks, ties=plan.ties,
    )  # fmt: skip
    gaps = sum(r["queries"].get("rank_gaps", 0) for r in evaluation.report["runs"].values())
    if gaps:
        log(
            f"{gaps} ranked list(s) have ranks other than 1..n (a gap, or a first rank "
            "other than 1); read as an order (summary.json: queries.rank_gaps)"
        )
    return evaluation


def _evaluation_finds_empty_qrels(plan: CompatPlan) -> bool:
    """Whether qrels without rows (none in the input, or none that --qrels-where keeps)
    show as none read by the evaluation: graded qrels keep every row, while other rules
    may drop every row of a table that has some (which their reader checks first)."""
    return plan.relevance == RelevanceRule("grade")


def _no_rows(exc: EmptyRunError, config: EvaluateConfig) -> InputError:
    """The error naming the input of a run without rows: one without a run id column
    has the file's default run id (a run id found in the rows has rows)."""
    owners = {default_run_id(path): path for path in config.run_inputs()}
    if exc.run_id not in owners:
        return InputError(str(exc))
    return InputError(no_rows_message(owners[exc.run_id], "run", config.where))


def jvm_profile(config: EvaluateConfig) -> str:
    """Who will do the job's heavy work, judged before Spark starts (no file is read):
    ``workers`` when the Python workers may read the inputs, else ``spark``
    (:data:`sparkeval.spark.JVM_PROFILES`)."""
    if config.reads_tables():
        return "spark"
    readable = all_direct_formats(
        config.run,
        config.qrels_input(),
        config.run_format or config.format,
        config.qrels_format or config.format,
    )
    return "workers" if readable and _workers_may_read(config, config.plan()) else "spark"


def direct_read_refusal(
    config: EvaluateConfig, plan: CompatPlan, flags_here: bool = False
) -> str | None:
    """Why the direct readers may not read the inputs, or None when they may: near-
    duplicate pairs only when this process flags the rows (``flags_here``, the local
    engine; Spark flags its frames); a tie rule other than ``doc-id`` only there too
    (the local engine's readers key the rows, :mod:`sparkeval.io.tie_keys`)."""
    if config.reader != "auto":
        return "--reader spark reads with Spark's readers"
    if config.near_duplicates and not flags_here:
        return "--near-duplicates pairs are flagged by Spark"
    if plan.relevance != RelevanceRule("grade"):
        return "a relevance rule other than the grades (--relevance, --compat) is applied by Spark"
    if plan.min_score is not None:
        return "a minimum score of the recommendations (--relevance-threshold) is applied by Spark"
    if plan.ties != "doc-id" and not flags_here:
        return f"--ties {plan.ties} needs the runs' rank columns"
    return None


def _workers_may_read(config: EvaluateConfig, plan: CompatPlan, flags_here: bool = False) -> bool:
    return direct_read_refusal(config, plan, flags_here) is None


def _direct_plan(
    spark: SparkSession | None,
    config: EvaluateConfig,
    plan: CompatPlan,
    why_not: list[str] | None = None,
    flags_here: bool = False,
) -> DirectPlan | None:
    """The inputs as Parquet row groups for the workers, when they all qualify (without
    a session: None also where planning needs one, a condition or a run id column);
    ``why_not`` gets the reason of a None from the inputs' plan; ``flags_here``: this
    process flags near-duplicates (:func:`_workers_may_read`)."""
    if not _workers_may_read(config, plan, flags_here) or config.reads_tables():
        return None
    if spark is not None and is_connect(spark):  # the server's workers read the files
        return None
    return plan_direct_inputs(
        spark,
        config.run,
        config.qrels_input(),
        config.run_format or config.format,
        config.qrels_format or config.format,
        config.run_column_map(),
        config.qrels_columns,
        run_where=config.where,
        qrels_where=config.qrels_where,
        why_not=why_not,
    )


def _evaluate_with_plan(
    spark: SparkSession,
    config: EvaluateConfig,
    plan: CompatPlan,
    run_df: DataFrame | None = None,
    qrels_df: DataFrame | None = None,
    **how,
):
    return evaluate_plan(
        spark,
        plan,
        run_df,
        qrels_df,
        rel_level=config.rel_level,
        depth=config.depth,
        names=config.names,
        buckets=config.buckets,
        **how,
    )


def _evaluated(report: dict) -> str:
    """The status line of a finished evaluation: queries, runs and rows read."""
    runs = report.get("runs", {})
    queries = sum(r.get("queries", {}).get("evaluated", 0) for r in runs.values())
    rows = sum(r.get("rows", {}).get("read", 0) for r in runs.values())
    first: dict = next(iter(runs.values()), {})
    measures = len(first.get("measures", {}))
    return (
        f"evaluated {queries} queries of {len(runs)} run(s) ({rows} run rows read), "
        f"{measures} measure(s); writing the outputs"
    )


def _with_partition_hint(exc: InputError, config: EvaluateConfig) -> InputError:
    """A duplicate doc in a partitioned dataset (``dt=.../``) read as one run usually
    means its partitions are runs or days: say how to read them so.  A row without a
    run id is named with the run input(s) it can come from."""
    if str(exc).startswith("run row with empty run_id"):
        inputs = config.run_inputs()
        where = inputs[0] if len(inputs) == 1 else f"one of {', '.join(inputs)}"
        return InputError(f"{where}: {exc}")
    if "duplicate doc" not in str(exc) or config.run_id_column or config.where:
        return exc
    for path in config.run:
        local = Path(path.removeprefix("file://"))
        keys = sorted({p.name.split("=", 1)[0] for p in local.glob("*=*") if p.is_dir()})
        if local.is_dir() and keys:
            return InputError(
                f"{exc}; {path} is partitioned by {', '.join(keys)} and was read as one run: "
                f"name the run id column (--run-id-column {keys[0]}) or select partitions "
                f"(--where \"{keys[0]} = '...'\")"
            )
    return exc


def run_ranks(spark: SparkSession, config: EvaluateConfig, plan: CompatPlan) -> str | None:
    """``EvalOptions.ranks`` for the runs of ``config``: None unless every run is
    rank-only (a TREC run and a remote file whose columns are not read here have
    scores); under ``rectools`` runs with ranks and runs with scores cannot be mixed.

    Raises:
        ConfigError: rank-only and scored runs together under ``rectools``.
    """
    from sparkeval.io.readers import TABLE_PREFIX, is_catalog_table, rank_only
    from sparkeval.job.dry_run import input_schema

    fmt = config.run_format or config.format
    found: dict[str, bool] = {}
    for path in config.run_inputs():
        if is_catalog_table(path):
            columns = list(spark.table(path[len(TABLE_PREFIX) :]).columns)
        else:
            try:  # an input the readers refuse is named by them, with its line
                schema = input_schema(path, fmt)
            except (SparkevalError, OSError, ValueError):
                schema = None
            columns = [] if schema is None or schema.fmt == "trec" else list(schema.columns)
        found[path] = rank_only(columns, config.run_column_map())
    ranked = set(found.values())
    if len(ranked) > 1 and plan.profile == "rectools":
        with_ranks = ", ".join(p for p, r in found.items() if r)
        raise ConfigError(
            f"compat rectools reads ranks as positions: the runs {with_ranks} have a rank "
            "column and the others scores; evaluate them separately"
        )
    return plan.ranks(ranked == {True})
