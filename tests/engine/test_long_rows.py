"""Per-query rows built from wide rows held in this process (the in-process evaluation
and the Spark driver's): one row per evaluated query and measure with a per-query value,
the measures in order, nulls where undefined, sorted byte-wise when asked."""

from __future__ import annotations

import pyarrow as pa

from sparkeval.engine.long_rows import FRAME_SCHEMA, per_query_rows
from sparkeval.measures.names import parse_measures


def _wide(**columns) -> pa.Table:
    return pa.table(columns)


WIDE = _wide(
    run_id=["r2", "r1", "r1", "r1"],
    query_id=["q1", "q\u00e9", "qz", "q0"],  # é is 0xC3 0xA9: after z byte-wise
    evaluated=[True, True, False, True],
    m0=[0.5, None, 9.0, 1.0],
    m1=[7.0, 8.0, 9.0, 0.0],  # gm_map: no per-query value
    m2=[0.25, 0.75, 9.0, None],
)
MEASURES = parse_measures(["AP", "gm_map", "P@5"])
NAMES = ["AP", "gm_map", "P@5"]


def test_rows_in_the_wide_rows_order_without_the_unevaluated_query() -> None:
    rows = per_query_rows(WIDE, MEASURES, NAMES, ordered=False)
    assert rows.schema == FRAME_SCHEMA
    assert [tuple(r.values()) for r in rows.to_pylist()] == [
        ("r2", "q1", "AP", 0.5),
        ("r2", "q1", "P@5", 0.25),
        ("r1", "q\u00e9", "AP", None),
        ("r1", "q\u00e9", "P@5", 0.75),
        ("r1", "q0", "AP", 1.0),
        ("r1", "q0", "P@5", None),
    ]


def test_ordered_rows_are_sorted_by_run_then_query_byte_wise() -> None:
    rows = per_query_rows(WIDE, MEASURES, NAMES, ordered=True).to_pydict()
    assert list(zip(rows["run_id"], rows["query_id"], rows["measure"], strict=True)) == [
        ("r1", "q0", "AP"),
        ("r1", "q0", "P@5"),
        ("r1", "q\u00e9", "AP"),
        ("r1", "q\u00e9", "P@5"),
        ("r2", "q1", "AP"),
        ("r2", "q1", "P@5"),
    ]


def test_no_rows_when_no_query_or_no_measure_has_a_per_query_value() -> None:
    only_overall = per_query_rows(WIDE, MEASURES[1:2], ["gm_map"], ordered=True)
    nothing_evaluated = per_query_rows(
        WIDE.filter(pa.array([False, False, True, False])), MEASURES, NAMES, ordered=False
    )
    for rows in (only_overall, nothing_evaluated):
        assert rows.num_rows == 0 and rows.schema == FRAME_SCHEMA


def test_the_order_column_gives_each_measure_its_position() -> None:
    rows = per_query_rows(WIDE, MEASURES, NAMES, ordered=True, with_order=True)
    assert rows.column_names == ["run_id", "query_id", "measure", "_order", "value"]
    assert rows.column("_order").to_pylist() == [0, 1] * 3  # AP, then P@5 (gm_map has none)
    assert rows.drop_columns("_order").equals(per_query_rows(WIDE, MEASURES, NAMES, True))
