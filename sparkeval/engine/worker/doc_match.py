"""Match run rows to their judgements: which qrels row, if any, holds each (query, doc).

Docs are strings; the matching needs only equality, never order.  Two ways:

* **fingerprints** (tried first): a 64-bit hash of each doc id's bytes, computed with
  numpy over the Arrow string buffers, combined with the query (or ranking) code into
  one 64-bit key per row.  Hashing is several times cheaper than building a
  dictionary of all distinct doc ids.
* **exact codes**: a dictionary encoding of the run's and the qrels' doc ids together.

Equal strings always have equal fingerprints, so a fingerprint can only err by making
two different docs look equal.  Each conclusion drawn from fingerprints is therefore
either exact by construction or checked on the strings themselves:

* keys that are all distinct (no duplicate judgement, no doc twice in a ranking) are
  distinct docs;
* every run row matched to a qrels row is compared with it, query code and doc string;
* anything else (a key seen twice, a match whose strings differ) is settled again
  with exact codes, which also name the offending row.

Results are thus identical whichever way found them.

The keys are looked up in hash tables (pandas' index). When the run rows come in
query order, as files grouped by query give them, the lookups are made one chunk of
queries at a time (:func:`_match_keys_by_query`): a key holds its query, so it can only
meet keys of the same chunk, and tables of about :data:`CHUNK_ROWS` keys stay in the
processor's cache instead of one table of the whole batch.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sparkeval.engine.worker.string_codes import joint_codes

#: doc ids longer than this are matched with exact codes (bounds the padded blocks)
MAX_FINGERPRINT_BYTES = 256
#: rows hashed per block (a block is padded to its longest doc id)
_BLOCK_ROWS = 1 << 16
#: run rows per chunk of queries whose keys are looked up together
CHUNK_ROWS = 1 << 16
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


@dataclass(frozen=True)
class DocMatch:
    """The judgement of every run row, or the first duplicate that prevents it.

    Attributes:
        qrels_row: per run row, its qrels row (-1: not judged); None when a duplicate
            was found.
        qrels_duplicate: a qrels row whose (query, doc) an earlier qrels row holds.
        run_duplicate: a run row whose doc appears earlier in the same ranking.
    """

    qrels_row: np.ndarray | None
    qrels_duplicate: int | None = None
    run_duplicate: int | None = None


def _mix(z: np.ndarray) -> np.ndarray:
    """SplitMix64's finaliser: a bijection of uint64 that spreads every input bit."""
    z = (z ^ (z >> np.uint64(30))) * _MIX1
    z = (z ^ (z >> np.uint64(27))) * _MIX2
    return z ^ (z >> np.uint64(31))


