"""Row filters of scanned DataFrames, applied by the workers that read the files.

``spark.read.parquet(path).where("day = '2026-11-01' AND score >= 0")`` is still a
scan of the files: the workers can read the row groups themselves
(:mod:`sparkeval.io.scan_plan`) and keep the rows the condition keeps.
A condition is taken when every part of it has the same meaning in Spark and in
pyarrow:

* ``AND``, ``OR``, ``NOT`` (three-valued, as SQL: pyarrow's Kleene kernels),
  ``IS NULL``, ``IS NOT NULL``, a boolean column on its own;
* ``=``, ``<``, ``<=``, ``>``, ``>=`` and ``IN`` between a column of the files and a
  constant of the same type (string, integer, floating point or boolean; a constant
  Spark casts to the column's type is evaluated by Spark), the column maybe cast
  exactly to a wider type (``float`` to ``double``, ``int`` to ``bigint`` or
  ``double``), as Spark's analyser does for ``x > 0.5`` on a ``float`` column.

Anything else (any other cast or function of a column, a null or NaN constant, a
date, a decimal) leaves the DataFrame to Spark.  Two differences are handled where they
arise: Spark orders NaN above every number and equal to itself, IEEE comparisons do
not, so a floating point column of the condition holding a NaN in a row group sends
the evaluation back to Spark (:class:`~sparkeval.io.direct_input.NotDirect`); and ``x IN
(a, b)`` is read as ``x = a OR x = b``, which is null (not false) for a null ``x``,
as in Spark.

The condition travels to the workers as nested tuples (:func:`condition_spec`), which
:func:`row_mask` evaluates there.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

#: Spark's comparison nodes, as the operator of ``column <op> constant``, and flipped
#: (for ``constant <op> column``)
_COMPARISONS = {
    "EqualTo": ("==", "=="),
    "LessThan": ("<", ">"),
    "LessThanOrEqual": ("<=", ">="),
    "GreaterThan": (">", "<"),
    "GreaterThanOrEqual": (">=", "<="),
}
#: Spark types a condition may compare, and the Arrow type of their constants
SPARK_TYPES = {
    "string": pa.string(),
    "long": pa.int64(),
    "integer": pa.int32(),
    "short": pa.int16(),
    "byte": pa.int8(),
    "double": pa.float64(),
    "float": pa.float32(),
    "boolean": pa.bool_(),
}
#: the Arrow column types that hold each Spark type's values in a Parquet file
_ARROW_KINDS = {
    "string": (pa.types.is_string, pa.types.is_large_string),
    "long": (pa.types.is_integer,),
    "integer": (pa.types.is_integer,),
    "short": (pa.types.is_integer,),
    "byte": (pa.types.is_integer,),
    "double": (pa.types.is_floating,),
    "float": (pa.types.is_floating,),
    "boolean": (pa.types.is_boolean,),
}
#: casts of a column that keep every value exactly: (from, to)
_EXACT_CASTS = {
    *((a, b) for a in ("byte", "short", "integer") for b in ("short", "integer", "long")),
    *((a, "double") for a in ("byte", "short", "integer", "float")),
    ("byte", "float"),
    ("short", "float"),
}
#: the most constants of one ``IN`` list taken (a longer list stays with Spark)
MAX_IN_VALUES = 1000

Spec = tuple[Any, ...]


def node_kind(node) -> str:
    """The class name of a node of Spark's plan or expression tree (``Filter``, ``And``)."""
    return str(node.getClass().getSimpleName())


def condition_spec(condition, columns: Mapping[str, str]) -> Spec | None:
    """The condition of a Spark ``Filter`` node as nested tuples over file columns, or
    None when any part of it is not taken (see the module's text).

    Args:
        condition: the JVM expression (from Spark's analysed plan).
        columns: ``{name in the condition: column of the files}``.

    Example: ``score >= 0`` on a double column ``s`` of the files is
    ``("cmp", ">=", "s", "double", "double", 0.0)`` (the column, its type, the type
    compared, the constant).
    """
    kind = node_kind(condition)
    if kind in ("And", "Or"):
        left = condition_spec(condition.left(), columns)
        right = condition_spec(condition.right(), columns)
        return None if left is None or right is None else (kind.lower(), left, right)
    if kind == "Not":
        inner = condition_spec(condition.child(), columns)
        return None if inner is None else ("not", inner)
    if kind in ("IsNull", "IsNotNull"):
        column = _column(condition.child(), columns)
        return None if column is None or column[1] != column[2] else (kind, column[0], column[1])
    if kind == "AttributeReference":
        column = _column(condition, columns)
        return None if column is None or column[1] != "boolean" else ("true", column[0])
    if kind in _COMPARISONS:
        return _comparison(kind, condition.left(), condition.right(), columns)
    if kind == "In":
        return _in_list(condition, columns)
    return None


def _comparison(kind: str, left, right, columns: Mapping[str, str]) -> Spec | None:
    op, flipped = _COMPARISONS[kind]
    column, constant = _column(left, columns), _constant(right)
    if column is None:
        column, constant, op = _column(right, columns), _constant(left), flipped
    if column is None or constant is None or column[2] != constant[0]:
        return None
    return ("cmp", op, *column, constant[1])


def _in_list(condition, columns: Mapping[str, str]) -> Spec | None:
    column = _column(condition.value(), columns)
    items = condition.list()
    if column is None or not 0 < items.size() <= MAX_IN_VALUES:
        return None
    values = []
    for i in range(items.size()):
        constant = _constant(items.apply(i))
        if constant is None or constant[0] != column[2]:
            return None
        values.append(constant[1])
    return ("in", *column, tuple(values))


