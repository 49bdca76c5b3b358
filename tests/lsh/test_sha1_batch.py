"""The numpy SHA-1 of many tokens at once against ``hashlib`` and datasketch.

Expected values: ``hashlib.sha1`` digests of the same bytes, and the signatures of
``datasketch.MinHash`` updated token by token with the same shingles.
"""

from __future__ import annotations

import hashlib
import random

import datasketch
import numpy as np
import pyarrow as pa
import pytest

from sparkeval.lsh.driver_sets import item_token_hashes
from sparkeval.lsh.minhash import MinHasher
from sparkeval.lsh.sha1_batch import sha1_prefixes, sha1_prefixes_of_text

#: lengths about the block boundaries of the padding (55 bytes fit one block, 56 need two)
EDGES = [0, 1, 54, 55, 56, 57, 63, 64, 65, 118, 119, 120, 128, 200, 300]


def _random_texts(rng: random.Random, n: int) -> list[str]:
    alphabet = "ab c\tZé東Ж\U0001f600"
    lengths = EDGES + [rng.randint(0, 140) for _ in range(n)]
    return ["".join(rng.choice(alphabet) for _ in range(k)) for k in lengths]


def _hashlib_prefix(text: str, width: int) -> int:
    return int.from_bytes(hashlib.sha1(text.encode("utf-8")).digest()[: width // 8], "little")


@pytest.mark.parametrize("width", [32, 64])
@pytest.mark.parametrize("kind", [pa.string(), pa.large_string()])
def test_prefixes_are_those_of_hashlib(width: int, kind: pa.DataType) -> None:
    rng = random.Random(width)
    texts = _random_texts(rng, 3000)
    values = pa.array(["skipped", *texts], kind).slice(1)  # an offset into the buffers
    found = sha1_prefixes_of_text(values, width)
    assert found.dtype == (np.uint32 if width == 32 else np.uint64)
    assert found.tolist() == [_hashlib_prefix(t, width) for t in texts]


def test_bytes_of_every_length_to_three_blocks() -> None:
    messages = [bytes(i % 251 for i in range(k)) for k in range(200)]
    data = np.frombuffer(b"".join(messages), dtype=np.uint8)
    offsets = np.concatenate([[0], np.cumsum([len(m) for m in messages])])
    expected = [int.from_bytes(hashlib.sha1(m).digest()[:4], "little") for m in messages]
    assert sha1_prefixes(data, offsets, 32).tolist() == expected
    assert sha1_prefixes(np.zeros(0, np.uint8), np.array([0]), 32).tolist() == []


@pytest.mark.parametrize("scheme", ["affine32", "affine64", "legacy"])
def test_signatures_of_text_items_are_those_of_datasketch(scheme: str) -> None:
    rng = random.Random(7)
    vocabulary = _random_texts(rng, 300)
    sets = [rng.sample(vocabulary, rng.randint(1, 40)) for _ in range(60)]
    items = pa.array(sorted(set(vocabulary)))
    code = {item: i for i, item in enumerate(items.to_pylist())}
    hasher = MinHasher(num_perm=32, seed=3, scheme=scheme)
    tokens = item_token_hashes(items, hasher)
    codes = np.array([code[x] for s in sets for x in s], dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum([len(s) for s in sets])])
    found = hasher.signatures_of_hashes(tokens[codes], offsets)
    for row, members in zip(found, sets, strict=True):
        m = datasketch.MinHash(num_perm=32, seed=3, scheme=scheme)
        for x in members:
            m.update(x.encode("utf-8"))
        assert row.tolist() == np.asarray(m.hashvalues).tolist()
