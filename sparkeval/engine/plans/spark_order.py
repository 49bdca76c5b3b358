"""The ranking order on Spark: score descending, ties by doc id descending.

The Spark form of the one tie rule (:mod:`sparkeval.engine.worker.assemble` applies it with
numpy); Spark compares strings byte-wise, as trec_eval's ``strcmp`` does.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def with_rank(rows: Any, keys: Sequence[str], depth: int | None = None, column: str = "rank"):
    """Add ``column``, the 1-based rank of each row within its ``keys`` group.

    Example: scores 0.9, 0.5, 0.5 for docs ``a``, ``b``, ``c`` of one query rank
    ``a`` 1, ``c`` 2, ``b`` 3.  ``depth`` keeps the first ``depth`` rows of each group.
    """
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    order = Window.partitionBy(*keys).orderBy(F.col("score").desc(), F.col("doc_id").desc())
    ranked = rows.withColumn(column, F.row_number().over(order))
    return ranked if depth is None else ranked.where(F.col(column) <= depth)
