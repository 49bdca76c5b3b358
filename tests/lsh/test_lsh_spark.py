"""Similar users, SimHash and near duplicates on a real local Spark (vs brute force)."""

from __future__ import annotations

import hashlib
import itertools
import json
import re
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from sparkeval.cli import run_argv
from sparkeval.errors import ConfigError, InputError
from sparkeval.lsh.banding import choose_bands
from sparkeval.lsh.clusters import components
from sparkeval.lsh.minhash import MinHasher
from sparkeval.lsh.permuted_tables import block_layout
from sparkeval.lsh.simhash import check_distance, simhash_of, similar_fingerprints
from sparkeval.lsh.similar import similar_sets

pytestmark = pytest.mark.spark


def _brute_force(sets: dict, threshold: Fraction) -> dict[tuple, Fraction]:
    out = {}
    for a, b in itertools.combinations(sorted(sets), 2):
        sa, sb = set(sets[a]), set(sets[b])
        if not sa or not sb:
            continue
        j = Fraction(len(sa & sb), len(sa | sb))
        if j >= threshold:
            out[(a, b)] = j
    return out


def _random_user_sets(seed: int) -> dict[int, list[int]]:
    rng = np.random.default_rng(seed)
    sets: dict[int, list[int]] = {}
    for u in range(150):
        if u % 6 == 5:  # an edited copy of the previous user
            base = list(sets[u - 1])
            if rng.random() < 0.5 and len(base) > 1:
                base = base[:-1]
            sets[u] = base
        else:
            sets[u] = [int(x) for x in rng.choice(25, rng.integers(1, 9), replace=False)]
    sets[500] = [1, 2, 3, 4, 5]  # exactly 4/5 with the next one
    sets[501] = [1, 2, 3, 4]
    sets[502] = [1, 2, 3, 4]  # identical to 501
    sets[503] = [1, 2, 3, 4]  # identical to 501
    return sets


@pytest.mark.parametrize("threshold", ["0.8", "0.5"])
def test_similar_sets_equal_brute_force(spark, threshold):
    sets = _random_user_sets(1)
    df = spark.createDataFrame([(k, v) for k, v in sets.items()], "id long, items array<int>")
    params = choose_bands(threshold, 128, recall=0.999)
    res = similar_sets(df, threshold, MinHasher(128, 1), params, max_bucket=None)
    got = {(r.a, r.b): r.jaccard for r in res.pairs.collect()}
    res.release()
    expected = _brute_force(sets, Fraction(threshold))
    assert (500, 501) in expected and expected[(500, 501)] == Fraction(4, 5)
    assert (501, 503) in got and got[(501, 503)] == 1.0
    assert set(got) == set(expected)
    for key, value in expected.items():
        assert got[key] == float(value)


def test_similar_users_command_outputs_and_determinism(spark, tmp_path):
    sets = _random_user_sets(2)
    sets[9999] = [7]  # a user with a single item
    rows = [
        (f"u{u:04d}", item, float(len(items) - r))
        for u, items in sets.items()
        for r, item in enumerate(items)
    ]
    run_path = tmp_path / "run.parquet"
    pd.DataFrame(rows, columns=["user_id", "item_id", "score"]).to_parquet(run_path)
    outs = []
    for i in range(2):
        out = tmp_path / f"out{i}"
        argv = [
            "similar-users",
            "--run",
            str(run_path),
            "--threshold",
            "0.8",
            "--out",
            str(out),
            "--seed",
            "3",
            "--bands",
            "16",
            "--rows",
            "4",
            "--master",
            "local[2]",
        ]
        assert run_argv(argv) == 0
        outs.append(out)
    a = pd.read_parquet(outs[0] / "pairs.parquet").sort_values(["user_a", "user_b"])
    b = pd.read_parquet(outs[1] / "pairs.parquet").sort_values(["user_a", "user_b"])
    pd.testing.assert_frame_equal(a.reset_index(drop=True), b.reset_index(drop=True))
    expected = _brute_force({f"u{u:04d}": v for u, v in sets.items()}, Fraction(4, 5))
    got = {(r.user_a, r.user_b): r.jaccard for r in a.itertuples()}
    assert set(got) == set(expected)
    assert all(u < v for u, v in got)
    summary = json.loads((outs[0] / "summary.json").read_text())
    assert summary["counts"]["pairs"] == len(expected)
    assert summary["parameters"]["banding_bands"] == 16
    assert summary["estimated_recall_at_threshold"] == pytest.approx(1 - (1 - 0.8**4) ** 16)
    assert summary["largest_bucket"] >= 2
    counts = summary["counts"]
    listed = counts["users"] - counts["users_with_empty_list"]
    assert summary["candidates_per_user"] == round(counts["candidate_pairs"] / listed, 3)
    assert (outs[0] / "_SUCCESS").exists()


