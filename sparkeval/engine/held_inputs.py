"""Run and truth tables held in memory (pandas DataFrames, Arrow tables) as the
canonical Arrow tables the kernels take, with the checks of the Spark path.

Columns are found by name or alias, as in files and Spark DataFrames
(:func:`~sparkeval.io.columns.resolve_columns`); a run with a rank column and no score
is ordered by its ranks (:func:`~sparkeval.io.readers.rank_column`, as on Spark); the
truth's ratings become grades by a :class:`~sparkeval.io.truth.RelevanceRule`. Ids must
be strings or integers (integers compare as their decimal text, as everywhere);
scores must be finite numbers and grades whole numbers. A table without rows may have
columns of any type (pandas gives an empty column no type).

Example:
    >>> import pandas as pd
    >>> run = pd.DataFrame({"user_id": [7, 7], "item_id": ["a", "b"], "rank": [1, 2]})
    >>> held_run(run).to_pydict()
    {'run_id': ['run', 'run'], 'query_id': ['7', '7'], 'doc_id': ['a', 'b'], 'score': [-1.0, -2.0]}
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from sparkeval.errors import InputError, OptionTypeError
from sparkeval.formats import DEFAULT_RUN_ID, TIE_KEY
from sparkeval.io.columns import PYTHON_KEYWORDS, OptionNaming, parse_mapping, resolve_columns
from sparkeval.io.direct import is_id_type
from sparkeval.io.readers import NOT_UTF8, rank_column
from sparkeval.io.tie_keys import input_order_keys, tie_rank_name
from sparkeval.io.truth import RelevanceRule, has_relevance
from sparkeval.io.utf8_check import first_invalid_utf8, raw_value, shown_text

#: the id columns of a qrels table
_ID_COLUMNS = ("query_id", "doc_id")
#: a column mapping as the API takes it: ``"query_id=u,doc_id=i"`` or a dict
Columns = str | Mapping[str, str] | None


def held_run(
    data: Any,
    columns: Columns = None,
    naming: OptionNaming = PYTHON_KEYWORDS,
    ties: str = "doc-id",
) -> pa.Table:
    """``run_id, query_id, doc_id, score`` (strings and float64) of a run table; a table
    without a run id column is one run, ``run``.  Under the tie rules ``rank`` and
    ``input-order`` a ``_tie`` column (float64) follows: the table's rank column, or
    each row's place in the table (0 first)."""
    table = as_arrow(data, "run")
    source = "run table"
    mapping = parse_mapping(columns, "run")
    tie = _tie_keys(table, source, ties)
    rank = rank_column(table.column_names, mapping)
    if rank is not None:  # the score -rank, as on Spark
        ranks = _values(table.column(rank), source, rank, whole=False)
        table = table.append_column("score", pc.negate(ranks))
    found = resolve_columns(table.column_names, "run", mapping, source, naming)
    out: dict[str, pa.Array | pa.ChunkedArray] = {}
    if "run_id" in found:
        out["run_id"] = _ids(table.column(found["run_id"]), source, found["run_id"])
    else:
        out["run_id"] = pa.array([DEFAULT_RUN_ID] * table.num_rows, pa.string())
    for name in ("query_id", "doc_id"):
        out[name] = _ids(table.column(found[name]), source, found[name])
    out["score"] = _values(table.column(found["score"]), source, found["score"], whole=False)
    if tie is not None:
        out[TIE_KEY] = tie
    return pa.table(out)


def _tie_keys(table: pa.Table, source: str, ties: str) -> pa.ChunkedArray | None:
    """The ``_tie`` column of :func:`held_run` (None under ``doc-id``).

    Raises:
        ConfigError: ``rank`` and the table has no rank column.
        InputError: a rank that is not a finite number.
    """
    if ties == "input-order":
        return input_order_keys(table.num_rows)
    if ties != "rank":
        return None
    rank = tie_rank_name(table.column_names, source)
    return _values(table.column(rank), source, rank, whole=False)


