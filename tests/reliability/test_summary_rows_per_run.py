"""``summary.parquet`` rows of the commands whose summaries hold each run's entry under
``runs`` without ``measures`` (``similar-users``, ``diversity``): no Spark needed."""

from __future__ import annotations

from sparkeval.summary_table import summary_rows, summary_table

RUN = {"counts": {"pairs": 3, "users": 10}, "largest_bucket": 4}


def _rows(summary: dict) -> list[tuple[str, str, float]]:
    return [(r["run_id"], r["measure"], r["value"]) for r in summary_rows(summary, "similar-users")]


def test_each_run_s_numbers_carry_its_id_and_the_others_none() -> None:
    summary = {
        "command": "similar-users",
        "parameters": {"threshold": 0.5},
        "estimated_recall_at_threshold": 0.99,
        "runs": {"B": {**RUN, "largest_bucket": 5}, "A": RUN},
    }
    assert _rows(summary) == [
        ("A", "counts.pairs", 3.0),
        ("A", "counts.users", 10.0),
        ("A", "largest_bucket", 4.0),
        ("B", "counts.pairs", 3.0),
        ("B", "counts.users", 10.0),
        ("B", "largest_bucket", 5.0),
        ("", "estimated_recall_at_threshold", 0.99),
    ]


def test_a_one_run_summary_s_copy_at_the_top_is_not_repeated() -> None:
    one = {"command": "similar-users", "run_id": None, "runs": {"run": RUN}, **RUN}
    assert _rows(one) == [
        ("run", "counts.pairs", 3.0),
        ("run", "counts.users", 10.0),
        ("run", "largest_bucket", 4.0),
    ]


def test_a_run_chosen_with_run_id_is_an_evaluation_of_its_own() -> None:
    ids = set()
    for run in (None, "A", "B"):
        summary = {"command": "diversity", "run_id": run, "runs": {run or "all": RUN}, **RUN}
        ids.add(summary_table(summary, "diversity", []).column("evaluation_id")[0].as_py())
    assert len(ids) == 3
