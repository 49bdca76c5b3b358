"""The inputs of ``sparkeval diversity`` read in this process (pyarrow), for its local
engine: Parquet files (or flat directories of Parquet parts) whose columns are matched
by the same alias tables and named in the same errors as on Spark
(:func:`~sparkeval.io.lists.read_run_rows`, ``read_typed_table``).

What Spark's readers would judge, and this reader does not reproduce, raises
:class:`~sparkeval.io.direct_input.NotDirect` (the command then runs on Spark under
``--engine auto``): a partitioned directory, a file pyarrow does not read, a null id,
an id that is neither text nor an integer, ids of different kinds across the inputs, a
relevance that is not a finite number, feature arrays holding nulls or non-finite
values, an item with two features rows.

Example::

    run = read_local_table("reco.parquet", RUN_ALIASES, ("query_id", "doc_id"))
    run.column("doc_id")
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sparkeval.errors import InputError
from sparkeval.io.columns import match_columns
from sparkeval.io.direct_input import NotDirect

#: Spark's names of the Arrow types a Parquet column of these inputs may have
SPARK_TYPE_NAMES: dict[pa.DataType, str] = {
    pa.string(): "string",
    pa.large_string(): "string",
    pa.int8(): "tinyint",
    pa.int16(): "smallint",
    pa.int32(): "int",
    pa.int64(): "bigint",
    pa.float32(): "float",
    pa.float64(): "double",
    pa.bool_(): "boolean",
    pa.binary(): "binary",
}
#: the id columns
ID_COLUMNS = ("run_id", "query_id", "doc_id")


@dataclass(frozen=True)
class LocalTable:
    """A table read here: its canonical columns (``query_id``, ``doc_id``, ...).

    Attributes:
        path: the input, for messages.
        table: the columns under their canonical names.
    """

    path: str
    table: pa.Table

    def has(self, column: str) -> bool:
        """Whether the table has the canonical ``column``."""
        return column in self.table.column_names

    def column(self, column: str) -> np.ndarray:
        """``column``'s values as numpy (text as Python strings, integers as int64)."""
        values = self.table.column(column).combine_chunks()
        if pa.types.is_integer(values.type):
            return values.to_numpy(zero_copy_only=False).astype(np.int64)
        return values.to_numpy(zero_copy_only=False)

    def type_of(self, column: str) -> pa.DataType:
        """The Arrow type of ``column``."""
        return self.table.schema.field(column).type


def spark_name(kind: pa.DataType, path: str, column: str) -> str:
    """Spark's name of the Arrow type ``kind`` (``bigint``, ``array<double>``, ...).

    Raises:
        NotDirect: a type whose name (and handling) Spark's readers decide.
    """
    if pa.types.is_list(kind) or pa.types.is_large_list(kind):
        return f"array<{spark_name(kind.value_type, path, column)}>"
    if kind in SPARK_TYPE_NAMES:
        return SPARK_TYPE_NAMES[kind]
    raise NotDirect(f"{path}: column {column} has the type {kind}")


def _parquet_files(path: str) -> list[Path]:
    """The Parquet file ``path``, or the parts of the flat directory ``path``.

    Raises:
        NotDirect: a directory with subdirectories (partitions), or without parts.
    """
    where = Path(path)
    if not where.is_dir():
        return [where]
    entries = sorted(p for p in where.iterdir() if not p.name.startswith(("_", ".")))
    if any(p.is_dir() for p in entries) or not entries:
        raise NotDirect(f"{path}: a partitioned or empty Parquet directory")
    return entries


def _read_parquet(path: str) -> pa.Table:
    """Every part of the Parquet input ``path`` as one table.

    Raises:
        NotDirect: a file pyarrow does not read, or parts of different schemas.
    """
    import pyarrow.parquet as pq

    try:
        return pa.concat_tables([pq.read_table(part) for part in _parquet_files(path)])
    except (pa.ArrowException, OSError) as exc:
        raise NotDirect(f"{path}: a Parquet input read here fails ({exc})") from None


