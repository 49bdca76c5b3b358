"""``per_user_set.parquet``: each user's value of the set measures of ``evaluate`` that
are a mean over users (RePlay's Novelty and Surprisal, RecTools' MeanInvUserFreq and
AvgRecPopularity: :data:`~sparkeval.diversity.set_values.PER_USER_KINDS`), whose exact
mean is the run's value in ``summary.json``.

They are not rows of ``per_query.parquet``: their users are not the evaluated queries
(RePlay's Novelty counts every training user, one without a list too; the others every
user with a list, judged by the qrels or not), and a measure of the whole catalog
(``Coverage@k``, ``CatalogCoverage@k``) or of all list rows (sparkeval's
``Novelty@k``) has no per-user value, so it stays in the summary only.

Columns ``run_id, query_id, measure, value`` (``query_id``: the user's id as text;
``measure``: the name ``summary.json`` shows; ``value`` null where undefined, a
Surprisal with fewer than 2 training users), sorted by run id, then user id (as
text, byte-wise), then the measures' order. The local engine writes it with pyarrow;
on Spark the driver writes a table of at most
:data:`~sparkeval.output.DRIVER_WRITE_ROWS` rows the same way
(:func:`~sparkeval.output.write_spark_table`), so a small run gives the same bytes on
both engines.

Example: RePlay's documented case at k = 2 (top-2 lists {3, 7}, {5, 8}, {4, 9} of
users 1, 2, 3) gives the rows ``(recs, 1, Novelty@2, 1.0)``, ``(recs, 2, Novelty@2,
0.0)``, ``(recs, 3, Novelty@2, 0.0)``, whose mean is ``Novelty@2`` = 1/3.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import pyarrow as pa

from sparkeval.diversity.set_values import PER_USER_KINDS

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from sparkeval.measures.set_names import SetMeasure

#: the file's name in the output directory
FILE_NAME = "per_user_set.parquet"
#: its columns (those of ``per_query.parquet``)
SCHEMA = pa.schema(
    [
        ("run_id", pa.string()),
        ("query_id", pa.string()),
        ("measure", pa.string()),
        ("value", pa.float64()),
    ]
)


def shown_name(measure: SetMeasure, names: Any) -> str:
    """The name ``summary.json`` gives ``measure``: as requested under
    ``names="requested"``, else canonical."""
    return measure.typed if names == "requested" else measure.name


def per_user_measures(measures: Sequence[SetMeasure]) -> list[SetMeasure]:
    """The measures of ``measures`` that have a value per user, in their order."""
    return [m for m in measures if m.kind in PER_USER_KINDS]


def local_table(parts: Iterable[tuple[str, str, int, pd.DataFrame]]) -> pa.Table:
    """The file's rows from ``(run id, shown name, measure position, query_id/value
    frame)`` parts, sorted (run, user, measure position), NaN as null."""
    frames = [
        pd.DataFrame(
            {
                "run_id": run_id,
                "query_id": frame["query_id"].astype(str).to_numpy(dtype=object),
                "measure": name,
                "_order": order,
                "value": frame["value"].to_numpy(dtype=np.float64),
            }
        )
        for run_id, name, order, frame in parts
    ]
    if not frames:
        return SCHEMA.empty_table()
    rows = pd.concat(frames, ignore_index=True)
    table = pa.table(
        {
            "run_id": pa.array(rows["run_id"], pa.string()),
            "query_id": pa.array(rows["query_id"], pa.string()),
            "measure": pa.array(rows["measure"], pa.string()),
            "_order": pa.array(rows["_order"], pa.int32()),
            "value": pa.array(rows["value"], pa.float64(), from_pandas=True),
        }
    )
    ordered = table.sort_by(
        [("run_id", "ascending"), ("query_id", "ascending"), ("_order", "ascending")]
    )
    return ordered.drop_columns(["_order"]).cast(SCHEMA)


def spark_frame(parts: Sequence[tuple[str, str, int, DataFrame]]) -> DataFrame | None:
    """The file's rows on Spark from ``(run id, shown name, measure position,
    query_id/value frame)`` parts, in the file's order (NaN as null); None without
    parts."""
    from functools import reduce

    from pyspark.sql import functions as F

    frames = [
        frame.select(
            F.lit(run_id).alias("run_id"),
            F.col("query_id").cast("string").alias("query_id"),
            F.lit(name).alias("measure"),
            F.lit(order).cast("int").alias("_order"),
            F.when(F.isnan("value"), F.lit(None)).otherwise(F.col("value")).alias("value"),
        )
        for run_id, name, order, frame in parts
    ]
    if not frames:
        return None
    union = reduce(lambda a, b: a.unionByName(b), frames)
    return union.orderBy("run_id", "query_id", "_order").select(*SCHEMA.names)


def write_table(rows: pa.Table | DataFrame, directory: Path) -> None:
    """Write the rows (an Arrow table of the local engine, or a Spark frame in the
    file's order) as ``directory`` (:func:`~sparkeval.output.write_spark_table`)."""
    from sparkeval.output import write_arrow_parquet, write_spark_table

    if isinstance(rows, pa.Table):
        write_arrow_parquet(rows, directory)
    else:
        write_spark_table(rows, directory, SCHEMA)


def with_per_user_rows(
    per_query: Iterable[Mapping[str, Any]], per_user: Iterable[Mapping[str, Any]]
) -> Iterator[Mapping[str, Any]]:
    """The per-query rows with each run's per-user rows after its last per-query row
    (runs with only per-user rows last), for the ``--per-query`` table.

    Example: per-query rows of runs a, b and per-user rows of a, b give a's
    per-query rows, a's per-user rows, b's per-query rows, b's per-user rows.
    """
    by_run: dict[str, list[Mapping[str, Any]]] = {}
    for row in per_user:
        by_run.setdefault(str(row["run_id"]), []).append(row)
    current: str | None = None
    for row in per_query:
        run_id = str(row["run_id"])
        if run_id != current:
            if current is not None:
                yield from by_run.pop(current, [])
            current = run_id
        yield row
    if current is not None:
        yield from by_run.pop(current, [])
    for rows in by_run.values():
        yield from rows
