"""Small valid inputs of every command, and how to compare a store's outputs with a
local run's.

:func:`write_inputs` writes one directory of inputs that every command can read; the
same files are uploaded to a bucket, so a command run on ``s3://BUCKET/data/...`` and
the same command on the local copies must give the same results. The local run is
the independent path: its outputs are written by the local protocol, never touched
by the storage layer.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq

from sparkeval.demo_data import generate

#: files a store output and a local one do not share byte for byte, by design:
#: ``_SUCCESS`` is a JSON manifest on a store, ``timings.json`` is documented to vary
VARYING = ("_SUCCESS", "timings.json")
#: columns of summary.parquet that vary between runs (time) or name the inputs'
#: paths and modification times (which differ between a store and local disk)
PLACE_COLUMNS = ("evaluated_at", "inputs_hash", "evaluation_id")


def _trec_frame(path: Path) -> pd.DataFrame:
    return pd.read_csv(
        path,
        sep=" ",
        header=None,
        names=["query_id", "q0", "doc_id", "rank", "score", "run_id"],
        dtype={"query_id": str, "doc_id": str},
    )[["run_id", "query_id", "doc_id", "score"]]


def write_inputs(data: Path) -> Path:
    """Every input of the commands under test into ``data``; returns ``data``."""
    generate(data, queries=30, pool=60, depth=20)
    strong = _trec_frame(data / "run_strong.txt")
    medium = _trec_frame(data / "run_medium.txt")
    weak = _trec_frame(data / "run_weak.txt")
    medium.assign(run_id="medium_pq").to_parquet(data / "run_medium.parquet", index=False)
    weak.assign(run_id="weak_js").to_json(data / "run_weak.jsonl", orient="records", lines=True)
    qrels = pd.read_csv(
        data / "qrels.txt",
        sep=" ",
        header=None,
        names=["query_id", "iter", "doc_id", "relevance"],
        dtype={"query_id": str, "doc_id": str},
    )
    qrels[["query_id", "doc_id", "relevance"]].to_parquet(data / "qrels.parquet", index=False)
    pd.concat([strong, medium, weak]).to_parquet(data / "runs.parquet", index=False)
    # near-duplicate pairs among the documents the runs retrieve most
    top = strong["doc_id"].value_counts().index[:8].tolist()
    pairs = pd.DataFrame({"doc_a": top[0::2], "doc_b": top[1::2]})
    pairs.to_parquet(data / "pairs.parquet", index=False)
    _compare_inputs(data)
    _rating_inputs(data)
    _diversity_inputs(data)
    _similar_users_input(data)
    _documents(data)
    return data


def _compare_inputs(data: Path) -> None:
    """``eval/per_query.parquet`` of three runs over 12 queries (run 'worse' loses 0.2
    nDCG@10 everywhere, 'same' ties the baseline), their rankings in
    ``compare_runs.parquet``, and another stage's ``lsh/summary.json``."""
    rng = np.random.default_rng(3)
    base = rng.uniform(0.3, 0.9, 12).round(3)
    rows = []
    for i in range(12):
        q = f"q{i:02d}"
        rows += [
            ("base", q, "nDCG@10", float(base[i])),
            ("base", q, "AP", float(base[i]) / 2),
            ("worse", q, "nDCG@10", float(base[i]) - 0.2),
            ("worse", q, "AP", float(base[i]) / 2 + 0.01),
            ("same", q, "nDCG@10", float(base[i])),
            ("same", q, "AP", float(base[i]) / 2),
        ]
    (data / "eval").mkdir()
    pd.DataFrame(rows, columns=["run_id", "query_id", "measure", "value"]).to_parquet(
        data / "eval" / "per_query.parquet", index=False
    )
    runs = []
    for run in ("base", "worse", "same"):
        for i in range(12):
            order = rng.permutation(15) if run == "worse" else np.arange(15)
            runs += [(run, f"q{i:02d}", f"doc{d}", float(15 - r)) for r, d in enumerate(order)]
    pd.DataFrame(runs, columns=["run_id", "query_id", "doc_id", "score"]).to_parquet(
        data / "compare_runs.parquet", index=False
    )
    (data / "lsh").mkdir()
    (data / "lsh" / "summary.json").write_text(
        json.dumps({"near_duplicates": {"pairs": 42, "threshold": 0.8}})
    )


def _rating_inputs(data: Path) -> None:
    """Microsoft Recommenders' rating fixture (PEERS.md) as CSV."""
    users = [1, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 1, 1]
    true_items = [3, 1, 4, 5, 6, 7, 2, 5, 6, 8, 9, 10, 11, 12, 13, 14, 1, 2]
    ratings = [3, 5, 5, 3, 3, 1, 5, 5, 5, 4, 4, 3, 3, 3, 2, 1, 5, 4]
    pred_items = [12, 10, 3, 5, 11, 13, 4, 10, 7, 13, 1, 3, 5, 2, 11, 14, 3, 10]
    predictions = [12, 14, 13, 12, 11, 10, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 14, 13]
    pd.DataFrame({"userID": users, "itemID": true_items, "rating": ratings}).to_csv(
        data / "truth.csv", index=False
    )
    pd.DataFrame({"userID": users, "itemID": pred_items, "prediction": predictions}).to_csv(
        data / "pred.csv", index=False
    )


