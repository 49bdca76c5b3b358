"""``sparkeval diversity`` in this process, without Spark: the command's local engine
(``--engine local``, and ``auto`` on small local inputs).

The inputs are read by :mod:`~sparkeval.diversity.local_read` (Parquet), a TREC,
CSV or TSV run by :mod:`~sparkeval.diversity.local_text_run` (the direct readers), and
CSV or TSV training rows, or a CSV or TSV run with a relevance column, by
:mod:`~sparkeval.diversity.local_text_table`; checked in the order and with the
messages of :func:`~sparkeval.diversity.job.run_diversity` (columns, then a malformed
run line, the run ids, an item listed twice, the scores of the first run's top-k cut,
then a malformed training line, as the first run's measures read them), measured
by :func:`~sparkeval.diversity.local.measure_run` and written as on Spark:
``per_user.parquet`` and ``summary.json`` (the same bytes, up to
:data:`~sparkeval.output.DRIVER_WRITE_ROWS` rows, the table's size the Spark driver
writes itself).

Example::

    summary = run_diversity_locally(DiversityConfig(run="reco.parquet", out="div"))
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import pyarrow as pa

from sparkeval.diversity.definitions import PER_USER_MEASURES, default_similarity, per_user_schema
from sparkeval.diversity.local import Context, Lists, PerUser, measure_run, top_k
from sparkeval.diversity.local_read import (
    Features,
    LocalTable,
    id_kind,
    numbers,
    read_features,
    read_local_table,
)
from sparkeval.diversity.local_similarity import (
    Similarity,
    check_cosine_features,
    cooccurrence_similarity,
    cosine_similarity,
    feature_set,
    jaccard_similarity,
    minhash_similarity,
)
from sparkeval.diversity.local_text_run import has_relevance_column, read_text_run
from sparkeval.diversity.local_text_table import TextTable, is_text_table, read_text_table
from sparkeval.diversity.summary import diversity_summary
from sparkeval.io.columns import FEATURE_ALIASES, RUN_ALIASES, TRAIN_ALIASES
from sparkeval.io.direct_input import NotDirect
from sparkeval.io.readers import check_exists, detect_format
from sparkeval.io.run_choice import check_k, chosen_runs, repeated_item_error
from sparkeval.lsh.minhash import MinHasher
from sparkeval.output import atomic_output_dir, write_arrow_parquet, write_summary
from sparkeval.status import status

if TYPE_CHECKING:
    from sparkeval.diversity.options import DiversityConfig

#: the MinHash length of ``--similarity minhash`` (``evaluate_diversity``'s default)
MINHASH_PERMUTATIONS = 128
#: the per-user table's measure columns, after ``run_id, query_id, list_length``
MEASURES = PER_USER_MEASURES


@dataclass(frozen=True)
class Inputs:
    """The inputs read here: the run's rows (``run_id`` as text or None), the training
    rows and the item features."""

    run: LocalTable
    rows: pd.DataFrame
    train: LocalTable | None
    features: LocalTable | None
    #: the features' vectors or labels (:func:`read_features`), read once
    vectors: Features | None = None
    #: a CSV or TSV training table read here (its malformed line raised when the first
    #: run's measures read it, as on Spark)
    train_text: TextTable | None = None


def run_diversity_locally(config: DiversityConfig) -> dict[str, Any]:
    """``run_diversity`` in this process: the same files, lines and errors.

    Raises:
        NotDirect: an input or value for Spark's readers; nothing was written.
    """
    config.preflight()
    start = time.perf_counter()
    k = check_k(config.k)
    inputs = _read(config, k)
    runs, rows, has_ids = _runs(inputs.rows, config.run, config.run_id)
    _check_repeated_items(rows, config.run, has_ids)
    lists = {}
    for run_id in runs:
        lists[run_id] = top_k(rows[rows["run_id"] == run_id], k)
        if inputs.train_text is not None:
            inputs.train_text.check_rows()  # Spark reads the training rows measuring a run
    status(f"[read] {', '.join(config.input_paths())}; measuring {len(runs)} run(s) here")
    user_ids, item_ids, codes = _codes(inputs, lists)
    context = _context(config, inputs, user_ids, item_ids, codes, k)
    tables, blocks = [], {}
    for run_id, frame in lists.items():
        per_user, blocks[run_id] = measure_run(_coded(frame, codes), context)
        tables.append(_table(run_id, per_user, user_ids, inputs.run.type_of("query_id")))
    summary = diversity_summary(config, k, blocks)
    summary["timings_s"] = {"total": round(time.perf_counter() - start, 3)}
    with atomic_output_dir(config.out) as staging:
        write_arrow_parquet(pa.concat_tables(tables), staging / "per_user.parquet")
        write_summary(staging, summary, "diversity", config.input_paths())
    return summary


def _read(config: DiversityConfig, k: int | None) -> Inputs:
    """The run, training and features tables, in Spark's order of checks."""
    required = ("query_id", "doc_id", "score") if k is not None else ("query_id", "doc_id")
    check_exists(config.run)
    run_text = train_text = None
    if detect_format(config.run) == "parquet":
        run = read_local_table(config.run, RUN_ALIASES, required)
    elif has_relevance_column(config.run):
        aliases = {c: names for c, names in RUN_ALIASES.items() if c != "score" or k is not None}
        run_text = read_text_table(config.run, aliases, required, ("score", "relevance"))
        run = run_text.local
    else:
        run = read_text_run(config.run, config.run_id, k)
    train = features = vectors = None
    if config.train:
        check_exists(config.train)
        if is_text_table(config.train):
            train_text = read_text_table(config.train, TRAIN_ALIASES, ("query_id", "doc_id"))
            train = train_text.local
        else:
            train = read_local_table(config.train, TRAIN_ALIASES, ("query_id", "doc_id"))
    if config.item_features:
        check_exists(config.item_features)
        features = read_local_table(config.item_features, FEATURE_ALIASES, ("doc_id", "features"))
        vectors = read_features(features)  # an array column, else Spark's error
    for column, tables in (("query_id", (run, train)), ("doc_id", (run, train, features))):
        kinds = {id_kind(t, column) for t in tables if t is not None}
        if len(kinds) > 1:
            raise NotDirect(f"the inputs' {column} columns hold ids of different kinds")
    if run_text is not None:
        run_text.check_rows()  # the first job over the run's rows, after every schema
    return Inputs(run, _run_rows(run, k), train, features, vectors, train_text)


