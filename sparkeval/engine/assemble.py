"""Turn run and qrels rows (pandas) into a :class:`RankedBatch` and compute measures.

This is the body of the Spark UDF and, unchanged, the single-process evaluator:
``evaluate_frames`` takes all rows of some queries (every run's rows and the qrels
rows of those queries) and returns one *wide* row per ``(run_id, query_id)``.

Ordering is decided here and only here: score descending, ties broken by doc_id
descending in code-point order (equal to trec_eval's byte-wise ``strcmp`` on UTF-8).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd

from sparkeval.errors import InputError, worker_input_error
from sparkeval.measures import GMEAN_FLOOR, NONPOOL, UNJUDGED, Measure, RankedBatch

QueryPolicy = Literal["qrels", "both", "run", "union"]
QUERY_POLICIES: tuple[str, ...] = ("qrels", "both", "run", "union")

#: columns of the wide per-segment frame before the measure columns
META_COLUMNS: tuple[str, ...] = (
    "run_id",
    "query_id",
    "in_run",
    "in_qrels",
    "evaluated",
    "ret_rows",
    "beyond_depth",
    "qrels_rows",
)


@dataclass(frozen=True)
class EvalOptions:
    """How rows become rankings.

    Attributes:
        queries: which queries are evaluated (METRICS.md §2): ``qrels`` (every
            judged query; missing from the run scores 0), ``both``, ``run`` or
            ``union`` (every query of the run or the qrels; Spark MLlib's
            RankingMetrics, where an empty ranking or empty truth scores 0).
        rel_level: grade >= rel_level counts as relevant (trec_eval ``-l``).
        depth: keep the first ``depth`` docs per query after sorting (trec_eval ``-M``).
    """

    queries: QueryPolicy = "qrels"
    rel_level: int = 1
    depth: int | None = None

    def __post_init__(self) -> None:
        if self.queries not in QUERY_POLICIES:
            raise ValueError(
                f"queries must be one of {', '.join(QUERY_POLICIES)}, got {self.queries!r}"
            )
        if not isinstance(self.rel_level, int) or self.rel_level < 0:
            raise ValueError(f"rel_level must be a whole number >= 0, got {self.rel_level!r}")
        if self.depth is not None and (not isinstance(self.depth, int) or self.depth < 1):
            raise ValueError(f"depth must be a whole number >= 1, got {self.depth!r}")


def measure_column(i: int) -> str:
    """Internal column name of the i-th requested measure in the wide frame."""
    return f"m{i}"


def _raise(message: str, in_worker: bool) -> None:
    raise (worker_input_error(message) if in_worker else InputError(message))


def _check_rows(run: pd.DataFrame, qrels: pd.DataFrame, in_worker: bool) -> None:
    """Reject rows that cannot be evaluated; every message names the key."""
    for _name, frame in (("run", run), ("qrels", qrels)):
        if "_bad" in frame.columns:
            bad = frame["_bad"].dropna()
            if len(bad):
                _raise(str(bad.iloc[0]), in_worker)
    for col in ("run_id", "query_id", "doc_id"):
        missing = run[col].isna()
        if missing.any():
            row = run[missing].iloc[0]
            _raise(f"run row with empty {col}: {row.to_dict()}", in_worker)
    nan = run["score"].isna()
    if nan.any():
        row = run[nan].iloc[0]
        _raise(
            f"run {row.run_id}: query {row.query_id} doc {row.doc_id}: score is missing or NaN "
            "(expected a number; infinite scores are allowed)",
            in_worker,
        )
    dup = run.duplicated(["run_id", "query_id", "doc_id"])
    if dup.any():
        row = run[dup].iloc[0]
        _raise(
            f"run {row.run_id}: query {row.query_id}: duplicate doc {row.doc_id} "
            "(each doc may appear once per query)",
            in_worker,
        )
    for col in ("query_id", "doc_id", "relevance"):
        missing = qrels[col].isna()
        if missing.any():
            row = qrels[missing].iloc[0]
            _raise(f"qrels row with empty {col}: {row.to_dict()}", in_worker)
    dup = qrels.duplicated(["query_id", "doc_id"])
    if dup.any():
        row = qrels[dup].iloc[0]
        _raise(
            f"qrels: query {row.query_id}: duplicate doc {row.doc_id} "
            "(each doc may be judged once per query)",
            in_worker,
        )


def _segments(
    run: pd.DataFrame, qrels_queries: np.ndarray, run_ids: Sequence[str], policy: QueryPolicy
) -> pd.DataFrame:
    """One row per (run_id, query_id) seen in the run or owed by the qrels, with flags."""
    in_run = run[["run_id", "query_id"]].drop_duplicates()
    in_run = in_run.assign(in_run=True)
    owed = pd.DataFrame(
        {
            "run_id": np.repeat(np.asarray(run_ids, dtype=object), len(qrels_queries)),
            "query_id": np.tile(qrels_queries.astype(object), len(run_ids)),
        }
    )
    seg = owed.merge(in_run, on=["run_id", "query_id"], how="outer")
    seg["in_run"] = seg["in_run"].astype("boolean").fillna(False).astype(bool)
    seg["in_qrels"] = seg["query_id"].isin(qrels_queries)
    if policy == "qrels":
        seg["evaluated"] = seg["in_qrels"]
    elif policy == "both":
        seg["evaluated"] = seg["in_qrels"] & seg["in_run"]
    elif policy == "union":
        seg["evaluated"] = seg["in_qrels"] | seg["in_run"]
    else:
        seg["evaluated"] = seg["in_run"]
    return seg.sort_values(["run_id", "query_id"], kind="stable").reset_index(drop=True)


def evaluate_frames(
    run: pd.DataFrame,
    qrels: pd.DataFrame,
    measures: Sequence[Measure],
    options: EvalOptions = EvalOptions(),
    run_ids: Sequence[str] | None = None,
    in_worker: bool = False,
) -> pd.DataFrame:
    """Evaluate every run against the qrels for the queries present in the inputs.

    Args:
        run: columns ``run_id, query_id, doc_id, score`` (strings, float64).
        qrels: columns ``query_id, doc_id, relevance`` (strings, integer grades).
        measures: parsed measures; column ``m{i}`` of the result holds measure i.
        options: query policy, relevance level and depth.
        run_ids: every run of the evaluation (a run may have no rows for these
            queries and still owes them under the ``qrels`` policy).
        in_worker: mark errors so that the Spark driver can recover them.

    Returns:
        A wide frame: :data:`META_COLUMNS` then one float64 column per measure,
        NaN where the measure is undefined or the segment is not evaluated.
    """
    run = run.reset_index(drop=True)
    qrels = qrels.reset_index(drop=True)
    _check_rows(run, qrels, in_worker)
    if run_ids is None:
        run_ids = sorted(run["run_id"].unique().tolist())

    qrels_queries = np.sort(qrels["query_id"].unique().astype(object))
    seg = _segments(run, qrels_queries, run_ids, options.queries)
    seg_index = pd.MultiIndex.from_frame(seg[["run_id", "query_id"]])

    # --- rank the run rows: segment, score desc, doc_id desc --------------------
    seg_code = seg_index.get_indexer(pd.MultiIndex.from_frame(run[["run_id", "query_id"]]))
    doc_code = pd.factorize(run["doc_id"], sort=True)[0]
    score = run["score"].to_numpy(dtype=np.float64)
    order = np.lexsort((-doc_code, -score, seg_code))
    seg_code = seg_code[order]

    ret_rows = np.bincount(seg_code, minlength=len(seg))
    starts_all = np.concatenate(([0], np.cumsum(ret_rows)))
    position = np.arange(len(order)) - starts_all[seg_code] + 1
    evaluated = seg["evaluated"].to_numpy()
    keep = evaluated[seg_code]
    if options.depth is not None:
        keep &= position <= options.depth
    kept_order = order[keep]
    kept_seg = seg_code[keep]

    # --- relevance of every kept retrieved doc --------------------------------
    grades = qrels["relevance"].to_numpy(dtype=np.int64)
    qrels_index = pd.MultiIndex.from_frame(qrels[["query_id", "doc_id"]])
    hit = qrels_index.get_indexer(
        pd.MultiIndex.from_frame(run.loc[kept_order, ["query_id", "doc_id"]])
    )
    rel = np.where(hit >= 0, grades[np.maximum(hit, 0)], NONPOOL)
    rel = np.where((hit >= 0) & (rel < 0), UNJUDGED, rel)

    # --- compact to evaluated segments ------------------------------------------
    eval_ids = np.flatnonzero(evaluated)
    remap = np.full(len(seg), -1, dtype=np.int64)
    remap[eval_ids] = np.arange(len(eval_ids))
    kept_counts = np.bincount(remap[kept_seg], minlength=len(eval_ids))
    starts = np.concatenate(([0], np.cumsum(kept_counts))).astype(np.int64)

    eval_queries = seg["query_id"].to_numpy()[eval_ids]
    uniq_queries, seg_query = np.unique(eval_queries.astype(str), return_inverse=True)
    q_code = pd.Index(uniq_queries).get_indexer(qrels["query_id"].astype(str))
    q_mask = q_code >= 0
    q_order = np.lexsort((-grades[q_mask], q_code[q_mask]))
    q_counts = np.bincount(q_code[q_mask], minlength=len(uniq_queries))

    batch = RankedBatch(
        starts=starts,
        rel=rel.astype(np.int64),
        score=score[kept_order],
        seg_query=seg_query.astype(np.int64),
        qrels_starts=np.concatenate(([0], np.cumsum(q_counts))).astype(np.int64),
        qrels_grades=grades[q_mask][q_order],
    )

    qrels_rows = seg["query_id"].map(qrels["query_id"].value_counts()).fillna(0)
    out = seg.assign(
        ret_rows=ret_rows.astype(np.int64),
        beyond_depth=(
            ret_rows
            - np.bincount(seg_code[position <= (options.depth or np.inf)], minlength=len(seg))
        ).astype(np.int64),
        qrels_rows=qrels_rows.astype(np.int64),
    )
    values = {}
    for i, m in enumerate(measures):
        col = np.full(len(seg), np.nan)
        col[eval_ids] = m.compute(batch, options.rel_level)
        values[measure_column(i)] = col
    out = pd.concat([out[list(META_COLUMNS)], pd.DataFrame(values, index=out.index)], axis=1)
    return out


def summarise_frame(wide: pd.DataFrame, measures: Sequence[Measure]) -> dict[str, dict[str, float]]:
    """Aggregate a wide frame per run the way trec_eval's ``all`` line does.

    ``mean`` measures average over evaluated queries with a defined value,
    ``sum`` measures add up, ``gmean`` is exp(mean(log(max(v, 1e-5)))).
    """
    result: dict[str, dict[str, float]] = {}
    evaluated = wide[wide["evaluated"]]
    for run_id, group in evaluated.groupby("run_id", sort=True):
        values: dict[str, float] = {}
        for i, m in enumerate(measures):
            col = group[measure_column(i)].dropna().to_numpy()
            agg = m.spec.aggregate
            if len(col) == 0:
                values[m.name] = float("nan")
            elif agg == "sum":
                values[m.name] = float(col.sum())
            elif agg == "gmean":
                values[m.name] = float(np.exp(np.log(np.maximum(col, GMEAN_FLOOR)).mean()))
            else:
                values[m.name] = float(col.mean())
        result[str(run_id)] = values
    return result