def _column(expression, columns: Mapping[str, str]) -> tuple[str, str, str] | None:
    """``(file column, its Spark type, the type compared)`` of a column of the files
    of a taken type, maybe under an exact cast."""
    compared = str(expression.dataType().typeName())
    if node_kind(expression) == "Cast":
        expression = expression.child()
    if node_kind(expression) != "AttributeReference":
        return None
    name = str(expression.name())
    kind = str(expression.dataType().typeName())
    if name not in columns or kind not in SPARK_TYPES:
        return None
    if compared != kind and (kind, compared) not in _EXACT_CASTS:
        return None
    return columns[name], kind, compared


def _constant(expression) -> tuple[str, Any] | None:
    """``(Spark type, value)`` of a constant Spark can evaluate on its own (a literal,
    or a literal cast to a column's type); None for a null or NaN."""
    if node_kind(expression) == "AttributeReference" or not expression.foldable():
        return None
    kind = str(expression.dataType().typeName())
    if kind not in SPARK_TYPES:
        return None
    value = expression.eval(None)
    if value is None:
        return None
    if kind == "string":
        return kind, str(value.toString())  # a UTF8String
    if kind in ("double", "float"):
        value = float(value)
        return None if math.isnan(value) else (kind, value)
    if kind == "boolean":
        return kind, bool(value)
    return kind, int(value)


def both(first: Spec | None, second: Spec | None) -> Spec | None:
    """The conjunction of two conditions (either may be None: no condition)."""
    if first is None:
        return second
    if second is None:
        return first
    return ("and", first, second)


def spec_columns(spec: Spec) -> dict[str, str]:
    """``{file column: Spark type}`` of every column ``spec`` reads."""
    found: dict[str, str] = {}
    op = spec[0]
    if op in ("and", "or"):
        found.update(spec_columns(spec[1]))
        found.update(spec_columns(spec[2]))
    elif op == "not":
        found.update(spec_columns(spec[1]))
    elif op in ("IsNull", "IsNotNull"):
        found[spec[1]] = spec[2]
    elif op == "true":
        found[spec[1]] = "boolean"
    elif op == "cmp":
        found[spec[2]] = spec[3]
    elif op == "in":
        found[spec[1]] = spec[2]
    return found


def fits_schema(spec: Spec, schema: pa.Schema) -> bool:
    """Whether every column ``spec`` reads is in ``schema`` with a type holding its values."""
    for column, kind in spec_columns(spec).items():
        if column not in schema.names:
            return False
        if not any(test(schema.field(column).type) for test in _ARROW_KINDS[kind]):
            return False
    return True


def row_mask(spec: Spec, table: pa.Table) -> pa.ChunkedArray:
    """Which rows of ``table`` ``spec`` keeps: true where it holds, false or null (SQL's
    unknown) where it does not, as ``Table.filter`` takes it.

    Evaluated with pyarrow's compute kernels on the columns themselves (the Kleene
    ``and_kleene``/``or_kleene`` of three-valued logic), not as a dataset expression,
    whose engine a process would first load (about 0.3 s).

    Example::

        >>> table = pa.table({"s": [0.5, -1.0, None], "q": ["a", "b", "c"]})
        >>> spec = ("or", ("cmp", ">=", "s", "double", "double", 0.0),
        ...         ("in", "q", "string", "string", ("c",)))
        >>> table.filter(row_mask(spec, table)).column("q").to_pylist()
        ['a', 'c']
    """
    op = spec[0]
    if op == "and":
        return pc.and_kleene(row_mask(spec[1], table), row_mask(spec[2], table))
    if op == "or":
        return pc.or_kleene(row_mask(spec[1], table), row_mask(spec[2], table))
    if op == "not":
        return pc.invert(row_mask(spec[1], table))
    if op == "IsNull":
        return pc.is_null(table.column(spec[1]))
    if op == "IsNotNull":
        return pc.is_valid(table.column(spec[1]))
    if op == "true":
        return table.column(spec[1])
    if op == "cmp":
        _, comparison, column, source, kind, value = spec
        values = _compared(table.column(column), source, kind)
        return _COMPARE[comparison](values, pa.scalar(value, SPARK_TYPES[kind]))
    if op == "in":
        _, column, source, kind, constants = spec
        values = _compared(table.column(column), source, kind)
        kept = None
        for constant in constants:
            equal = pc.equal(values, pa.scalar(constant, SPARK_TYPES[kind]))
            kept = equal if kept is None else pc.or_kleene(kept, equal)
        return kept
    raise ValueError(f"not a filter condition: {spec!r}")


def _compared(values: pa.ChunkedArray, source: str, kind: str) -> pa.ChunkedArray:
    """The column as compared: as it is, or cast exactly to the compared type."""
    return values if source == kind else values.cast(SPARK_TYPES[kind])


_COMPARE = {
    "==": pc.equal,
    "<": pc.less,
    "<=": pc.less_equal,
    ">": pc.greater,
    ">=": pc.greater_equal,
}


def nan_columns(spec: Spec, table: pa.Table) -> list[str]:
    """The floating point columns of ``spec`` that hold a NaN in ``table`` (Spark and
    IEEE compare NaN differently)."""
    found = []
    for column in spec_columns(spec):
        values = table.column(column)
        if pa.types.is_floating(values.type) and pc.any(pc.is_nan(values)).as_py():
            found.append(column)
    return found
