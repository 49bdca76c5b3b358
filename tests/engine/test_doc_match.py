"""Matching run rows to judgements (:mod:`sparkeval.engine.worker.doc_match`): fingerprints and
their exact fallback give the same answers, also when fingerprints collide."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from sparkeval.engine.worker import doc_match
from sparkeval.engine.worker.doc_match import DocMatch, doc_id_hashes, match_docs


def _expected(run_docs, qrels_docs, run_query, qrels_query, run_ranking) -> DocMatch:
    """The answer by plain Python dictionaries."""
    judged: dict[tuple[int, str], int] = {}
    for row, key in enumerate(zip(qrels_query.tolist(), qrels_docs, strict=True)):
        if key in judged:
            return DocMatch(None, qrels_duplicate=row)
        judged[key] = row
    seen: set[tuple[int, str]] = set()
    for row, key in enumerate(zip(run_ranking.tolist(), run_docs, strict=True)):
        if key in seen:
            return DocMatch(None, run_duplicate=row)
        seen.add(key)
    pairs = zip(run_query.tolist(), run_docs, strict=True)
    return DocMatch(np.array([judged.get(key, -1) for key in pairs], np.int64))


def _same(found: DocMatch, expected: DocMatch) -> None:
    assert found.qrels_duplicate == expected.qrels_duplicate
    assert found.run_duplicate == expected.run_duplicate
    if expected.qrels_row is None:
        assert found.qrels_row is None
    else:
        np.testing.assert_array_equal(found.qrels_row, expected.qrels_row)


def _case(seed: int, duplicate: str | None = None):
    """Random rankings of 30 queries (one run) and their judgements."""
    rng = np.random.default_rng(seed)
    run_docs, run_query, qrels_docs, qrels_query = [], [], [], []
    for q in range(30):
        docs = rng.choice(200, size=int(rng.integers(0, 25)), replace=False)
        run_docs += [f"doc-{d}" + "x" * int(d % 13) for d in docs]
        run_query += [q] * len(docs)
        judged = rng.choice(200, size=int(rng.integers(0, 20)), replace=False)
        qrels_docs += [f"doc-{d}" + "x" * int(d % 13) for d in judged]
        qrels_query += [q] * len(judged)
    if duplicate == "qrels":
        qrels_docs.append(qrels_docs[3])
        qrels_query.append(qrels_query[3])
    if duplicate == "run":
        run_docs.insert(10, run_docs[4])
        run_query.insert(10, run_query[4])
    run_query_codes = np.array(run_query, np.int64)
    return (
        run_docs,
        qrels_docs,
        run_query_codes,
        np.array(qrels_query, np.int64),
        run_query_codes,  # one run: the ranking is the query
    )


def _arrays(run_docs, qrels_docs, *codes):
    # several chunks, the second a slice, to exercise offsets into shared buffers
    def chunked(values):
        half = len(values) // 2
        whole = pa.array(["pad", *values[half:]], pa.string())
        return pa.chunked_array([pa.array(values[:half], pa.string()), whole.slice(1)])

    return (chunked(run_docs), chunked(qrels_docs), *codes)


@pytest.mark.parametrize("duplicate", [None, "qrels", "run"])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_match_equals_dictionary_lookup(seed, duplicate):
    case = _case(seed, duplicate)
    _same(match_docs(*_arrays(*case)), _expected(*case))


@pytest.mark.parametrize(
    "weak_hash",
    [
        lambda docs: np.zeros(len(docs), np.uint64),  # every doc collides
        lambda docs: np.array([len(d) for d in docs.to_pylist()], np.uint64),  # by length
    ],
    ids=["constant", "length"],
)
@pytest.mark.parametrize("duplicate", [None, "qrels", "run"])
def test_colliding_fingerprints_do_not_change_the_answer(monkeypatch, weak_hash, duplicate):
    monkeypatch.setattr(doc_match, "doc_id_hashes", weak_hash)
    case = _case(7, duplicate)
    _same(match_docs(*_arrays(*case)), _expected(*case))


def test_a_match_is_checked_on_the_strings(monkeypatch):
    # unique keys on both sides, but the run's "b" shares its fingerprint with the
    # judged "a": only the string comparison tells them apart
    monkeypatch.setattr(doc_match, "doc_id_hashes", lambda docs: np.zeros(len(docs), np.uint64))
    found = match_docs(
        pa.chunked_array([pa.array(["b"])]),
        pa.chunked_array([pa.array(["a"])]),
        np.array([0]),
        np.array([0]),
        np.array([0]),
    )
    np.testing.assert_array_equal(found.qrels_row, [-1])


def test_fingerprints_separate_lengths_bytes_and_padding():
    values = ["", "a", "a\x00", "b", "ab", "ba", "abcdefgh", "abcdefgh\x00", "é", "abcdefghi"]
    found = doc_id_hashes(pa.array(values))
    assert len(set(found.tolist())) == len(values)
    again = doc_id_hashes(pa.chunked_array([pa.array(values[5:]), pa.array(values[:5])]))
    np.testing.assert_array_equal(again, np.concatenate([found[5:], found[:5]]))
    large = doc_id_hashes(pa.array(values, pa.large_string()))
    np.testing.assert_array_equal(large, found)
    # a fingerprint does not depend on the other strings hashed with it
    alone = np.concatenate([doc_id_hashes(pa.array([v])) for v in values])
    np.testing.assert_array_equal(alone, found)


def test_long_doc_ids_are_matched_exactly():
    long_id = "d" * (doc_match.MAX_FINGERPRINT_BYTES + 1)
    assert doc_id_hashes(pa.array(["short", long_id])) is None
    run_docs, qrels_docs = [long_id, "x"], ["x", long_id]
    codes = np.array([0, 0])
    found = match_docs(*_arrays(run_docs, qrels_docs, codes, codes, codes))
    np.testing.assert_array_equal(found.qrels_row, [1, 0])


def test_blocks_of_rows_hash_like_one():
    values = [f"doc{i}" * (1 + i % 5) for i in range(doc_match._BLOCK_ROWS + 100)]
    whole = doc_id_hashes(pa.array(values))
    parts = np.concatenate([doc_id_hashes(pa.array([v])) for v in values[-150:]])
    np.testing.assert_array_equal(whole[-150:], parts)


def _shuffled_qrels(case, seed: int):
    """``case`` with its qrels rows in another order (queries no longer in run order)
    and judgements of queries the run does not have."""
    run_docs, qrels_docs, run_query, qrels_query, run_ranking = case
    qrels_docs = [*qrels_docs, "doc-1", "doc-2", "doc-1"]
    qrels_query = np.concatenate([qrels_query, [40, 40, 41]])
    order = np.random.default_rng(seed).permutation(len(qrels_docs))
    return run_docs, [qrels_docs[i] for i in order], run_query, qrels_query[order], run_ranking


def _two_runs(case):
    """``case``'s run twice, as two runs interleaved by query (rankings 2q and 2q + 1)."""
    run_docs, qrels_docs, run_query, qrels_query, _ = case
    docs, queries, rankings = [], [], []
    for q in np.unique(run_query).tolist():
        mine = [d for d, code in zip(run_docs, run_query.tolist(), strict=True) if code == q]
        for run in (0, 1):
            docs += mine if run == 0 else mine[::-1]
            queries += [q] * len(mine)
            rankings += [2 * q + run] * len(mine)
    return docs, qrels_docs, np.array(queries, np.int64), qrels_query, np.array(rankings, np.int64)


