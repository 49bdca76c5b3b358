"""Pure-numpy measure kernels, the registry and name parsing (no Spark here)."""

from sparkeval.measures.batch import NONPOOL, UNJUDGED, RankedBatch
from sparkeval.measures.registry import (
    GMEAN_FLOOR,
    REGISTRY,
    Family,
    Measure,
    Param,
    measure,
    trec_patterns,
)

# Importing the kernel modules registers their families.
from sparkeval.measures import ranking  # noqa: F401  isort: skip

__all__ = [
    "GMEAN_FLOOR",
    "NONPOOL",
    "REGISTRY",
    "UNJUDGED",
    "Family",
    "Measure",
    "Param",
    "RankedBatch",
    "measure",
    "trec_patterns",
]

# Further kernel modules (imported for their registrations, in listing order).
from sparkeval.measures import (  # noqa: F401  isort: skip
    trec_more,
    set_based,
    graded,
    correlation,
    near_dup,
    peer_auc,
    cwl,
    confusion,
)
