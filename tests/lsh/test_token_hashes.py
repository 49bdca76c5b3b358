"""MinHash token hashes computed in Spark SQL equal datasketch's, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest
from datasketch import MinHash

from sparkeval.lsh.banding import BandParams, band_keys
from sparkeval.lsh.minhash import SCHEMES, MinHasher
from sparkeval.lsh.similar import band_rows

pytestmark = pytest.mark.spark

SETS = {
    1: ["the cat sat", "cat sat on", "sat on the"],
    2: ["naïve café", "日本語 テキスト", "emoji 🙂 here", ""],
    3: ["the cat sat"],
    4: [],
    5: ["None", None, "x"],  # a null item is the token "None", as str(None) in Python
}


def _datasketch_signature(items: list, num_perm: int, seed: int, scheme: str) -> np.ndarray:
    m = MinHash(num_perm=num_perm, seed=seed, scheme=scheme)
    for item in items:
        m.update(str(item).encode("utf-8"))
    return np.asarray(m.hashvalues)


def _keys_by_id(df) -> dict:
    keys: dict = {}
    for row in df.collect():
        keys.setdefault(row[0], {})[row.band] = row.key
    return {k: [v[b] for b in sorted(v)] for k, v in keys.items()}


@pytest.mark.parametrize("scheme", SCHEMES)
def test_spark_hashed_strings_give_datasketch_band_keys(spark, scheme):
    hasher = MinHasher(num_perm=16, seed=3, scheme=scheme)
    params = BandParams(4, 4, 16, 0.8, 0.0, 0.0, "explicit")
    df = spark.createDataFrame(list(SETS.items()), "id long, items array<string>")
    got = _keys_by_id(band_rows(df, "id", "items", hasher, params))
    for doc, items in SETS.items():
        expected = band_keys(
            _datasketch_signature(items, 16, 3, scheme).reshape(1, -1).astype(hasher.dtype), 4, 4
        )[0]
        assert got[doc] == expected.tolist(), doc


def test_spark_hashed_integers_are_their_decimal_text(spark):
    hasher = MinHasher(num_perm=8, seed=1)
    params = BandParams(2, 4, 8, 0.8, 0.0, 0.0, "explicit")
    sets = {7: [1, -20, 3_000_000_000], 8: [5]}
    df = spark.createDataFrame(list(sets.items()), "id long, items array<long>")
    got = _keys_by_id(band_rows(df, "id", "items", hasher, params))
    for doc, items in sets.items():
        signature = _datasketch_signature(items, 8, 1, "affine32").reshape(1, -1)
        assert got[doc] == band_keys(signature.astype(np.uint32), 2, 4)[0].tolist()


def test_doubles_keep_pythons_spelling(spark):
    # str(2.0) is "2.0" and str(1e20) is "1e+20" (Spark would write 1.0E20): hashed in Python
    hasher = MinHasher(num_perm=8, seed=1)
    params = BandParams(2, 4, 8, 0.8, 0.0, 0.0, "explicit")
    items = [0.5, 2.0, 1e20]
    df = spark.createDataFrame([(1, items)], "id long, items array<double>")
    got = _keys_by_id(band_rows(df, "id", "items", hasher, params))
    signature = _datasketch_signature(items, 8, 1, "affine32").reshape(1, -1)
    assert got[1] == band_keys(signature.astype(np.uint32), 2, 4)[0].tolist()
