"""``sparkeval compare``: paired comparison of runs against a baseline, gate and report.

Example::

    sparkeval compare --per-query out/eval --baseline bm25 --measures nDCG@10 AP \\
        --permutations 10000 --seed 7 --fail-if "nDCG@10 drop > 1% p<0.05" --out out/cmp

Writes ``comparison.parquet``, ``deltas.parquet``, ``summary.json``, ``report.html``
and ``report.md`` (plus ``rank_distance.parquet`` with ``--runs``) atomically into
``--out``; exits 3 when a ``--fail-if`` condition holds.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TextIO

from sparkeval.compare.options import CompareConfig
from sparkeval.errors import EXIT_GATE, EXIT_OK
from sparkeval.job.command import Command, LocalEngine, spark_job
from sparkeval.job.engine_choice import run_here_or_on_spark, runs_locally

if TYPE_CHECKING:
    from sparkeval.compare.job import CompareOutcome


#: the columns of the table ``compare`` prints: (heading, comparison key, format)
TABLE_COLUMNS = (
    ("mean", "mean", "{:.4f}"),
    ("baseline", "baseline_mean", "{:.4f}"),
    ("delta", "delta", "{:+.4f}"),
    ("change", "relative", "{:+.1%}"),
    ("ci_low", "ci_low", "{:+.4f}"),
    ("ci_high", "ci_high", "{:+.4f}"),
    ("p_rand_holm", "p_randomization_holm", "{:.4g}"),
    ("w/t/l", "wins", "{}"),
)


def comparison_table(summary: dict) -> list[str]:
    """The lines ``compare`` prints on stdout: one per (run, measure) against the
    baseline, tab separated, with a header line; ``-`` where a value is undefined.

    ``change`` is the relative change of the mean, ``delta / |baseline|``.
    """
    from sparkeval.trec_table import shown_id

    header = ["run_id", "measure", *(heading for heading, _, _ in TABLE_COLUMNS)]
    lines = ["\t".join(header)]
    for run_id, measures in summary.get("comparison", {}).items():
        for measure, entry in measures.items():
            cells = [shown_id(run_id), shown_id(measure)]
            for heading, key, shape in TABLE_COLUMNS:
                cells.append(_cell(entry, heading, key, shape))
            lines.append("\t".join(cells))
    return lines


def _cell(entry: dict, heading: str, key: str, shape: str) -> str:
    if heading == "w/t/l":
        return f"{entry.get('wins')}/{entry.get('ties')}/{entry.get('losses')}"
    if key == "relative":
        delta, base = entry.get("delta"), entry.get("baseline_mean")
        value = delta / abs(base) if _number(delta) and _number(base) and base else None
    else:
        value = entry.get(key)
    return shape.format(value) if _number(value) else "-"


def _number(value: object) -> bool:
    return isinstance(value, int | float) and value == value  # not NaN


def show(outcome: CompareOutcome, config: CompareConfig, stdout: TextIO) -> None:
    """The comparison table on stdout; each failed gate condition as one line on
    stderr, also under ``--quiet`` (a scheduler's log then says why the exit code is 3)."""
    import sys

    for line in comparison_table(outcome.summary):
        print(line, file=stdout)
    for failure in outcome.failures:
        print(f"sparkeval compare: gate failed: {failure['message']}", file=sys.stderr)


def exit_code(outcome: CompareOutcome) -> int:
    """3 when a ``--fail-if`` condition held, else 0."""
    return EXIT_GATE if outcome.failures else EXIT_OK


def needs_spark(config: CompareConfig) -> str | None:
    """Why ``config`` needs Spark whatever the size of its inputs, or None: what the
    local engine (:mod:`sparkeval.compare.local_compare`) does not do."""
    from sparkeval.io.direct import DIRECT_FORMATS
    from sparkeval.io.readers import detect_format, is_catalog_table
    from sparkeval.storage.uris import is_remote

    if is_catalog_table(config.per_query) or any(is_catalog_table(p) for p in config.runs):
        return "catalog tables are read through Spark"
    if is_remote(config.per_query):
        return "a per-query table on a store is read through Spark"
    if any(detect_format(path, None) not in DIRECT_FORMATS for path in config.runs):
        return "only Parquet, TREC, CSV and TSV run tables are read without Spark"
    return None


def run_locally(config: CompareConfig) -> CompareOutcome | None:
    """The job in this process (:func:`sparkeval.compare.job.run_compare_locally`);
    None sends an ``auto`` run to Spark when an input needs Spark's readers."""
    from sparkeval.compare.job import run_compare_locally

    return run_here_or_on_spark(config, run_compare_locally)


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
    show=show,
    exit_code=exit_code,
    local=LocalEngine(lambda config: runs_locally(config, needs_spark), run_locally),
)
