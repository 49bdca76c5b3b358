"""RePlay's aggregation modes (:class:`~sparkeval.compat.ModeMeasure`): the median and
the confidence half-width of each run's per-user values of a measure, added to the
report of an evaluation beside the means.

Both are computed in this process from the per-user values sorted by value, with exact
sums (:func:`~sparkeval.engine.worker.exact_summary.exact_total`), so they depend on the
values alone: every engine (in process, local files, Spark) gives the same bits.

* median of the sorted values ``v_1 <= ... <= v_n``: ``v_(n+1)/2`` for an odd n,
  ``(v_n/2 + v_n/2+1) / 2`` for an even n (numpy's ``median``);
* half-width: ``z * s / sqrt(n)`` with ``z = norm.ppf((1 + alpha) / 2)`` and
  ``s = sqrt(sum((v_i - mean)^2) / (n - 1))``, the mean and the sum exact (each square
  rounded once); 0 for one value.

With no defined value the mode's value is null. The report gets, per run, the value
under ``measures`` (``undefined``: the base measure's undefined count, no ``ci95``) and
``modes`` (``{"measure": base output name, "values": n}``, and ``alpha``);
``parameters.modes`` names them.

Example:
    >>> median(np.array([0.0, 0.5, 0.25, 1.0]))
    0.375
    >>> half_width(np.array([0.5, 0.0, 0.5]), 0.95)  # RePlay's Precision-ConfidenceInterval@2
    0.32666066409000905
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sparkeval.compat import ModeMeasure
from sparkeval.engine.worker.exact_summary import exact_double_sum, exact_total, to_float
from sparkeval.formats import measure_column
from sparkeval.measures import Measure

#: {run id: the defined per-user values of one measure}
RunValues = dict[str, np.ndarray]


def median(values: np.ndarray) -> float | None:
    """The median of ``values`` (the mean of the two middle ones for an even count);
    None for none."""
    ordered = np.sort(np.asarray(values, dtype=np.float64))
    n = len(ordered)
    if n == 0:
        return None
    if n % 2:
        return float(ordered[n // 2])
    return float((ordered[n // 2 - 1] + ordered[n // 2]) / 2)


def half_width(values: np.ndarray, alpha: float) -> float | None:
    """RePlay's ``ConfidenceInterval(alpha)`` of ``values``:
    ``norm.ppf((1 + alpha) / 2) * s / sqrt(n)`` (s with ddof 1); 0 for one value, None
    for none."""
    from scipy.stats import norm

    ordered = np.sort(np.asarray(values, dtype=np.float64))
    n = len(ordered)
    if n == 0:
        return None
    if n == 1:
        return 0.0
    mean = exact_total(ordered).mean
    squares = to_float(exact_double_sum((ordered - mean) ** 2))
    deviation = math.sqrt(squares / (n - 1))
    return float(norm.ppf((1 + alpha) / 2)) * (deviation / math.sqrt(n))


def mode_value(mode: ModeMeasure, values: np.ndarray) -> float | None:
    """The value of ``mode`` of the per-user ``values``."""
    if mode.mode == "median":
        return median(values)
    assert mode.alpha is not None
    return half_width(values, mode.alpha)


def wide_values(wide: pa.Table, indexes: Sequence[int]) -> dict[int, RunValues]:
    """The defined values of each measure of ``indexes`` in the evaluated wide rows
    ``wide`` (``run_id``, ``evaluated``, ``m{index}``), by run."""
    out: dict[int, RunValues] = {}
    for index in indexes:
        column = measure_column(index)
        kept = wide.filter(pc.and_(wide.column("evaluated"), pc.is_valid(wide.column(column))))
        runs = kept.column("run_id").to_numpy(zero_copy_only=False)
        values = kept.column(column).to_numpy(zero_copy_only=False).astype(np.float64)
        out[index] = {str(run): values[runs == run] for run in np.unique(runs)}
    return out


def add_modes(
    evaluation: Any,
    modes: Sequence[ModeMeasure],
    names: str | Mapping[str, str],
    values_of: Callable[[Sequence[int]], dict[int, RunValues]],
) -> None:
    """Add each mode's value per run to ``evaluation`` (in place): to its report and to
    its ``set_names`` (the names its ``summary`` shows beside the measures').

    ``names`` is the evaluation's naming: a mapping gives a mode's output name from its
    own name (the name typed, under ``requested``); else the mode's own name.
    ``values_of(indexes)`` gives the defined per-user values of each measure of
    ``indexes`` by run (on Spark, collected by one job).
    """
    if not modes:
        return
    report = evaluation.report
    measures: list[Measure] = list(evaluation.measures)
    shown: list[str] = []
    by_base = values_of(sorted({measures.index(mode.base) for mode in modes}))
    for mode in modes:
        index = measures.index(mode.base)
        base_name = evaluation.names[index]
        name = names.get(mode.name, mode.name) if isinstance(names, Mapping) else mode.name
        shown.append(name)
        for run_id, run in report["runs"].items():
            values = by_base[index].get(run_id, np.zeros(0))
            run["measures"][name] = mode_value(mode, values)
            run["undefined"][name] = run["undefined"][base_name]
            run["ci95"][name] = None
            block: dict[str, Any] = {"measure": base_name, "values": len(values)}
            if mode.alpha is not None:
                block["alpha"] = mode.alpha
            run.setdefault("modes", {})[name] = block
    report["parameters"]["modes"] = shown
    evaluation.set_names = [*evaluation.set_names, *shown]
