"""Near-duplicate-aware evaluation: the ``NearDup@k`` measure and the demotion rule.

With near-duplicate pairs, a retrieved doc is *flagged* when it near-duplicates a
higher-ranked doc of the same ranking (see :mod:`sparkeval.engine.plans.near_dup_flags`).

Dedup-aware measures: a flagged doc judged relevant (grade > 0) is evaluated as
judged non-relevant (grade 0), so a copy of a higher result gains nothing in
every measure (P@k, AP, nDCG, bpref, ...).  Unjudged and non-pool docs stay as
they are.  R (the number of relevant docs) and the ideal ranking of nDCG are not
changed: the qrels still say the doc is relevant; the system just gets no credit
for showing a copy.  With ``rel_level`` 0 every judged doc is relevant, grade 0
included, so there a flagged doc keeps counting.

Example:
    >>> import numpy as np
    >>> demote_near_duplicates(np.array([2, 1, 0, -1, -2]), np.array([0, 1, 1, 1, 1], bool))
    array([ 2,  0,  0, -1, -2])
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from sparkeval.errors import ConfigError
from sparkeval.measures.batch import RankedBatch, safe_divide
from sparkeval.measures.registry import Measure, measure


def demote_near_duplicates(rel: np.ndarray, dup: np.ndarray | None) -> np.ndarray:
    """Relevance codes with every flagged doc of grade > 0 set to grade 0."""
    if dup is None:
        return rel
    return np.where(dup & (rel > 0), 0, rel).astype(rel.dtype, copy=False)


@measure(
    "NearDup",
    description=(
        "near-duplicate rate at k: flagged docs among the first min(k, n) divided by "
        "min(k, n), a doc being flagged when it near-duplicates a higher-ranked doc of "
        "the same ranking (needs --near-duplicates); 0 when nothing is retrieved, as "
        "Judged@k; NearDup means NearDup@10. With pairs, every other measure is "
        "dedup-aware: a flagged doc judged relevant counts as grade 0 (R and the ideal "
        "ranking are unchanged)"
    ),
    cutoff="optional",
    default_cutoff=10,
    rel=False,
    higher_is_better=False,
    references="near-duplicate rate of the top k; dedup-aware ranking measures",
)
def near_dup(b: RankedBatch, k: int | None, p: Mapping[str, Any]) -> np.ndarray:
    # a batch without flags has no known near-duplicate; the evaluators refuse
    # NearDup without pairs before they build one
    dup = b.dup if b.dup is not None else np.zeros(len(b.rel), dtype=bool)
    top = b.within(k)
    flagged = b.segment_sum((dup & top).astype(np.float64))
    return safe_divide(flagged, b.segment_sum(top.astype(np.float64)))


#: the measure families that need near-duplicate flags
NEEDS_FLAGS: tuple[str, ...] = ("NearDup",)


def check_flags_available(measures: Sequence[Measure], option: str = "near_duplicates") -> None:
    """Raise ConfigError when a measure needs near-duplicate pairs and none are given."""
    needing = [m.name for m in measures if m.family in NEEDS_FLAGS]
    if needing:
        verb = "needs" if len(needing) == 1 else "need"
        raise ConfigError(
            f"measure {', '.join(needing)} {verb} near-duplicate pairs; "
            f"give them with {option} (a doc_a, doc_b table)"
        )


__all__ = ["NEEDS_FLAGS", "check_flags_available", "demote_near_duplicates", "near_dup"]
