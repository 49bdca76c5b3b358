"""Permuted-table Hamming search: exact against brute force, each pair reported once."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from sparkeval.lsh.permuted_tables import (
    block_layout,
    choose_blocks,
    key_bits,
    search_table,
    tables_of,
)


def _clustered(seed: int, centres: int = 30, n: int = 200, max_flips: int = 14) -> np.ndarray:
    """Distinct fingerprints near a few centres: many pairs at every distance."""
    rng = np.random.default_rng(seed)
    base = [int(x) for x in rng.integers(0, 2**63, centres, dtype=np.uint64)]
    out = set()
    for i in range(n):
        f = base[i % centres] << 1 | int(rng.integers(0, 2))
        for bit in rng.choice(64, int(rng.integers(0, max_flips)), replace=False):
            f ^= 1 << int(bit)
        out.add(f)
    return np.array(sorted(out), dtype=np.uint64)


def _brute_force(fps: np.ndarray, h: int) -> dict[tuple[int, int], int]:
    pairs = {}
    for a, b in itertools.combinations(fps.tolist(), 2):
        d = bin(a ^ b).count("1")
        if d <= h:
            pairs[(min(a, b), max(a, b))] = d
    return pairs


def _search_all(fps, blocks, h, cap=None, first_only=True):
    layout = block_layout(blocks)
    found: list[tuple[int, int, int]] = []
    results = [search_table(fps, layout, t, h, cap, first_only) for t in tables_of(blocks, h)]
    for r in results:
        for a, b, d in zip(r.a.tolist(), r.b.tolist(), r.hamming.tolist(), strict=True):
            found.append((min(a, b), max(a, b), d))
    return found, results


@pytest.mark.parametrize("h", [0, 1, 3, 8, 12])
def test_every_block_count_finds_exactly_the_pairs_once(h):
    fps = _clustered(h)
    expected = _brute_force(fps, h)
    assert expected or h == 0, "the clustered sample must hold pairs within h"
    for blocks in sorted({h + 1, h + 2, h + 3, choose_blocks(fps, h)}):
        found, _ = _search_all(fps, blocks, h)
        keys = [(a, b) for a, b, _ in found]
        assert len(keys) == len(set(keys)), f"a pair reported twice with {blocks} blocks"
        assert {(a, b): d for a, b, d in found} == expected


def test_key_width_grows_with_blocks():
    # h = 8: one 7-bit block per table with 9 blocks, 20-bit keys with 12 blocks
    assert (len(tables_of(9, 8)), key_bits(block_layout(9), 8)) == (9, 7)
    assert (len(tables_of(12, 8)), key_bits(block_layout(12), 8)) == (495, 20)


def test_choose_blocks_widens_keys_for_many_fingerprints():
    rng = np.random.default_rng(3)
    many = rng.integers(0, 2**64 - 1, 200_000, dtype=np.uint64)
    assert choose_blocks(many, 8) > 9
    assert choose_blocks(many[:10], 8) >= 9


def test_cap_skips_runs_and_counts_them():
    # 40 fingerprints that agree on the low 32 bits share a key in the tables of
    # the low blocks: with a cap of 10 those runs are skipped and counted
    rng = np.random.default_rng(5)
    high = rng.integers(0, 2**32, 40, dtype=np.uint64) << np.uint64(32)
    fps = np.unique(high | np.uint64(12345))
    h = 3
    found_all, _ = _search_all(fps, 4, h)
    found_cap, results = _search_all(fps, 4, h, cap=10, first_only=False)
    assert sum(r.skipped_runs for r in results) >= 1
    assert sum(r.skipped_members for r in results) >= 40
    assert set(found_cap) <= set(found_all)
    assert max(r.largest_run for r in results) == len(fps)
