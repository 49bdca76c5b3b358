"""Hamming search over 64-bit fingerprints with permuted tables (numpy, one process).

The scheme of Manku, Jain and Das Sarma (WWW 2007): cut the 64 bits into b blocks
of near-equal width. Two fingerprints that differ in at most h bits differ in at
most h blocks, so they agree exactly on at least t = b - h blocks. Build one table
for every choice of t blocks out of b (C(b, h) tables); a table's key is the bits of
its t blocks. A pair within distance h shares its key in at least one table, so
sorting each table by key and comparing the fingerprints inside each run of equal
keys finds every such pair: the search is exact, never approximate.

More blocks give wider keys (about 64 t / b bits) and so far fewer chance
candidates, at the price of more tables. With b = h + 1 (one block per table, the
plain pigeonhole split) h = 8 gives 7-bit keys: n^2 / 256 candidates per table,
hopeless beyond some ten thousand documents. With b = 12, h = 8 there are 495 tables
of 20-bit keys: at one million uniform fingerprints about 1.2 * 10^8 candidates in
all. :func:`choose_blocks` picks b from the candidate counts measured on a sample.

Each pair is reported by exactly one table, the *first* in the order of
``itertools.combinations(range(b), t)`` whose blocks all agree: that is the table
of the first t agreeing blocks, so a table can tell alone whether a pair is its own
(no shuffle to remove duplicates).

Example:
    >>> layout = block_layout(12)
    >>> len(layout), sum(w for _, w in layout)
    (12, 64)
    >>> len(tables_of(12, 8)), key_bits(layout, 8)
    (495, 20)
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from math import comb

import numpy as np

FINGERPRINT_BITS = 64
#: never build more tables than this (large distances fall back to fewer blocks)
MAX_TABLES = 4096
#: fingerprints sampled to measure the candidate rate of a block count
SAMPLE_SIZE = 20_000
#: relative cost of one candidate comparison against one row of one sorted table
PAIR_COST = 0.15


def block_layout(blocks: int) -> list[tuple[int, int]]:
    """``(start_bit, width)`` of ``blocks`` contiguous blocks, widths differing by <= 1."""
    if not 1 <= blocks <= FINGERPRINT_BITS:
        raise ValueError(f"blocks must be in [1, 64], got {blocks}")
    widths = [
        FINGERPRINT_BITS // blocks + (1 if i < FINGERPRINT_BITS % blocks else 0)
        for i in range(blocks)
    ]
    starts = np.concatenate([[0], np.cumsum(widths)[:-1]])
    return [(int(s), int(w)) for s, w in zip(starts, widths, strict=True)]


def tables_of(blocks: int, max_distance: int) -> list[tuple[int, ...]]:
    """The block sets of the tables: every choice of ``blocks - max_distance`` blocks."""
    return list(itertools.combinations(range(blocks), blocks - max_distance))


def key_bits(layout: list[tuple[int, int]], max_distance: int) -> int:
    """Width of the narrowest table key: the ``b - h`` narrowest blocks together."""
    widths = sorted(w for _, w in layout)
    return sum(widths[: len(layout) - max_distance])


def table_keys(
    fps: np.ndarray, layout: list[tuple[int, int]], table: tuple[int, ...]
) -> np.ndarray:
    """The key of every fingerprint (uint64) in one table: its blocks' bits, packed."""
    keys = np.zeros(len(fps), dtype=np.uint64)
    for block in table:
        start, width = layout[block]
        mask = np.uint64((1 << width) - 1)
        keys = (keys << np.uint64(width)) | ((fps >> np.uint64(start)) & mask)
    return keys


@dataclass
class TableResult:
    """The pairs one table owns and what its runs held.

    Attributes:
        a, b: the two fingerprints of each pair (uint64), a pair reported once overall.
        hamming: their Hamming distance (<= h).
        candidates: pairs compared in kept runs (chance and true ones).
        largest_run: fingerprints sharing the most common key of the table.
        skipped_runs, skipped_members, skipped_pairs: runs over the cap, not compared.
    """

    a: np.ndarray
    b: np.ndarray
    hamming: np.ndarray
    candidates: int = 0
    largest_run: int = 0
    skipped_runs: int = 0
    skipped_members: int = 0
    skipped_pairs: int = 0