def _run_rows(run: LocalTable, k: int | None) -> pd.DataFrame:
    """``run_id`` (text, None where absent), ``query_id, doc_id[, score][, relevance]``."""
    frame = pd.DataFrame({"query_id": run.column("query_id"), "doc_id": run.column("doc_id")})
    if run.has("run_id"):
        values = run.table.column("run_id").combine_chunks()
        text = values.cast(pa.string()) if pa.types.is_integer(values.type) else values
        frame["run_id"] = np.asarray(text.to_pylist(), dtype=object)
    else:
        frame["run_id"] = None
    if k is not None:
        frame["score"] = numbers(run, "score", finite=False)
    if run.has("relevance"):
        frame["relevance"] = numbers(run, "relevance", finite=True)
    return frame


def _runs(
    rows: pd.DataFrame, path: str, run_id: str | None
) -> tuple[list[str], pd.DataFrame, bool]:
    """The runs to measure, their rows (``run_id`` named) and whether the run ids are
    the table's, chosen as on Spark (:func:`~sparkeval.io.run_choice.chosen_runs`)."""
    found = rows["run_id"]
    present = [None if pd.isna(i) else str(i) for i in found.unique()]
    keeps_ids, ids = chosen_runs(path, True, run_id, present)
    if not keeps_ids:
        return list(ids), rows.assign(run_id=ids[0]), False
    if run_id is not None:
        return [run_id], rows[found == run_id], True
    return list(ids), rows, True


def _check_repeated_items(rows: pd.DataFrame, path: str, has_ids: bool) -> None:
    """No user of a run lists an item twice (the first such item is named, with its
    run where the table has run ids)."""
    counts = rows.groupby(["run_id", "query_id", "doc_id"], sort=True).size()
    twice = counts[counts > 1]
    if len(twice):
        run_id, user, item = twice.index[0]
        raise repeated_item_error(path, user, item, int(twice.iloc[0]), run_id if has_ids else None)


