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
the measures and ``compat.definitions`` says what each computes. Each scored query's
values go to ``per_query_intent_aware.parquet`` (``run_id, query_id, measure, value``,
sorted by run, query id and the measures' order; the columns of
``per_query.parquet``), written by the driver on both engines, so the same bytes. They
are not rows of ``per_query.parquet``, whose queries are the evaluation's (the run's
and the qrels'), not those of the subtopic qrels.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import pyarrow as pa

from sparkeval.engine.worker.exact_summary import exact_total
from sparkeval.errors import ConfigError, InputError
from sparkeval.evaluation.run_rows import read_evaluated_runs
from sparkeval.measures.intent_aware import QueryJudgements, query_value

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from sparkeval.evaluation.options import EvaluateConfig
    from sparkeval.io.direct_input import DirectPlan
    from sparkeval.measures.intent_aware_names import IntentAwareMeasure

#: the per-query file's name in the output directory
FILE_NAME = "per_query_intent_aware.parquet"

#: {run id: {output name: the mean and its counts}}
IntentAwareValues = dict[str, dict[str, dict[str, Any]]]


def local_intent_aware_values(config: EvaluateConfig, direct: DirectPlan) -> IntentAwareResults:
    """Each run's intent-aware means and per-query values in this process, from the run
    rows of ``direct`` as the local engine reads them and the subtopic qrels of
    ``config``."""
    from sparkeval.evaluation.set_measures import _planned_runs
    from sparkeval.io.subtopic_qrels import read_subtopic_qrels

    assert config.subtopic_qrels is not None
    qrels = read_subtopic_qrels(config.subtopic_qrels)
    runs = _planned_runs(direct)
    for run_id in direct.run_ids:
        runs.setdefault(run_id, _no_rows())
    return results_by_run(runs, qrels, config.intent_aware_measures(), config.depth)


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
    return results_by_run(runs, qrels, measures, depth).values


def results_by_run(
    runs: dict[str, pd.DataFrame],
    qrels: pd.DataFrame,
    measures: Sequence[IntentAwareMeasure],
    depth: int | None,
) -> IntentAwareResults:
    """Each run's means of ``measures`` and its per-query values, in this process."""
    judged = judgements(qrels, measures)
    qrels_queries = set(qrels["query_id"].unique().tolist())
    parts, run_queries = [], {}
    for run_id, rows in runs.items():
        ranked = rank_queries(rows, depth)
        run_queries[run_id] = len(ranked)
        scored = sorted(q for q in ranked if q in qrels_queries)
        values = np.empty((len(scored), len(measures)))
        for n, query in enumerate(scored):
            values[n] = query_values(ranked[query], judged, query, measures)
        parts.append(_query_frame(run_id, scored, values))
    table = pd.concat(parts, ignore_index=True) if parts else _query_frame("", [], np.empty((0, 0)))
    return IntentAwareResults.of(table, list(runs), run_queries, len(qrels_queries), measures)


@dataclass
class IntentAwareResults:
    """The intent-aware measures of every run: the means and counts of the report, and
    the per-query values of ``per_query_intent_aware.parquet``.

    Attributes:
        values: each run's means and counts (:data:`IntentAwareValues`).
        per_query: one row per run and scored query (``run_id, query_id`` and one
            column per measure, in the measures' order), sorted by run and query id.
    """

    values: IntentAwareValues
    per_query: pd.DataFrame

    @classmethod
    def of(
        cls,
        per_query: pd.DataFrame,
        run_ids: Sequence[str],
        run_queries: dict[str, int],
        qrels_queries: int,
        measures: Sequence[IntentAwareMeasure],
    ) -> IntentAwareResults:
        """The results from the per-query values of the scored queries (both engines'):
        each mean is the exact mean of a run's values (0 with no query scored)."""
        ordered = per_query.sort_values(["run_id", "query_id"], kind="stable")
        ordered = ordered.reset_index(drop=True)
        values: IntentAwareValues = {}
        for run_id in run_ids:
            rows = ordered[ordered["run_id"] == run_id]
            counts = _counts(len(rows), run_queries.get(run_id, 0), qrels_queries)
            values[run_id] = {
                m.name: {
                    "value": exact_total(rows[_column(i)].to_numpy()).mean if len(rows) else 0.0,
                    **counts,
                }
                for i, m in enumerate(measures)
            }
        return cls(values, ordered)

    def table(self, measures: Sequence[IntentAwareMeasure], names: Any) -> pa.Table:
        """The rows of ``per_query_intent_aware.parquet``: ``run_id, query_id, measure,
        value`` (the name ``summary.json`` shows), sorted by run, query id (as text)
        and the measures' order."""
        from sparkeval.evaluation.per_user_set import local_table

        parts = [
            (
                str(run_id),
                m.typed if names == "requested" else m.name,
                i,
                rows[["query_id", _column(i)]].rename(columns={_column(i): "value"}),
            )
            for run_id, rows in self.per_query.groupby("run_id", sort=True)
            for i, m in enumerate(measures)
        ]
        return local_table(parts)


