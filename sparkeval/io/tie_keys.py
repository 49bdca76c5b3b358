"""The tie keys of run rows under the tie rules other than doc id (``--ties``): the
run's rank column (``rank``) or each row's place in its input (``input-order``); among
tied scores the lower key ranks first (:mod:`sparkeval.engine.worker.assemble`).

A row's place is ``unit * UNIT_STRIDE + row``: its read unit's index (a Parquet row
group, a text file's byte range, in the input's order) and its row within the unit (a
text file's data lines in line order), so that keys read unit by unit, in one process
or several, order rows as the input does.  Only the order of the keys matters; every
key is a whole number below 2**53, exact as a double.

Example:
    >>> input_order_keys(3, unit=1).to_pylist()
    [4294967296.0, 4294967297.0, 4294967298.0]
    >>> tie_rank_name(["query_id", "doc_id", "score", "Rank"], "run.csv")
    'Rank'
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa

from sparkeval.errors import ConfigError
from sparkeval.io.readers import no_rank_column_message, tie_rank_column

#: the key distance of consecutive read units: more rows than a unit holds
UNIT_STRIDE = 1 << 32


def input_order_keys(rows: int, unit: int = 0) -> pa.ChunkedArray:
    """The ``input-order`` keys (float64) of the ``rows`` rows of read unit ``unit``."""
    first = unit * UNIT_STRIDE
    keys = np.arange(first, first + rows, dtype=np.int64).astype(np.float64)
    return pa.chunked_array([keys], pa.float64())


def tie_rank_name(columns: Sequence[str], source: str) -> str:
    """The rank column that orders tied scores under ``ties="rank"``.

    Raises:
        ConfigError: ``columns`` have no rank column (named as the Spark readers name it).
    """
    rank = tie_rank_column(columns)
    if rank is None:
        raise ConfigError(no_rank_column_message(source, columns))
    return rank