@pytest.mark.parametrize("shape", ["as given", "qrels shuffled", "two runs"])
@pytest.mark.parametrize("duplicate", [None, "qrels", "run"])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_chunks_of_queries_match_like_one_table(monkeypatch, seed, duplicate, shape):
    """With chunks of 8 run rows, batches of a few hundred rows are matched chunk by
    chunk (and a duplicate still sends them to the one table, which names it)."""
    monkeypatch.setattr(doc_match, "CHUNK_ROWS", 8)
    case = _case(seed, duplicate)
    if shape == "qrels shuffled":
        case = _shuffled_qrels(case, seed)
    elif shape == "two runs":
        case = _two_runs(case)
    one_table = []
    original = doc_match._match_all_keys
    monkeypatch.setattr(
        doc_match, "_match_all_keys", lambda *keys: one_table.append(1) or original(*keys)
    )
    _same(match_docs(*_arrays(*case)), _expected(*case))
    if duplicate is None:
        assert not one_table, "the chunks were not used"


@pytest.mark.parametrize("duplicate", [None, "qrels", "run"])
def test_chunks_with_colliding_fingerprints_give_the_same_answer(monkeypatch, duplicate):
    monkeypatch.setattr(doc_match, "CHUNK_ROWS", 8)
    monkeypatch.setattr(doc_match, "doc_id_hashes", lambda docs: np.zeros(len(docs), np.uint64))
    case = _shuffled_qrels(_case(7, duplicate), 7)
    _same(match_docs(*_arrays(*case)), _expected(*case))


def test_a_run_out_of_query_order_is_matched_in_one_table(monkeypatch):
    monkeypatch.setattr(doc_match, "CHUNK_ROWS", 8)
    run_docs, qrels_docs, run_query, qrels_query, _ = _case(4)
    order = np.random.default_rng(4).permutation(len(run_docs))
    case = ([run_docs[i] for i in order], qrels_docs, run_query[order], qrels_query,
            run_query[order])  # fmt: skip
    keys = np.arange(20, dtype=np.int64)
    descending = keys[::-1].copy()
    assert doc_match._match_keys_by_query(keys, keys, keys, keys, descending) is None
    assert doc_match._match_keys_by_query(keys, keys, keys, keys, keys) is not None
    _same(match_docs(*_arrays(*case)), _expected(*case))
