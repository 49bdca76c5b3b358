"""The outputs of ``near-duplicates``, whichever engine found the pairs: the Arrow
schema of ``pairs.parquet``, the clusters of the written pairs, ``summary.json`` and
the status lines (no pyspark).

:func:`write_near_duplicates` takes a function that writes ``pairs.parquet`` (Spark's
DataFrame writer, or pyarrow from this process) and writes the rest from the written
pairs, so the clusters and the summary are computed the same way on both engines.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from sparkeval.lsh.clusters import components
from sparkeval.lsh.permuted_tables import FINGERPRINT_BITS
from sparkeval.lsh.search_stats import bucket_report
from sparkeval.output import atomic_output_dir, write_summary
from sparkeval.status import status

if TYPE_CHECKING:
    from sparkeval.lsh.banding import BandParams
    from sparkeval.lsh.options import LshOptions, NearDuplicatesConfig

#: how a summary says the clusters were found
CLUSTERS_METHOD = "driver-side vectorised union-find over the verified pairs"


def pairs_schema(method: str, id_type: pa.DataType) -> pa.Schema:
    """The Arrow schema both engines write ``pairs.parquet`` in: the doc ids (of
    ``id_type``) never null, then MinHash's ``jaccard`` or SimHash's ``hamming`` and
    ``similarity``, which may be.

    Example:
        >>> pairs_schema("minhash", pa.string()).names
        ['doc_a', 'doc_b', 'jaccard']
    """
    ids = [pa.field("doc_a", id_type, nullable=False), pa.field("doc_b", id_type, nullable=False)]
    if method == "simhash":
        return pa.schema(
            [*ids, pa.field("hamming", pa.int32()), pa.field("similarity", pa.float64())]
        )
    return pa.schema([*ids, pa.field("jaccard", pa.float64())])


def write_clusters(pairs_path: Path, clusters_path: Path) -> dict[str, int]:
    """Connected components of the written pairs -> ``clusters.parquet``; counts."""
    table = pq.read_table(pairs_path, columns=["doc_a", "doc_b"])
    a = table.column("doc_a").to_numpy()
    b = table.column("doc_b").to_numpy()
    labels = components(a, b) if len(a) else {}
    ids = np.array(list(labels.keys()), dtype=a.dtype if len(a) else object)
    roots = np.array(list(labels.values()), dtype=ids.dtype)
    if len(roots):
        _, root_index, sizes = np.unique(roots, return_inverse=True, return_counts=True)
    else:
        root_index = sizes = np.zeros(0, dtype=np.int64)
    out = pa.table(
        {
            "doc_id": pa.array(ids, type=table.schema.field("doc_a").type),
            "cluster_id": pa.array(roots, type=table.schema.field("doc_a").type),
            "cluster_size": pa.array(
                np.asarray(sizes)[root_index] if len(roots) else [], type=pa.int64()
            ),
        }
    )
    pq.write_table(out, clusters_path)
    return {
        "pairs": table.num_rows,
        "clustered_docs": len(ids),
        "clusters": len(sizes),
        "largest_cluster": int(max(sizes)) if len(roots) else 0,
    }


def search_parameters(
    method: str, shingle: str, k: int, cap: int | None, has_weights: bool
) -> dict[str, Any]:
    """The ``parameters`` of a summary that both methods report."""
    return {"method": method, "shingle": shingle, "k": k, "max_bucket": cap, "weights": has_weights}


def minhash_parameters(lsh: LshOptions, params: BandParams) -> dict[str, Any]:
    """The ``parameters`` of a MinHash search: threshold, signature and banding."""
    return {
        "threshold": params.threshold,
        **lsh.signature(),
        **{f"banding_{key}": value for key, value in params.as_dict().items()},
    }


def simhash_parameters(h: int) -> dict[str, Any]:
    """The ``parameters`` of a SimHash search: the Hamming distance and the width."""
    return {"max_hamming_distance": h, "fingerprint_bits": FINGERPRINT_BITS}


def report_search(stats: dict[str, Any], in_driver: bool) -> None:
    """The status lines after the search: where it ran, and the candidates verified."""
    if in_driver:
        status(f"[driver] {stats['sets']} docs: searched in the driver")
    status(
        f"[candidates] {stats.get('candidate_pairs', 0)} candidate pairs; "
        "verifying, writing pairs and clusters"
    )


def write_near_duplicates(
    config: NearDuplicatesConfig,
    write_pairs: Callable[[Path], object],
    search_stats: dict[str, Any],
    parameters: dict[str, Any],
    start: float,
) -> dict[str, Any]:
    """``pairs.parquet`` (``write_pairs(path)``), ``clusters.parquet`` and
    ``summary.json`` into ``--out``, all or nothing; returns the summary.

    Args:
        search_stats: the search's counts, with its ``timings_s``.
        parameters: the summary's ``parameters``.
        start: when the job started (``time.perf_counter()``), for the total time.
    """
    with atomic_output_dir(config.out) as staging:
        write_start = time.perf_counter()
        write_pairs(staging / "pairs.parquet")
        cluster_counts = write_clusters(staging / "pairs.parquet", staging / "clusters.parquet")
        stats = dict(search_stats)
        timings = stats.pop("timings_s")
        timings["expand_write_and_cluster"] = round(time.perf_counter() - write_start, 3)
        timings["total"] = round(time.perf_counter() - start, 3)
        summary = {
            "command": "near-duplicates",
            "docs": config.docs,
            "parameters": parameters,
            "counts": {**cluster_counts, **stats},
            **bucket_report(stats),
            "clusters_method": CLUSTERS_METHOD,
            "timings_s": timings,
        }
        write_summary(staging, summary, "near-duplicates", config.input_paths())
    return summary
