"""Score columns that a scanned DataFrame computes, computed by the workers that read
the files.

Pipelines often compute the score of a run from a column of its files:
``withColumn("score", col("score") + 0.0)``, ``-col("rank").cast("double")``,
``col("pred") * 2.0 - 1.0``.  Such a DataFrame still only scans the files
(:mod:`sparkeval.io.scan_plan`); handing it to Spark would convert every row
of its string id columns to Arrow just to compute one number per row.  The workers
instead read the files and compute the number themselves, when every part of the
expression gives the same bits in Spark and in pyarrow:

* a numeric column of the files (``double``, or ``float``, ``long``, ``integer``,
  ``short``, ``byte`` under a cast to ``double``), and a constant Spark can evaluate on
  its own (not null, not NaN);
* ``+``, ``-``, ``*`` and unary ``-`` whose result is a ``double``.

IEEE 754 rounds each of these operations, and each conversion of an integer or a
``float`` to a ``double``, to the nearest value in both (Java's ``double`` arithmetic is
strict; Arrow's kernels apply one operation per call), and both propagate nulls.
Anything else (division, which Spark makes null or an error for a zero divisor, integer
or ``float`` arithmetic, which can overflow differently, a decimal, a function) leaves
the DataFrame to Spark.

A computed column travels to the workers as nested tuples (:func:`value_spec`);
:func:`compute_value` evaluates it on the rows of a row group.

A constant string column (:func:`text_constant`) is taken too, as the run id of every
row: ``withColumn("run_id", lit("bm25"))`` names a run without a pass over its rows.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from sparkeval.io.scan_filter import node_kind

Spec = tuple[Any, ...]

#: Spark's arithmetic nodes taken, and the pyarrow function of each
_ARITHMETIC = {"Add": "add", "Subtract": "subtract", "Multiply": "multiply"}
#: Spark types of file columns a computed value may read (all but ``double`` under a
#: cast to ``double``), and the Arrow types holding each in a Parquet file
_COLUMN_TYPES = {
    "double": pa.types.is_float64,
    "float": pa.types.is_float32,
    "long": pa.types.is_int64,
    "integer": pa.types.is_int32,
    "short": pa.types.is_int16,
    "byte": pa.types.is_int8,
}


def value_spec(expression, columns: Mapping[str, str | Spec]) -> Spec | None:
    """A ``double`` expression of Spark's analysed plan as nested tuples over file
    columns, or None when any part of it is not taken (see the module's text).

    Args:
        expression: the JVM expression (an ``Alias`` is looked through).
        columns: ``{name in the expression: column of the files, or the spec of a value
            computed below}``.

    Example: ``(s * 2.0) + 1.0`` on a double column ``s`` of the files is
    ``("add", ("multiply", ("col", "s", "double"), ("lit", 2.0)), ("lit", 1.0))``.
    """
    if node_kind(expression) == "Alias":
        expression = expression.child()
    if str(expression.dataType().typeName()) != "double":
        return None
    return _double(expression, columns)


def _double(expression, columns: Mapping[str, str | Spec]) -> Spec | None:
    """The spec of ``expression``, whose Spark type is ``double``."""
    kind = node_kind(expression)
    if kind == "AttributeReference":
        return _column(expression, columns, "double")
    if kind == "Cast":
        child = expression.child()
        source = str(child.dataType().typeName())
        if source == "double":  # a double as a double: the value itself
            return _double(child, columns)
        if node_kind(child) == "AttributeReference" and source in _COLUMN_TYPES:
            column = _column(child, columns, source)
            return None if column is None else ("double", column)
        return _constant(expression)
    if kind in _ARITHMETIC:
        left, right = _operand(expression.left(), columns), _operand(expression.right(), columns)
        return None if left is None or right is None else (_ARITHMETIC[kind], left, right)
    if kind == "UnaryMinus":
        inner = _operand(expression.child(), columns)
        return None if inner is None else ("negate", inner)
    return _constant(expression)


def _operand(expression, columns: Mapping[str, str | Spec]) -> Spec | None:
    if str(expression.dataType().typeName()) != "double":
        return None
    return _double(expression, columns)


def _column(expression, columns: Mapping[str, str | Spec], kind: str) -> Spec | None:
    """A column of the files of Spark type ``kind``, or the spec of a value computed
    below under that name."""
    name = str(expression.name())
    if name not in columns:
        return None
    source = columns[name]
    if not isinstance(source, str):
        return source if kind == "double" else None
    return ("col", source, kind)


def _constant(expression) -> Spec | None:
    """A constant ``double`` Spark evaluates on its own (a literal, or a literal cast);
    None for a null or NaN, or anything that reads a column."""
    if not expression.foldable():
        return None
    value = expression.eval(None)
    if value is None:
        return None
    value = float(value)
    return None if value != value else ("lit", value)


def text_constant(expression) -> Spec | None:
    """``("text", value)`` of a constant string column (``lit("bm25")``, a run's name),
    or None for anything else (a null included)."""
    if node_kind(expression) == "Alias":
        expression = expression.child()
    if str(expression.dataType().typeName()) != "string" or not expression.foldable():
        return None
    value = expression.eval(None)
    return None if value is None else ("text", str(value.toString()))


def value_columns(spec: Spec) -> dict[str, str]:
    """``{file column: Spark type}`` of every column ``spec`` reads."""
    op = spec[0]
    if op == "col":
        return {spec[1]: spec[2]}
    if op == "lit":
        return {}
    found: dict[str, str] = {}
    for inner in spec[1:]:
        found.update(value_columns(inner))
    return found


def fits_value_schema(spec: Spec, schema: pa.Schema) -> bool:
    """Whether every column ``spec`` reads is in ``schema`` with exactly its type."""
    for column, kind in value_columns(spec).items():
        if column not in schema.names or not _COLUMN_TYPES[kind](schema.field(column).type):
            return False
    return True


def compute_value(spec: Spec, table: pa.Table) -> pa.ChunkedArray | pa.Scalar:
    """The values of ``spec`` on the rows of ``table`` (float64; a constant spec gives
    a scalar).

    Example::

        >>> spec = ("add", ("negate", ("double", ("col", "rank", "long"))), ("lit", 0.5))
        >>> compute_value(spec, pa.table({"rank": [1, 2, None]})).to_pylist()
        [-0.5, -1.5, None]
    """
    op = spec[0]
    if op == "col":
        return table.column(spec[1])
    if op == "lit":
        return pa.scalar(spec[1], pa.float64())
    if op == "double":  # exact for every integer type and float; IEEE rounding for long
        return compute_value(spec[1], table).cast(pa.float64(), safe=False)
    if op == "negate":
        return pc.negate(compute_value(spec[1], table))
    function = getattr(pc, op)  # add, subtract, multiply: IEEE, unchecked
    return function(compute_value(spec[1], table), compute_value(spec[2], table))
