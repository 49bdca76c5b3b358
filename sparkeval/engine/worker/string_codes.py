"""Integer codes for string columns, shared across columns (a hash encoding, no sort)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc


def joint_codes(*columns: pa.ChunkedArray) -> tuple[list[np.ndarray], pa.Array]:
    """Dictionary-encode several string columns together: (codes per column, dictionary).

    Equal strings get equal codes in every column.

    Example:
        >>> (a, b), names = joint_codes(pa.chunked_array([["x", "y"]]), pa.chunked_array([["y"]]))
        >>> a.tolist(), b.tolist(), names.to_pylist()
        ([0, 1], [1], ['x', 'y'])
    """
    joined = pa.chunked_array([chunk for col in columns for chunk in col.chunks], pa.string())
    encoded = pc.dictionary_encode(joined).combine_chunks()
    codes = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    out, at = [], 0
    for col in columns:
        out.append(codes[at : at + len(col)])
        at += len(col)
    return out, encoded.dictionary
