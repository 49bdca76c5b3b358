"""Near-duplicate flags of run rows held in this process (pandas), as on Spark.

A run row ``(run_id, query_id, doc_id, score)`` is flagged (``_dup``) iff another doc
``e`` of the same run and query, with ``doc_id ~ e`` among the undirected pairs, ranks
higher: a higher score, or the same score and a larger doc id (the engine's order,
score descending, ties by doc id descending). A flagged row gains nothing in the
measures that honour the flag (``NearDup@k``, ...). This is
:mod:`sparkeval.engine.plans.near_dup_flags` for tables held in memory (the
in-process API), with the same counts in the report.

Example:
    >>> run = pa.table({"run_id": ["r"] * 3, "query_id": ["q"] * 3,
    ...                 "doc_id": ["a", "b", "c"], "score": [3.0, 2.0, 1.0]})
    >>> pairs = pa.table({"doc_a": ["c", "a"], "doc_b": ["a", "a"]})
    >>> flagged, report = near_duplicate_flags(run, pairs, ["r"])
    >>> flagged.column("_dup").to_pylist(), report["rows_flagged"], report["self_pairs_ignored"]
    ([False, False, True], {'r': 1}, 1)
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from sparkeval.engine.held_inputs import PAIR_COLUMNS, held_pairs
from sparkeval.formats import DUPLICATE_FLAG, RUN_CODE
from sparkeval.io.direct import is_id_type
from sparkeval.io.direct_input import NotDirect

_KEYS = ["run_id", "query_id", "doc_id"]


def pair_counts(pairs: pa.Table) -> tuple[dict[str, int], pd.DataFrame]:
    """The report's pair counts (``pairs_read``, ``self_pairs_ignored``,
    ``repeated_pairs``, ``distinct_pairs``) and the distinct undirected pairs
    ``x < y`` of ``doc_a, doc_b`` string pairs."""
    frame = pairs.to_pandas()
    a, b = frame["doc_a"].to_numpy(dtype=object), frame["doc_b"].to_numpy(dtype=object)
    used = a != b
    low = np.where(a[used] < b[used], a[used], b[used])
    high = np.where(a[used] < b[used], b[used], a[used])
    undirected = pd.DataFrame({"x": low, "y": high}).drop_duplicates(ignore_index=True)
    read, self_pairs, distinct = len(frame), int((~used).sum()), len(undirected)
    counts = {
        "pairs_read": read,
        "self_pairs_ignored": self_pairs,
        "repeated_pairs": read - self_pairs - distinct,
        "distinct_pairs": distinct,
    }
    return counts, undirected


def near_duplicate_flags(
    run: pa.Table, pairs: pa.Table, run_ids: Sequence[str]
) -> tuple[pa.Table, dict[str, Any]]:
    """``run`` with the boolean column ``_dup``, and the report's ``near_duplicates``
    block: the pair counts and ``rows_flagged`` (run id -> distinct flagged rows).

    Args:
        run: ``run_id, query_id, doc_id, score`` rows (ids as strings), or with the
            run's code (``_run``, an index into ``run_ids``) instead of ``run_id``, as
            the direct readers give them.
        pairs: ``doc_a, doc_b`` string pairs (:func:`~sparkeval.engine.held_inputs.held_pairs`).
        run_ids: every run, so that a run without a flagged row reports 0.
    """
    counts, undirected = pair_counts(pairs)
    rows = _ranking_rows(run, run_ids)
    flags = np.zeros(len(rows), dtype=bool)
    flagged_per_run: dict[str, int] = {}
    if len(undirected) and len(rows):
        edges = pd.concat(
            [
                undirected.rename(columns={"x": "doc_id", "y": "other"}),
                undirected.rename(columns={"y": "doc_id", "x": "other"}),
            ],
            ignore_index=True,
        )
        others = rows.rename(columns={"doc_id": "other", "score": "other_score"})
        joined = rows.merge(edges, on="doc_id").merge(others, on=["run_id", "query_id", "other"])
        higher = (joined["other_score"] > joined["score"]) | (
            (joined["other_score"] == joined["score"])
            & (joined["other"].to_numpy(dtype=object) > joined["doc_id"].to_numpy(dtype=object))
        )
        flagged = joined.loc[higher, _KEYS].drop_duplicates()
        flagged_per_run = {str(r): int(n) for r, n in flagged.groupby("run_id").size().items()}
        marked = rows[_KEYS].merge(flagged.assign(_flag=True), on=_KEYS, how="left")
        flags = marked["_flag"].notna().to_numpy()
    report = {**counts, "rows_flagged": {r: int(flagged_per_run.get(r, 0)) for r in run_ids}}
    return run.append_column(DUPLICATE_FLAG, pa.array(flags, pa.bool_())), report


def _ranking_rows(run: pa.Table, run_ids: Sequence[str]) -> pd.DataFrame:
    """``run_id, query_id, doc_id, score`` of ``run`` (run ids from their codes; a row
    of no run, a negative code, gets none and is never flagged)."""
    rows = run.select(["query_id", "doc_id", "score"]).to_pandas()
    if "run_id" in run.column_names:
        rows.insert(0, "run_id", run.column("run_id").to_pandas())
        return rows
    codes = run.column(RUN_CODE).to_numpy(zero_copy_only=False)
    names = np.array([*run_ids, None], dtype=object)
    rows.insert(0, "run_id", names[np.where(codes >= 0, codes, len(run_ids))])
    return rows


#: Spark's text reader ends a line at \\n, \\r\\n or \\r; Java's ``\\s`` is ASCII whitespace
_LINE_END = re.compile(r"\r\n|\r|\n")
_JAVA_SPACES = re.compile(r"[ \t\n\x0b\f\r]+")


def read_local_pairs(path: str, fmt: str | None = None) -> pa.Table:
    """``doc_a, doc_b`` of a local pairs file read as Spark's readers read it
    (:func:`sparkeval.io.pairs.read_pairs`): Parquet (a file or a directory of parts)
    or whitespace-separated text (``doc_a doc_b`` a line; blank and ``#`` lines
    skipped, fields beyond the second ignored).

    Raises:
        NotDirect: what Spark's readers judge or read: another format, a store, a
            compressed text file, a line with fewer than two ids or not valid UTF-8,
            an id column of another type than text or integers.
        InputError: a missing column or a pair without a doc id, named as on Spark.
    """
    from sparkeval.io.readers import COMPRESSION_SUFFIXES, WHITESPACE, detect_format
    from sparkeval.storage.uris import is_remote

    kind = detect_format(path, fmt)
    if is_remote(path):
        raise NotDirect(f"{path}: near-duplicate pairs on a store are read by Spark")
    if kind == "parquet":
        import pyarrow.parquet as pq

        table = pq.read_table(path)
        for column in PAIR_COLUMNS:
            if column in table.column_names and not _id_column(table.schema.field(column).type):
                raise NotDirect(f"{path}: an id column of type {table.schema.field(column).type}")
        return held_pairs(table, path)
    if kind != "trec" or path.lower().endswith(COMPRESSION_SUFFIXES):
        raise NotDirect(f"{path}: near-duplicate pairs of this format are read by Spark")
    try:
        with open(path, "rb") as handle:
            text = handle.read().decode("utf-8")
    except UnicodeDecodeError:
        raise NotDirect(f"{path}: a pairs line that is not valid UTF-8") from None
    firsts, seconds = [], []
    for line in _LINE_END.split(text):
        body = line.strip(WHITESPACE)
        if not body or body.startswith("#"):
            continue
        fields = _JAVA_SPACES.split(body)
        if len(fields) < 2:
            raise NotDirect(f"{path}: a pairs line without two doc ids")
        firsts.append(fields[0])
        seconds.append(fields[1])
    return pa.table(
        {"doc_a": pa.array(firsts, pa.string()), "doc_b": pa.array(seconds, pa.string())}
    )


def _id_column(kind: pa.DataType) -> bool:
    if pa.types.is_dictionary(kind):
        kind = kind.value_type
    return is_id_type(kind)
