"""MinHash signatures vs datasketch, and the band choice (no Spark needed)."""

from __future__ import annotations

import datasketch
import numpy as np
import pytest

from sparkeval.errors import ConfigError
from sparkeval.lsh.banding import band_keys, choose_bands, s_curve
from sparkeval.lsh.minhash import SCHEMES, MinHasher


def _random_sets(seed: int) -> list[list[object]]:
    rng = np.random.default_rng(seed)
    sets: list[list[object]] = [
        [int(x) for x in rng.integers(0, 500, rng.integers(0, 40))] for _ in range(120)
    ]
    sets += [["héllo", "wörld", "x"], [], ["only"], [7, 7, 7]]
    return sets


def _datasketch_signature(items, num_perm: int, seed: int, scheme: str) -> np.ndarray:
    m = datasketch.MinHash(num_perm=num_perm, seed=seed, scheme=scheme)
    for x in items:
        m.update(str(x).encode("utf-8"))
    return m.hashvalues


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize(("num_perm", "seed"), [(128, 1), (33, 42), (1, 0)])
def test_signatures_equal_datasketch_bit_for_bit(scheme, num_perm, seed):
    sets = _random_sets(seed)
    ours = MinHasher(num_perm=num_perm, seed=seed, scheme=scheme).signatures_of(sets)
    for items, row in zip(sets, ours, strict=True):
        expected = _datasketch_signature(items, num_perm, seed, scheme)
        assert row.dtype == expected.dtype
        np.testing.assert_array_equal(row, expected)


def test_default_matches_datasketch_default_constructor():
    items = ["a", "b", "c"]
    m = datasketch.MinHash(num_perm=64, seed=7)
    m.update_batch([s.encode("utf-8") for s in items])
    np.testing.assert_array_equal(MinHasher(64, 7).signatures_of([items])[0], m.hashvalues)


def test_permutations_equal_datasketch():
    for scheme in SCHEMES:
        a, b = MinHasher(16, 5, scheme).permutations
        ref = datasketch.MinHash(num_perm=16, seed=5, scheme=scheme).permutations
        np.testing.assert_array_equal(a, ref[0])
        np.testing.assert_array_equal(b, ref[1])


def test_empty_set_policy_is_datasketch_untouched_minhash():
    for scheme in SCHEMES:
        sig = MinHasher(8, 1, scheme).signatures_of([[], ["a"], []])
        empty = datasketch.MinHash(num_perm=8, seed=1, scheme=scheme).hashvalues
        np.testing.assert_array_equal(sig[0], empty)
        np.testing.assert_array_equal(sig[2], empty)


def test_chunking_does_not_change_values(monkeypatch):
    sets = _random_sets(3)
    full = MinHasher(128, 1).signatures_of(sets)
    monkeypatch.setattr("sparkeval.lsh.minhash._CHUNK_VALUES", 256)
    np.testing.assert_array_equal(MinHasher(128, 1).signatures_of(sets), full)


def test_bad_minhash_parameters():
    with pytest.raises(ConfigError, match="num_perm"):
        MinHasher(num_perm=0)
    with pytest.raises(ConfigError, match="scheme"):
        MinHasher(scheme="md5")
    with pytest.raises(ConfigError, match="seed"):
        MinHasher(seed=-1)


def test_s_curve_formula():
    # 1 - (1 - 0.8^7)^18 computed by hand: 0.8^7 = 0.2097152
    assert s_curve(0.8, 18, 7) == pytest.approx(1 - (1 - 0.2097152) ** 18, rel=1e-12)


def test_auto_bands_reach_recall_target_and_sit_below_threshold():
    for t in (0.5, 0.7, 0.8, 0.9):
        p = choose_bands(t, num_perm=128, recall=0.99)
        assert p.bands * p.rows <= 128
        assert 1 - (1 - t**p.rows) ** p.bands >= 0.99
        assert p.lsh_threshold < t
        # no (b, r) with more rows per band reaches the target (least wasted candidates)
        for r in range(p.rows + 1, 129):
            assert 1 - (1 - t**r) ** (128 // r) < 0.99


def test_explicit_bands_and_validation():
    p = choose_bands(0.8, num_perm=128, bands=18, rows=7)
    assert (p.bands, p.rows, p.chosen) == (18, 7, "explicit")
    with pytest.raises(ConfigError, match="exceeds num_perm"):
        choose_bands(0.8, num_perm=64, bands=10, rows=7)
    with pytest.raises(ConfigError, match=r"\(0, 1\]"):
        choose_bands(0.0)
    with pytest.raises(ConfigError, match=r"\(0, 1\]"):
        choose_bands(1.5)
    with pytest.raises(ConfigError, match="together"):
        choose_bands(0.8, bands=4)
    with pytest.raises(ConfigError, match="recall"):
        choose_bands(0.8, recall=1.0)


def test_band_keys_equal_iff_band_equal():
    rng = np.random.default_rng(0)
    sig = rng.integers(0, 2**32, size=(50, 12), dtype=np.uint64)
    sig[1, :4] = sig[0, :4]
    keys = band_keys(sig, bands=3, rows=4)
    assert keys[0, 0] == keys[1, 0]
    assert keys[0, 1] != keys[1, 1]
    assert len(np.unique(keys[:, 2])) == 50


@pytest.mark.parametrize("scheme", ["affine32", "affine64", "legacy"])
def test_signatures_travel_to_and_from_datasketch(scheme) -> None:
    """Our signatures as LeanMinHash bytes: datasketch reads them and estimates the same
    Jaccard as from its own MinHash; datasketch's bytes read back as our rows."""
    from sparkeval.lsh.minhash import from_lean_minhash_bytes, to_lean_minhash_bytes

    hasher = MinHasher(num_perm=64, seed=11, scheme=scheme)
    sets = [["a", "b", "c", "d"], ["a", "b", "c", "e"], []]
    ours = hasher.signatures_of(sets)
    leans = [datasketch.LeanMinHash.deserialize(b) for b in to_lean_minhash_bytes(ours, hasher)]
    theirs = []
    for items in sets:
        m = datasketch.MinHash(num_perm=64, seed=11, scheme=scheme)
        for item in items:
            m.update(str(item).encode())
        theirs.append(datasketch.LeanMinHash(m))
    assert leans[0].jaccard(leans[1]) == theirs[0].jaccard(theirs[1])
    assert all(
        (lean.hashvalues == t.hashvalues).all() for lean, t in zip(leans, theirs, strict=True)
    )
    blobs = []
    for lean in theirs:
        buffer = bytearray(lean.bytesize())
        lean.serialize(buffer)
        blobs.append(bytes(buffer))
    np.testing.assert_array_equal(from_lean_minhash_bytes(blobs, hasher), ours)
    with pytest.raises(ConfigError, match="expected seed 12"):
        from_lean_minhash_bytes(blobs, MinHasher(num_perm=64, seed=12, scheme=scheme))
