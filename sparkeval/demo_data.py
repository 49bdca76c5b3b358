"""A realistic synthetic test collection, generated with a fixed seed.

Every query has a pool of documents with a latent grade 0..3 (most are 0).  A
random part of the pool is judged: those docs go into the qrels (a few with the
grade -1, "pooled but not judged"); the rest are unjudged.  Runs of decreasing
quality score every doc as ``quality * latent grade + noise``, rounded to two
decimals so exact score ties occur, and retrieve the top ``depth`` docs.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

#: run name -> weight of the latent grade in its score (higher is better)
RUN_QUALITY = {"strong": 1.6, "medium": 0.9, "weak": 0.35}


@dataclass(frozen=True)
class DemoPaths:
    qrels: Path
    runs: tuple[Path, ...]


def generate(
    directory: Path,
    queries: int = 200,
    pool: int = 400,
    depth: int = 100,
    judged_share: float = 0.35,
    seed: int = 7,
) -> DemoPaths:
    """Write ``qrels.txt`` and ``run_<name>.txt`` (TREC text) into ``directory``."""
    rng = np.random.default_rng(seed)
    directory.mkdir(parents=True, exist_ok=True)
    grades = rng.choice(4, size=(queries, pool), p=[0.90, 0.06, 0.03, 0.01])
    judged = rng.random((queries, pool)) < judged_share
    judged |= grades > 0  # most relevant docs were pooled ...
    judged &= rng.random((queries, pool)) > 0.04  # ... but a few escaped judging
    pooled_unjudged = judged & (rng.random((queries, pool)) < 0.02)
    qids = [f"q{q + 1:03d}" for q in range(queries)]
    docnos = [f"doc-{d:05d}" for d in range(pool * 3)]

    qrels_path = directory / "qrels.txt"
    with qrels_path.open("w") as out:
        for q in range(queries):
            offset = (q * 7) % (pool * 2)  # queries share part of the collection
            for d in np.flatnonzero(judged[q]):
                grade = -1 if pooled_unjudged[q, d] else int(grades[q, d])
                out.write(f"{qids[q]} 0 {docnos[offset + d]} {grade}\n")

    run_paths = []
    for name, quality in RUN_QUALITY.items():
        path = directory / f"run_{name}.txt"
        noise = rng.normal(0.0, 1.0, size=(queries, pool))
        scores = np.round(quality * grades + noise, 2)
        with path.open("w") as out:
            for q in range(queries):
                offset = (q * 7) % (pool * 2)
                top = np.argsort(-scores[q], kind="stable")[:depth]
                for rank, d in enumerate(top, start=1):
                    out.write(
                        f"{qids[q]} Q0 {docnos[offset + d]} {rank} {scores[q, d]:.2f} {name}\n"
                    )
        run_paths.append(path)
    return DemoPaths(qrels_path, tuple(run_paths))
