"""Options every Spark command has: the master, extra Spark settings, the output target."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sparkeval.job.config import JobConfig
from sparkeval.job.options import input_path, option


def _spark_settings(values: Mapping[str, Any]) -> dict[str, str]:
    """Spark settings as strings (YAML reads ``4`` and ``true`` as numbers and booleans)."""
    return {str(k): str(v) for k, v in values.items()}


@dataclass(frozen=True, kw_only=True)
class SparkJobConfig(JobConfig):
    """A command that runs on Spark: ``--master`` and a config file's ``spark:`` section."""

    master: str | None = option(None, help="Spark master URL (default local[*])")
    remote: str | None = option(
        None,
        metavar="sc://HOST:PORT",
        help="run on a Spark Connect server (default: the SPARK_REMOTE variable)",
    )
    spark: Mapping[str, str] = option(cli=False, convert=_spark_settings, default_factory=dict)
    app_name: str | None = option(None, cli=False)


@dataclass(frozen=True, kw_only=True)
class OutputJobConfig(SparkJobConfig):
    """A Spark command that writes a results directory (atomically, see :mod:`sparkeval.output`)."""

    out: str = option(help="output directory (written atomically)", metavar="DIR", path=True)
    overwrite: bool = option(False, help="replace an existing output directory")
    quiet: bool = option(False, help="no status lines on stderr (errors are still reported)")
    dry_run: bool = option(
        False,
        help="check the config, the measures, the inputs (schemas only) and the output "
        "target, then exit 0 or 2: no Spark, no data rows read, nothing written",
    )
    append_to: str | None = option(
        None,
        metavar="TARGET",
        help="also add summary.parquet's rows to a Parquet dataset (a path) or a catalog "
        "table; rerunning the same evaluation replaces its rows",
    )
    evaluation_key: str | None = option(
        None,
        metavar="KEY",
        help="a key of your own (a scheduler's run date) made part of the evaluation id: "
        "evaluations with other keys keep their own rows under --append-to",
    )

    def input_paths(self) -> list[str]:
        """The paths the command reads (an output directory may not be one of them)."""
        return []

    def input_tables(self) -> list[str]:
        """The catalog tables the command reads."""
        return []

    def preflight(self) -> None:
        """The output target is usable: not an input, not a non-empty directory without
        ``overwrite`` (:func:`sparkeval.output.check_output_path`); ``append_to`` is a
        local path or a plain table name."""
        from sparkeval.output import check_output_path

        check_output_path(self.out, self.input_paths(), self.overwrite)
        if self.append_to:
            from sparkeval.summary_table import check_append_name

            check_append_name(self.append_to)

    def dry_run_checks(self) -> list[str]:
        """What ``--dry-run`` checks beyond the config and the output: each input's
        schema (:func:`sparkeval.job.dry_run.input_schema`); one line per input."""
        from sparkeval.job.dry_run import input_schema

        return [input_schema(path).describe() for path in self.input_paths()]


@dataclass(frozen=True, kw_only=True)
class RunListsConfig(OutputJobConfig):
    """A command that reads runs' ranked lists: ``--run`` (every run of the table, each
    evaluated on its own) and ``--run-id`` (one of them)."""

    run: str = input_path(
        "run table (Parquet/CSV/TSV/JSONL) or TREC run file: a ranked list per user; "
        "each run of it (a run_id column) is evaluated"
    )
    run_id: str | None = option(None, help="evaluate only this run of the table")

    def input_paths(self) -> list[str]:
        return [self.run]

    def requires_score(self) -> bool:
        """Whether the run needs a score column (the top-k cut needs one)."""
        return True

    def dry_run_checks(self) -> list[str]:
        """The run's columns resolved as the real read resolves them (a score where
        :meth:`requires_score`; ``--run-id`` needs run ids)."""
        from sparkeval.job.dry_run import check_run_lists, input_schema

        return [check_run_lists(input_schema(self.run), self.requires_score(), self.run_id)]
