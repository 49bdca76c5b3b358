"""Turn run and qrels rows (pandas) into a :class:`RankedBatch` and compute measures.

This is the body of the Spark UDF and, unchanged, the single-process evaluator:
``evaluate_frames`` takes all rows of some queries (every run's rows and the qrels
rows of those queries) and returns one *wide* row per ``(run_id, query_id)``.

Ordering is decided here and only here: score descending, ties broken by doc_id
descending in code-point order (equal to trec_eval's byte-wise ``strcmp`` on UTF-8);
under another tie rule (``EvalOptions.ties``) tied scores are first ordered by the
run's ``_tie`` column ascending (its rank, or its place in the input), then by doc_id.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sparkeval.engine.worker.doc_match import match_docs
from sparkeval.engine.worker.rank_positions import bad_rank, rank_gap_segments, spread_to_ranks
from sparkeval.engine.worker.string_codes import joint_codes
from sparkeval.errors import ConfigError, InputError, worker_input_error
from sparkeval.formats import (
    BAD,
    DUPLICATE_FLAG,
    EMPTY_RUN_CODE,
    RUN_CODE,
    TIE_KEY,
    TIE_RULES,
    measure_column,
)
from sparkeval.measures import GMEAN_FLOOR, NONPOOL, UNJUDGED, Measure, RankedBatch
from sparkeval.measures.near_dup import check_flags_available, demote_near_duplicates
from sparkeval.measures.registry import JUDGED_ONLY

if TYPE_CHECKING:  # pandas is imported by the callers that pass DataFrames
    import pandas as pd

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
    "rank_gaps",
)
#: how a rank-only run's ranks (its scores are ``-rank``) give positions
RankReading = Literal["order", "position"]
RANK_READINGS: tuple[str, ...] = ("order", "position")
#: how tied scores are ordered: by doc id descending (trec_eval's), by the run's rank
#: column ascending, or in the order of the input rows (then by doc id descending)
TieRule = Literal["doc-id", "rank", "input-order"]


@dataclass(frozen=True)
class EvalOptions:
    """How rows become rankings.

    Attributes:
        queries: which queries are evaluated: ``qrels`` (every
            judged query; missing from the run scores 0), ``both``, ``run`` or
            ``union`` (every query of the run or the qrels; Spark MLlib's
            RankingMetrics, where an empty ranking or empty truth scores 0).
        rel_level: grade >= rel_level counts as relevant (trec_eval ``-l``).
        depth: keep the first ``depth`` docs per query after sorting (trec_eval ``-M``).
        ranks: None when the run has scores; for a rank-only run (score ``-rank``),
            ``order`` reads the ranks as an order (ranks 1, 3 are positions 1, 2; the
            lists whose ranks are not 1..n are counted, ``rank_gaps``) and ``position``
            as the positions themselves (RecTools;
            :mod:`sparkeval.engine.worker.rank_positions`; every measure needs a cutoff,
            and the lists are cut at the largest one unless a measure reads past it).
        ties: how tied scores are ordered: ``doc-id`` (doc id descending, trec_eval's),
            ``rank`` or ``input-order`` (the run's ``_tie`` column ascending: its rank,
            or its row's place in the input; then doc id descending).
    """

    queries: QueryPolicy = "qrels"
    rel_level: int = 1
    depth: int | None = None
    ranks: RankReading | None = None
    ties: TieRule = "doc-id"

    def __post_init__(self) -> None:
        if self.queries not in QUERY_POLICIES:
            raise ConfigError(
                f"queries must be one of {', '.join(QUERY_POLICIES)}, got {self.queries!r}"
            )
        if not isinstance(self.rel_level, int) or self.rel_level < 0:
            raise ConfigError(f"rel_level must be a whole number >= 0, got {self.rel_level!r}")
        if self.depth is not None and (not isinstance(self.depth, int) or self.depth < 1):
            raise ConfigError(f"depth must be a whole number >= 1, got {self.depth!r}")
        if self.ranks is not None and self.ranks not in RANK_READINGS:
            readings = ", ".join(RANK_READINGS)
            raise ConfigError(f"ranks must be one of {readings}, got {self.ranks!r}")
        check_tie_rule(self.ties)


def check_tie_rule(ties: object) -> None:
    """Raise a :class:`ConfigError` naming the option unless ``ties`` is a tie rule."""
    if ties not in TIE_RULES:
        raise ConfigError(f"ties must be one of {', '.join(TIE_RULES)}, got {ties!r}")


def check_ties_allowed(ties: str, near_duplicates: bool) -> None:
    """Refuse, naming the option, a tie rule other than ``doc-id`` with near-duplicate
    pairs: a near-duplicate is flagged against the docs ranked above it in the doc id
    tie order."""
    if ties != "doc-id" and near_duplicates:
        raise ConfigError(
            f"ties {ties}: near-duplicate pairs are flagged in the doc id tie order; "
            "use ties doc-id with near_duplicates"
        )


_RUN_TYPES = {
    "run_id": pa.string(),
    "query_id": pa.string(),
    "doc_id": pa.string(),
    "score": pa.float64(),
    BAD: pa.string(),
}
_QRELS_TYPES = {
    "query_id": pa.string(),
    "doc_id": pa.string(),
    "relevance": pa.int64(),
    BAD: pa.string(),
}


def per_query_indexes(measures: Sequence[Measure]) -> list[int]:
    """Indexes of the measures with a value per query, the per-query output's measures
    (``gm_map`` and other measures defined only over all queries have none)."""
    return [i for i, m in enumerate(measures) if m.spec.per_query]


def _raise(message: str, in_worker: bool) -> None:
    raise (worker_input_error(message) if in_worker else InputError(message))


def _as_table(data: pd.DataFrame | pa.Table, columns: dict[str, pa.DataType]) -> pa.Table:
    """An Arrow table with exactly ``columns`` (cast; a missing ``_bad`` becomes null)."""
    if not isinstance(data, pa.Table):  # a pandas DataFrame
        data = pa.Table.from_pandas(data, preserve_index=False)
    if data.num_rows == 0:  # an empty input may carry no columns at all
        return pa.table({name: pa.array([], kind) for name, kind in columns.items()})
    arrays = []
    for name, kind in columns.items():
        if name in data.column_names:
            col = data.column(name)
            arrays.append(col if col.type == kind else col.cast(kind))
        elif name == BAD:
            arrays.append(pa.nulls(data.num_rows, kind))
        else:
            raise ValueError(f"missing column {name!r}")
    return pa.table(arrays, names=list(columns))


_CODED_RUN_TYPES = {RUN_CODE: pa.int32(), **{k: v for k, v in _RUN_TYPES.items() if k != "run_id"}}
#: largest (runs x queries) grid handled with dense lookup tables instead of sorting
_DENSE_SLOTS = 1 << 26


def _first_row(table: pa.Table, mask, run_ids: Sequence[str] | None) -> dict[str, object]:
    row = table.filter(mask).slice(0, 1).to_pylist()[0]
    row.pop(BAD, None)
    if RUN_CODE in row:
        code = row.pop(RUN_CODE)
        # a negative code (EMPTY_RUN_CODE) has no run id
        name = run_ids[code] if run_ids and code is not None and code >= 0 else None
        row = {"run_id": name, **row}
    return row


def _check_nulls(
    run: pa.Table, qrels: pa.Table, in_worker: bool, run_ids: Sequence[str] | None
) -> None:
    """Reject rows that cannot be evaluated; every message names the key."""
    for table in (run, qrels):
        bad = table.column(BAD)
        if bad.null_count < len(bad):
            _raise(str(pc.drop_null(bad)[0].as_py()), in_worker)
    if RUN_CODE in run.column_names:
        codes = run.column(RUN_CODE)
        empty = pc.equal(codes, EMPTY_RUN_CODE)
        if pc.any(empty).as_py():
            _raise(f"run row with empty run_id: {_first_row(run, empty, run_ids)}", in_worker)
        n_runs = len(run_ids or ())
        if codes.null_count or (len(codes) and pc.max(codes).as_py() >= n_runs):
            _raise(f"run rows of runs that are not among run_ids {list(run_ids or ())}", in_worker)
    for name, table in (("run", run), ("qrels", qrels)):
        for col in table.column_names:
            if col != BAD and table.column(col).null_count:
                row = _first_row(table, pc.is_null(table.column(col)), run_ids)
                label = "rank (ties rank)" if col == TIE_KEY else col
                _raise(f"{name} row with empty {label}: {row}", in_worker)
    nan = pc.is_nan(run.column("score"))
    if pc.any(nan).as_py():
        row = _first_row(run, nan, run_ids)
        _raise(missing_score_message(row["run_id"], row["query_id"], row["doc_id"]), in_worker)


def missing_score_message(run_id: object, query_id: object, doc_id: object) -> str:
    """The error for a run row whose score is missing or NaN."""
    return (
        f"run {run_id}: query {query_id} doc {doc_id}: score is missing or NaN "
        "(expected a number; infinite scores are allowed)"
    )


def _run_codes(run: pa.Table, run_ids: Sequence[str]) -> np.ndarray:
    """Index into ``run_ids`` of every run row."""
    if RUN_CODE in run.column_names:
        return run.column(RUN_CODE).to_numpy().astype(np.int64)
    run_index = {r: i for i, r in enumerate(run_ids)}
    (local,), names = joint_codes(run.column("run_id"))
    local_to_global = np.array([run_index.get(r, -1) for r in names.to_pylist()], np.int64)
    if (local_to_global < 0).any():
        unknown = [r for r in names.to_pylist() if r not in run_index]
        raise ValueError(f"run ids {unknown} are not among run_ids")
    return local_to_global[local] if len(local) else local


def _present_and_index(keys: np.ndarray, extra: np.ndarray, slots: int):
    """Sorted union of ``keys`` and ``extra`` (small ints < ``slots``) and each key's rank in it.

    Returns ``(present, union, rank_of_keys)``; ``present`` are the distinct ``keys``.
    Small grids use a dense lookup table (O(n)); large ones sort.
    """
    if slots <= _DENSE_SLOTS:
        seen = np.zeros(slots, dtype=bool)
        seen[keys] = True
        present = np.flatnonzero(seen)
        seen[extra] = True
        union = np.flatnonzero(seen)
        lookup = np.zeros(slots, dtype=np.int64)
        lookup[union] = np.arange(len(union))
        return present, union, lookup[keys]
    present = np.unique(keys)
    union = np.union1d(present, extra)
    return present, union, np.searchsorted(union, keys)


def _grades_by_query(q_local: np.ndarray, grades: np.ndarray, n_queries: int):
    """Grades sorted descending within each query, and the per-query offsets."""
    starts = np.concatenate(([0], np.cumsum(np.bincount(q_local, minlength=n_queries))))
    if len(grades) == 0:
        return starts.astype(np.int64), grades.astype(np.int64)
    top, low = int(grades.max()), int(grades.min())
    span = top - low + 1
    if n_queries * span < (1 << 62):
        # one integer key per entry: query ascending, then grade descending
        keys = np.sort(q_local * span + (top - grades))
        return starts.astype(np.int64), top - keys % span
    order = np.lexsort((-grades, q_local))
    return starts.astype(np.int64), grades[order]


def _ranked_order(run: pa.Table, seg_code: np.ndarray, ties: str) -> np.ndarray:
    """The run rows' indices in ranked order: segment, score descending, then (tie rules
    other than ``doc-id``) the tie key ascending, then doc_id descending (byte-wise, as
    trec_eval)."""
    columns = {"s": seg_code, "score": run.column("score")}
    keys = [("s", "ascending"), ("score", "descending")]
    if ties != "doc-id":
        columns["tie"] = run.column(TIE_KEY)
        keys.append(("tie", "ascending"))
    columns["doc"] = run.column("doc_id")
    keys.append(("doc", "descending"))
    return pc.sort_indices(pa.table(columns), sort_keys=keys).to_numpy()


def evaluate_tables(
    run: pd.DataFrame | pa.Table,
    qrels: pd.DataFrame | pa.Table,
    measures: Sequence[Measure],
    options: EvalOptions = EvalOptions(),
    run_ids: Sequence[str] | None = None,
    in_worker: bool = False,
) -> pa.Table:
    """Evaluate every run against the qrels for the queries present in the inputs.

    Args:
        run: columns ``run_id, query_id, doc_id, score`` (strings, float64), optional
            ``_bad``; instead of ``run_id`` an integer ``_run`` column may give each
            row's index into ``run_ids`` (the Spark engine ships codes, not names).
            Optional ``_dup`` (bool: near-duplicate of a higher-ranked doc; a flagged
            doc judged relevant counts as grade 0, see :mod:`sparkeval.measures.near_dup`).
        qrels: columns ``query_id, doc_id, relevance`` (strings, integers), optional ``_bad``.
        measures: parsed measures; column ``m{i}`` of the result holds measure i.
        options: query policy, relevance level and depth.
        run_ids: every run of the evaluation (a run may have no rows for these
            queries and still owes them under the ``qrels`` policy).
        in_worker: mark errors so that the Spark driver can recover them.

    Returns:
        An Arrow table: :data:`META_COLUMNS` then one float64 column per measure,
        NaN where the measure is undefined or the segment is not evaluated.
    """
    coded = isinstance(run, pa.Table) and RUN_CODE in run.column_names
    if coded and run_ids is None:
        raise ValueError(f"a {RUN_CODE!r} column needs run_ids")
    present = run.column_names if isinstance(run, pa.Table) else list(run.columns)
    has_dup = DUPLICATE_FLAG in present
    types = dict(_CODED_RUN_TYPES if coded else _RUN_TYPES)
    if has_dup:
        types[DUPLICATE_FLAG] = pa.bool_()
    if options.ties != "doc-id":
        if TIE_KEY not in present and (run.num_rows if isinstance(run, pa.Table) else len(run)):
            raise ConfigError(f"ties {options.ties}: the run rows carry no {TIE_KEY} column")
        types[TIE_KEY] = pa.float64()
    run = _as_table(run, types)
    if not has_dup and run.num_rows:
        check_flags_available(measures, "a boolean run column _dup")
    qrels = _as_table(qrels, _QRELS_TYPES)
    _check_nulls(run, qrels, in_worker, run_ids)
    if run_ids is None:
        run_ids = sorted(pc.unique(run.column("run_id")).to_pylist())
    n_runs = len(run_ids)

    # --- integer codes: runs, queries and docs (hash encoding, no string sorting) ---
    run_code = _run_codes(run, run_ids)
    (q_run, q_qrels), q_dict = joint_codes(run.column("query_id"), qrels.column("query_id"))
    n_q = max(len(q_dict), 1)

    # --- segments: (run, query) pairs seen in a run or owed by the qrels ----------
    q_seen = np.zeros(n_q, dtype=bool)
    q_seen[q_qrels] = True
    qrels_queries = np.flatnonzero(q_seen)
    seg_key = run_code * n_q + q_run
    owed = (np.arange(n_runs, dtype=np.int64)[:, None] * n_q + qrels_queries[None, :]).ravel()
    run_pairs, all_seg, seg_code = _present_and_index(seg_key, owed, n_runs * n_q)
    seg_run, seg_q = np.divmod(all_seg, n_q)
    in_run = np.isin(all_seg, run_pairs)
    in_qrels = q_seen[seg_q]
    if options.queries == "qrels":
        evaluated = in_qrels
    elif options.queries == "both":
        evaluated = in_qrels & in_run
    elif options.queries == "union":
        evaluated = in_qrels | in_run
    else:
        evaluated = in_run

    # --- judgements: one per (query, doc); each doc once per ranking ---------------
    matched = match_docs(run.column("doc_id"), qrels.column("doc_id"), q_run, q_qrels, seg_code)
    if matched.qrels_duplicate is not None:
        row = qrels.slice(matched.qrels_duplicate, 1).to_pylist()[0]
        _raise(
            f"qrels: query {row['query_id']}: duplicate doc {row['doc_id']} "
            "(each doc may be judged once per query)",
            in_worker,
        )
    if matched.run_duplicate is not None:
        row = _first_row(run, np.arange(run.num_rows) == matched.run_duplicate, run_ids)
        _raise(
            f"run {row['run_id']}: query {row['query_id']}: duplicate doc {row['doc_id']} "
            "(each doc may appear once per query)",
            in_worker,
        )

    order = _ranked_order(run, seg_code, options.ties)
    seg_sorted = seg_code[order]
    ret_rows = np.bincount(seg_sorted, minlength=len(all_seg))
    starts_all = np.concatenate(([0], np.cumsum(ret_rows)))
    position = np.arange(len(order)) - starts_all[seg_sorted] + 1
    in_depth = position <= (options.depth or np.iinfo(np.int64).max)
    beyond_depth = ret_rows - np.bincount(seg_sorted[in_depth], minlength=len(all_seg))
    keep = evaluated[seg_sorted] & in_depth
    kept = order[keep]
    kept_seg = seg_sorted[keep]

    # --- relevance of each kept retrieved doc ---------------------------------------
    grades = qrels.column("relevance").to_numpy().astype(np.int64)
    assert matched.qrels_row is not None  # a duplicate raised above
    at = matched.qrels_row[kept]
    hit = at >= 0
    found = grades[np.where(hit, at, 0)] if len(grades) else np.zeros(len(at), np.int64)
    rel = np.where(hit, np.where(found < 0, UNJUDGED, found), NONPOOL)
    dup = run.column(DUPLICATE_FLAG).to_numpy(zero_copy_only=False)[kept] if has_dup else None
    rel = demote_near_duplicates(rel, dup)

    # --- compact to evaluated segments; judged grades per query -----------------------
    eval_ids = np.flatnonzero(evaluated)
    remap = np.full(len(all_seg), -1, dtype=np.int64)
    remap[eval_ids] = np.arange(len(eval_ids))
    counts = np.bincount(remap[kept_seg], minlength=len(eval_ids))
    kept_score = run.column("score").to_numpy()[kept].astype(np.float64)
    rank_gaps = np.zeros(len(all_seg), np.int64)
    if options.ranks == "order":
        rank_gaps[eval_ids] = rank_gap_segments(remap[kept_seg], kept_score, len(eval_ids))
    starts = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
    if options.ranks == "position":
        compact = remap[kept_seg]
        wrong = bad_rank(compact, kept_score)
        if wrong is not None:
            row = _first_row(run, np.arange(run.num_rows) == kept[wrong[0]], run_ids)
            _raise(
                f"run {row['run_id']}: query {row['query_id']}: doc {row['doc_id']}: rank "
                f"{-float(kept_score[wrong[0]]):g} {wrong[1]} "
                "(ranks are positions under compat rectools)",
                in_worker,
            )
        cap = max((m.k or 0) for m in measures) if measures else 0
        if any(m.spec.reads_past_cutoff for m in measures):
            cap = int(np.iinfo(np.int64).max)  # PartialAUC@k reads the whole ranking
        if any(m.k is None for m in measures):
            raise ConfigError("ranks read as positions need a cutoff (@k) on every measure")
        condensed = [m.name for m in measures if dict(m.params).get(JUDGED_ONLY)]
        if condensed:
            raise ConfigError(
                f"{', '.join(condensed)}: judged_only=True closes up the ranks of the "
                "unjudged docs, which ranks read as positions keep where they are"
            )
        spread = spread_to_ranks(compact, rel, kept_score, dup, len(eval_ids), cap)
        starts, rel, kept_score, dup = spread.starts, spread.rel, spread.score, spread.dup
    eval_q = seg_q[eval_ids]
    uniq_q, seg_query = np.unique(eval_q, return_inverse=True)
    q_lookup = np.full(n_q, -1, dtype=np.int64)
    q_lookup[uniq_q] = np.arange(len(uniq_q))
    q_local_all = q_lookup[q_qrels] if len(q_qrels) else np.zeros(0, np.int64)
    q_mask = q_local_all >= 0
    qrels_starts, qrels_grades = _grades_by_query(q_local_all[q_mask], grades[q_mask], len(uniq_q))
    batch = RankedBatch(
        starts=starts,
        rel=rel.astype(np.int64),
        score=kept_score,
        seg_query=seg_query.astype(np.int64),
        qrels_starts=qrels_starts,
        qrels_grades=qrels_grades,
        dup=dup,
    )

    qrels_rows = (
        np.bincount(q_qrels, minlength=n_q)[seg_q]
        if len(q_qrels)
        else np.zeros(len(all_seg), np.int64)
    )
    columns: dict[str, pa.Array | np.ndarray] = {
        "run_id": pa.array(
            np.asarray(run_ids, dtype=object)[seg_run] if len(all_seg) else [], pa.string()
        ),
        "query_id": q_dict.take(pa.array(seg_q)) if len(all_seg) else pa.array([], pa.string()),
        "in_run": in_run,
        "in_qrels": in_qrels,
        "evaluated": evaluated,
        "ret_rows": ret_rows.astype(np.int64),
        "beyond_depth": beyond_depth.astype(np.int64),
        "qrels_rows": qrels_rows.astype(np.int64),
        "rank_gaps": rank_gaps,
    }
    for i, m in enumerate(measures):
        col = np.full(len(all_seg), np.nan)
        col[eval_ids] = m.compute(batch, options.rel_level)
        columns[measure_column(i)] = col
    return pa.table(columns)


def evaluated_wide(
    run: pa.Table,
    qrels: pa.Table,
    measures: Sequence[Measure],
    options: EvalOptions,
    run_ids: Sequence[str] | None,
    in_worker: bool = False,
) -> pa.Table:
    """:func:`evaluate_tables` with the values of unevaluated queries and undefined
    values null (:func:`undefined_as_null`): the wide rows every engine writes and sums."""
    wide = evaluate_tables(run, qrels, measures, options, run_ids=run_ids, in_worker=in_worker)
    return undefined_as_null(wide, len(measures))


def undefined_as_null(result: pa.Table, n_measures: int) -> pa.Table:
    """Measure values of unevaluated queries and undefined (NaN) values become null."""
    evaluated = result.column("evaluated")
    for i in range(n_measures):
        name = measure_column(i)
        values = result.column(name)
        keep = pc.and_kleene(evaluated, pc.invert(pc.is_nan(values)))
        cleaned = pc.if_else(keep, values, pa.scalar(None, pa.float64()))
        result = result.set_column(result.schema.get_field_index(name), name, cleaned)
    return result


def evaluate_frames(
    run: pd.DataFrame | pa.Table,
    qrels: pd.DataFrame | pa.Table,
    measures: Sequence[Measure],
    options: EvalOptions = EvalOptions(),
    run_ids: Sequence[str] | None = None,
    in_worker: bool = False,
) -> pd.DataFrame:
    """:func:`evaluate_tables` as a pandas DataFrame, rows sorted by run and query.

    Example:
        >>> import pandas as pd
        >>> run = pd.DataFrame({"run_id": ["r", "r"], "query_id": ["q", "q"],
        ...                     "doc_id": ["a", "b"], "score": [2.0, 1.0]})
        >>> qrels = pd.DataFrame({"query_id": ["q"], "doc_id": ["b"], "relevance": [1]})
        >>> from sparkeval.measures.names import parse_measures
        >>> evaluate_frames(run, qrels, parse_measures("RR"))["m0"].tolist()
        [0.5]
    """
    table = evaluate_tables(run, qrels, measures, options, run_ids, in_worker)
    frame = table.to_pandas()
    return frame.sort_values(["run_id", "query_id"], kind="stable").reset_index(drop=True)


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
