"""``rank-distance`` of local files in this process, without Spark: the command's local
engine (``--engine local``, and ``auto`` on small local inputs).

The runs are read by the direct readers (:func:`~sparkeval.io.direct.read_unit`, as
``evaluate``'s local engine reads them), ranked as on Spark (score descending, tied
scores by doc id descending, cut at ``--depth``), and measured by the same per-query
kernel (:func:`~sparkeval.compare.pipeline.distance_rows`), the same exact totals
(:func:`~sparkeval.engine.worker.exact_summary.exact_total`) and the same numpy terms of
the exposure divergences (:func:`~sparkeval.compare.pipeline.divergence_terms`), so
``rank_distance.parquet`` and ``summary.json`` are byte for byte those of a Spark run
(whose driver writes a table of at most
:data:`~sparkeval.output.DRIVER_WRITE_ROWS` rows as this engine does).

What the direct readers leave to Spark's (JSON Lines, a rank-only run, a malformed line)
ends the local run (:class:`~sparkeval.io.direct_input.NotDirect`).

Example::

    result = rank_distance_locally(["runs.parquet"], CompareOptions("bm25", k=10))
    result.summary["rank_distance"]["runs"]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from sparkeval.compare.options import compared_runs
from sparkeval.compare.pipeline import (
    BASELINE_ONLY,
    DISTANCE_FIELDS,
    DIVERGENCE_COUNTS,
    DIVERGENCE_TERMS,
    PAIRED,
    RD_ARROW_SCHEMA,
    RUN_ONLY,
    CompareOptions,
    distance_rows,
    distance_summary,
    divergence_terms,
    divergences,
    exposure_entropy,
)
from sparkeval.engine.transport.arrow_exchange import decoded_columns
from sparkeval.engine.worker.assemble import missing_score_message
from sparkeval.engine.worker.exact_summary import ExactTotal, exact_total
from sparkeval.errors import InputError
from sparkeval.formats import RUN_CODE
from sparkeval.information import plogp_terms
from sparkeval.io.direct import read_unit
from sparkeval.io.direct_input import RUN_SCHEMA, NotDirect
from sparkeval.io.direct_plan import plan_direct_runs


def read_runs_locally(paths: Sequence[str]) -> tuple[pd.DataFrame, list[str]]:
    """``run_id, query_id, doc_id, score`` of every run input, and the run ids sorted,
    as :func:`sparkeval.compare.pipeline.read_runs` reads them on Spark.

    Raises:
        NotDirect: an input for Spark's readers.
        InputError: a row without a score (or a NaN one), named as on Spark.
    """
    why: list[str] = []
    planned = plan_direct_runs(None, list(paths), None, None, why)
    if planned is None:
        raise NotDirect(why[0] if why else "a run input the direct readers do not plan")
    sources, run_ids = planned
    pieces = [
        decoded_columns(read_unit(source, unit, run_ids))
        for source in sources
        for unit in range(len(source.units))
    ]
    run = pa.concat_tables([RUN_SCHEMA.empty_table(), *pieces])
    codes = run.column(RUN_CODE).to_numpy(zero_copy_only=False)
    frame = pd.DataFrame(
        {
            "run_id": np.array(run_ids, dtype=object)[codes],
            "query_id": run.column("query_id").to_numpy(zero_copy_only=False),
            "doc_id": run.column("doc_id").to_numpy(zero_copy_only=False),
            "score": run.column("score").to_numpy(zero_copy_only=False),
        }
    )
    unscored = np.flatnonzero(np.isnan(frame["score"].to_numpy(dtype=np.float64)))
    if len(unscored):
        row = frame.iloc[int(unscored[0])]
        raise InputError(missing_score_message(row["run_id"], row["query_id"], row["doc_id"]))
    return frame, sorted(run_ids)


def ranked(rows: pd.DataFrame) -> pd.DataFrame:
    """``rows`` with ``rank`` (1-based) per run and query: score descending, tied scores
    by doc id descending (Spark's :func:`~sparkeval.spark_order.with_rank`)."""
    order = rows.sort_values(
        ["run_id", "query_id", "score", "doc_id"],
        ascending=[True, True, False, False],
        kind="stable",
    )
    order["rank"] = order.groupby(["run_id", "query_id"], sort=False).cumcount() + 1
    return order


def cut_at(ranks: pd.DataFrame, depth: int | None) -> pd.DataFrame:
    """The rows of :func:`ranked` ``ranks`` within the first ``depth`` of their ranking."""
    return ranks if depth is None else ranks[ranks["rank"] <= depth]


@dataclass
class LocalRankDistance:
    """What ``sparkeval rank-distance`` writes, computed in this process.

    Attributes:
        table: ``rank_distance.parquet``'s rows, sorted by run and query.
        summary: ``summary.json``'s content.
        present: every run id of the inputs, sorted.
        runs: the runs compared with the baseline.
    """

    table: pa.Table
    summary: dict[str, Any]
    present: list[str]
    runs: list[str]


def rank_distance_locally(
    paths: Sequence[str], options: CompareOptions, wanted: tuple[str, ...] = ()
) -> LocalRankDistance:
    """The outputs of ``sparkeval rank-distance`` of the run inputs ``paths`` against
    ``options.baseline`` (every other run, or ``wanted``'s); see the module text."""
    rows, present = read_runs_locally(paths)
    runs = compared_runs(present, options.baseline, wanted)
    ranks = ranked(rows[rows["run_id"].isin([options.baseline, *runs])])
    table = distance_table(cut_at(ranks, options.depth), runs, options)
    summary = {"rank_distance": distance_summary(run_totals(table), options)}
    summary["exposure"] = exposure(cut_at(ranks, options.k), runs, options)
    return LocalRankDistance(table, summary, present, runs)


def distance_table(ranks: pd.DataFrame, runs: list[str], options: CompareOptions) -> pa.Table:
    base = ranks[ranks["run_id"] == options.baseline].assign(side="b")
    frames = []
    for run in runs:
        mine = ranks[ranks["run_id"] == run].assign(side="r")
        both = pd.concat([mine, base.assign(run_id=run)], ignore_index=True)
        if len(both):
            frames.append(distance_rows(both, options.baseline, options.k, options.rbo_p))
    if not frames:
        return RD_ARROW_SCHEMA.empty_table()
    table = pd.concat(frames, ignore_index=True).sort_values(["run_id", "query_id"], kind="stable")
    return pa.Table.from_pandas(table, schema=RD_ARROW_SCHEMA, preserve_index=False)


def run_totals(table: pa.Table) -> list[tuple[str, dict[str, ExactTotal]]]:
    """Per run: the exact totals of every distance and the status counts, as
    :func:`~sparkeval.compare.pipeline.rank_distance_summary` takes them on Spark."""
    frame = table.to_pandas()
    found = []
    for run, group in frame.groupby("run_id", sort=True):
        totals = {
            name: exact_total(group[name].to_numpy(dtype=np.float64, na_value=np.nan))
            for name in DISTANCE_FIELDS
        }
        status = group["status"].to_numpy(dtype=object)
        for name in (PAIRED, RUN_ONLY, BASELINE_ONLY):
            totals[f"_is_{name}"] = _flags(status == name)
        undefined = group["kendall_tau"].isna().to_numpy() & (status == PAIRED)
        totals["_tau_undefined"] = _flags(undefined)
        found.append((str(run), totals))
    return found


def _flags(holds: np.ndarray) -> ExactTotal:
    """The total of a flag column: 1.0 where ``holds``, else null."""
    return exact_total(np.where(holds, 1.0, np.nan))


def exposure(ranks: pd.DataFrame, runs: list[str], options: CompareOptions) -> dict[str, Any]:
    """The ``exposure`` block: each run's top-k exposure entropy, and JS and KL against
    the baseline, from the same terms and exact totals as on Spark."""
    counts = ranks.groupby(["run_id", "doc_id"], sort=True).size().rename("c").reset_index()
    slots = counts.groupby("run_id")["c"].transform("sum")
    counts["p"] = counts["c"].to_numpy(dtype=np.int64) / slots.to_numpy(dtype=np.int64)
    entropy = []
    for run, group in counts.groupby("run_id", sort=True):
        p = group["p"].to_numpy(dtype=np.float64)
        c = group["c"].to_numpy(dtype=np.float64)
        entropy.append((str(run), {"plogp": exact_total(plogp_terms(p)), "c": exact_total(c)}))
    base = counts[counts["run_id"] == options.baseline][["doc_id", "p"]]
    found = []
    for run in sorted(runs):
        mine = counts[counts["run_id"] == run][["doc_id", "p"]]
        joined = mine.merge(base.rename(columns={"p": "q"}), on="doc_id", how="outer")
        p = joined["p"].fillna(0.0).to_numpy(dtype=np.float64)
        q = joined["q"].fillna(0.0).to_numpy(dtype=np.float64)
        terms = divergence_terms(p, q)
        totals = {name: exact_total(terms[name]) for name in DIVERGENCE_TERMS}
        held = {"only_run": (p > 0) & (q == 0), "only_base": (q > 0) & (p == 0)}
        held["shared"] = (p > 0) & (q > 0)
        totals.update({name: _flags(held[name]) for name in DIVERGENCE_COUNTS})
        if len(joined):
            found.append((run, totals))
    return {
        "k": options.k,
        "base": 2,
        "runs": exposure_entropy(entropy),
        "vs_baseline": divergences(found),
    }