def test_top_k_cut_uses_score_then_item_desc(spark, tmp_path):
    # user a: scores tie for items 1, 2, 3 -> top 2 are items 3 and 2 (item id desc)
    rows = [
        ("a", 1, 1.0),
        ("a", 2, 1.0),
        ("a", 3, 1.0),
        ("b", 3, 5.0),
        ("b", 2, 4.0),
        ("b", 9, 0.1),
    ]
    run_path = tmp_path / "run.csv"
    pd.DataFrame(rows, columns=["query_id", "doc_id", "score"]).to_csv(run_path, index=False)
    out = tmp_path / "out"
    argv = [
        "similar-users",
        "--run",
        str(run_path),
        "--threshold",
        "1",
        "--k",
        "2",
        "--out",
        str(out),
        "--master",
        "local[2]",
    ]
    run_argv(argv)
    pairs = pd.read_parquet(out / "pairs.parquet")
    assert pairs.to_dict("records") == [
        {"run_id": "run", "user_a": "a", "user_b": "b", "jaccard": 1.0}
    ]


def test_similar_users_reads_a_trec_run(spark, tmp_path):
    # a = {d1..d5}, b = {d1..d4}: Jaccard 4/5 = 0.8 (threshold included); c shares nothing
    lines = [f"a Q0 d{i} {i} {10 - i} tagA" for i in range(1, 6)]
    lines += [f"b Q0 d{i} {i} {10 - i} tagA" for i in range(1, 5)]
    lines += ["c Q0 d8 1 2.0 tagA", "c Q0 d9 2 1.0 tagA"]
    run_path = tmp_path / "run.txt"
    run_path.write_text("\n".join(lines) + "\n")
    out = tmp_path / "out"
    argv = ["similar-users", "--run", str(run_path), "--threshold", "0.8", "--out", str(out)]
    argv = [*argv, "--master", "local[2]"]
    assert run_argv(argv) == 0
    pairs = pd.read_parquet(out / "pairs.parquet")  # the run of the file's tag
    assert pairs.to_dict("records") == [
        {"run_id": "tagA", "user_a": "a", "user_b": "b", "jaccard": 0.8}
    ]

    run_path.write_text("a Q0 d1 1 3.0 tagA\na Q0 d2 2 three tagA\n")
    argv = [*argv, "--overwrite", "--master", "local[2]"]
    with pytest.raises(InputError, match=r"run.txt:2: malformed line 'a Q0 d2 2 three tagA'"):
        run_argv(argv)


def test_bad_parameters_raise_config_errors(spark, tmp_path):
    run_path = tmp_path / "run.parquet"
    pd.DataFrame({"query_id": [1, 1], "doc_id": [1, 2], "score": [1.0, 0.5]}).to_parquet(run_path)

    def call(*extra):
        argv = [
            "similar-users",
            "--run",
            str(run_path),
            "--out",
            str(tmp_path / "o"),
            "--master",
            "local[2]",
            *extra,
        ]
        return run_argv(argv)

    with pytest.raises(ConfigError, match=r"threshold must be in \(0, 1\]"):
        call("--threshold", "1.2")
    with pytest.raises(ConfigError, match="exceeds num_perm"):
        call("--threshold", "0.8", "--num-perm", "32", "--bands", "8", "--rows", "5")
    with pytest.raises(ConfigError, match="max_bucket"):
        call("--threshold", "0.8", "--max-bucket", "1")
    with pytest.raises(ConfigError, match="key 'num_perm': expected a whole number >= 1"):
        call("--threshold", "0.5", "--num-perm", "0")
    dup = tmp_path / "dup.parquet"
    pd.DataFrame({"query_id": [1, 1], "doc_id": [4, 4], "score": [1.0, 0.5]}).to_parquet(dup)
    argv = [
        "similar-users",
        "--run",
        str(dup),
        "--threshold",
        "0.5",
        "--out",
        str(tmp_path / "o2"),
        "--master",
        "local[2]",
    ]
    with pytest.raises(InputError, match="item 4 appears 2 times in the list of user 1"):
        run_argv(argv)


