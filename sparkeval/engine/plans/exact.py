"""Order-independent sums of double columns on Spark: :func:`exact_totals`.

A floating-point sum depends on the order of its terms, so a plain ``F.sum`` of
doubles can change with partitioning.  Here each partition is reduced by a Python
worker to exact partial sums (an integer times a power of two,
:func:`~sparkeval.engine.worker.exact_summary.exact_double_sum`), and the driver adds
them as integers and rounds once.  The total is the correctly rounded sum of the
values and the mean the correctly rounded ``sum / n``, e.g. the mean of 0.1, 0.2 and
0.3 is 0.2, as ``float((Fraction(0.1) + Fraction(0.2) + Fraction(0.3)) / 3)`` rounds
it, not the 0.20000000000000004 of adding them left to right and dividing.  The same
values summed in this process (:func:`~sparkeval.engine.worker.exact_summary.exact_total`)
give the same bits.

Example (on Spark)::

    totals = exact_totals(per_user, ["novelty"])
    mean = totals[()]["novelty"].mean
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

import pyarrow as pa

from sparkeval.engine.worker.exact_summary import ExactTotal, encode_partial, total_of

if TYPE_CHECKING:
    from pyspark.sql import DataFrame


def exact_totals(
    frame: DataFrame, columns: Sequence[str], keys: Sequence[str] = ()
) -> dict[tuple[str | None, ...], dict[str, ExactTotal]]:
    """Exact sums, counts and means of the non-null values of ``columns`` (numeric)
    per distinct value of ``keys`` (as text; no keys: one group, ``()``), in one job.

    Only groups with at least one row appear; a column without a non-null value in a
    group has count 0.

    Example::

        >>> # on Spark: rows (a, 0.1), (a, 0.2), (a, 0.3), (b, None)
        >>> # exact_totals(df, ["x"], ["k"])[("a",)]["x"].mean == 0.2; [("b",)]["x"].count == 0
    """
    from pyspark.sql import functions as F

    key_names = [f"_k{i}" for i in range(len(keys))]
    value_names = [f"_v{i}" for i in range(len(columns))]
    projected = frame.select(
        *(F.col(k).cast("string").alias(n) for k, n in zip(keys, key_names, strict=True)),
        *(F.col(c).cast("double").alias(n) for c, n in zip(columns, value_names, strict=True)),
    )
    schema = ", ".join(
        [*(f"{n} string" for n in key_names), "column int", "n long", "rows long", "total string"]
    )
    partials = projected.mapInArrow(partial_sums_of(key_names, value_names), schema).collect()
    return combine_partials(partials, key_names, columns)


def partial_sums_of(key_names: Sequence[str], value_names: Sequence[str]):
    """The ``mapInArrow`` function of :func:`exact_totals`: per group of the keys in a
    partition and per value column, a row ``keys..., column, n, rows, total``."""
    keys, values = list(key_names), list(value_names)

    def partial_sums(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        received = list(batches)
        if not received or not any(b.num_rows for b in received):
            return
        table = pa.Table.from_batches(received)
        if not keys:  # one group (Arrow's list aggregate needs a key)
            table = table.append_column("_one", pa.repeat(True, table.num_rows))
        by = keys or ["_one"]
        grouped = table.group_by(by, use_threads=False).aggregate([(v, "list") for v in values])
        out: dict[str, list] = {k: [] for k in [*keys, "column", "n", "rows", "total"]}
        for row in range(grouped.num_rows):
            for index, name in enumerate(values):
                listed = grouped.column(f"{name}_list")[row].values
                defined = listed.drop_null().to_numpy(zero_copy_only=False)
                for k in keys:
                    out[k].append(grouped.column(k)[row].as_py())
                out["column"].append(index)
                out["n"].append(len(defined))
                out["rows"].append(len(listed))
                out["total"].append(encode_partial(defined))
        yield pa.record_batch(
            {
                **{k: pa.array(out[k], pa.string()) for k in keys},
                "column": pa.array(out["column"], pa.int32()),
                "n": pa.array(out["n"], pa.int64()),
                "rows": pa.array(out["rows"], pa.int64()),
                "total": pa.array(out["total"], pa.string()),
            }
        )

    return partial_sums


def combine_partials(
    rows: Sequence, key_names: Sequence[str], columns: Sequence[str]
) -> dict[tuple[str | None, ...], dict[str, ExactTotal]]:
    """:func:`exact_totals`' result from the partitions' partial rows."""
    counts: dict[tuple, list[int]] = {}
    group_rows: dict[tuple, int] = {}
    partials: dict[tuple, list[list[str]]] = {}
    for row in rows:
        key = tuple(row[k] for k in key_names)
        if key not in counts:
            counts[key] = [0] * len(columns)
            partials[key] = [[] for _ in columns]
            group_rows[key] = 0
        if row["column"] == 0:
            group_rows[key] += int(row["rows"])
        counts[key][row["column"]] += int(row["n"])
        partials[key][row["column"]].append(row["total"])
    return {
        key: {
            column: total_of(partials[key][i], counts[key][i], group_rows[key])
            for i, column in enumerate(columns)
        }
        for key in counts
    }
