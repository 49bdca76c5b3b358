"""Subtopic qrels, the judgements of the intent-aware measures: one row per query,
subtopic (intent) and doc, with an integer grade.

Formats, by the file's name:

* ndeval's text (any other name, ``.gz`` read decompressed): whitespace separated
  ``query subtopic doc grade`` lines, blank lines skipped;
* Parquet (``.parquet``, or a directory of Parquet files), CSV (``.csv``, a header
  line) and TSV (``.tsv``, a header line), with the columns ``query_id, subtopic_id,
  doc_id, relevance`` (or ``query``/``qid``/``topic``, ``subtopic``/``intent``,
  ``doc``/``docno``, ``grade``/``rel``/``judgment``);
* a pandas DataFrame or an Arrow table with those columns (the Python API).

Ids are read as text. A (query, subtopic, doc) given twice is an error, as is a grade
that is not a whole number.

Example:
    >>> import io
    >>> rows = parse_text(io.StringIO("1 a d1 1\\n1 b d2 0\\n"), "q.txt")
    >>> rows.to_dict("list")["doc_id"]
    ['d1', 'd2']
"""

from __future__ import annotations

import gzip
import io
from typing import IO, Any

import numpy as np
import pandas as pd

from sparkeval.errors import InputError

#: the four columns, and the names each is found by
COLUMNS: dict[str, tuple[str, ...]] = {
    "query_id": ("query_id", "query", "qid", "topic", "topic_id"),
    "subtopic_id": ("subtopic_id", "subtopic", "intent", "intent_id"),
    "doc_id": ("doc_id", "doc", "docno", "docid"),
    "relevance": ("relevance", "grade", "rel", "judgment", "label"),
}


def read_subtopic_qrels(source: Any) -> pd.DataFrame:
    """``query_id, subtopic_id, doc_id`` (text) and ``relevance`` (int64) of a path or
    a table (see the module text).

    Raises:
        InputError: a file that is missing or malformed, a missing column, a grade that
            is not whole, or a (query, subtopic, doc) given twice.
    """
    if isinstance(source, str):
        name = source.lower().rstrip("/")
        if name.endswith(".parquet") or _is_parquet_dir(source):
            import pyarrow.parquet as pq

            frame = _columns(pq.read_table(source).to_pandas(), source)
        elif name.endswith((".csv", ".tsv", ".csv.gz", ".tsv.gz")):
            sep = "\t" if ".tsv" in name else ","
            try:
                raw = pd.read_csv(source, sep=sep, dtype=str, keep_default_na=False)
            except (OSError, ValueError) as exc:
                raise InputError(f"{source}: cannot read the subtopic qrels: {exc}") from None
            frame = _columns(raw, source)
        else:
            try:
                opened = gzip.open(source, "rt") if name.endswith(".gz") else open(source)  # noqa: SIM115
            except OSError as exc:
                raise InputError(f"{source}: cannot read the subtopic qrels: {exc}") from None
            with opened as handle:
                frame = parse_text(handle, source)
    else:
        frame = _columns(_as_pandas(source), "the subtopic qrels table")
    return _checked(frame, source if isinstance(source, str) else "the subtopic qrels table")


def parse_text(handle: IO[str] | io.StringIO, where: str) -> pd.DataFrame:
    """The rows of ndeval's text ``query subtopic doc grade``.

    Raises:
        InputError: a line without four fields or with a grade that is not whole,
            naming the file and line.
    """
    rows: list[list[str]] = []
    for number, line in enumerate(handle, start=1):
        fields = line.split()
        if not fields:
            continue
        if len(fields) != 4:
            raise InputError(
                f"{where}, line {number}: expected 'query subtopic doc grade' (4 fields), "
                f"got {len(fields)}"
            )
        try:
            int(fields[3])
        except ValueError:
            raise InputError(
                f"{where}, line {number}: the grade {fields[3]!r} is not a whole number"
            ) from None
        rows.append(fields)
    table = np.asarray(rows, dtype=object).reshape(-1, 4)
    return pd.DataFrame(
        {
            "query_id": table[:, 0].astype(str),
            "subtopic_id": table[:, 1].astype(str),
            "doc_id": table[:, 2].astype(str),
            "relevance": np.asarray([int(v) for v in table[:, 3]], dtype=np.int64),
        }
    )


def _is_parquet_dir(path: str) -> bool:
    import os

    return os.path.isdir(path) and any(n.endswith(".parquet") for n in os.listdir(path))


def _as_pandas(table: Any) -> pd.DataFrame:
    if isinstance(table, pd.DataFrame):
        return table
    if hasattr(table, "to_pandas"):
        return table.to_pandas()
    raise InputError("subtopic qrels: expected a path, a pandas DataFrame or an Arrow table")


def _columns(frame: pd.DataFrame, where: str) -> pd.DataFrame:
    """The four columns of ``frame``, found by their names (case-insensitively)."""
    lower = {str(c).lower(): c for c in frame.columns}
    out = {}
    for column, names in COLUMNS.items():
        found = next((lower[n] for n in names if n in lower), None)
        if found is None:
            raise InputError(
                f"{where}: no {column} column in the subtopic qrels (looked for "
                f"{', '.join(names)}; found {', '.join(map(str, frame.columns))})"
            )
        out[column] = frame[found]
    grades = out["relevance"]
    try:
        whole = pd.to_numeric(grades, errors="raise")
    except (ValueError, TypeError):
        raise InputError(
            f"{where}: the relevance column holds a value that is not a number"
        ) from None
    if whole.isna().any() or (whole != np.floor(whole)).any():
        raise InputError(f"{where}: the relevance column holds a value that is not whole")
    return pd.DataFrame(
        {
            "query_id": [str(v) for v in out["query_id"]],
            "subtopic_id": [str(v) for v in out["subtopic_id"]],
            "doc_id": [str(v) for v in out["doc_id"]],
            "relevance": whole.astype(np.int64).to_numpy(),
        }
    )


def _checked(frame: pd.DataFrame, where: str) -> pd.DataFrame:
    """``frame``, refused when it has no rows or a (query, subtopic, doc) twice."""
    if frame.empty:
        raise InputError(f"{where}: the subtopic qrels have no rows")
    twice = frame.duplicated(["query_id", "subtopic_id", "doc_id"], keep=False)
    if twice.any():
        first = frame[twice].iloc[0]
        raise InputError(
            f"{where}: query {first.query_id}, subtopic {first.subtopic_id}, doc "
            f"{first.doc_id} is judged more than once"
        )
    return frame.reset_index(drop=True)
