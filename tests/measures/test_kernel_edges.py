"""Every registered family on awkward segments: empty rankings, R = 0, one doc."""

from __future__ import annotations

import numpy as np
import pytest

from sparkeval.measures import REGISTRY, RankedBatch
from sparkeval.measures.names import parse_measure

REQUIRED = {
    "IPrec": "(recall=0.5)",
    "Rprec_mult": "(mult=1)",
    **{
        f: "(max_rel=3)"
        for f in ("SDCG", "NERR8", "NERR9", "NERR10", "NERR11", "INST", "INSQ", "BPM")
    },
    "Accuracy": "(catalog=1000)",
    "MCC": "(catalog=1000)",
}
NULL_ON_EMPTY = {"AUC", "RC", "KendallTau", "SpearmanRho"}


def _name(family: str) -> str:
    fam = REGISTRY[family]
    return family + REQUIRED.get(family, "") + ("@5" if fam.cutoff == "required" else "")


@pytest.fixture(scope="module")
def batch() -> RankedBatch:
    return RankedBatch.from_lists(
        [[], [], [0, -1, -2], [2], [1, 0, 3, -1, 2, 0, 1]],
        [[1, 2, 0], [0, -1], [0, -1], [2, 1], [3, 2, 2, 1, 1, 0, 0, -1]],
        scores=[[], [], [1.0, 1.0, 0.5], [2.0], [7.0, 6.0, 5.0, 5.0, 3.0, 2.0, 1.0]],
    )


@pytest.mark.parametrize("family", sorted(REGISTRY))
def test_family_on_awkward_segments(family: str, batch: RankedBatch) -> None:
    values = parse_measure(_name(family)).compute(batch, 1)
    assert values.shape == (5,) and values.dtype == np.float64
    undefined = np.isnan(values)
    if undefined.any():
        assert REGISTRY[family].undefined, f"{family} gives null but declares no 'undefined' rule"
    assert np.isfinite(values[~undefined]).all()
    # an empty ranking (a query missing from the run) scores 0, except losses and
    # the measures that are undefined without retrieved docs
    empty = values[:2]
    if family in NULL_ON_EMPTY:
        assert np.isnan(empty).all()
    elif family == "WTA":
        assert (empty == 1).all()
    elif family in ("Accuracy", "MCC"):
        # a user without recommendations still has a confusion matrix (RecTools' user 5 of
        # test_classification.py: 0.7 and -1/6). Query 0: R = 2, TP 0, FP 5, FN 2,
        # TN = 1000 - 5 - 2 = 993; query 1: R = 0, FN 0, TN 995, so an MCC factor is 0
        if family == "Accuracy":
            assert empty.tolist() == pytest.approx([993 / 1000, 995 / 1000], rel=1e-15)
        else:
            assert empty.tolist() == pytest.approx([-10 / np.sqrt(5 * 2 * 998 * 995), 0.0])
    elif family not in ("NumRel", "Utility", "NumQ"):  # NumQ counts the query all the same
        np.testing.assert_array_equal(np.nan_to_num(empty), 0.0, err_msg=family)
