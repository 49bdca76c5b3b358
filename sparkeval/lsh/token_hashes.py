"""MinHash token hashing in Spark SQL: SHA-1 computed where the rows are, not in Python.

datasketch hashes a token as the first 4 (or 8) bytes of its SHA-1 digest, read
little-endian (:func:`sparkeval.lsh.minhash.sha1_hash`). Spark's ``sha1`` gives the
same digest as hex text, so ``unhex(substring(sha1(token), 1, 2 * nbytes))`` is the
same bytes; an Arrow list of them reaches Python as one contiguous buffer, read as
``uint32``/``uint64`` with no per-token Python work.

A token is the UTF-8 text of the item, as in the Python path (``str(item)``): strings
as they are, integers in decimal; a null item is the text ``None``. Items of other
types (floats, booleans, nested) keep the Python path, where ``str()`` decides.

Example:
    SHA-1 of ``"a"`` is ``86f7e437…``: the 32-bit token hash is bytes 86 f7 e4 37
    read little-endian, ``0x37e4f786``.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql.types import (
    ArrayType,
    ByteType,
    DataType,
    IntegerType,
    LongType,
    ShortType,
    StringType,
)

from sparkeval.spark import spark_type

_TEXT_LIKE = (StringType, ByteType, ShortType, IntegerType, LongType)


def hashable_in_spark(items_type: DataType) -> bool:
    """Whether an array column's items are tokenised the same way in Spark as in
    Python (strings and integers)."""
    return isinstance(items_type, ArrayType) and isinstance(items_type.elementType, _TEXT_LIKE)


def sha1_hash_column(items: Column, width: int) -> Column:
    """Each item's raw SHA-1 token hash (``width`` 32 or 64 bits) as a binary of
    ``width / 8`` bytes, in item order."""
    hex_digits = width // 4

    def token_hash(item: Column) -> Column:
        token = F.coalesce(item.cast(spark_type("string")), F.lit("None")).cast(
            spark_type("binary")
        )
        return F.unhex(F.substring(F.sha1(token), 1, hex_digits))

    return F.transform(items, token_hash)


def raw_hashes(column: pa.Array | pa.ChunkedArray, width: int) -> tuple[np.ndarray, np.ndarray]:
    """Flat raw hashes and ``n + 1`` offsets of a column of :func:`sha1_hash_column`
    values (a null list counts as empty).

    Example:
        >>> col = pa.array([[bytes.fromhex("86f7e437")], []], pa.list_(pa.binary()))
        >>> values, offsets = raw_hashes(col, 32)
        >>> hex(int(values[0])), offsets.tolist()
        ('0x37e4f786', [0, 1, 1])
    """
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    offsets = list_offsets(column)
    flat = pc.list_flatten(column)
    nbytes = width // 8
    native = np.uint32 if width == 32 else np.uint64
    if len(flat) == 0:
        return np.zeros(0, dtype=native), offsets
    if flat.null_count:
        raise ValueError("a token hash is null")
    offset_type = np.int64 if pa.types.is_large_binary(flat.type) else np.int32
    value_offsets = np.frombuffer(flat.buffers()[1], dtype=offset_type)[
        flat.offset : flat.offset + len(flat) + 1
    ]
    if not (np.diff(value_offsets) == nbytes).all():
        raise ValueError(f"token hashes must be {nbytes} bytes each")
    data = np.frombuffer(flat.buffers()[2], dtype=np.uint8)[value_offsets[0] : value_offsets[-1]]
    little_endian = np.dtype("<u4") if width == 32 else np.dtype("<u8")
    return data.view(little_endian).astype(native), offsets


def list_offsets(column: pa.Array) -> np.ndarray:
    """``n + 1`` offsets of the values of an Arrow list column's rows into its flattened
    values (a null list counts as empty)."""
    lengths = pc.fill_null(pc.list_value_length(column), 0).to_numpy(zero_copy_only=False)
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return offsets
