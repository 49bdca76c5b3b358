"""``--ties`` on the local engine writes the bytes of ``--engine spark``.

The run of :mod:`tests.engine.test_local_ties` (exact score ties whose order each rule
decides) as TREC text, Parquet in row groups of two rows, and CSV, evaluated by both
engines in this process (Spark on the test session); ``per_query.parquet`` and
``summary.json`` must be the same files.  ``input-order`` has no Spark side: Spark
refuses it by name (:mod:`tests.engine.test_local_ties`).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from sparkeval.cli import main
from sparkeval.errors import EXIT_OK
from tests.engine.test_local_ties import argv, write_inputs
from tests.jobs import tree


@pytest.mark.parametrize("rule", ["doc-id", "rank"])
@pytest.mark.parametrize("run", ["run.txt", "run.parquet", "run.csv"])
def test_local_and_spark_write_the_same_bytes(spark, tmp_path: Path, rule: str, run: str) -> None:
    write_inputs(tmp_path)
    assert main(argv(tmp_path, run, "spark", "--ties", rule, "--engine", "spark")) == EXIT_OK
    assert main(argv(tmp_path, run, "local", "--ties", rule, "--engine", "local")) == EXIT_OK
    spark_files, local_files = tree(tmp_path / "spark"), tree(tmp_path / "local")
    assert "summary.json" in local_files
    assert any(name.startswith("per_query.parquet/") for name in local_files)
    assert local_files == spark_files
