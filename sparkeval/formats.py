"""The internal formats that cross module (and process) boundaries, named in one place.

Rows shipped to the evaluation and results coming back carry a few hidden columns
and numbered keys. Every module spells them through these names, so a format change
is made here once.

* Hidden columns of the rows read from inputs: :data:`BAD` (a message for a row that
  could not be parsed, null otherwise: the job fails on it in the stage that reads
  it), :data:`DUPLICATE_FLAG` (near-duplicate flag of a run row), :data:`RUN_CODE`
  (the integer code of a row's run; the engine ships codes, not run names),
  :data:`TIE_KEY` (the key that orders tied scores under ``--ties rank``) and
  :data:`SHIPPED_VALUE` (score of a run row or grade of a qrels row, in the one frame
  that ships both) and :data:`IS_QRELS` (whether a row of that frame is a qrels row).
* Results: :func:`measure_column` names the wide rows' per-query value of measure i;
  :func:`value_sum_key`, :func:`square_sum_key` and :func:`undefined_count_key` the
  per-run partial sums, sums of squares and undefined counts of measure i.

Example:
    >>> measure_column(3), value_sum_key(3), undefined_count_key(3)
    ('m3', 'v3', 'u3')
"""

from __future__ import annotations

from collections.abc import Iterable

#: a row's parse error (null when the row is fine)
BAD = "_bad"
#: a run row that near-duplicates a higher-ranked doc of its ranking
DUPLICATE_FLAG = "_dup"
#: a row's run, as an index into the evaluation's run ids
RUN_CODE = "_run"
#: the ``_run`` code of a run row whose run id is null (an input error)
EMPTY_RUN_CODE = -2
#: score (run rows) or grade (qrels rows) in the frame that ships both
SHIPPED_VALUE = "_value"
#: true on the qrels rows of the frame that ships run and qrels rows together
IS_QRELS = "_is_qrels"
#: a run row's tie key under a tie rule other than doc id (``EvalOptions.ties``): its rank
#: (``rank``) or its place in the input (``input-order``); lower ranks first among tied scores
TIE_KEY = "_tie"
#: the tie rules (``--ties``): doc id descending (trec_eval's, the default), the run's rank
#: column ascending, or the order of the input rows; the last two then by doc id descending
TIE_RULES: tuple[str, ...] = ("doc-id", "rank", "input-order")
#: the run id of a run without a run id column (a DataFrame, a table or a file)
DEFAULT_RUN_ID = "run"


def found_run_ids(values: Iterable[str | None]) -> list[str]:
    """The distinct run ids among ``values`` (nulls left out), sorted; a run table
    without rows holds one run, :data:`DEFAULT_RUN_ID`, without rows.

    Example:
        >>> found_run_ids(["b", "a", None, "b"]), found_run_ids([])
        (['a', 'b'], ['run'])
    """
    return sorted({v for v in values if v is not None}) or [DEFAULT_RUN_ID]


def measure_column(i: int) -> str:
    """The wide-row column of measure ``i``'s per-query value."""
    return f"m{i}"


def value_sum_key(i: int) -> str:
    """The partial-sum key of measure ``i``'s defined values."""
    return f"v{i}"


def square_sum_key(i: int) -> str:
    """The partial-sum key of the squares of measure ``i``'s defined values (for the
    confidence interval of its mean)."""
    return f"s{i}"


def interval_key(i: int) -> str:
    """The key of measure ``i``'s confidence interval of the mean in combined statistics."""
    return f"ci{i}"


def undefined_count_key(i: int) -> str:
    """The key of measure ``i``'s count of undefined values."""
    return f"u{i}"