def _string_buffers(chunk: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """(offsets, bytes) of a string chunk, as numpy views of its Arrow buffers."""
    width = np.int64 if pa.types.is_large_string(chunk.type) else np.int32
    _, offsets, data = chunk.buffers()
    offsets = np.frombuffer(offsets, width)[chunk.offset : chunk.offset + len(chunk) + 1]
    data = np.frombuffer(data, np.uint8) if data is not None else np.zeros(0, np.uint8)
    return offsets.astype(np.int64), data


def _block_fingerprints(offsets: np.ndarray, data: np.ndarray) -> np.ndarray:
    """Fingerprints of the strings between consecutive ``offsets`` (one block)."""
    n = len(offsets) - 1
    lengths = np.diff(offsets)
    h = _mix(lengths.astype(np.uint64) + _GOLDEN)
    width = -(-int(lengths.max(initial=0)) // 8) * 8
    if width == 0:
        return h
    # each string padded with zero bytes to ``width``, then read as 64-bit words
    padded = np.zeros((n, width), np.uint8)
    first, last = int(offsets[0]), int(offsets[-1])
    row_start = np.repeat(np.arange(n, dtype=np.int64) * width - offsets[:-1], lengths)
    padded.ravel()[row_start + np.arange(first, last)] = data[first:last]
    words = padded.view(np.uint64)
    for j in range(words.shape[1]):
        # only a string's own words count, so that the padding width does not
        h = np.where(lengths > 8 * j, _mix(h ^ words[:, j]), h)
    return h


def doc_id_hashes(docs: pa.Array | pa.ChunkedArray) -> np.ndarray | None:
    """A 64-bit hash of every string's bytes (and length); None when a string is longer
    than :data:`MAX_FINGERPRINT_BYTES`.

    Example:
        >>> f = doc_id_hashes(pa.array(["d1", "d2", "d1", ""]))
        >>> bool(f[0] == f[2]), bool(f[0] == f[1]), bool(f[3] == f[0])
        (True, False, False)
    """
    chunks = docs.chunks if isinstance(docs, pa.ChunkedArray) else [docs]
    out = []
    with np.errstate(over="ignore"):
        for chunk in chunks:
            if chunk.null_count:
                raise ValueError("doc ids must not be null")
            offsets, data = _string_buffers(chunk)
            if len(offsets) > 1 and int(np.diff(offsets).max()) > MAX_FINGERPRINT_BYTES:
                return None
            for at in range(0, len(chunk), _BLOCK_ROWS):
                out.append(_block_fingerprints(offsets[at : at + _BLOCK_ROWS + 1], data))
    return np.concatenate(out) if out else np.zeros(0, np.uint64)


def _combine(code: np.ndarray, fingerprint: np.ndarray) -> np.ndarray:
    """One 64-bit key (as int64) for a (code, doc fingerprint) pair."""
    with np.errstate(over="ignore"):
        return (_mix(code.astype(np.uint64) * _GOLDEN) ^ fingerprint).view(np.int64)


def _first_duplicate(keys: np.ndarray) -> int | None:
    """Index of the first key equal to an earlier one, or None."""
    import pandas as pd

    if len(keys) < 2 or pd.Index(keys).is_unique:
        return None
    return int(np.argmax(pd.Series(keys).duplicated().to_numpy()))


def match_docs(
    run_docs: pa.ChunkedArray,
    qrels_docs: pa.ChunkedArray,
    run_query: np.ndarray,
    qrels_query: np.ndarray,
    run_ranking: np.ndarray,
) -> DocMatch:
    """The qrels row of every run row, matching (query code, doc id).

    Args:
        run_docs, qrels_docs: the doc ids of the run rows and of the qrels rows.
        run_query, qrels_query: their query codes (equal codes: the same query).
        run_ranking: the ranking (run, query) code of every run row.

    Returns:
        A :class:`DocMatch`; its duplicates are reported by exact codes only.
    """
    run_fp = doc_id_hashes(run_docs)
    qrels_fp = doc_id_hashes(qrels_docs) if run_fp is not None else None
    if run_fp is not None and qrels_fp is not None:
        found = _match_keys(
            _combine(qrels_query, qrels_fp),
            _combine(run_ranking, run_fp),
            _combine(run_query, run_fp),
            qrels_query,
            run_query,
        )
        if found.qrels_row is not None and _checked(
            found.qrels_row, run_docs, qrels_docs, run_query, qrels_query
        ):
            return found
    # long doc ids, a repeated fingerprint or a match the strings deny: exact codes
    (run_doc, qrels_doc), names = joint_codes(run_docs, qrels_docs)
    n_docs = np.int64(max(len(names), 1))
    return _match_keys(
        qrels_query * n_docs + qrels_doc,
        run_ranking * n_docs + run_doc,
        run_query * n_docs + run_doc,
        qrels_query,
        run_query,
    )


def _match_keys(
    qrels_key: np.ndarray,
    ranking_key: np.ndarray,
    run_key: np.ndarray,
    qrels_query: np.ndarray,
    run_query: np.ndarray,
) -> DocMatch:
    """The match by (query, doc) keys: ``qrels_key`` per qrels row, ``ranking_key`` and
    ``run_key`` per run row, keyed by its ranking and by its query; ``qrels_query`` and
    ``run_query`` are the rows' query codes, which every key includes."""
    by_query = _match_keys_by_query(qrels_key, ranking_key, run_key, qrels_query, run_query)
    return by_query if by_query is not None else _match_all_keys(qrels_key, ranking_key, run_key)


def _match_all_keys(
    qrels_key: np.ndarray, ranking_key: np.ndarray, run_key: np.ndarray
) -> DocMatch:
    """:func:`_match_keys` with one table of all the keys (and the duplicates named)."""
    import pandas as pd  # here, not at import: the driver imports this module too

    index = pd.Index(qrels_key)
    if not index.is_unique:
        return DocMatch(None, qrels_duplicate=_first_duplicate(qrels_key))
    repeated = _first_duplicate(ranking_key)
    if repeated is not None:
        return DocMatch(None, run_duplicate=repeated)
    return DocMatch(index.get_indexer(run_key))


def _match_keys_by_query(
    qrels_key: np.ndarray,
    ranking_key: np.ndarray,
    run_key: np.ndarray,
    qrels_query: np.ndarray,
    run_query: np.ndarray,
) -> DocMatch | None:
    """:func:`_match_keys` one chunk of queries (about :data:`CHUNK_ROWS` run rows) at a
    time; None when the run rows are not in query order, the batch is small, or a chunk
    holds a key twice (:func:`_match_all_keys` then names the duplicate).

    Every key includes its row's query, and a chunk holds all the rows of its queries,
    so a chunk's keys can only equal keys of the same chunk: the matches, and the
    absence of duplicates, are those of one table of all the keys.
    """
    import pandas as pd

    if len(run_query) < 2 * CHUNK_ROWS or (run_query[1:] < run_query[:-1]).any():
        return None
    n_queries = int(max(run_query[-1], qrels_query.max(initial=0))) + 1
    narrow = np.uint16 if n_queries <= 1 << 16 else np.int64  # uint16: a radix sort
    qrels_order = np.argsort(qrels_query.astype(narrow), kind="stable")
    qrels_sorted = qrels_query[qrels_order]
    keys_sorted = qrels_key[qrels_order]
    # chunk ends: the query of every CHUNK_ROWS-th run row, then past the last query
    ends = np.append(np.unique(run_query[CHUNK_ROWS::CHUNK_ROWS]), n_queries)
    run_ends = np.searchsorted(run_query, ends)
    qrels_ends = np.searchsorted(qrels_sorted, ends)
    found = np.empty(len(run_key), dtype=np.int64)
    run_start = qrels_start = 0
    for run_end, qrels_end in zip(run_ends.tolist(), qrels_ends.tolist(), strict=True):
        index = pd.Index(keys_sorted[qrels_start:qrels_end])
        if not index.is_unique or not pd.Index(ranking_key[run_start:run_end]).is_unique:
            return None
        at = index.get_indexer(run_key[run_start:run_end])
        hit = at >= 0
        rows = np.full(len(at), -1, dtype=np.int64)
        rows[hit] = qrels_order[qrels_start + at[hit]]
        found[run_start:run_end] = rows
        run_start, qrels_start = run_end, qrels_end
    return DocMatch(found)


def _checked(qrels_row, run_docs, qrels_docs, run_query, qrels_query) -> bool:
    """Whether every run row matched to a qrels row has its query and doc id."""
    hits = np.flatnonzero(qrels_row >= 0)
    if not len(hits):
        return True
    if not np.array_equal(run_query[hits], qrels_query[qrels_row[hits]]):
        return False
    run_ids = run_docs.take(pa.array(hits))
    qrels_ids = qrels_docs.take(pa.array(qrels_row[hits]))
    return bool(pc.all(pc.equal(run_ids, qrels_ids)).as_py())
