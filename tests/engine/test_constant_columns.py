"""Columns Spark's optimiser folds to one value: the values are Spark's own literals."""

from __future__ import annotations

import pytest

from sparkeval.engine.plans.constant_columns import Constant, constant_value

pytestmark = pytest.mark.spark


def test_literals_and_what_folds_to_one_are_constant(spark) -> None:
    from pyspark.sql import functions as F

    rows = spark.range(5).withColumn("run_id", F.lit("bm25"))
    code = F.when(F.col("run_id") == F.lit("bm25"), F.lit(7))
    assert constant_value(rows.select(F.lit(0).alias("c")), "c") == Constant(0)
    assert constant_value(rows.select(code.alias("c")), "c") == Constant(7)
    # Spark folds arithmetic that gives one value whatever the row (id is never null)
    assert constant_value(rows.select((F.col("id") * 0).alias("c")), "c") == Constant(0)
    # a filter keeps the value of the rows it keeps
    assert constant_value(rows.where("id > 2").select(code.alias("c")), "c") == Constant(7)
    # a run id no code names: null on every row
    other = F.when(F.col("run_id") == F.lit("dense"), F.lit(7))
    assert constant_value(rows.select(other.alias("c")), "c") == Constant(None)


def test_columns_that_vary_or_are_not_one_projection_are_not(spark) -> None:
    from pyspark.sql import functions as F

    rows = spark.range(5)
    assert constant_value(rows.select((F.col("id") % 2).alias("c")), "c") is None
    assert constant_value(rows.select(F.col("id").alias("c")), "c") is None
    # each side of a union is a literal, but not the same one
    left = rows.select(F.lit(0).alias("c"))
    right = rows.select(F.lit(1).alias("c"))
    assert constant_value(left.union(right), "c") is None
