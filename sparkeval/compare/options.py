"""The options ``compare`` and ``rank-distance`` share, declared once: the baseline, the
runs compared with it and the depths of the rank distances; and each command's config
(:class:`CompareConfig`, :class:`RankDistanceConfig`), which its job body
(:mod:`sparkeval.compare.job`) reads."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Self

from sparkeval.errors import ConfigError
from sparkeval.job.engine_choice import ENGINE_HELP, ENGINES
from sparkeval.job.options import input_path, option
from sparkeval.job.spark_options import OutputJobConfig

if TYPE_CHECKING:
    from sparkeval.compare.pipeline import CompareOptions


@dataclass(frozen=True, kw_only=True)
class BaselineComparisonConfig(OutputJobConfig):
    """A baseline run, the runs compared with it, and the rank-distance depths."""

    baseline: str = option(metavar="RUN", help="run id of the baseline")
    compared: tuple[str, ...] = option(
        (),
        flag="--run",
        metavar="RUN",
        help="run id to compare (repeatable; default: every other run)",
    )
    k: int = option(10, help="depth of Jaccard@k and of the exposure distributions (default 10)")
    rbo_p: float = option(0.9, help="RBO persistence (default 0.9)")
    depth: int = option(100, help="rankings are cut at this depth for rank distances (default 100)")


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
    engine: str = option("auto", choices=ENGINES, help=ENGINE_HELP)

    def validate(self) -> Self:
        from sparkeval.compare.outputs import parse_conditions

        parse_conditions(list(self.fail_if))
        self.compare_options()  # its checks, before Spark starts
        return self

    def compare_options(self) -> CompareOptions:
        """The comparison's options (checked: counts, seed, alpha, depths)."""
        from sparkeval.compare.pipeline import CompareOptions

        measures = self.measure_list()
        return CompareOptions(
            baseline=self.baseline,
            measures=tuple(measures) if measures else None,
            runs=self.compared or None,
            permutations=self.permutations,
            bootstrap=self.bootstrap,
            seed=self.seed,
            alpha=self.alpha,
            k=self.k,
            rbo_p=self.rbo_p,
            depth=self.depth,
        )

    def input_paths(self) -> list[str]:
        return [self.per_query, *self.runs, *self.extra_summary]

    def measure_list(self) -> list[str]:
        """The measures asked for, comma lists split."""
        from sparkeval.measures.names import split_measure_list

        return [name for item in self.measures for name in split_measure_list(item)]


@dataclass(frozen=True, kw_only=True)
class RankDistanceConfig(BaselineComparisonConfig):
    """Runs, a baseline and the depths; see ``sparkeval rank-distance --help``."""

    runs: tuple[str, ...] = input_path(
        "run table(s) run_id, query_id, doc_id, score (Parquet or CSV)"
    )
    engine: str = option("auto", choices=ENGINES, help=ENGINE_HELP)

    def input_paths(self) -> list[str]:
        return list(self.runs)


def compared_runs(present: list[str], baseline: str, wanted: tuple[str, ...]) -> list[str]:
    """The runs to compare with ``baseline`` (default: every other run), checked.

    Example:
        >>> compared_runs(["a", "b", "c"], "a", ())
        ['b', 'c']
    """
    if baseline not in present:
        raise ConfigError(
            f"baseline run {baseline!r} is not in the run table(s); runs: " + ", ".join(present)
        )
    chosen = list(wanted) or [r for r in present if r != baseline]
    unknown = sorted(set(chosen) - set(present))
    if unknown:
        raise ConfigError(
            f"run(s) {', '.join(unknown)} not in the run table(s); runs: " + ", ".join(present)
        )
    runs = [r for r in dict.fromkeys(chosen) if r != baseline]
    if not runs:
        raise ConfigError("nothing to compare: give at least one run besides the baseline")
    return runs
