"""``similar-users`` of a local run file in this process, without Spark: the command's
local engine (``--engine local``, and ``auto`` on small local inputs).

The run is read by the direct readers (:func:`~sparkeval.io.direct.read_unit`, as the
other local engines read it) into the columns and Arrow types that the Spark job
collects for its numpy search (:mod:`sparkeval.lsh.driver_users`): text ids as text,
a Parquet file's integer ids and scores in their own types. The runs are chosen as on
Spark (:func:`~sparkeval.io.run_choice.chosen_runs`: every run, or ``--run-id``'s),
each is searched by the same numpy stages (the same MinHash signatures, band keys,
exact verification, statistics, top-k order and repeated-item check), and the
outputs are written by the same functions (:mod:`sparkeval.lsh.users_output`), so
``pairs.parquet`` and ``summary.json`` are byte for byte those of the Spark job when
its driver searched every run (``timings.json`` differs).

What is left to Spark (:class:`~sparkeval.io.direct_input.NotDirect`; under ``auto``
the command then runs on Spark, ``--engine local`` refuses it by name): what the
direct readers leave to Spark's readers (a null id or score, a value that is not a
plain number, quoting in a CSV file, ...), unsigned or other id types, and, with
``--k``, a NaN score or a text score beyond 2^53 (which Spark reads as a whole
number), and a run whose buckets make more candidate pairs than the numpy stages take
(:class:`~sparkeval.lsh.driver_sets.TooManyCandidates`).

Example::

    summary = run_similar_users_locally(config)   # config: a SimilarUsersConfig
    summary["runs"]["bm25"]["counts"]["pairs"]
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc

from sparkeval.engine.transport.arrow_exchange import decoded_columns
from sparkeval.formats import RUN_CODE
from sparkeval.io.direct import read_unit
from sparkeval.io.direct_input import DirectInput, NotDirect
from sparkeval.io.direct_plan import plan_direct_runs
from sparkeval.io.readers import check_exists
from sparkeval.io.run_choice import check_k, chosen_runs
from sparkeval.lsh.driver_sets import DriverSimilarSets, TooManyCandidates
from sparkeval.lsh.driver_users import similar_users_in_driver
from sparkeval.lsh.users_output import search_parameters, write_driver_pairs, write_outputs
from sparkeval.status import status
from sparkeval.storage.files import parquet_source

if TYPE_CHECKING:
    from sparkeval.lsh.options import SimilarUsersConfig

#: the largest magnitude up to which every whole number is a float64 (2^53): a text
#: score beyond it may be a whole number to Spark's CSV reader and tie as a float here
EXACT_WHOLE = float(2**53)


@dataclass(frozen=True)
class LocalRuns:
    """The runs of a run file to search, read in this process.

    Attributes:
        path: the run file, as given.
        has_ids: whether the file has run ids (a ``run_id`` column, a TREC tag): the
            runs are then named in messages.
        tables: each run's ``query_id, doc_id[, score]`` rows, in run order (sorted).
    """

    path: str
    has_ids: bool
    tables: dict[str, pa.Table]

    def label(self, run_id: str) -> str | None:
        """``run_id`` where the file has run ids (for messages), else None."""
        return run_id if self.has_ids else None

    def named(self, run_id: str) -> str:
        """``run ID: `` in a status line when several runs are searched."""
        return f"run {run_id}: " if len(self.tables) > 1 else ""


def read_runs_locally(path: str, run_id: str | None, k: int | None) -> LocalRuns:
    """The rows of every run of ``path`` to search (or of ``run_id``'s), as the Spark
    job collects them for the numpy search (see the module text).

    Raises:
        NotDirect: the file, or a value in it, for Spark's readers.
        ConfigError: ``run_id`` given for a file without run ids or not among them.
        InputError: the file does not exist.
    """
    check_exists(path)
    why: list[str] = []
    planned = plan_direct_runs(None, [path], None, None, why)
    if planned is None:
        raise NotDirect(why[0] if why else f"{path}: a run the direct readers do not plan")
    (source,), found = planned
    has_column = source.fmt == "trec" or "run_id" in dict(source.columns)
    has_ids, ids = chosen_runs(path, has_column, run_id, found)
    rows = pa.concat_tables(
        [_unit_rows(source, unit, found, k) for unit in range(len(source.units))]
    )
    if k is not None:
        _check_scores(rows.column("score"), source)
    codes = rows.column(RUN_CODE)
    tables = {}
    for rid in ids:
        kept = rows.filter(pc.equal(codes, pa.scalar(found.index(rid), pa.int32())))
        tables[rid] = kept.drop_columns([RUN_CODE])
    return LocalRuns(path, has_ids, tables)


def _unit_rows(source: DirectInput, unit: int, run_ids: Sequence[str], k: int | None) -> pa.Table:
    """Read unit ``unit`` as ``_run, query_id, doc_id[, score]``: the direct reader's
    rows, with a Parquet file's integer ids (and, under a cut, its score) in the
    file's own types, as Spark reads them."""
    read = decoded_columns(read_unit(source, unit, run_ids))
    wanted = ["query_id", "doc_id", *(["score"] if k is not None else [])]
    if source.fmt != "parquet":
        return read.select([RUN_CODE, *wanted])
    import pyarrow.parquet as pq

    columns = dict(source.columns)
    file, group = source.units[unit]
    native = pq.ParquetFile(parquet_source(file)).read_row_group(
        group, columns=sorted({columns[name] for name in wanted})
    )
    out = {RUN_CODE: read.column(RUN_CODE)}
    for name in wanted:
        column = native.column(columns[name])
        if _is_text(column.type):
            out[name] = read.column(name)
        else:
            out[name] = _as_spark_reads(column, columns[name], source.path)
    return pa.table(out)


def _is_text(kind: pa.DataType) -> bool:
    return pa.types.is_string(kind) or pa.types.is_large_string(kind)


#: Parquet column types that Spark reads as the same Arrow type (its ``tinyint`` to
#: ``bigint``, ``float`` and ``double``)
_SPARK_SAME = (pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.float32(), pa.float64())


def _as_spark_reads(column: pa.ChunkedArray, name: str, path: str) -> pa.ChunkedArray:
    """A Parquet id or score column as Spark's ``toArrow`` gives it.

    Raises:
        NotDirect: a type Spark reads as another (unsigned integers, half floats).
    """
    if column.type not in _SPARK_SAME:
        raise NotDirect(f"{path}: column {name} of type {column.type} (Spark reads it as another)")
    return column


def _check_scores(scores: pa.ChunkedArray, source: DirectInput) -> None:
    """Scores the cut at ``--k`` ranks as the Spark job's numpy search does.

    Raises:
        NotDirect: a NaN score (the Spark stages name it), or a score of a text file
            beyond 2^53 (which Spark's CSV reader may read as a whole number).
    """
    if pa.types.is_floating(scores.type) and pc.any(pc.is_nan(scores)).as_py():
        raise NotDirect(f"{source.path}: a NaN score under --k")
    if source.fmt != "parquet" and len(scores):
        low, high = pc.min_max(scores).values()
        if max(-low.as_py(), high.as_py()) > EXACT_WHOLE:
            raise NotDirect(f"{source.path}: a score beyond 2^53 under --k")


def search_runs(runs: LocalRuns, config: SimilarUsersConfig) -> dict[str, DriverSimilarSets]:
    """Each run's pairs and statistics from the numpy stages, in run order.

    Raises:
        InputError: an item twice in a user's list (named with its run).
        NotDirect: a run whose buckets make too many candidate pairs for them.
    """
    k = check_k(config.k)
    found = {}
    for run_id, table in runs.tables.items():
        label = runs.label(run_id)
        try:
            found[run_id] = similar_users_in_driver(
                table, runs.path, config.threshold, k, config, label
            )
        except TooManyCandidates as many:
            raise NotDirect(
                f"{runs.named(run_id)}{many}, more than this process searches"
            ) from None
        status(f"[search] {runs.named(run_id)}{table.num_rows} run rows: searched here")
    return found


def run_similar_users_locally(config: SimilarUsersConfig) -> dict[str, Any]:
    """``run_similar_users`` in this process, without Spark: the same files and lines.

    Raises:
        NotDirect: an input or value for Spark's readers; nothing was written.
    """
    config.preflight()
    start = time.perf_counter()
    status(f"[read] {config.run}")
    search_parameters(config.threshold, config.k, config)  # its checks, before the read
    runs = read_runs_locally(config.run, config.run_id, check_k(config.k))
    searches = search_runs(runs, config)
    for run_id, search in searches.items():
        status(
            f"[candidates] {runs.named(run_id)}{search.stats.get('candidate_pairs', 0)} "
            f"candidate pairs of {search.stats.get('sets', 0)} users"
        )
    status("[write] verifying and writing the pairs")
    stats = {run_id: search.stats for run_id, search in searches.items()}
    pairs = {run_id: search.pairs for run_id, search in searches.items()}
    return write_outputs(config, stats, lambda path: write_driver_pairs(pairs, path), start)
