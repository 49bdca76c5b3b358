"""``near-duplicates`` of a local Parquet, CSV, TSV or JSON Lines docs table in this
process, without Spark: the command's local engine (``--engine local``, and ``auto`` on
small local inputs).

The docs are read with pyarrow (CSV and TSV by :mod:`sparkeval.lsh.local_csv_docs`, JSON
Lines by :mod:`sparkeval.lsh.local_json_docs`, which leave to Spark what its readers
decide) and checked as on Spark (the same column names and messages, a doc id given
twice refused with the same message); text is shingled by
:func:`~sparkeval.lsh.text_units.text_shingles` (ASCII text, and the scripts whose case
and letters Java and Python agree on: the rules of the Spark SQL shingles there are
exact), a ``tokens`` array is used as given. MinHash runs the driver stages Spark's
driver path runs (:func:`~sparkeval.lsh.driver_sets.similar_docs_in_driver`); SimHash
computes the fingerprints with the functions the Spark workers call
(:mod:`sparkeval.lsh.fingerprints`) and searches the same permuted tables
(:mod:`sparkeval.lsh.permuted_tables`) in numpy. The pairs, the clusters and
``summary.json`` are those of a Spark run, byte for byte: ``pairs.parquet`` is one part
written by pyarrow in :func:`~sparkeval.lsh.near_duplicate_outputs.pairs_schema`, as a
Spark run of at most :data:`~sparkeval.output.DRIVER_WRITE_ROWS` pairs writes it from
its driver (Spark's writer writes larger ones: the same rows and types).

What this engine leaves to Spark (:class:`~sparkeval.io.direct_input.NotDirect`: an
``auto`` run goes to Spark, ``--engine local`` names it): a layout Spark's reader
decides (partition directories, files of different schemas), ids other than text or
signed integers, a null id, text or tokens that are not valid UTF-8, text with a
character outside :data:`~sparkeval.lsh.text_units.LOCAL_RANGES` (or a JVM locale that
lower-cases otherwise), a null token list, token or weight, tokens other than text or
integers, weights not aligned with their tokens, too many candidate pairs for one
process, and SimHash over more distinct fingerprints than the block choice measures
whole (:data:`~sparkeval.lsh.permuted_tables.SAMPLE_SIZE`: Spark samples them in the
order its aggregation gives).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from sparkeval.errors import InputError
from sparkeval.io.columns import DOC_ALIASES, match_columns
from sparkeval.io.direct import parquet_files
from sparkeval.io.direct_input import NotDirect
from sparkeval.io.readers import check_exists, detect_format
from sparkeval.lsh.banding import check_threshold
from sparkeval.lsh.driver_sets import TooManyCandidates, similar_docs_in_driver, sorted_codes
from sparkeval.lsh.fingerprints import fingerprints, simhash_distance
from sparkeval.lsh.local_csv_docs import csv_doc_names, is_csv_docs, read_csv_doc_columns
from sparkeval.lsh.local_json_docs import json_doc_columns, read_json_docs
from sparkeval.lsh.near_duplicate_outputs import (
    minhash_parameters,
    pairs_schema,
    report_search,
    search_parameters,
    simhash_parameters,
    write_near_duplicates,
)
from sparkeval.lsh.permuted_tables import (
    FINGERPRINT_BITS,
    SAMPLE_SIZE,
    block_layout,
    choose_blocks,
    key_bits,
    search_table,
    tables_of,
)
from sparkeval.lsh.search_stats import check_max_bucket, record_lap
from sparkeval.lsh.text_units import check_shingles, local_text_problem, text_shingles
from sparkeval.output import write_arrow_parquet
from sparkeval.status import status

if TYPE_CHECKING:
    from pathlib import Path

    from sparkeval.lsh.options import NearDuplicatesConfig


def _signed_or_text(kind: pa.DataType) -> bool:
    return _text(kind) or _signed(kind)


def _signed(kind: pa.DataType) -> bool:
    return pa.types.is_integer(kind) and pa.types.is_signed_integer(kind)


def _plain(kind: pa.DataType) -> pa.DataType:
    """A column's values' type (a dictionary column's value type)."""
    return kind.value_type if pa.types.is_dictionary(kind) else kind


def _list_of(kind: pa.DataType, items: Any) -> bool:
    """Whether ``kind`` is a list (or large list) whose items ``items(type)`` accepts."""
    kind = _plain(kind)
    is_list = pa.types.is_list(kind) or pa.types.is_large_list(kind)
    return is_list and items(kind.value_type)


def _text(kind: pa.DataType) -> bool:
    return pa.types.is_string(kind) or pa.types.is_large_string(kind)


def _weight_type(kind: pa.DataType) -> bool:
    return (pa.types.is_floating(kind) and not pa.types.is_float16(kind)) or _signed(kind)


#: what each canonical column may hold here, and what it is called in a refusal
_COLUMN_TYPES = {
    "doc_id": (lambda t: _signed_or_text(_plain(t)), "text or signed integers"),
    "text": (lambda t: _text(_plain(t)), "text"),
    "tokens": (lambda t: _list_of(t, _signed_or_text), "a list of text or signed integers"),
    "weights": (lambda t: _list_of(t, _weight_type), "a list of numbers"),
}


@dataclass(frozen=True)
class LocalDocs:
    """A docs table read in this process.

    Attributes:
        ids: the doc ids (text as ``string``), distinct, no nulls.
        shingles: each doc's shingles or tokens as text (a ``list<string>``, no nulls).
        weights: each token's weight (``list<double>``, aligned), or None.
        has_weights: whether the table has a weights column beside its tokens (the
            summary's ``weights``, also when the method does not use them).
    """

    ids: pa.Array
    shingles: pa.Array
    weights: pa.Array | None
    has_weights: bool


def _files_and_schema(path: str) -> tuple[list[str], pa.Schema]:
    """The Parquet files of ``path`` and their one schema.

    Raises:
        NotDirect: a layout Spark's reader decides (partitions, no file, schemas that
            differ between files, a file pyarrow cannot read).
    """
    files = parquet_files(path)
    if files is None:
        raise NotDirect(f"{path}: not one Parquet file or a directory of Parquet files")
    try:
        schemas = [pq.read_schema(file).remove_metadata() for file in files]
    except (pa.ArrowException, OSError) as exc:
        raise NotDirect(f"{path}: a file pyarrow does not read ({exc})") from None
    if any(not schema.equals(schemas[0]) for schema in schemas[1:]):
        raise NotDirect(f"{path}: files of different schemas")
    return files, schemas[0]


def _read_columns(files: list[str], sources: dict[str, str], path: str) -> dict[str, pa.Array]:
    """The ``sources`` columns ({canonical: source column}) of every file, by their
    canonical names, dictionary columns decoded."""
    try:
        parts = [pq.read_table(file, columns=list(sources.values())) for file in files]
    except (pa.ArrowException, OSError) as exc:
        raise NotDirect(f"{path}: a file pyarrow does not read ({exc})") from None
    table = pa.concat_tables(parts)
    columns = {}
    for canonical, source in sources.items():
        column = table.column(source).combine_chunks()
        if pa.types.is_dictionary(column.type):
            column = column.cast(column.type.value_type)
        columns[canonical] = column
    return columns


def _valid_text(values: pa.Array, path: str, column: str) -> None:
    """Text that is valid UTF-8 (Spark's readers name a bad value: they judge it)."""
    try:
        values.validate(full=True)
    except pa.ArrowInvalid:
        raise NotDirect(f"{path}: column {column} holds text that is not valid UTF-8") from None


def _as_text(values: pa.Array) -> pa.Array:
    """Text or integers as ``string`` (integers in decimal, as Spark casts them)."""
    return values.cast(pa.string())


def refuse_repeated_ids(ids: pa.Array, path: str) -> None:
    """The message of :func:`sparkeval.lsh.near_duplicate_search.refuse_repeated_docs`
    for the smallest id given more than once (ids in Spark's order: byte-wise text,
    integers by value).

    Raises:
        InputError: ``path: doc id X appears N times; each doc may appear once``.
    """
    if pc.count_distinct(ids).as_py() == len(ids):
        return
    counts = pa.table({"doc_id": ids}).group_by("doc_id").aggregate([([], "count_all")])
    repeated = counts.filter(pc.greater(counts.column("count_all"), 1))
    first = repeated.sort_by("doc_id").slice(0, 1).to_pylist()[0]
    raise InputError(
        f"{path}: doc id {first['doc_id']} appears {first['count_all']} times; "
        "each doc may appear once"
    )


def _checked_types(schema: pa.Schema, found: dict[str, str], path: str) -> None:
    """Every column used here has a type this engine reads as Spark does."""
    for canonical, source in found.items():
        accepts, what = _COLUMN_TYPES[canonical]
        kind = schema.field(source).type
        if not accepts(kind):
            raise NotDirect(f"{path}: column {source} of type {kind} (not {what})")


def read_docs_locally(path: str, kind: str, k: int) -> LocalDocs:
    """The docs of ``path`` as :func:`sparkeval.lsh.near_duplicate_search.doc_shingles`
    gives them on Spark, after the same checks.

    Raises:
        InputError: a missing doc id column, a doc id given twice, no text or tokens
            column, with Spark's messages.
        NotDirect: anything this engine leaves to Spark (see the module text).
    """
    check_shingles(kind, k)
    check_exists(path)
    fmt = detect_format(path)
    json_docs = None
    if is_csv_docs(fmt):
        names = csv_doc_names(path, fmt)
    elif fmt == "jsonl":
        json_docs = read_json_docs(path)
        names = json_docs.names
    else:
        files, schema = _files_and_schema(path)
        names = schema.names
    optional = [c for c in DOC_ALIASES if c != "doc_id"]
    found = match_columns(names, DOC_ALIASES, ("doc_id",), {}, path, "this table", None, optional)
    used = {"doc_id": found["doc_id"]}
    if "tokens" in found:
        used.update({c: found[c] for c in ("tokens", "weights") if c in found})
    elif "text" in found:
        used["text"] = found["text"]
    if is_csv_docs(fmt):
        table = read_csv_doc_columns(path, fmt, used)
    elif json_docs is not None:
        table = json_doc_columns(json_docs, used, path)
    else:
        _checked_types(schema, used, path)
        table = _read_columns(files, used, path)
    ids = table["doc_id"]
    if ids.null_count:
        raise NotDirect(f"{path}: a null doc id")
    if pa.types.is_large_string(ids.type):
        ids = ids.cast(pa.string())
    if pa.types.is_string(ids.type):
        _valid_text(ids, path, found["doc_id"])
    refuse_repeated_ids(ids, path)
    if "tokens" in used:
        return _token_docs(table, ids, path, used)
    if "text" not in used:
        raise InputError("docs: needs a text column or a tokens array column")
    return LocalDocs(ids, _text_shingles(table["text"], path, used, kind, k), None, False)


def _text_shingles(texts: pa.Array, path: str, used: dict[str, str], kind: str, k: int) -> pa.Array:
    """The shingles of each text (a null text has none), when Python shingles them as
    Spark does (:func:`~sparkeval.lsh.text_units.local_text_problem`)."""
    _valid_text(texts, path, used["text"])
    problem = local_text_problem(texts)
    if problem is not None:
        raise NotDirect(
            f"{path}: column {used['text']} holds text with {problem}, which Java and "
            "Python may lower-case or split differently"
        )
    return pa.array(
        [text_shingles(text, kind, k) for text in texts.to_pylist()], pa.list_(pa.string())
    )


def _token_docs(
    table: dict[str, pa.Array], ids: pa.Array, path: str, used: dict[str, str]
) -> LocalDocs:
    """The docs of a ``tokens`` array column (and its aligned ``weights``)."""
    tokens = table["tokens"]
    if tokens.null_count or pc.list_flatten(tokens).null_count:
        raise NotDirect(f"{path}: column {used['tokens']} has a null list or token")
    tokens = tokens.cast(pa.list_(pa.string()))
    _valid_text(pc.list_flatten(tokens), path, used["tokens"])
    weights = None
    if "weights" in used:
        raw = table["weights"]
        if raw.null_count or pc.list_flatten(raw).null_count:
            raise NotDirect(f"{path}: column {used['weights']} has a null list or weight")
        weights = raw.cast(pa.list_(pa.float64()))
        same = pc.equal(pc.list_value_length(weights), pc.list_value_length(tokens))
        if not pc.all(same).as_py() and len(tokens):
            raise NotDirect(f"{path}: column {used['weights']} does not hold one weight per token")
    return LocalDocs(ids, tokens, weights, "weights" in used)


@dataclass
class LocalPairs:
    """The pairs found (``doc_a, doc_b`` and the method's columns, sorted by ids) and
    the search's statistics (with its ``timings_s``)."""

    pairs: pa.Table
    stats: dict[str, Any]


def minhash_locally(docs: LocalDocs, config: NearDuplicatesConfig) -> tuple[LocalPairs, dict]:
    """MinHash pairs of the docs by the driver stages; and the summary's parameters.

    Raises:
        NotDirect: too many candidate pairs for this process (Spark's stages take them).
    """
    cap = check_max_bucket(config.max_bucket)
    params = config.banding(config.threshold)
    try:
        found = similar_docs_in_driver(
            docs.ids, docs.shingles, None, config.threshold, config.hasher(), params, cap
        )
    except TooManyCandidates as exc:
        raise NotDirect(f"{config.docs}: {exc}, more than one process takes") from None
    pairs = found.pairs.rename_columns(["doc_a", "doc_b", "jaccard"])
    pairs = pairs.cast(pairs_schema("minhash", pairs.schema.field("doc_a").type))
    parameters = search_parameters("minhash", config.shingle, config.k, cap, docs.has_weights)
    parameters.update(minhash_parameters(config, params))
    return LocalPairs(pairs, found.stats), parameters


@dataclass(frozen=True)
class FingerprintGroups:
    """Docs grouped by fingerprint: ``distinct`` (uint64, ascending) and, for each, its
    member docs as id codes (ascending): ``members[starts[g]:starts[g + 1]]``."""

    distinct: np.ndarray
    members: np.ndarray
    starts: np.ndarray

    @property
    def sizes(self) -> np.ndarray:
        return np.diff(self.starts)

    def of(self, group: int) -> np.ndarray:
        return self.members[self.starts[group] : self.starts[group + 1]]


def fingerprint_groups(fps: np.ndarray, codes: np.ndarray) -> FingerprintGroups:
    """Group docs (their id codes, ordered as the ids) by fingerprint."""
    order = np.lexsort((codes, fps))
    sorted_fps = fps[order]
    first = np.ones(len(fps), dtype=bool)
    first[1:] = sorted_fps[1:] != sorted_fps[:-1]
    starts = np.append(np.flatnonzero(first), len(fps)).astype(np.int64)
    return FingerprintGroups(sorted_fps[first], codes[order], starts)


def _search(
    groups: FingerprintGroups, h: int, cap: int | None, stats: dict[str, Any]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The fingerprint pairs ``(a, b, hamming)`` within ``h`` of every table, as
    :func:`sparkeval.lsh.simhash.similar_fingerprints` searches them: each pair from
    its first table, or, when the cap skipped a run, from every table, repeats removed."""
    distinct = groups.distinct
    blocks = choose_blocks(distinct, h)
    layout = block_layout(blocks)
    tables = tables_of(blocks, h)
    stats.update(blocks=[list(b) for b in layout], tables=len(tables), key_bits=key_bits(layout, h))
    results = [search_table(distinct, layout, table, h, cap, True) for table in tables]
    skipped = sum(r.skipped_runs for r in results)
    if skipped:
        results = [search_table(distinct, layout, table, h, cap, False) for table in tables]
    stats.update(
        tables_searched=len(tables),
        candidate_pairs=sum(r.candidates for r in results),
        largest_bucket=max((r.largest_run for r in results), default=0),
        skipped_buckets=sum(r.skipped_runs for r in results),
        skipped_members=sum(r.skipped_members for r in results),
        skipped_pairs=sum(r.skipped_pairs for r in results),
    )
    a = np.concatenate([np.zeros(0, np.uint64), *(r.a for r in results)])
    b = np.concatenate([np.zeros(0, np.uint64), *(r.b for r in results)])
    hamming = np.concatenate([np.zeros(0, np.int32), *(r.hamming for r in results)])
    hamming = hamming.astype(np.int32)
    if skipped and len(a):
        _, keep = np.unique(np.stack([a, b]), axis=1, return_index=True)
        a, b, hamming = a[np.sort(keep)], b[np.sort(keep)], hamming[np.sort(keep)]
    return a, b, hamming


def _member_pairs(
    groups: FingerprintGroups, a: np.ndarray, b: np.ndarray, hamming: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(first, second, hamming)`` id codes of every member pair: across the groups of
    each fingerprint pair, and inside each group of equal fingerprints (distance 0)."""
    group_a = np.searchsorted(groups.distinct, a)
    group_b = np.searchsorted(groups.distinct, b)
    firsts, seconds, distances = [np.zeros(0, np.int64)], [np.zeros(0, np.int64)], []
    distances.append(np.zeros(0, np.int32))
    for ga, gb, d in zip(group_a.tolist(), group_b.tolist(), hamming.tolist(), strict=True):
        u, v = np.meshgrid(groups.of(ga), groups.of(gb), indexing="ij")
        firsts.append(np.minimum(u, v).ravel())
        seconds.append(np.maximum(u, v).ravel())
        distances.append(np.full(u.size, d, np.int32))
    for group in np.flatnonzero(groups.sizes >= 2).tolist():
        i, j = np.triu_indices(int(groups.sizes[group]), 1)
        members = groups.of(group)
        firsts.append(members[i])
        seconds.append(members[j])
        distances.append(np.zeros(len(i), np.int32))
    return np.concatenate(firsts), np.concatenate(seconds), np.concatenate(distances)


def simhash_locally(docs: LocalDocs, config: NearDuplicatesConfig) -> tuple[LocalPairs, dict]:
    """SimHash pairs of the docs, exactly as on Spark; and the summary's parameters.

    Raises:
        ConfigError: a threshold that is no Hamming distance or similarity.
        NotDirect: more than :data:`SAMPLE_SIZE` distinct fingerprints.
    """
    cap = check_max_bucket(config.max_bucket)
    h = simhash_distance(config.threshold)
    start = time.perf_counter()
    offsets = docs.shingles.offsets.to_numpy()
    values = pc.list_flatten(docs.shingles).to_numpy(zero_copy_only=False)
    weights = None
    if docs.weights is not None:
        weights = pc.list_flatten(docs.weights).to_numpy(zero_copy_only=False)
    fps = fingerprints(values, offsets - offsets[0], weights)
    id_values, codes = sorted_codes(docs.ids)
    groups = fingerprint_groups(fps, codes)
    if len(groups.distinct) > SAMPLE_SIZE:
        raise NotDirect(
            f"{config.docs}: more than {SAMPLE_SIZE} distinct fingerprints (Spark samples "
            "them to choose the tables)"
        )
    sizes = groups.sizes
    stats: dict[str, Any] = {
        "docs": len(fps),
        "distinct_fingerprints": len(groups.distinct),
        "identical_groups": int((sizes >= 2).sum()),
        "identical_pairs": int((sizes * (sizes - 1)).sum()) // 2,
    }
    a, b, hamming = _search(groups, h, cap, stats)
    start = record_lap(stats, "fingerprint_groups_and_candidates", start)
    stats["verified_group_pairs"] = len(a)
    stats["rejected_candidates"] = stats["candidate_pairs"] - len(a)
    record_lap(stats, "verify", start)
    first, second, distance = _member_pairs(groups, a, b, hamming)
    order = np.lexsort((second, first))
    schema = pairs_schema("simhash", id_values.type)
    columns = [
        id_values.take(pa.array(first[order])),
        id_values.take(pa.array(second[order])),
        pa.array(distance[order], pa.int32()),
        pa.array(1.0 - distance[order] / float(FINGERPRINT_BITS), pa.float64()),
    ]
    pairs = pa.Table.from_arrays(columns, schema=schema)
    parameters = search_parameters("simhash", config.shingle, config.k, cap, docs.has_weights)
    parameters.update(simhash_parameters(h))
    return LocalPairs(pairs, stats), parameters


def run_near_duplicates_locally(config: NearDuplicatesConfig) -> dict[str, Any]:
    """:func:`sparkeval.lsh.near_duplicate_search.run_near_duplicates` in this process:
    the same files, summary and status lines.

    Raises:
        NotDirect: docs or a search for Spark (see the module text); nothing written.
    """
    config.preflight()
    if config.method == "minhash":
        check_threshold(config.threshold, "--threshold")
    start = time.perf_counter()
    docs = read_docs_locally(config.docs, config.shingle, config.k)
    status(f"[read] {config.docs}; {config.method} signatures and candidates")
    search = minhash_locally if config.method == "minhash" else simhash_locally
    found, parameters = search(docs, config)
    report_search(found.stats, config.method == "minhash")

    def write_pairs(path: Path) -> object:
        return write_arrow_parquet(found.pairs, path)

    return write_near_duplicates(config, write_pairs, found.stats, parameters, start)