def search_table(
    fps: np.ndarray,
    layout: list[tuple[int, int]],
    table: tuple[int, ...],
    max_distance: int,
    max_run: int | None = None,
    first_only: bool = True,
) -> TableResult:
    """Pairs of distinct fingerprints (uint64) within ``max_distance`` sharing this table's key.

    Runs of equal keys are compared position by position: at offset d every position
    i is compared with i + d while both lie in one run, so the work is the number of
    candidate pairs. ``first_only`` keeps a pair only when this is the first table of
    its agreeing blocks (see the module docstring); runs longer than ``max_run`` are
    skipped and counted.
    """
    n = len(fps)
    empty = np.zeros(0, dtype=np.uint64)
    if n < 2:
        return TableResult(empty, empty, np.zeros(0, dtype=np.int8))
    keys = table_keys(fps, layout, table)
    order = np.argsort(keys, kind="stable")
    keys = keys[order]
    sorted_fps = fps[order]
    change = np.flatnonzero(keys[1:] != keys[:-1]) + 1
    starts = np.concatenate([[0], change])
    lengths = np.diff(np.concatenate([starts, [n]]))
    run_end = np.repeat(starts + lengths, lengths)
    result = TableResult(empty, empty, np.zeros(0, dtype=np.int8))
    result.largest_run = int(lengths.max())
    if max_run is not None:
        over = lengths > max_run
        result.skipped_runs = int(over.sum())
        result.skipped_members = int(lengths[over].sum())
        result.skipped_pairs = int((lengths[over] * (lengths[over] - 1) // 2).sum())
        run_end[np.repeat(over, lengths)] = 0  # members of a skipped run get no partners
        lengths = lengths[~over]
    result.candidates = int((lengths * (lengths - 1) // 2).sum())
    found_a, found_b, found_h = [], [], []
    alive = np.flatnonzero(run_end - np.arange(n) > 1)
    offset = 1
    while alive.size:
        partner = alive + offset
        distance = np.bitwise_count(sorted_fps[alive] ^ sorted_fps[partner])
        close = distance <= max_distance
        if close.any():
            found_a.append(sorted_fps[alive[close]])
            found_b.append(sorted_fps[partner[close]])
            found_h.append(distance[close])
        offset += 1
        alive = alive[run_end[alive] > alive + offset]
    if found_a:
        result.a = np.concatenate(found_a)
        result.b = np.concatenate(found_b)
        result.hamming = np.concatenate(found_h).astype(np.int8)
        if first_only:
            own = owned_by(result.a ^ result.b, layout, table)
            result.a, result.b, result.hamming = result.a[own], result.b[own], result.hamming[own]
    return result


def owned_by(xor: np.ndarray, layout: list[tuple[int, int]], table: tuple[int, ...]) -> np.ndarray:
    """Whether ``table`` is the first table of each pair (its first t agreeing blocks)."""
    agree = np.stack(
        [((xor >> np.uint64(s)) & np.uint64((1 << w) - 1)) == 0 for s, w in layout], axis=1
    )
    first = agree & (np.cumsum(agree, axis=1) <= len(table))
    wanted = np.zeros(len(layout), dtype=bool)
    wanted[list(table)] = True
    return (first == wanted).all(axis=1)


def choose_blocks(fps: np.ndarray, max_distance: int, seed: int = 0) -> int:
    """The block count b with the least estimated work for these fingerprints.

    Work = tables * n (sorting) + PAIR_COST * candidates, where the candidates of a
    block count are measured on up to :data:`SAMPLE_SIZE` fingerprints in up to 8 of
    its tables and scaled by (n / sample)^2 (real fingerprints collide far more than
    uniform ones). Block counts with more than :data:`MAX_TABLES` tables are not
    considered; b = h + 1 always is.
    """
    n = len(fps)
    h = max_distance
    if n < 2 or h == 0:
        return h + 1
    rng = np.random.default_rng(seed)
    sample = fps if n <= SAMPLE_SIZE else rng.choice(fps, SAMPLE_SIZE, replace=False)
    scale = (n / len(sample)) ** 2
    best, best_cost = h + 1, float("inf")
    for blocks in range(h + 1, FINGERPRINT_BITS + 1):
        count = comb(blocks, h)
        if count > MAX_TABLES and blocks > h + 1:
            break
        layout = block_layout(blocks)
        tables = tables_of(blocks, h)
        probe = [
            tables[i] for i in np.linspace(0, len(tables) - 1, min(8, len(tables))).astype(int)
        ]
        sampled = float(np.mean([_run_pairs(table_keys(sample, layout, t)) for t in probe]))
        cost = count * n + PAIR_COST * count * sampled * scale
        if cost < best_cost:
            best, best_cost = blocks, cost
    return best


def _run_pairs(keys: np.ndarray) -> int:
    """Pairs sharing a key: the sum of m (m - 1) / 2 over the runs of equal keys."""
    _, counts = np.unique(keys, return_counts=True)
    return int((counts * (counts - 1) // 2).sum())