def held_qrels(
    data: Any,
    rule: RelevanceRule | None = None,
    columns: Columns = None,
    naming: OptionNaming = PYTHON_KEYWORDS,
) -> pa.Table:
    """``query_id, doc_id, relevance`` (strings and int64) of a qrels or truth table, its
    ratings made grades by ``rule`` (default: they are the grades), as
    :func:`~sparkeval.io.truth.truth_to_qrels` makes them on Spark."""
    rule = rule or RelevanceRule("grade")
    table = as_arrow(data, "qrels")
    source = "qrels table"
    mapping = parse_mapping(columns, "qrels")
    if rule.kind == "all" and not has_relevance(table.column_names, mapping):
        table = table.append_column("_relevance_all", pa.array([1] * table.num_rows, pa.int64()))
        mapping = {**mapping, "relevance": "_relevance_all"}
    found = resolve_columns(table.column_names, "qrels", mapping, source, naming)
    qrels = {name: _ids(table.column(found[name]), source, found[name]) for name in _ID_COLUMNS}
    rating = found["relevance"]
    if rule.kind == "grade":
        qrels["relevance"] = _values(table.column(rating), source, rating, whole=True)
    elif rule.kind == "threshold":
        ratings = _values(table.column(rating), source, rating, whole=False)
        qrels["relevance"] = pa.array(rule.grade_values(ratings.to_numpy()))
    else:  # every truth row is relevant, whatever its rating
        qrels["relevance"] = pa.array(rule.grade_values(np.zeros(table.num_rows)))
    result = pa.table(qrels)
    if rule.relevant_only:
        result = result.filter(pc.greater(result.column("relevance"), 0))
    return result


#: the columns of a table of near-duplicate pairs
PAIR_COLUMNS = ("doc_a", "doc_b")


def held_pairs(pairs: Any, source: str = "near_duplicates DataFrame") -> pa.Table:
    """``doc_a, doc_b`` (strings) of near-duplicate pairs held in memory, read as Spark
    reads a pairs DataFrame (:func:`sparkeval.io.pairs.pairs_frame`).

    Raises:
        InputError: a column is missing, an id column has another type than text or
            integers, or a row lacks a doc id (of several such rows, the message that
            sorts first, as on Spark).
    """
    table = as_arrow(pairs, "near_duplicates")
    missing = [c for c in PAIR_COLUMNS if c not in table.column_names]
    if missing:
        raise InputError(
            f"{source}: missing column(s) {', '.join(repr(c) for c in missing)}; "
            f"columns are: {', '.join(table.column_names)}"
        )
    a, b = (_ids(table.column(c), source, c) for c in PAIR_COLUMNS)
    firsts = a.to_pylist()
    seconds = b.to_pylist()
    bad = [
        f"{source}: pair row with a missing or empty {'doc_a' if not x else 'doc_b'} "
        f"(doc_a '{x or ''}', doc_b '{y or ''}'); both doc ids are required"
        for x, y in zip(firsts, seconds, strict=True)
        if not x or not y
    ]
    if bad:
        raise InputError(min(bad))
    return pa.table({"doc_a": a, "doc_b": b})


def as_arrow(data: Any, kind: str) -> pa.Table:
    """``data`` (a pandas DataFrame or an Arrow table) as an Arrow table."""
    if isinstance(data, pd.DataFrame):
        return pa.Table.from_pandas(data, preserve_index=False)
    if isinstance(data, pa.Table):
        return data
    raise OptionTypeError(
        f"{kind}: expected a pandas DataFrame or an Arrow table without a SparkSession, "
        f"got {type(data).__name__}"
    )


def _ids(column: pa.ChunkedArray, source: str, name: str) -> pa.ChunkedArray:
    """Strings as they are, integers as their decimal text; other types, and text that
    is not valid UTF-8 (an Arrow table keeps a string's bytes), are an error (a column
    without rows may have any type)."""
    kind = column.type
    if len(column) == 0:
        return pa.chunked_array([], pa.string())
    if pa.types.is_dictionary(kind):
        column, kind = column.cast(kind.value_type), kind.value_type
    if not is_id_type(kind):
        raise InputError(
            f"{source}: id column {name} has type {kind}; ids must be strings or integers"
        )
    broken = first_invalid_utf8(column)
    if broken is not None:
        value = shown_text(raw_value(column, broken))
        raise InputError(f"{source}: row {broken + 1}: column {name} value '{value}' is {NOT_UTF8}")
    return column.cast(pa.string())


def _values(column: pa.ChunkedArray, source: str, name: str, whole: bool) -> pa.ChunkedArray:
    """Scores as float64 (finite numbers); grades as int64 (whole numbers); a column
    without rows may have any type."""
    if len(column) == 0:
        return pa.chunked_array([], pa.int64() if whole else pa.float64())
    if not (pa.types.is_integer(column.type) or pa.types.is_floating(column.type)):
        raise InputError(f"{source}: column {name} has type {column.type}; expected numbers")
    values = column.cast(pa.float64()).to_numpy(zero_copy_only=False)
    bad = np.flatnonzero(~np.isfinite(values) | (whole & (values != np.round(values))))
    if len(bad):
        what = "a whole number" if whole else "a finite number"
        row, value = int(bad[0]) + 1, float(values[bad[0]])
        raise InputError(f"{source}: row {row}: column {name} value {value!r} is not {what}")
    return column.cast(pa.int64()) if whole else column.cast(pa.float64())
