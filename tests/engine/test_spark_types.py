"""Casts by type object: the same Spark type as the type's SQL name."""

from __future__ import annotations

import pytest

from sparkeval.spark import spark_type

#: each name, and the SQL name Spark gives the type (its DDL spelling)
NAMES = {
    "double": "double",
    "long": "bigint",
    "int": "int",
    "string": "string",
    "boolean": "boolean",
    "binary": "binary",
    "array<string>": "array<string>",
    "array<double>": "array<double>",
}


@pytest.mark.parametrize("name", sorted(NAMES))
def test_a_type_object_is_the_type_its_name_casts_to(spark, name: str) -> None:
    from pyspark.sql import functions as F

    frame = spark.range(1).select(F.lit(None).cast(spark_type(name)).alias("a"))
    by_name = spark.range(1).select(F.lit(None).cast(name).alias("a"))
    assert spark_type(name).simpleString() == NAMES[name]
    assert frame.schema == by_name.schema


def test_an_unknown_name_is_refused() -> None:
    with pytest.raises(KeyError):
        spark_type("decimal(10,2)")
