"""The ranking order on Spark: score descending, ties by doc id descending.

The one tie rule of every command is trec_eval's: score descending, then the doc id's
**text** descending, compared byte-wise (``strcmp``). Integer ids are compared as
their decimal text, so of items 99 and 100 at equal score, 99 ranks first ("99" >
"100"). This module is its Spark form. Its form for one query's numpy arrays is
:func:`sparkeval.compare.rank_distance.order_by_score_then_docid_desc`, and
:mod:`sparkeval.engine.worker.assemble` applies it to whole buckets (string ids, as
every reader delivers them to the engine). Spark compares strings byte-wise, as
``strcmp`` does.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from sparkeval.spark import spark_type

if TYPE_CHECKING:
    from pyspark.sql import DataFrame


def with_rank(
    rows: DataFrame, keys: Sequence[str], depth: int | None = None, column: str = "rank"
) -> DataFrame:
    """Add ``column``, the 1-based rank of each row within its ``keys`` group.

    Example: scores 0.9, 0.5, 0.5 for docs ``a``, ``b``, ``c`` of one query rank
    ``a`` 1, ``c`` 2, ``b`` 3.  ``depth`` keeps the first ``depth`` rows of each group.
    """
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    doc_text = F.col("doc_id").cast(spark_type("string"))
    order = Window.partitionBy(*keys).orderBy(F.col("score").desc(), doc_text.desc())
    ranked = rows.withColumn(column, F.row_number().over(order))
    return ranked if depth is None else ranked.where(F.col(column) <= depth)
