"""The report of an evaluation (the content of ``summary.json``), on Spark or in process."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sparkeval.engine.worker.assemble import EvalOptions
from sparkeval.errors import ConfigError, EmptyRunError
from sparkeval.formats import interval_key, undefined_count_key, value_sum_key
from sparkeval.measures import Measure
from sparkeval.measures.names import parse_measures


def as_measures(measures: Sequence[str | Measure] | str) -> list[Measure]:
    """Parsed measures from names (``"nDCG@10,AP"``, ``["P@5"]``) or parsed measures."""
    if isinstance(measures, str):
        return parse_measures(measures)
    items = list(measures)
    if all(isinstance(m, Measure) for m in items):
        return list(items)  # type: ignore[arg-type]
    return parse_measures([m.name if isinstance(m, Measure) else m for m in items])


#: what ``names`` may be: canonical names, trec_eval's, or the names as requested
NAME_STYLES = ("canonical", "trec", "requested")


def output_names(
    measures: Sequence[Measure], names: str | Mapping[str, str], rel_level: int
) -> list[str]:
    """The output name of every measure: canonical, trec_eval's where it has one, or
    the label ``names`` maps its canonical name to (the name the user typed).

    Raises:
        ConfigError: ``names`` is none of ``canonical``, ``trec`` or a mapping.
    """
    if isinstance(names, Mapping):
        return [names.get(m.name, m.name) for m in measures]
    if names not in ("canonical", "trec"):
        raise ConfigError(f"names must be 'canonical', 'trec' or 'requested', got {names!r}")
    if names == "canonical":
        return [m.name for m in measures]
    return [m.trec_name(rel_level) or m.name for m in measures]


def name_labels(
    measures: Sequence[str | Measure] | str, names: str | Mapping[str, str]
) -> str | Mapping[str, str]:
    """``names`` with ``requested`` turned into {canonical: typed name} of ``measures``
    (parsed measures keep their canonical names)."""
    if names != "requested":
        return names
    from sparkeval.measures.names import requested_labels

    if isinstance(measures, str):
        return requested_labels(measures)
    typed = [m for m in measures if isinstance(m, str)]
    return requested_labels(typed) if typed else {}


def build_report(
    stats: dict[str, dict[str, Any]],
    measures: Sequence[Measure],
    out_names: Sequence[str],
    run_ids: Sequence[str],
    options: EvalOptions,
    names: str | Mapping[str, str],
    empty_runs: bool = False,
) -> dict[str, Any]:
    """The report of an evaluation (``summary.json``) from the combined per-run sums.

    ``empty_runs``: a run without rows is evaluated (each of its queries retrieved
    nothing, as a model that recommended nothing) instead of being an error.

    Raises:
        EmptyRunError: a run has no rows (unless ``empty_runs``), or nothing was
            evaluated for it (neither it nor the qrels have rows).
    """
    runs: dict[str, Any] = {}
    for run_id in run_ids:
        s = stats.get(run_id)
        if s is None or not (s["rows_read"] or empty_runs):
            raise EmptyRunError(run_id)
        runs[run_id] = {
            "measures": {out_names[i]: s[value_sum_key(i)] for i in range(len(measures))},
            "undefined": {
                out_names[i]: int(s[undefined_count_key(i)]) for i in range(len(measures))
            },
            # Student's t 95% interval of each mean over its defined queries
            "ci95": {
                out_names[i]: (list(s[interval_key(i)]) if s.get(interval_key(i)) else None)
                for i in range(len(measures))
            },
            "queries": {
                "evaluated": int(s["evaluated"]),
                "in_both": int(s["in_both"]),
                "in_run_only": int(s["in_run_only"]),
                "in_qrels_only": int(s["in_qrels_only"]),
            },
            "rows": {
                "read": int(s["rows_read"]),
                "rejected": 0,
                "beyond_depth": int(s["rows_beyond_depth"]),
                "in_unevaluated_queries": int(s["rows_in_unevaluated_queries"]),
            },
        }
        if options.ranks == "order":  # a rank-only run, its ranks read as an order
            runs[run_id]["queries"]["rank_gaps"] = int(s["rank_gaps"])
    first = stats[run_ids[0]]
    report: dict[str, Any] = {
        "runs": runs,
        "qrels": {
            "rows": int(first["qrels_rows"]),
            "queries": int(first["in_both"] + first["in_qrels_only"]),
        },
        "parameters": {
            "measures": [m.name for m in measures],
            "queries": options.queries,
            "rel_level": options.rel_level,
            "depth": options.depth,
            **({"ranks": options.ranks} if options.ranks else {}),
            "names": names if isinstance(names, str) else "requested",
        },
    }
    canonical = {out: m.name for out, m in zip(out_names, measures, strict=True)}
    if any(out != name for out, name in canonical.items()):
        report["measure_names"] = canonical  # output name -> canonical name, side by side
    return report


#: the columns of an evaluation's ``summary`` table
SUMMARY_COLUMNS = ("run_id", "measure", "value", "queries", "undefined")


def summary_rows(report: dict[str, Any], names: Sequence[str]) -> list[tuple[Any, ...]]:
    """The ``summary`` table's rows from a report: per run and measure, the value, the
    queries with a defined value and the undefined ones."""
    return [
        (
            run_id,
            name,
            run["measures"][name],
            run["queries"]["evaluated"] - run["undefined"][name],
            run["undefined"][name],
        )
        for run_id, run in report["runs"].items()
        for name in names
    ]