def read_local_table(
    path: str, aliases: Mapping[str, Sequence[str]], required: Sequence[str]
) -> LocalTable:
    """The canonical columns of the Parquet input ``path``, found as on Spark (the first
    alias, case-insensitive; the optional columns of ``aliases`` when present).

    Raises:
        InputError: a required column is missing, named as on Spark.
        NotDirect: what :func:`_check_ids` and :func:`_read_parquet` leave to Spark.
    """
    table = _read_parquet(path)
    optional = [c for c in aliases if c not in required]
    found = match_columns(
        table.column_names, aliases, required, {}, path, "this table", None, optional
    )
    named = pa.table({c: table.column(found[c]) for c in aliases if c in found})
    for column in ID_COLUMNS:
        if column in named.column_names:
            _check_ids(named, column, path)
    return LocalTable(path, named)


def _check_ids(table: pa.Table, column: str, path: str) -> None:
    """An id column read here holds text or integers without nulls.

    Raises:
        NotDirect: another type, or a null (Spark's readers judge them).
    """
    kind = table.schema.field(column).type
    if not (pa.types.is_string(kind) or pa.types.is_large_string(kind) or _is_int(kind)):
        raise NotDirect(f"{path}: id column {column} has the type {kind}")
    if table.column(column).null_count and column != "run_id":
        raise NotDirect(f"{path}: id column {column} has nulls")


def _is_int(kind: pa.DataType) -> bool:
    """A signed integer type (Spark's ``tinyint`` to ``bigint``)."""
    return pa.types.is_signed_integer(kind)


def id_kind(table: LocalTable, column: str) -> str:
    """``text`` or ``integer``: the kind of an id column (joins across inputs need the
    same kind)."""
    return "integer" if _is_int(table.type_of(column)) else "text"


def numbers(table: LocalTable, column: str, *, finite: bool) -> np.ndarray:
    """A numeric column as float64, NaN for a null (so ``finite`` requires the values to
    be finite numbers: a NaN would be taken for a null).

    Raises:
        NotDirect: a column that is not a number (Spark casts it), or, with ``finite``,
            a NaN or infinite value.
    """
    kind = table.type_of(column)
    if not (_is_int(kind) or pa.types.is_floating(kind)):
        raise NotDirect(f"{table.path}: column {column} has the type {kind}")
    values = table.table.column(column).combine_chunks()
    found = pc.cast(values, pa.float64()).to_numpy(zero_copy_only=False)
    if finite and not np.all(np.isfinite(found[values.is_valid().to_numpy(zero_copy_only=False)])):
        raise NotDirect(f"{table.path}: column {column} holds a NaN or an infinite value")
    return found.astype(np.float64)


@dataclass(frozen=True)
class Features:
    """Item features read here.

    Attributes:
        items: the items' ids, one per row (no item twice).
        values: each item's features (float64 for numbers, Python strings for labels).
        element: Spark's name of the element type (``double``, ``string``, ...).
    """

    items: np.ndarray
    values: list[np.ndarray]
    element: str

    @property
    def numeric(self) -> bool:
        """Whether the features are numbers (vectors), not labels."""
        return self.element in ("double", "float", "tinyint", "smallint", "int", "bigint")


def read_features(table: LocalTable) -> Features:
    """The ``doc_id, features`` of an item-features table read here.

    Raises:
        InputError: ``features`` is not an array (Spark's message).
        NotDirect: an element type other than numbers and text, a null array or
            element, a NaN or infinite number, an item with two rows.
    """
    path = table.path
    kind = table.type_of("features")
    name = spark_name(kind, path, "features")
    if not name.startswith("array"):
        raise InputError(
            f"{path}: column features must be an array (a numeric vector or labels), got {name}"
        )
    element = name[len("array<") : -1]
    if element not in ("double", "float", "tinyint", "smallint", "int", "bigint", "string"):
        raise NotDirect(f"{path}: features of type {name}")
    arrays = table.table.column("features").combine_chunks()
    if arrays.null_count or arrays.flatten().null_count:
        raise NotDirect(f"{path}: a null features array or element")
    items = table.column("doc_id")
    if len(np.unique(items)) < len(items):
        raise NotDirect(f"{path}: an item with several features rows")
    offsets = arrays.offsets.to_numpy()
    flat = arrays.flatten()
    if element == "string":
        flat_values = flat.to_numpy(zero_copy_only=False)
    else:
        flat_values = pc.cast(flat, pa.float64()).to_numpy(zero_copy_only=False)
        if not np.all(np.isfinite(flat_values)):
            raise NotDirect(f"{path}: a NaN or infinite feature value")
    base = offsets[0]
    values = [flat_values[a - base : b - base] for a, b in itertools.pairwise(offsets)]
    return Features(items, values, element)
