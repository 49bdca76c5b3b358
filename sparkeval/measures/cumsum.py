"""Cumulative sums restarting at every group, in numpy.

Every value the measures accumulate along a ranking (DCG, cumulative relevant counts,
ideal DCG along the qrels) is a compensated (Kahan) cumulative sum of its group, from
zero: for each value ``v`` of a group, in order,

    y = v - c;  t = s + y;  c = (t - s) - y;  s = t;  out = t

with ``s = c = 0`` at the group's start. These are the operations, in this order, of
pandas' grouped ``cumsum``, so the results are the same bits as
``pd.Series(values).groupby(groups, sort=False).cumsum()``; here they come without
pandas' factorisation of the group labels, which was most of its cost.

* Integer values (counts) whose magnitudes sum below 2**53 have exact partial sums, so
  the compensation stays 0 and one global ``cumsum`` minus each group's offset gives
  the same values.
* Other values run the recurrence over rank positions: the groups, padded with zeros
  to the longest, are the columns of a table, and each step updates one row for all
  of them at once. When padding would more than double the values, each length class
  (lengths in ``(2**(j-1), 2**j]``) gets a table of its own.
* Groups longer than :data:`LONGEST_LAYERED` (the steps' fixed cost would dominate),
  labels that decrease somewhere (segment and query ids never do) and NaN values go
  through pandas itself.
"""

from __future__ import annotations

import numpy as np

#: longest group the layered recurrence takes; longer ones are summed by pandas
LONGEST_LAYERED = 4096
#: integer values whose magnitudes sum below this have exact partial sums
_EXACT_INTEGERS = float(2**53)
#: one table for all groups while its cells are at most this many times the values
_MAX_PADDING = 2


def grouped_cumsum(values: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """Inclusive compensated cumulative sum restarting at every group (groups are
    contiguous runs of equal labels, in increasing order, as segment and query ids are).

    Each group is accumulated on its own, from zero, so a query's values never
    depend on which other queries share the batch (a global cumsum minus an offset
    would round differently with different neighbours).

    Example:
        >>> grouped_cumsum(np.array([0.1, 0.2, 0.3]), np.array([0, 0, 1])).tolist()
        [0.1, 0.30000000000000004, 0.3]
    """
    values = np.asarray(values, dtype=np.float64)
    n = len(values)
    if n == 0:
        return values.copy()
    groups = np.asarray(groups)
    if (groups[1:] < groups[:-1]).any() or np.isnan(values).any():
        return _pandas_cumsum(values, groups)
    starts = np.concatenate(([0], np.flatnonzero(groups[1:] != groups[:-1]) + 1))
    lengths = np.diff(np.append(starts, n))
    if _exact_integers(values):
        total = np.cumsum(values)
        before = total[starts] - values[starts]
        return (total - np.repeat(before, lengths)) + 0.0  # + 0.0: no -0.0, as pandas
    if lengths.max() > LONGEST_LAYERED:
        return _pandas_cumsum(values, groups)
    return _layered_kahan(values, starts, lengths)


def _exact_integers(values: np.ndarray) -> bool:
    """Whole numbers whose partial sums are all exact in float64 (a sample of about
    256 values is checked first, so that most real-valued arrays stop there)."""
    sample = values[:: max(1, len(values) // 256)]
    if not (sample == np.trunc(sample)).all():
        return False
    return bool(np.abs(values).sum() < _EXACT_INTEGERS) and bool((values == np.trunc(values)).all())


def _layered_kahan(values: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The compensated sums of every group: one table when padding every group to the
    longest costs at most :data:`_MAX_PADDING` times the values, else one table per
    length class."""
    longest = int(lengths.max())
    if longest * len(lengths) <= _MAX_PADDING * len(values):
        return _kahan_table(values, starts, lengths, longest)
    length_class = np.ceil(np.log2(lengths)).astype(np.int64)
    out = np.empty(len(values), dtype=np.float64)
    for klass in np.unique(length_class):
        members = length_class == klass
        where = np.flatnonzero(np.repeat(members, lengths))
        sub_lengths = lengths[members]
        sub_starts = np.concatenate(([0], np.cumsum(sub_lengths)[:-1]))
        out[where] = _kahan_table(values[where], sub_starts, sub_lengths, int(sub_lengths.max()))
    return out


def _kahan_table(
    values: np.ndarray, starts: np.ndarray, lengths: np.ndarray, height: int
) -> np.ndarray:
    """The compensated sums of groups padded with zeros to ``height`` values each."""
    width = len(lengths)
    if (lengths == height).all():  # no padding: the groups are the rows of a reshape
        table = values.reshape(width, height).T.copy()
        _kahan_rows(table)
        return table.T.ravel()
    cells = np.arange(len(values)) + np.repeat(np.arange(width) * height - starts, lengths)
    padded = np.zeros(width * height, dtype=np.float64)
    padded[cells] = values
    table = padded.reshape(width, height).T.copy()
    _kahan_rows(table)
    return table.T.ravel()[cells]


def _kahan_rows(table: np.ndarray) -> None:
    """Replace each row of ``table`` by the compensated running sum of the rows up to
    it, column by column (each column is one group)."""
    previous = np.zeros(table.shape[1])  # s: the row above, once summed
    compensation = np.zeros(table.shape[1])
    step = np.empty(table.shape[1])
    with np.errstate(invalid="ignore", over="ignore"):  # inf - inf: NaN, as in pandas
        for row in table:
            np.subtract(row, compensation, out=step)  # y = v - c
            np.add(previous, step, out=row)  # t = s + y, written over v
            np.subtract(row, previous, out=compensation)  # c = (t - s) - y
            compensation -= step
            previous = row


def _pandas_cumsum(values: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """pandas' grouped cumsum (the shapes the numpy forms leave to it)."""
    import pandas as pd

    return pd.Series(values).groupby(groups, sort=False).cumsum().to_numpy()
