"""``sparkeval compare``: paired comparison of runs against a baseline, gate and report.

Example::

    sparkeval compare --per-query out/eval --baseline bm25 --measures nDCG@10 AP \\
        --permutations 10000 --seed 7 --fail-if "nDCG@10 drop > 1% p<0.05" --out out/cmp

Writes ``comparison.parquet``, ``deltas.parquet``, ``summary.json``, ``report.html``
and ``report.md`` (plus ``rank_distance.parquet`` with ``--runs``) atomically into
``--out``; exits 3 when a ``--fail-if`` condition holds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Self

from sparkeval.compare.options import BaselineComparisonConfig
from sparkeval.errors import EXIT_GATE, EXIT_OK
from sparkeval.job.command import Command, spark_job
from sparkeval.job.options import input_path, option

if TYPE_CHECKING:
    from sparkeval.compare.job import CompareOutcome


@dataclass(frozen=True, kw_only=True)
class CompareConfig(BaselineComparisonConfig):
    """A comparison of runs with a baseline; see ``sparkeval compare --help``."""

    per_query: str = input_path(
        "per_query.parquet, or the output directory of 'sparkeval evaluate'"
    )
    measures: tuple[str, ...] = option(
        (),
        metavar="NAME",
        help="measures to compare, space or comma separated (default: all in the table)",
    )
    permutations: int = option(
        10_000,
        metavar="N",
        help="sign flips of the randomization test; exact enumeration when "
        "2^n <= N (default 10000)",
    )
    bootstrap: int = option(
        10_000, metavar="N", help="bootstrap resamples of the confidence interval (default 10000)"
    )
    seed: int = option(
        0, metavar="S", help="seed of the randomization and bootstrap generators (default 0)"
    )
    alpha: float = option(0.05, help="significance level; the CI is 1-alpha (default 0.05)")
    fail_if: tuple[str, ...] = option(
        (),
        metavar="COND",
        help="gate condition, repeatable: 'nDCG@10 < 0.30' (a run's mean) or "
        "'nDCG@10 drop > 1%% p<0.05' / 'AP drop > 0.01' (against the baseline)",
    )
    runs: tuple[str, ...] = input_path(
        "run table(s) run_id, query_id, doc_id, score (Parquet or CSV) for "
        "rank distances and item exposure against the baseline",
        (),
    )
    extra_summary: tuple[str, ...] = input_path(
        "summary.json (or a directory holding one) of another stage, shown "
        "in the report (repeatable)",
        (),
    )
    no_plots: bool = option(False, help="report without plots")

    def validate(self) -> Self:
        from sparkeval.compare.outputs import parse_conditions

        parse_conditions(list(self.fail_if))
        return self

    def input_paths(self) -> list[str]:
        return [self.per_query, *self.runs, *self.extra_summary]

    def measure_list(self) -> list[str]:
        """The measures asked for, comma lists split."""
        from sparkeval.measures.names import split_measure_list

        return [name for item in self.measures for name in split_measure_list(item)]


def exit_code(outcome: CompareOutcome) -> int:
    """3 when a ``--fail-if`` condition held, else 0."""
    return EXIT_GATE if outcome.failures else EXIT_OK


COMMAND = Command(
    name="compare",
    help="compare runs with a baseline: paired tests, deltas, rank distances, gate, report",
    description="Compare every run of a per-query table (from 'sparkeval evaluate') with a "
    "baseline run: per-query deltas, paired t-test, Fisher's randomization test, "
    "bootstrap CI of the mean delta, Holm correction across runs, wins/ties/losses; "
    "optional rank distances and exposure from run tables; a quality gate "
    "(--fail-if, exit code 3) and an HTML/Markdown report.",
    config=CompareConfig,
    run=spark_job("sparkeval.compare.job:run_compare"),
    exit_code=exit_code,
)