def _column(i: int) -> str:
    """The per-query frame's column of the i-th measure."""
    return f"_m{i}"


def _query_frame(run_id: str, queries: list[str], values: np.ndarray) -> pd.DataFrame:
    """One run's per-query values (``run_id, query_id, _m0, _m1, ...``)."""
    columns = {_column(i): values[:, i] for i in range(values.shape[1])}
    return pd.DataFrame(
        {"run_id": [run_id] * len(queries), "query_id": pd.Series(queries, dtype=object), **columns}
    )


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


def spark_intent_aware_values(spark: SparkSession, config: EvaluateConfig) -> IntentAwareResults:
    """Each run's intent-aware means and per-query values on Spark, from the run rows as
    the evaluation reads them (every format, ``--where``, column maps, catalog tables)
    and the subtopic qrels read in the driver."""
    from sparkeval.io.subtopic_qrels import read_subtopic_qrels

    run_df, run_ids = read_evaluated_runs(spark, config, scored_for="the intent-aware measures")
    assert config.subtopic_qrels is not None
    qrels = read_subtopic_qrels(config.subtopic_qrels)
    return spark_results_by_run(
        run_df, run_ids, qrels, config.intent_aware_measures(), config.depth
    )


def spark_results_by_run(
    rows: DataFrame,
    run_ids: Sequence[str],
    qrels: pd.DataFrame,
    measures: Sequence[IntentAwareMeasure],
    depth: int | None,
) -> IntentAwareResults:
    """The means and per-query values of ``measures`` of each run of ``rows`` (``run_id,
    query_id, doc_id, score``) on Spark: one ``applyInPandas`` task per (run, query)
    group computes the query's values with :func:`query_values`; the driver collects
    those values (one row per run and scored query) and takes their exact means as
    :func:`results_by_run` does in this process, so the same bits."""
    from pyspark.sql import functions as F

    judged = judgements(qrels, measures)
    qrels_queries = sorted(set(qrels["query_id"].unique().tolist()))
    text = [F.col(c).cast("string").alias(c) for c in ("run_id", "query_id", "doc_id")]
    frame = rows.select(*text, F.col("score").cast("double").alias("score"))
    columns = [_column(i) for i in range(len(measures))]
    schema = ", ".join(["run_id string", "query_id string", *(f"{c} double" for c in columns)])
    chosen = list(measures)

    def per_query(group: pd.DataFrame) -> pd.DataFrame:
        run_id, query = str(group["run_id"].iloc[0]), str(group["query_id"].iloc[0])
        ranked = rank_queries(group[["query_id", "doc_id", "score"]], depth)[query]
        values = query_values(ranked, judged, query, chosen)
        named = {c: [v] for c, v in zip(columns, values, strict=True)}
        return pd.DataFrame({"run_id": [run_id], "query_id": [query], **named})

    scored = frame.where(F.col("query_id").isin(qrels_queries))
    collected = scored.groupBy("run_id", "query_id").applyInPandas(per_query, schema).collect()
    table = pd.DataFrame(
        {
            "run_id": pd.Series([r["run_id"] for r in collected], dtype=object),
            "query_id": pd.Series([r["query_id"] for r in collected], dtype=object),
            **{c: np.array([r[c] for r in collected], dtype=np.float64) for c in columns},
        }
    )
    queries = {
        str(r["run_id"]): int(r["n"])
        for r in frame.select("run_id", "query_id").distinct().groupBy("run_id")
        .agg(F.count(F.lit(1)).alias("n")).collect()
    }  # fmt: skip
    return IntentAwareResults.of(table, run_ids, queries, len(qrels_queries), measures)


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
