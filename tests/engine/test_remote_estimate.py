"""A Spark Connect frame's size estimate is read from its server's cost plan: the figure
Spark prints there, read back, is the estimate the JVM holds, to Spark's rounding."""

from __future__ import annotations

import pandas as pd
import pytest

from sparkeval.engine.plans.driver_plan import UNKNOWN_BYTES
from sparkeval.engine.plans.remote_estimate import cost_plan_bytes
from sparkeval.engine.plans.spark_engine import plan_bytes

pytestmark = pytest.mark.spark


def _cost_plan(spark, frame) -> str:
    """What ``explain(mode="cost")`` prints for ``frame`` (as ``EXPLAIN COST`` gives it)."""
    frame.createOrReplaceTempView("estimated")
    try:
        return spark.sql("EXPLAIN COST SELECT * FROM estimated").collect()[0][0]
    finally:
        spark.catalog.dropTempView("estimated")


@pytest.mark.parametrize("rows", [1, 200, 20_000, 300_000])
def test_the_printed_estimate_is_the_jvms_to_its_rounding(spark, rows) -> None:
    frame = spark.createDataFrame(
        pd.DataFrame({"query_id": [f"q{i}" for i in range(rows)], "score": range(rows)})
    )
    exact = plan_bytes(frame)
    read = cost_plan_bytes(_cost_plan(spark, frame))
    assert exact is not None and read is not None
    # one decimal of the largest binary unit of which the size holds at least two
    assert abs(read - exact) <= max(0.05 * exact / 2, 0.5) + 1, (read, exact)


def test_an_unknown_size_reads_as_unknown(spark) -> None:
    frame = spark.createDataFrame([("q", 1.0)], "query_id string, score double")  # an RDD
    assert plan_bytes(frame) == UNKNOWN_BYTES
    assert cost_plan_bytes(_cost_plan(spark, frame)) == UNKNOWN_BYTES


def test_text_without_an_optimised_plan_has_no_estimate() -> None:
    assert cost_plan_bytes("") is None
    assert cost_plan_bytes("== Optimized Logical Plan ==\nLocalRelation <empty>, [a#1]") is None