def _diversity_inputs(data: Path) -> None:
    """Microsoft Recommenders' diversity fixture (PEERS.md) as Parquet."""
    train = {"UserId": [1, 1, 1, 2, 2, 3, 3, 3], "ItemId": [1, 2, 4, 3, 4, 3, 4, 5]}
    reco = {
        "UserId": [1, 1, 2, 2, 3, 3],
        "ItemId": [3, 5, 2, 5, 1, 2],
        "Relevance": [1, 0, 1, 1, 1, 0],
    }
    features = [[0, 1, 1, 0, 0], [0, 1, 0, 1, 0], [0, 0, 1, 1, 0], [0, 0, 1, 0, 1], [0, 0, 0, 1, 1]]
    pd.DataFrame(train).to_parquet(data / "train.parquet", index=False)
    pd.DataFrame(reco).to_parquet(data / "reco.parquet", index=False)
    pd.DataFrame(
        {"ItemId": [1, 2, 3, 4, 5], "features": [np.array(f, dtype=float) for f in features]}
    ).to_parquet(data / "features.parquet", index=False)


def _similar_users_input(data: Path) -> None:
    """20 users in 4 groups: 8 shared items and one of their own each, so two users of
    a group have Jaccard 8/10 and users of different groups share nothing."""
    rows = []
    for user in range(20):
        group = user // 5
        items = [f"i{group * 10 + j}" for j in range(8)] + [f"own{user}"]
        rows += [(f"u{user:02d}", item, float(9 - r)) for r, item in enumerate(items)]
    pd.DataFrame(rows, columns=["user_id", "item_id", "score"]).to_parquet(
        data / "lists.parquet", index=False
    )


def _documents(data: Path) -> None:
    """40 documents of 30 random words, and 6 copies with one or two words edited."""
    rng = np.random.default_rng(11)
    vocab = [f"w{i}" for i in range(300)]
    rows = [(d, " ".join(rng.choice(vocab, 30))) for d in range(40)]
    for c in range(6):
        words = rows[c * 5][1].split()
        for position in rng.choice(30, int(rng.integers(1, 3)), replace=False):
            words[position] = f"edit{c}"
        rows.append((1000 + c, " ".join(words)))
    pd.DataFrame(rows, columns=["doc_id", "text"]).to_parquet(data / "docs.parquet", index=False)


def _datasets(directory: Path) -> tuple[dict[str, list[Path]], dict[str, Path]]:
    """({Parquet dataset: its files}, {other file: path}) of an output directory,
    without the files in :data:`VARYING`, by path relative to ``directory``. A dataset
    is a ``.parquet`` file or a ``.parquet`` directory of parts."""
    datasets: dict[str, list[Path]] = {}
    others: dict[str, Path] = {}
    for path in sorted(directory.rglob("*")):
        if not path.is_file() or path.name in VARYING:
            continue
        relative = path.relative_to(directory).as_posix()
        head = relative.split(".parquet", 1)[0] + ".parquet" if ".parquet" in relative else None
        if head is not None:
            datasets.setdefault(head, []).append(path)
        else:
            others[relative] = path
    return datasets, others


def dataset_rows(parts: list[Path]) -> list[dict]:
    """The rows of a Parquet dataset's parts, in a fixed order (summary.parquet without
    :data:`PLACE_COLUMNS`).

    How many parts Spark writes depends on the session's settings, which sparkeval
    chooses by the inputs' sizes where it knows them (small local inputs:
    :mod:`sparkeval.job.small_inputs`; a store's: left as they are), so the rows are
    compared, not the parts.
    """
    rows = []
    for path in parts:
        table = pq.read_table(path)
        if path.name == "summary.parquet":
            table = table.drop([c for c in PLACE_COLUMNS if c in table.column_names])
        rows += table.to_pylist()
    return sorted(rows, key=_key)


def _key(row: dict) -> str:
    return json.dumps(row, sort_keys=True, default=str)


def _as_uris(value, places: dict[str, str]):
    """``value`` (text or bytes) with each local path of ``places`` as its URI."""
    for local_path, uri in sorted(places.items(), key=lambda item: -len(item[0])):
        if isinstance(value, bytes):
            value = value.replace(local_path.encode(), uri.encode())
        elif isinstance(value, str):
            value = value.replace(local_path, uri)
    return value


def differences(local: Path, remote: Path, places: dict[str, str]) -> list[str]:
    """How a store's output (downloaded into ``remote``) differs from the local run's.

    The same Parquet datasets with the same rows; the same other files with the same
    bytes once each local path of ``places`` is written as the URI it stands for
    (summaries name their inputs and outputs as given, in text and in summary.parquet's
    run ids).
    """
    found = []
    local_sets, local_files = _datasets(local)
    remote_sets, remote_files = _datasets(remote)
    if sorted(local_sets) != sorted(remote_sets) or sorted(local_files) != sorted(remote_files):
        return [
            f"files: local {sorted(local_sets)} {sorted(local_files)} != "
            f"store {sorted(remote_sets)} {sorted(remote_files)}"
        ]
    for name, parts in local_sets.items():
        expected_rows = [
            {k: _as_uris(v, places) for k, v in row.items()} for row in dataset_rows(parts)
        ]
        got_rows = dataset_rows(remote_sets[name])
        if sorted(map(_key, expected_rows)) != sorted(map(_key, got_rows)):
            found.append(f"{name}: rows differ:\n{expected_rows[:20]}\n{got_rows[:20]}")
    for relative, path in local_files.items():
        expected = _as_uris(path.read_bytes(), places)
        got = remote_files[relative].read_bytes()
        if expected != got:
            found.append(f"{relative}: bytes differ:\n{expected[:3000]!r}\n{got[:3000]!r}")
    return found
