"""``sparkeval demo``: generate the demo collection and evaluate it in local mode."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self, TextIO

from sparkeval.errors import ConfigError
from sparkeval.job.command import Command
from sparkeval.job.config import JobConfig
from sparkeval.job.options import option

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

DEMO_MEASURES = ("official", "nDCG@10", "nDCG", "AP@100", "R@100", "Success@10")


@dataclass(frozen=True, kw_only=True)
class DemoConfig(JobConfig):
    """Where the demo goes and how big it is."""

    out: str = option("demo-results", metavar="DIR", path=True, help="output directory")
    queries: int = option(200, metavar="N", help="number of queries (default 200)")
    data_only: bool = option(False, help="only generate the data")
    master: str = option("local[*]", help="Spark master URL (default local[*])")

    def validate(self) -> Self:
        if self.queries < 1:
            raise ConfigError("--queries must be >= 1")
        if "://" in self.out and not self.out.startswith("file://"):
            raise ConfigError(
                f"{self.out}: the demo writes its data and results into a local "
                "directory; give a local path"
            )
        return self


def run(spark: SparkSession | None, config: DemoConfig) -> Any:
    """Write the data to OUT/data; unless ``data_only``, evaluate it into OUT/results."""
    from sparkeval.commands.evaluate import COMMAND as EVALUATE
    from sparkeval.demo_data import generate
    from sparkeval.evaluation.job import run_evaluate
    from sparkeval.evaluation.options import EvaluateConfig
    from sparkeval.job.runner import start_spark

    out = Path(config.out)
    paths = generate(out / "data", queries=config.queries)
    if config.data_only:
        return out / "data", None, None
    evaluate = EvaluateConfig.load(
        run=[str(p) for p in paths.runs],
        qrels=str(paths.qrels),
        measures=list(DEMO_MEASURES),
        out=str(out / "results"),
        master=config.master,
        overwrite=True,
        app_name="sparkeval-demo",
        spark={"spark.sql.shuffle.partitions": "8"},
    )
    return out / "data", evaluate, run_evaluate(start_spark(EVALUATE, evaluate), evaluate)


def show(result: Any, config: DemoConfig, stdout: TextIO) -> None:
    """Where the data is, then the evaluation's table (none after ``--data-only``)."""
    from sparkeval.commands.evaluate import show as show_evaluation

    data, evaluate, evaluation = result
    print(f"sparkeval: demo data in {data}", file=stdout)
    if evaluation is not None:
        show_evaluation(evaluation, evaluate, stdout)


COMMAND = Command(
    name="demo",
    help="generate a synthetic collection and evaluate it (local Spark)",
    description="Generate a graded synthetic collection (qrels + three runs of "
    "different quality, with unjudged docs and exact score ties) into OUT/data and "
    "evaluate it into OUT/results.",
    config=DemoConfig,
    run=run,
    show=show,
    uses_spark=False,
)