def _codes(
    inputs: Inputs, lists: dict[str, pd.DataFrame]
) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]:
    """The user and item ids of every input, sorted, and the code of each id."""
    users = [frame["query_id"].to_numpy() for frame in lists.values()]
    items = [frame["doc_id"].to_numpy() for frame in lists.values()]
    if inputs.train is not None:
        users.append(inputs.train.column("query_id"))
        items.append(inputs.train.column("doc_id"))
    if inputs.features is not None:
        items.append(inputs.features.column("doc_id"))
    user_ids = np.unique(np.concatenate(users)) if users else np.zeros(0)
    item_ids = np.unique(np.concatenate(items)) if items else np.zeros(0)
    return user_ids, item_ids, {"users": user_ids, "items": item_ids}


def _encode(values: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """The codes of ``values``: their positions among the sorted ``ids`` (which hold
    them all, of the same kind)."""
    return np.searchsorted(ids, values).astype(np.int64)


def _coded(frame: pd.DataFrame, codes: dict[str, np.ndarray]) -> Lists:
    """A run's rows as codes."""
    rel = frame["relevance"].to_numpy(dtype=np.float64) if "relevance" in frame else None
    return Lists(
        _encode(frame["query_id"].to_numpy(), codes["users"]),
        _encode(frame["doc_id"].to_numpy(), codes["items"]),
        rel,
    )


def _context(
    config: DiversityConfig,
    inputs: Inputs,
    user_ids: np.ndarray,
    item_ids: np.ndarray,
    codes: dict[str, np.ndarray],
    k: int | None,
) -> Context:
    """What every run is measured with: the coded training rows, the item similarity,
    the catalogue."""
    train = None
    if inputs.train is not None:
        train = (
            _encode(inputs.train.column("query_id"), codes["users"]),
            _encode(inputs.train.column("doc_id"), codes["items"]),
        )
    features = inputs.vectors
    name = config.similarity or default_similarity(train is not None, features is not None)
    featured = None
    if features is not None:
        featured = np.zeros(len(item_ids), dtype=bool)
        featured[_encode(features.items, codes["items"])] = True
    catalogue, catalogue_from = None, None
    if train is not None:
        catalogue, catalogue_from = np.unique(train[1]), "train"
    elif features is not None:
        catalogue = np.unique(_encode(features.items, codes["items"]))
        catalogue_from = "item features"
    return Context(
        item_ids=item_ids,
        train=train,
        featured=featured,
        similarity=name,
        sim=_similarity(name, train, features, codes, len(item_ids), config.seed),
        catalogue_from=catalogue_from,
        catalogue=catalogue,
        length=k,
        exact_pair_limit=config.exact_pair_limit,
        sample_pairs=config.sample_pairs,
        seed=config.seed,
    )


def _similarity(
    name: str | None,
    train: tuple[np.ndarray, np.ndarray] | None,
    features: Features | None,
    codes: dict[str, np.ndarray],
    size: int,
    seed: int,
) -> Similarity | None:
    """The item similarity ``name`` of item-code pairs (None without one)."""
    if name is None:
        return None
    if name == "cooccurrence":
        assert train is not None  # the config says so
        return cooccurrence_similarity(train[0], train[1], size)
    assert features is not None
    if name == "cosine":
        check_cosine_features(features.element)
    by_code: list[np.ndarray | None] = [None] * size
    for item, values in zip(_encode(features.items, codes["items"]), features.values, strict=True):
        by_code[int(item)] = values
    if name == "cosine":
        return cosine_similarity(by_code)
    sets = [None if v is None else feature_set(v, features.numeric) for v in by_code]
    if name == "minhash":
        return minhash_similarity(sets, MinHasher(num_perm=MINHASH_PERMUTATIONS, seed=seed))
    return jaccard_similarity(sets)


def _table(run_id: str, per_user: PerUser, user_ids: np.ndarray, id_type: pa.DataType) -> pa.Table:
    """``run_id, query_id, list_length`` and the measures of one run, by user
    (:func:`~sparkeval.diversity.definitions.per_user_schema`)."""
    schema = per_user_schema(id_type)
    columns: list[pa.Array] = [
        pa.array([run_id] * len(per_user.users), pa.string()),
        pa.array(user_ids[per_user.users].tolist(), schema.field("query_id").type),
        pa.array(per_user.list_length, pa.int64()),
    ]
    for name in MEASURES:
        values = per_user.columns[name]
        columns.append(pa.array(values, pa.float64(), mask=np.isnan(values)))
    return pa.Table.from_arrays(columns, schema=schema)