def test_max_bucket_cap_is_reported(spark):
    # 30 distinct sets sharing items 0..9 plus one own item: buckets of up to 30 sets
    sets = {u: [*range(10), 100 + u] for u in range(30)}
    df = spark.createDataFrame(list(sets.items()), "id long, items array<int>")
    res = similar_sets(
        df, 0.8, MinHasher(64, 1), choose_bands(0.8, 64, bands=8, rows=8), max_bucket=5
    )
    stats = res.stats
    assert stats["largest_bucket"] > 5
    assert stats["skipped_buckets"] >= 1
    assert stats["skipped_pairs"] > 0
    res.release()


def _reference_simhash(shingles, weights=None) -> int:
    """Straightforward SimHash: per-bit weighted votes of BLAKE2b-64 shingle hashes."""
    votes = [0.0] * 64
    for n, s in enumerate(shingles):
        h = int.from_bytes(hashlib.blake2b(s.encode("utf-8"), digest_size=8).digest(), "little")
        w = 1.0 if weights is None else weights[n]
        for bit in range(64):
            votes[bit] += w if (h >> bit) & 1 else -w
    return sum(1 << bit for bit in range(64) if votes[bit] > 0)


def test_simhash_fingerprints_equal_reference():
    rng = np.random.default_rng(5)
    docs = [[f"s{x}" for x in rng.integers(0, 40, rng.integers(0, 30))] for _ in range(60)]
    weights = [list(rng.random(len(d)) * 3) for d in docs]
    assert [int(x) for x in simhash_of(docs)] == [_reference_simhash(d) for d in docs]
    assert [int(x) for x in simhash_of(docs, weights)] == [
        _reference_simhash(d, w) for d, w in zip(docs, weights, strict=True)
    ]


def test_blocks_cover_64_bits():
    for b in (1, 2, 9, 12, 64):
        blocks = block_layout(b)
        assert len(blocks) == b
        assert sum(w for _, w in blocks) == 64
        assert [s for s, _ in blocks] == list(
            itertools.accumulate([0] + [w for _, w in blocks[:-1]])
        )
    with pytest.raises(ConfigError, match="Hamming"):
        check_distance(64)


@pytest.mark.parametrize("h", [0, 4, 9])
def test_permuted_table_search_equals_brute_force(spark, h):
    rng = np.random.default_rng(h)
    base = rng.integers(-(2**63), 2**63 - 1, 40, dtype=np.int64)
    fps = []
    for i in range(240):
        f = int(base[i % 40]) & (2**64 - 1)
        for bit in rng.choice(64, rng.integers(0, 14), replace=False):
            f ^= 1 << int(bit)
        fps.append(f - 2**64 if f >= 2**63 else f)
    df = spark.createDataFrame(list(enumerate(fps)), "id long, fp long")
    res = similar_fingerprints(df, h)
    got = {(r.a, r.b): r.hamming for r in res.pairs.collect()}
    res.release()
    expected = {}
    for a, b in itertools.combinations(range(len(fps)), 2):
        d = bin((fps[a] ^ fps[b]) & (2**64 - 1)).count("1")
        if d <= h:
            expected[(a, b)] = d
    assert got == expected


def _corpus(seed: int, docs: int = 150, words: int = 300, copies: int = 40):
    rng = np.random.default_rng(seed)
    vocab = [f"w{i}" for i in range(3000)]
    rows, planted = [], []
    for d in range(docs):
        rows.append((d, " ".join(rng.choice(vocab, words))))
    for c in range(copies):
        src = int(rng.integers(0, docs))
        text = rows[src][1].split()
        for pos in rng.choice(words, int(rng.integers(1, 3)), replace=False):
            text[pos] = "edit" + str(c)
        rows.append((10_000 + c, " ".join(text)))
        planted.append((src, 10_000 + c))
    return rows, planted


def _word_shingles(text: str, k: int) -> list[str]:
    words = [w for w in re.split(r"[^\w]+", text.lower()) if w]
    return [" ".join(words[i : i + k]) for i in range(max(len(words) - k, 0) + 1)]


