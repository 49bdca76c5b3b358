"""Print results as trec_eval does: ``measure<TAB>query|all<TAB>value``."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, TextIO

from sparkeval.measures import Measure


def table_value(value: float | None, is_count: bool) -> str:
    """``%.4f`` for measures, whole numbers for counts, ``null`` where undefined."""
    if value is None or value != value:
        return "null"
    if is_count:
        return str(round(value))
    return f"{value:.4f}"


#: characters an id may hold that would break a line of the table: each is written as
#: its backslash escape, and a backslash as two
_ESCAPES = str.maketrans({"\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"})


def shown_id(text: str) -> str:
    """An id (query or run) as the table shows it: newlines, carriage returns and tabs
    as ``\\n``, ``\\r`` and ``\\t``, and a backslash doubled only then, so one id is one
    field of one line (the files keep the id as it is).

    Example:
        >>> print(shown_id("q1\\n# run forged\\tall"))
        q1\\n# run forged\\tall
        >>> shown_id("a\\\\b")  # a backslash alone is left as it is
        'a\\\\b'
    """
    if not any(c in text for c in "\n\r\t"):
        return text
    return text.translate(_ESCAPES)


def line(name: str, query: str, text: str) -> str:
    return f"{name:<22}\t{shown_id(query)}\t{text}"


def write_table(
    out: TextIO,
    report: dict[str, Any],
    measures: Sequence[Measure],
    names: Sequence[str],
    per_query_rows: Iterable[Any] = (),
) -> None:
    """Write per-query lines (if given, sorted by run then query) and the ``all`` block.

    ``per_query_rows`` yields rows with ``run_id, query_id, measure, value``.
    """
    counts = {names[i] for i, m in enumerate(measures) if m.spec.aggregate == "sum"}
    current_run = None
    for row in per_query_rows:
        if row["run_id"] != current_run:
            current_run = row["run_id"]
            out.write(f"# run {shown_id(str(current_run))}\n")
        out.write(
            line(
                row["measure"],
                row["query_id"],
                table_value(row["value"], row["measure"] in counts),
            )
            + "\n"
        )
    for run_id, run in report["runs"].items():
        out.write(line("runid", "all", shown_id(run_id)) + "\n")
        out.write(line("num_q", "all", str(run["queries"]["evaluated"])) + "\n")
        for name in names:
            out.write(line(name, "all", table_value(run["measures"][name], name in counts)) + "\n")


def write_run_table(
    out: TextIO,
    report: dict[str, Any],
    measures: Sequence[Measure],
    names: Sequence[str],
    per_query_rows: Iterable[Any] = (),
) -> None:
    """Write a tab-separated run × measure table: a header ``run_id query_id num_q``
    and one column per measure, then per-query rows (if given) and one ``all`` row per
    run, each run's queries first (the values formatted as in :func:`write_table`).

    Example (one run, AP and P@5)::

        run_id  query_id  num_q  AP      P@5
        bm25    all       50     0.2345  0.4120
    """
    counts = {names[i] for i, m in enumerate(measures) if m.spec.aggregate == "sum"}
    out.write("\t".join(["run_id", "query_id", "num_q", *names]) + "\n")
    by_query: dict[tuple[str, str], dict[str, str]] = {}
    for row in per_query_rows:
        key = (str(row["run_id"]), str(row["query_id"]))
        shown = table_value(row["value"], row["measure"] in counts)
        by_query.setdefault(key, {})[row["measure"]] = shown
    for run_id, run in report["runs"].items():
        for (query_run, query), values in by_query.items():
            if query_run == run_id:
                cells = [values.get(name, "null") for name in names]
                out.write("\t".join([shown_id(run_id), shown_id(query), "1", *cells]) + "\n")
        cells = [table_value(run["measures"][name], name in counts) for name in names]
        evaluated = str(run["queries"]["evaluated"])
        out.write("\t".join([shown_id(run_id), "all", evaluated, *cells]) + "\n")
