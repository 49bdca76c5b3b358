"""A ``diversity`` run in TREC, CSV or TSV text read in this process, for its local
engine: the rows the direct readers give
(:func:`~sparkeval.lsh.local_similar_users.read_runs_locally`, the reader of
``similar-users``' local engine), in the types Spark's readers give the Spark job (ids
as text, the file's run ids as text, scores as numbers; a TREC file's run id is the tag
of its first line, as on Spark).

What this reader leaves to Spark (:class:`~sparkeval.io.direct_input.NotDirect`):
what the direct readers leave to Spark's readers (quoting, an empty field, a value
that is not a plain decimal number, a CSV file without a score column, ...). A CSV or
TSV run with a relevance column (``rating``, ``grade``, ...), which the direct readers
do not read, is read by :mod:`~sparkeval.diversity.local_text_table`
(:func:`has_relevance_column` tells).

Example::

    run = read_text_run("reco.tsv", None, 10)
    run.column("doc_id")      # the items, as text
"""

from __future__ import annotations

import pyarrow as pa

from sparkeval.diversity.local_read import LocalTable
from sparkeval.io.columns import GRADE_NAMES
from sparkeval.io.direct_csv import SEPARATORS, read_header
from sparkeval.io.direct_input import NotDirect, local_single_file
from sparkeval.io.readers import detect_format
from sparkeval.lsh.local_similar_users import read_runs_locally


def read_text_run(path: str, run_id: str | None, k: int | None) -> LocalTable:
    """The run ``path`` (TREC, CSV or TSV) as ``query_id, doc_id[, score][, run_id]``:
    the runs of ``run_id`` (every run when None), ``run_id`` as text and only where the
    file has run ids (a TREC tag, a run id column), ``score`` only under a cut ``k``.

    Raises:
        NotDirect: an input or value for Spark's readers (see the module text).
        ConfigError: ``run_id`` is not among the file's runs (Spark's message).
        InputError: the file does not exist.
    """
    named = relevance_column(path)
    if named is not None:
        raise NotDirect(f"{path}: a relevance column ({named}) in a text run")
    runs = read_runs_locally(path, run_id, k)
    tables = []
    for rid, table in runs.tables.items():
        if runs.has_ids:
            table = table.append_column("run_id", pa.array([rid] * table.num_rows, pa.string()))
        tables.append(table)
    return LocalTable(path, pa.concat_tables(tables))


def has_relevance_column(path: str) -> bool:
    """Whether ``path`` is a CSV or TSV run whose header names a relevance column."""
    return relevance_column(path) is not None


def relevance_column(path: str) -> str | None:
    """The relevance column (one of the relevance aliases, any case) a CSV or TSV run's
    header names, or None (another format, or no such column)."""
    fmt = detect_format(path)
    local = local_single_file(path)
    if fmt not in SEPARATORS or local is None:
        return None
    header = read_header(local, SEPARATORS[fmt]) or []
    grades = {name.lower() for name in GRADE_NAMES}
    named = [name for name in header if name.lower() in grades]
    return named[0] if named else None