def test_near_duplicates_simhash_recall_on_planted_copies(spark, tmp_path):
    rows, planted = _corpus(11)
    path = tmp_path / "docs.parquet"
    pd.DataFrame(rows, columns=["doc_id", "text"]).to_parquet(path)
    out = tmp_path / "nd"
    h = 10
    argv = [
        "near-duplicates",
        "--docs",
        str(path),
        "--method",
        "simhash",
        "--threshold",
        str(h),
        "--k",
        "3",
        "--out",
        str(out),
        "--master",
        "local[2]",
    ]
    assert run_argv(argv) == 0
    pairs = pd.read_parquet(out / "pairs.parquet")
    got = {(r.doc_a, r.doc_b): r.hamming for r in pairs.itertuples()}
    # every reported pair is verified: recompute fingerprints independently
    fp = {d: _reference_simhash(_word_shingles(t, 3)) for d, t in rows}
    for (a, b), d in got.items():
        assert bin(fp[a] ^ fp[b]).count("1") == d <= h
    # and every pair within h is reported
    within = {
        (a, b)
        for a, b in itertools.combinations(sorted(fp), 2)
        if bin(fp[a] ^ fp[b]).count("1") <= h
    }
    assert set(got) == within
    recall = np.mean([tuple(sorted(p)) in got for p in planted])
    assert recall >= 0.95
    clusters = pd.read_parquet(out / "clusters.parquet")
    assert set(clusters["doc_id"]) == {x for p in got for x in p}


def test_near_duplicates_minhash_pairs_and_clusters(spark, tmp_path):
    rows, _planted = _corpus(12, docs=60, words=80, copies=10)
    path = tmp_path / "docs.parquet"
    pd.DataFrame(rows, columns=["doc_id", "text"]).to_parquet(path)
    out = tmp_path / "nd"
    argv = [
        "near-duplicates",
        "--docs",
        str(path),
        "--method",
        "minhash",
        "--threshold",
        "0.7",
        "--k",
        "2",
        "--out",
        str(out),
        "--master",
        "local[2]",
    ]
    assert run_argv(argv) == 0
    got = {
        (r.doc_a, r.doc_b): r.jaccard for r in pd.read_parquet(out / "pairs.parquet").itertuples()
    }
    sh = {d: set(_word_shingles(t, 2)) for d, t in rows}
    expected = _brute_force(sh, Fraction(7, 10))
    assert set(got) == set(expected)
    for key, value in expected.items():
        assert got[key] == pytest.approx(float(value), abs=1e-15)
    clusters = pd.read_parquet(out / "clusters.parquet")
    labels = components(np.array([a for a, _ in expected]), np.array([b for _, b in expected]))
    assert dict(zip(clusters["doc_id"], clusters["cluster_id"], strict=True)) == labels


def test_components_union_find_vs_scipy():
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    rng = np.random.default_rng(0)
    a, b = rng.integers(0, 300, 200), rng.integers(0, 300, 200)
    labels = components(a, b)
    nodes = sorted(labels)
    index = {n: i for i, n in enumerate(nodes)}
    graph = coo_matrix(
        (np.ones(len(a)), ([index[x] for x in a], [index[x] for x in b])),
        shape=(len(nodes), len(nodes)),
    )
    _, comp = connected_components(graph, directed=False)
    for x in nodes:
        for y in nodes[:50]:
            assert (labels[x] == labels[y]) == (comp[index[x]] == comp[index[y]])
    assert all(labels[x] == min(n for n in nodes if labels[n] == labels[x]) for x in nodes[:40])


def test_permuted_table_search_with_a_cap_reports_each_pair_once(spark):
    # 40 fingerprints agree on the low 32 bits and differ above: the tables keyed on
    # the low blocks hold one run of 40 > cap 10, skipped and counted; the pairs
    # within 3 bits are still reported (from the other tables) and only once
    rng = np.random.default_rng(8)
    high = [int(x) for x in rng.integers(0, 2**31, 20, dtype=np.uint64)]
    fps = set()
    for x in high:
        fps.add(x << 32 | 12345)
        fps.add((x ^ 1) << 32 | 12345)  # one bit apart
    fps_list = sorted(fps)
    signed = [f - 2**64 if f >= 2**63 else f for f in fps_list]
    df = spark.createDataFrame(list(enumerate(signed)), "id long, fp long")
    res = similar_fingerprints(df, 3, max_bucket=10)
    got = [(r.a, r.b, r.hamming) for r in res.pairs.collect()]
    stats = dict(res.stats)
    res.release()
    assert stats["skipped_buckets"] >= 1
    assert len(got) == len({(a, b) for a, b, _ in got})
    expected = {
        (a, b): bin(fps_list[a] ^ fps_list[b]).count("1")
        for a, b in itertools.combinations(range(len(fps_list)), 2)
        if bin(fps_list[a] ^ fps_list[b]).count("1") <= 3
    }
    assert {(a, b): d for a, b, d in got} == expected
