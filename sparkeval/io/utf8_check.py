"""Arrow string columns checked to be valid UTF-8, as Spark's ``is_valid_utf8`` checks ids.

A Parquet file, an Arrow table or a Spark string holds a string's bytes as written,
so a Latin-1 id (``caf\\xe9``) arrives as it is. Ids are compared as UTF-8 text;
an id that is not UTF-8 is an input error on every path (the Spark readers report it
by file and column, see :func:`sparkeval.io.readers.invalid_text_ids`).

Arrow's full validation of a string array checks its UTF-8 in bulk (about 3 ns per
short id); the offending value is located only when one is found.

Example:
    >>> import pyarrow as pa
    >>> first_invalid_utf8(pa.array(["d1", "caf\\u00e9", "caf\\ufffd"]))  # all valid
    >>> bad = pa.array([b"d1", b"caf\\xe9"], pa.binary()).cast(pa.string(), safe=False)
    >>> first_invalid_utf8(pa.chunked_array([pa.array(["d0"]), bad]))
    2
    >>> shown_text(b"caf\\xe9")
    'caf\\ufffd'
"""

from __future__ import annotations

import pyarrow as pa


def first_invalid_utf8(values: pa.Array | pa.ChunkedArray) -> int | None:
    """The index of the first string of ``values`` that is not valid UTF-8, or None."""
    chunks = values.chunks if isinstance(values, pa.ChunkedArray) else [values]
    start = 0
    for chunk in chunks:
        if pa.types.is_string(chunk.type) or pa.types.is_large_string(chunk.type):
            try:
                chunk.validate(full=True)
            except pa.ArrowInvalid:
                found = _first_undecodable(chunk)
                if found is not None:
                    return start + found
        start += len(chunk)
    return None


def _first_undecodable(chunk: pa.Array) -> int | None:
    for index, value in enumerate(_as_bytes(chunk).to_pylist()):
        if value is not None:
            try:
                value.decode("utf-8")
            except UnicodeDecodeError:
                return index
    return None


def shown_text(raw: bytes) -> str:
    """An id's bytes as text for a message: invalid bytes become U+FFFD (as Spark's
    ``make_valid_utf8`` shows them)."""
    return raw.decode("utf-8", errors="replace")


def raw_value(values: pa.Array | pa.ChunkedArray, index: int) -> bytes:
    """The bytes of string ``index`` of ``values``."""
    return _as_bytes(values)[index].as_py()


def _as_bytes(values: pa.Array | pa.ChunkedArray) -> pa.Array | pa.ChunkedArray:
    """String ``values`` as binary (the same buffers: no UTF-8 check, no copy)."""
    large = pa.types.is_large_string(values.type)
    return values.cast(pa.large_binary() if large else pa.binary())
