"""All pairs of similar sets of a small input, in the driver, with numpy.

The stages of :mod:`sparkeval.lsh.similar` (collapse identical sets, MinHash
signatures and band keys, shared buckets, candidate pairs, exact verification,
expansion to member pairs) on arrays in one process: a few thousand users cost
milliseconds here, where each Spark stage costs a job. The signatures and band keys
are the same functions' output, the verification the same exact fraction test, so
the pairs, the Jaccard values and every statistic are those of the Spark stages (the
tests compare both on the same inputs).

Sets are given as rows, one per ``(set id, item)``: each id is a set, its items are
the distinct items of its rows. Ids and items are encoded as integer codes first; set
ids are coded in their sort order (byte-wise for strings, as Spark orders them), so
``a < b`` of two codes is ``a < b`` of the ids.

Example: rows ``(u1, x) (u1, y) (u2, x) (u2, y) (u3, z)`` make sets {x, y}, {x, y} and
{z}: one identical pair ``(u1, u2)`` with Jaccard 1.0.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sparkeval.lsh.banding import BandParams, band_keys
from sparkeval.lsh.minhash import MinHasher, sha1_hash
from sparkeval.lsh.search_stats import record_lap, threshold_fraction
from sparkeval.lsh.sha1_batch import sha1_prefixes_of_text


@dataclass
class DriverSimilarSets:
    """Result of :func:`similar_sets_in_driver`.

    Attributes:
        pairs: ``a, b, jaccard`` (a < b), sorted by ``a, b``.
        stats: the statistics of :func:`sparkeval.lsh.similar.similar_sets`, same keys.
    """

    pairs: pa.Table
    stats: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class SetRows:
    """Sets as sorted, distinct item codes: set ``s`` holds
    ``items[offsets[s]:offsets[s + 1]]``; ``ids[s]`` is its id (ids sorted).

    Attributes:
        ids: the distinct set ids, sorted.
        items: the distinct items (``item_codes`` index them).
        item_codes: flat item codes of every set, ascending within a set.
        offsets: ``len(ids) + 1`` offsets into ``item_codes``.
        rows: the rows the sets were made of (more than ``len(item_codes)`` when a
            row was repeated).
        raw_hashes: each item's raw SHA-1 token hash when computed already (by Spark
            SQL, :mod:`sparkeval.lsh.token_hashes`), else None.
    """

    ids: pa.Array
    items: pa.Array
    item_codes: np.ndarray
    offsets: np.ndarray
    rows: int
    raw_hashes: np.ndarray | None = None

    @property
    def lengths(self) -> np.ndarray:
        return np.diff(self.offsets)

    @property
    def repeated_rows(self) -> int:
        """Rows that repeated an (id, item) row before them."""
        return self.rows - len(self.item_codes)


def sorted_codes(values: pa.Array | pa.ChunkedArray) -> tuple[pa.Array, np.ndarray]:
    """(distinct values sorted, each value's index among them) of a column without nulls.

    Example:
        >>> uniques, codes = sorted_codes(pa.array(["b", "a", "b"]))
        >>> uniques.to_pylist(), codes.tolist()
        (['a', 'b'], [1, 0, 1])
    """
    uniques = pc.unique(values)
    uniques = uniques.take(pc.sort_indices(uniques))
    codes = pc.index_in(values, value_set=uniques)
    return uniques, _numpy(codes).astype(np.int64)


def _combined(values: pa.Array | pa.ChunkedArray) -> pa.Array:
    return values.combine_chunks() if isinstance(values, pa.ChunkedArray) else values


def _numpy(values: pa.Array | pa.ChunkedArray) -> np.ndarray:
    return _combined(values).to_numpy(zero_copy_only=False)


def distinct_sorted(values: np.ndarray) -> np.ndarray:
    """The distinct values, ascending (a sort and a comparison of neighbours: faster
    here than ``np.unique``'s hash table on a million integers).

    Example:
        >>> distinct_sorted(np.array([3, 1, 3, 2])).tolist()
        [1, 2, 3]
    """
    values = np.sort(values)
    keep = np.ones(len(values), dtype=bool)
    np.not_equal(values[1:], values[:-1], out=keep[1:])
    return values[keep]


def set_rows(
    ids: pa.Array | pa.ChunkedArray,
    items: pa.Array | pa.ChunkedArray,
    row_hashes: np.ndarray | None = None,
) -> SetRows:
    """The sets of ``(id, item)`` rows (no nulls; a repeated row counts once);
    ``row_hashes``: each row's raw token hash, when Spark computed them."""
    id_values, id_codes = sorted_codes(ids)
    encoded = pc.dictionary_encode(_combined(items))
    item_of_row = _numpy(encoded.indices).astype(np.int64)
    n_items = max(1, len(encoded.dictionary))
    keys = distinct_sorted(id_codes * n_items + item_of_row)
    lengths = np.bincount(keys // n_items, minlength=len(id_values))
    offsets = np.zeros(len(id_values) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    raw = None
    if row_hashes is not None:  # the same item has the same hash on every row
        raw = np.zeros(len(encoded.dictionary), dtype=row_hashes.dtype)
        raw[item_of_row] = row_hashes
    return SetRows(id_values, encoded.dictionary, keys % n_items, offsets, len(id_codes), raw)


@dataclass(frozen=True)
class IdenticalGroups:
    """Sets with the same items, grouped: group ``g`` has the sets
    ``members[starts[g]:starts[g + 1]]`` (ascending); its first member is its
    representative. Groups are numbered in their representatives' order."""

    members: np.ndarray
    starts: np.ndarray

    @property
    def sizes(self) -> np.ndarray:
        return np.diff(self.starts)

    @property
    def reps(self) -> np.ndarray:
        return self.members[self.starts[:-1]]


def _mix64(values: np.ndarray) -> np.ndarray:
    """A 64-bit avalanche of each value (splitmix64's finalizer); wraps."""
    with np.errstate(over="ignore"):
        z = values.astype(np.uint64) + np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def identical_groups(sets: SetRows) -> IdenticalGroups:
    """Group the (non-empty) sets by their items, exactly.

    A sum of mixed item codes and the length put candidates for equality next to each
    other; sets that share both are compared item by item, so a collision of the
    fingerprint never merges different sets.
    """
    n = len(sets.offsets) - 1
    if n == 0:
        return IdenticalGroups(np.zeros(0, np.int64), np.zeros(1, np.int64))
    lengths = sets.lengths
    with np.errstate(over="ignore"):
        fingerprint = np.add.reduceat(_mix64(sets.item_codes), sets.offsets[:-1])
    order = np.lexsort((np.arange(n), fingerprint, lengths))
    same = (lengths[order][1:] == lengths[order][:-1]) & (
        fingerprint[order][1:] == fingerprint[order][:-1]
    )
    group_of = np.arange(n, dtype=np.int64)  # each set's representative
    run_starts = np.flatnonzero(np.concatenate([[True], ~same]))
    run_ends = np.concatenate([run_starts[1:], [n]])
    shared = run_ends - run_starts >= 2  # only these runs can hold identical sets
    for start, end in zip(run_starts[shared], run_ends[shared], strict=True):
        first_of: dict[bytes, int] = {}
        for s in order[start:end]:  # ascending set order within a run
            items = sets.item_codes[sets.offsets[s] : sets.offsets[s + 1]].tobytes()
            group_of[s] = first_of.setdefault(items, int(s))
    members = np.lexsort((np.arange(n), group_of))
    starts, _ = _runs(group_of[members])
    return IdenticalGroups(members, np.append(starts, n).astype(np.int64))


def item_token_hashes(items: pa.Array, hasher: MinHasher) -> np.ndarray:
    """Each distinct item's premixed token hash: SHA-1 of its text (``str(item)``),
    as the Spark stage hashes it (:mod:`sparkeval.lsh.token_hashes`); text items are
    hashed together in numpy (:func:`~sparkeval.lsh.sha1_batch.sha1_prefixes_of_text`),
    other items one by one."""
    text = pa.types.is_string(items.type) or pa.types.is_large_string(items.type)
    if text and items.null_count == 0:
        return hasher.premix(sha1_prefixes_of_text(items, hasher.hash_width))
    return hasher.premix(sha1_hash(items.to_pylist(), hasher.hash_width))


def _runs(sorted_keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(start, length) of each run of equal values in a sorted array."""
    if len(sorted_keys) == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    starts = np.flatnonzero(np.concatenate([[True], sorted_keys[1:] != sorted_keys[:-1]]))
    return starts, np.diff(np.append(starts, len(sorted_keys)))


def _pairs_within(
    members: np.ndarray, starts: np.ndarray, sizes: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(a, b) of every pair of two members of one run, a before b in ``members``."""
    firsts, seconds = [np.zeros(0, np.int64)], [np.zeros(0, np.int64)]
    for size in np.unique(sizes):
        if size < 2:
            continue
        block = members[starts[sizes == size][:, None] + np.arange(size)]
        i, j = np.triu_indices(int(size), 1)
        firsts.append(block[:, i].ravel())
        seconds.append(block[:, j].ravel())
    return np.concatenate(firsts), np.concatenate(seconds)


class TooManyCandidates(Exception):
    """The buckets would make more candidate pairs than the driver holds at once."""


#: bucket pairs (before removing repeats across bands) the driver path takes at most
MAX_BUCKET_PAIRS = 20_000_000


def bucket_candidates(
    keys: np.ndarray, max_bucket: int | None, stats: dict[str, Any]
) -> tuple[np.ndarray, np.ndarray]:
    """Distinct candidate pairs ``(a, b)``, a < b, of groups sharing a band bucket.

    ``keys`` is ``(groups, bands)``; a bucket is one key value in one band. Buckets of
    more than ``max_bucket`` members are skipped. Adds the statistics of
    :class:`sparkeval.lsh.candidates.BucketStats` to ``stats``.

    Raises:
        TooManyCandidates: the kept buckets hold more than :data:`MAX_BUCKET_PAIRS`
            pairs (the Spark stages take such inputs).
    """
    n_groups, bands = keys.shape
    shared = largest = skipped = skipped_members = 0
    skipped_pairs = bucket_pairs = 0.0  # summed as doubles, as the Spark aggregate does
    kept_buckets = []
    for band in range(bands):
        order = np.argsort(keys[:, band], kind="stable")
        starts, sizes = _runs(keys[order, band])
        multi = sizes >= 2
        starts, sizes = starts[multi], sizes[multi]
        if len(sizes) == 0:
            continue
        shared += len(sizes)
        largest = max(largest, int(sizes.max()))
        kept = sizes <= max_bucket if max_bucket is not None else np.ones(len(sizes), bool)
        pairs = sizes * (sizes - 1) / 2
        skipped += int((~kept).sum())
        skipped_members += int(sizes[~kept].sum())
        skipped_pairs += float(pairs[~kept].sum())
        bucket_pairs += float(pairs[kept].sum())
        kept_buckets.append((order, starts[kept], sizes[kept]))
    if bucket_pairs > MAX_BUCKET_PAIRS:
        raise TooManyCandidates(f"{int(bucket_pairs)} bucket pairs")
    stats.update(
        buckets_shared=shared,
        largest_bucket=largest,
        skipped_buckets=skipped,
        skipped_members=skipped_members,
        skipped_pairs=int(skipped_pairs),
        bucket_pairs=int(bucket_pairs),
    )
    width = max(n_groups, 1)
    encoded = [np.zeros(0, np.int64)]
    for order, starts, sizes in kept_buckets:
        a, b = _pairs_within(order, starts, sizes)
        encoded.append(a * width + b)
    distinct = distinct_sorted(np.concatenate(encoded))
    return distinct // width, distinct % width


#: candidate pairs verified at once (bounds the memory of the item lists compared)
VERIFY_CHUNK = 1_000_000


def intersection_sizes(
    codes: np.ndarray, offsets: np.ndarray, a: np.ndarray, b: np.ndarray, n_items: int
) -> np.ndarray:
    """``|A ∩ B|`` of each pair of sets (each set's items distinct), by chunks of
    :data:`VERIFY_CHUNK` pairs.

    Every item of both sets is keyed by its pair; a key met twice is a shared item.

    Example (sets {1, 2, 3}, {2, 3}, {9}):
        >>> codes, offsets = np.array([1, 2, 3, 2, 3, 9]), np.array([0, 3, 5, 6])
        >>> intersection_sizes(codes, offsets, np.array([0, 0]), np.array([1, 2]), 10).tolist()
        [2, 0]
    """
    out = np.zeros(len(a), dtype=np.int64)
    for start in range(0, len(a), VERIFY_CHUNK):
        chunk = slice(start, start + VERIFY_CHUNK)
        pair = np.arange(len(a[chunk]), dtype=np.int64)
        keyed = []
        for side in (a[chunk], b[chunk]):
            items, side_offsets = segments(codes, offsets, side)
            keyed.append(np.repeat(pair, np.diff(side_offsets)) * n_items + items)
        both = np.sort(np.concatenate(keyed))
        twice = both[1:][both[1:] == both[:-1]]
        out[chunk] = np.bincount(twice // n_items, minlength=len(pair))
    return out


def segments(
    codes: np.ndarray, offsets: np.ndarray, chosen: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(flat codes, offsets) of the chosen segments of ``codes``, in the given order.

    Example:
        >>> codes, offsets = segments(np.array([5, 6, 7]), np.array([0, 2, 3]), np.array([1, 0]))
        >>> codes.tolist(), offsets.tolist()
        ([7, 5, 6], [0, 1, 3])
    """
    lengths = offsets[chosen + 1] - offsets[chosen]
    out = np.zeros(len(chosen) + 1, dtype=np.int64)
    np.cumsum(lengths, out=out[1:])
    shift = np.repeat(offsets[chosen] - out[:-1], lengths)
    return codes[np.arange(out[-1], dtype=np.int64) + shift], out


def similar_sets_in_driver(
    sets: SetRows,
    threshold: float | str,
    hasher: MinHasher,
    params: BandParams,
    max_bucket: int | None = None,
) -> DriverSimilarSets:
    """Every pair of sets with exact Jaccard >= threshold, as
    :func:`sparkeval.lsh.similar.similar_sets` finds them.

    Args:
        sets: the sets (:func:`set_rows`); items are strings or integers, tokenised
            as their text.
        threshold: T in (0, 1]; pairs at exactly T are kept (exact fraction test).
        hasher: the MinHash permutations; params: the banding.
        max_bucket: skip buckets with more members than this (``None``: no cap).
    """
    frac = threshold_fraction(threshold)
    p, q = frac.numerator, frac.denominator
    stats: dict[str, Any] = {}
    start = time.perf_counter()
    groups = identical_groups(sets)
    sizes = groups.sizes
    stats.update(
        sets=len(sets.ids),
        empty_sets=0,
        distinct_sets=len(sizes),
        identical_groups=int((sizes >= 2).sum()),
        identical_pairs=int((sizes * (sizes - 1) / 2).sum()),
        largest_identical_group=int(sizes.max()) if len(sizes) else 0,
    )
    start = record_lap(stats, "collapse_identical", start)

    codes, offsets = segments(sets.item_codes, sets.offsets, groups.reps)
    if sets.raw_hashes is not None:
        tokens = hasher.premix(sets.raw_hashes)
    else:
        tokens = item_token_hashes(sets.items, hasher)
    keys = band_keys(hasher.signatures_of_hashes(tokens[codes], offsets), params.bands, params.rows)
    a, b = bucket_candidates(keys, max_bucket, stats)
    start = record_lap(stats, "signatures_and_buckets", start)
    stats["candidate_pairs"] = len(a)
    start = record_lap(stats, "candidates", start)

    inter = intersection_sizes(codes, offsets, a, b, max(1, len(sets.items)))
    lengths = np.diff(offsets)
    union = lengths[a] + lengths[b] - inter
    keep = inter * q >= p * union
    a, b, inter, union = a[keep], b[keep], inter[keep], union[keep]
    stats["verified_group_pairs"] = len(a)
    stats["rejected_candidates"] = stats["candidate_pairs"] - len(a)
    record_lap(stats, "verify", start)
    return DriverSimilarSets(_member_pairs(sets, groups, a, b, inter / union), stats)


def _member_pairs(
    sets: SetRows, groups: IdenticalGroups, a: np.ndarray, b: np.ndarray, jaccard: np.ndarray
) -> pa.Table:
    """``a, b, jaccard`` of every member pair of the verified group pairs, and the
    pairs inside each group (Jaccard 1.0), sorted by ``a, b``."""
    sizes = groups.sizes
    per_pair = sizes[a] * sizes[b]
    pair = np.repeat(np.arange(len(a), dtype=np.int64), per_pair)
    position = np.arange(len(pair), dtype=np.int64) - np.repeat(
        np.cumsum(per_pair) - per_pair, per_pair
    )
    x = groups.members[groups.starts[a][pair] + position // sizes[b][pair]]
    y = groups.members[groups.starts[b][pair] + position % sizes[b][pair]]
    inside_a, inside_b = _pairs_within(groups.members, groups.starts[:-1], sizes)
    first = np.concatenate([np.minimum(x, y), inside_a])
    second = np.concatenate([np.maximum(x, y), inside_b])
    values = np.concatenate([jaccard[pair], np.ones(len(inside_a))])
    order = np.lexsort((second, first))
    # the Spark stages' schema: the ids are never null, the Jaccard value may be
    schema = pa.schema(
        [
            pa.field("a", sets.ids.type, nullable=False),
            pa.field("b", sets.ids.type, nullable=False),
            pa.field("jaccard", pa.float64()),
        ]
    )
    columns = [
        sets.ids.take(pa.array(first[order])),
        sets.ids.take(pa.array(second[order])),
        pa.array(values[order], pa.float64()),
    ]
    return pa.Table.from_arrays(columns, schema=schema)


def similar_docs_in_driver(
    ids: pa.Array,
    shingles: pa.Array,
    raw: np.ndarray | None,
    threshold: float | str,
    hasher: MinHasher,
    params: BandParams,
    max_bucket: int | None,
) -> DriverSimilarSets:
    """The MinHash pairs of documents: ``ids`` (distinct, no nulls) and their
    ``shingles`` (a list array without nulls, aligned with ``ids``).

    ``raw``: every shingle's raw SHA-1 token hash, flat in shingle order, when Spark SQL
    computed them (:mod:`sparkeval.lsh.token_hashes`); None hashes the shingles' text
    here, to the same values. A document without a shingle is an empty set, counted in
    ``sets`` and ``empty_sets`` but never in a pair.

    Raises:
        TooManyCandidates: the buckets hold too many pairs for one process.
    """
    tokens = pc.list_flatten(shingles)
    lengths = pc.fill_null(pc.list_value_length(shingles), 0).to_numpy(zero_copy_only=False)
    row_ids = ids.take(pa.array(np.repeat(np.arange(len(ids), dtype=np.int64), lengths)))
    found = similar_sets_in_driver(
        set_rows(row_ids, tokens, raw), threshold, hasher, params, max_bucket
    )
    found.stats.update(sets=len(ids), empty_sets=int((lengths == 0).sum()))
    return found
