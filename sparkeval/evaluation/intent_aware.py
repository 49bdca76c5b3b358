"""The intent-aware measures in ``evaluate`` (``alpha-nDCG@k``, ``ERR-IA@k``, ...,
with ``--subtopic-qrels``): each run's queries ranked as ndeval ranks them, measured
by :mod:`sparkeval.measures.intent_aware` in this process (the local engine) or on
Spark (one ``applyInPandas`` group per run and query, the same kernel and exact means,
so the same bits), their means added to the evaluation's report. The subtopic qrels
are read in the driver (local files).

ndeval's rules, which ``pyndeval`` (and so ir_measures) follows:

* each query's docs are ranked by score descending, tied scores by the doc id's text
  ascending (not ``evaluate``'s tie rule, doc id descending: these measures refuse
  ``--ties`` other than its default rather than follow it); ``--depth`` cuts after;
* only the queries both in the run and in the subtopic qrels are scored and averaged;
  the others are counted (``intent_aware.run_only`` and ``qrels_only``);
* a query whose subtopic qrels have no relevant doc scores 0.

The report gets, per run, each mean under ``measures`` (0 ``undefined``, no
interval) and its counts under ``intent_aware``; ``parameters.intent_aware`` names
the measures and ``compat.definitions`` says what each computes. They have no
per-query rows in ``per_query.parquet``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from sparkeval.engine.worker.exact_summary import exact_total
from sparkeval.errors import ConfigError, InputError
from sparkeval.evaluation.run_rows import read_evaluated_runs
from sparkeval.measures.intent_aware import QueryJudgements, query_value

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from sparkeval.evaluation.options import EvaluateConfig
    from sparkeval.io.direct_input import DirectPlan
    from sparkeval.measures.intent_aware_names import IntentAwareMeasure

#: {run id: {output name: the mean and its counts}}
IntentAwareValues = dict[str, dict[str, dict[str, Any]]]


def local_intent_aware_values(config: EvaluateConfig, direct: DirectPlan) -> IntentAwareValues:
    """Each run's intent-aware means in this process, from the run rows of ``direct``
    as the local engine reads them and the subtopic qrels of ``config``."""
    from sparkeval.evaluation.set_measures import _planned_runs
    from sparkeval.io.subtopic_qrels import read_subtopic_qrels

    assert config.subtopic_qrels is not None
    qrels = read_subtopic_qrels(config.subtopic_qrels)
    runs = _planned_runs(direct)
    for run_id in direct.run_ids:
        runs.setdefault(run_id, _no_rows())
    return values_by_run(runs, qrels, config.intent_aware_measures(), config.depth)


def _no_rows() -> pd.DataFrame:
    return pd.DataFrame(
        {"query_id": pd.Series([], dtype=object), "doc_id": pd.Series([], dtype=object),
         "score": pd.Series([], dtype=np.float64)}
    )  # fmt: skip


def values_by_run(
    runs: dict[str, pd.DataFrame],
    qrels: pd.DataFrame,
    measures: Sequence[IntentAwareMeasure],
    depth: int | None,
) -> IntentAwareValues:
    """The means of ``measures`` of each run (``query_id, doc_id, score`` rows, ids as
    text) against the subtopic qrels rows ``qrels``
    (:func:`~sparkeval.io.subtopic_qrels.read_subtopic_qrels`)."""
    judged = judgements(qrels, measures)
    qrels_queries = set(qrels["query_id"].unique().tolist())
    out: IntentAwareValues = {}
    for run_id, rows in runs.items():
        ranked = rank_queries(rows, depth)
        scored = sorted(q for q in ranked if q in qrels_queries)
        values = np.empty((len(scored), len(measures)))
        for n, query in enumerate(scored):
            values[n] = query_values(ranked[query], judged, query, measures)
        counts = _counts(len(scored), len(ranked), len(qrels_queries))
        out[run_id] = {
            m.name: {"value": exact_total(values[:, i]).mean if scored else 0.0, **counts}
            for i, m in enumerate(measures)
        }
    return out


def _counts(scored: int, run_queries: int, qrels_queries: int) -> dict[str, int]:
    """The queries scored, those of the run only and those of the qrels only."""
    return {
        "queries": scored,
        "run_only": run_queries - scored,
        "qrels_only": qrels_queries - scored,
    }


def query_values(
    ranked: list[str],
    judged: dict[tuple[str, int], QueryJudgements],
    query: str,
    measures: Sequence[IntentAwareMeasure],
) -> list[float]:
    """The value of each measure for one query's ranked doc ids (both engines')."""
    ideals: dict[tuple[int, float], np.ndarray] = {}
    rows: dict[int, np.ndarray] = {}
    out = []
    for measure in measures:
        judgements = judged[(query, measure.rel)]
        ideal = None
        if measure.kind in ("alpha_ndcg", "nerr_ia", "nnrbp"):
            key = (measure.rel, measure.alpha)
            if key not in ideals:
                ideals[key] = judgements.ideal_gains(measure.alpha)
            ideal = ideals[key]
        if measure.rel not in rows:
            rows[measure.rel] = judgements.run_rows(ranked)
        ranked_rows = rows[measure.rel]
        value = query_value(
            measure.kind, measure.k, ranked_rows, judgements, measure.alpha, measure.beta, ideal
        )
        out.append(value)
    return out


def judgements(
    qrels: pd.DataFrame, measures: Sequence[IntentAwareMeasure]
) -> dict[tuple[str, int], QueryJudgements]:
    """Each query's judgements at each relevance threshold of ``measures``: its docs
    (every doc of its qrels) by its subtopics (in the order they first appear)."""
    rels = sorted({m.rel for m in measures})
    out: dict[tuple[str, int], QueryJudgements] = {}
    for query, rows in qrels.groupby("query_id", sort=False):
        docs = pd.unique(rows["doc_id"]).tolist()
        subtopics = pd.unique(rows["subtopic_id"]).tolist()
        row = pd.Index(docs).get_indexer(rows["doc_id"])
        column = pd.Index(subtopics).get_indexer(rows["subtopic_id"])
        grades = rows["relevance"].to_numpy()
        for rel in rels:
            matrix = np.zeros((len(docs), len(subtopics)), dtype=bool)
            matrix[row, column] = grades >= rel
            out[(str(query), rel)] = QueryJudgements.of(docs, matrix)
    return out


def rank_queries(rows: pd.DataFrame, depth: int | None) -> dict[str, list[str]]:
    """Each query's doc ids ranked as ndeval ranks them: score descending, tied scores
    by the doc id's text ascending; the first ``depth`` when given.

    Raises:
        InputError: a NaN score, or a doc twice in one query's ranking.
    """
    if rows.empty:
        return {}
    if np.isnan(rows["score"].to_numpy(dtype=np.float64)).any():
        raise InputError("the intent-aware measures need a score on every run row")
    order = rows.sort_values(
        ["query_id", "score", "doc_id"], ascending=[True, False, True], kind="stable"
    )
    twice = order.duplicated(["query_id", "doc_id"])
    if twice.any():
        first = order[twice].iloc[0]
        raise InputError(
            f"query {first.query_id}: doc {first.doc_id} is ranked more than once (the "
            "intent-aware measures rank each doc once)"
        )
    out: dict[str, list[str]] = {}
    for query, docs in order.groupby("query_id", sort=False)["doc_id"]:
        ranked = docs.tolist()
        out[str(query)] = ranked[:depth] if depth else ranked
    return out


def spark_intent_aware_values(spark: SparkSession, config: EvaluateConfig) -> IntentAwareValues:
    """Each run's intent-aware means on Spark, from the run rows as the evaluation reads
    them (every format, ``--where``, column maps, catalog tables) and the subtopic qrels
    read in the driver."""
    from sparkeval.io.subtopic_qrels import read_subtopic_qrels

    run_df, run_ids = read_evaluated_runs(spark, config, scored_for="the intent-aware measures")
    assert config.subtopic_qrels is not None
    qrels = read_subtopic_qrels(config.subtopic_qrels)
    return spark_values_by_run(run_df, run_ids, qrels, config.intent_aware_measures(), config.depth)


def spark_values_by_run(
    rows: DataFrame,
    run_ids: Sequence[str],
    qrels: pd.DataFrame,
    measures: Sequence[IntentAwareMeasure],
    depth: int | None,
) -> IntentAwareValues:
    """The means of ``measures`` of each run of ``rows`` (``run_id, query_id, doc_id,
    score``) on Spark: one ``applyInPandas`` task per (run, query) group computes the
    query's values with :func:`query_values`, and
    :func:`~sparkeval.engine.plans.exact.exact_totals` their exact means per run, the
    same bits as :func:`values_by_run` in this process."""
    from pyspark.sql import functions as F

    from sparkeval.engine.plans.exact import exact_totals

    judged = judgements(qrels, measures)
    qrels_queries = sorted(set(qrels["query_id"].unique().tolist()))
    text = [F.col(c).cast("string").alias(c) for c in ("run_id", "query_id", "doc_id")]
    frame = rows.select(*text, F.col("score").cast("double").alias("score"))
    columns = [f"_m{i}" for i in range(len(measures))]
    schema = ", ".join(["run_id string", "query_id string", *(f"{c} double" for c in columns)])
    chosen = list(measures)

    def per_query(group: pd.DataFrame) -> pd.DataFrame:
        run_id, query = str(group["run_id"].iloc[0]), str(group["query_id"].iloc[0])
        ranked = rank_queries(group[["query_id", "doc_id", "score"]], depth)[query]
        values = query_values(ranked, judged, query, chosen)
        named = {c: [v] for c, v in zip(columns, values, strict=True)}
        return pd.DataFrame({"run_id": [run_id], "query_id": [query], **named})

    scored = frame.where(F.col("query_id").isin(qrels_queries))
    values = scored.groupBy("run_id", "query_id").applyInPandas(per_query, schema)
    totals = exact_totals(values, columns, ["run_id"])
    queries = {
        str(r["run_id"]): int(r["n"])
        for r in frame.select("run_id", "query_id").distinct().groupBy("run_id")
        .agg(F.count(F.lit(1)).alias("n")).collect()
    }  # fmt: skip
    out: IntentAwareValues = {}
    for run_id in run_ids:
        found = totals.get((run_id,))
        n = found[columns[0]].count if found else 0
        counts = _counts(n, queries.get(run_id, 0), len(qrels_queries))
        out[run_id] = {
            m.name: {"value": found[c].mean if found else 0.0, **counts}
            for m, c in zip(measures, columns, strict=True)
        }
    return out


def add_intent_aware_values(
    evaluation: Any,
    measures: list[IntentAwareMeasure],
    values: IntentAwareValues,
    names: Any,
    source: Any,
) -> None:
    """Add each run's intent-aware means to an evaluation (in place): to its report
    (values, counts, their names and definitions) and to its ``summary`` table's names.

    Raises:
        ConfigError: a run of the report without its values (none should be missing).
    """
    report = evaluation.report
    shown = {m.name: (m.typed if names == "requested" else m.name) for m in measures}
    for run_id, run in report["runs"].items():
        blocks = values.get(run_id)
        if blocks is None:
            raise ConfigError(
                f"run {run_id}: its rows were not found for the intent-aware measures"
            )
        run["intent_aware"] = {}
        for m in measures:
            block = dict(blocks[m.name])
            name = shown[m.name]
            run["measures"][name] = block.pop("value")
            run["undefined"][name] = 0
            run["ci95"][name] = None
            run["intent_aware"][name] = block
    report["parameters"]["intent_aware"] = list(shown.values())
    report["parameters"]["subtopic_qrels"] = source if isinstance(source, str) else "a table"
    compat = report.setdefault("compat", {})
    compat.setdefault("definitions", {}).update({shown[m.name]: m.definition() for m in measures})
    evaluation.set_names = [*evaluation.set_names, *shown.values()]
