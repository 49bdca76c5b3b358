"""The measures of the whole recommendation set in ``evaluate`` (``--train``):
``Coverage@k`` and ``Novelty@k``, and the peers' spellings under ``--compat replay``
and ``--compat rectools``.

Expected values: derived by hand on RePlay's documented example (whose published
values are RePlay's docstrings: Coverage@2 = 0.5555555555555556, Novelty@2 = 1/3),
RecTools' documented per-user values, and ``sparkeval diversity``'s own path (its
catalog_coverage and novelty for the same run, train and k). The local engine, Spark
and the in-process API give the same bits.
"""

from __future__ import annotations

import json
import math
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

import sparkeval
from sparkeval.errors import ConfigError
from sparkeval.measures.set_names import split_set_measures
from tests.jobs import CLI, job_env

#: RePlay's documented example (replay/metrics/coverage.py, novelty.py)
REPLAY_RECS = pd.DataFrame(
    {
        "user_id": [1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 3, 3, 3],
        "item_id": [3, 7, 10, 11, 2, 5, 8, 11, 1, 3, 4, 9, 2],
        "score": [0.6, 0.5, 0.4, 0.3, 0.2, 0.6, 0.5, 0.4, 0.3, 0.2, 1.0, 0.5, 0.1],
    }
)
REPLAY_TRAIN = pd.DataFrame(
    {
        "user_id": [1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 3, 3, 3],
        "item_id": [5, 6, 8, 9, 2, 5, 8, 11, 1, 3, 4, 9, 2],
    }
)
TRUTH = pd.DataFrame({"user_id": [1, 2, 3], "item_id": [3, 1, 9], "relevance": [1, 1, 1]})


def _cli(directory: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, *argv], cwd=directory, env=job_env(), capture_output=True, text=True, timeout=600
    )


def _evaluate(directory: Path, out: str, *extra: str, engine: str = "local") -> dict:
    result = _cli(
        directory, "evaluate", "--engine", engine, "--master", "local[2]", "--out", out, *extra
    )
    assert result.returncode == 0, result.stderr
    return json.loads((directory / out / "summary.json").read_text())


@pytest.fixture(scope="module")
def replay_case(tmp_path_factory) -> Path:
    directory = tmp_path_factory.mktemp("set-measures-replay")
    REPLAY_RECS.to_parquet(directory / "recs.parquet", index=False)
    REPLAY_TRAIN.to_parquet(directory / "train.parquet", index=False)
    TRUTH.to_parquet(directory / "truth.parquet", index=False)
    return directory


@pytest.fixture(scope="module")
def random_case(tmp_path_factory) -> Path:
    """40 users' lists of 12 integer items (ids 90..190: "99" sorts above "100" as
    text) with scores of one decimal (ties at the cutoffs), training rows with repeats
    that miss some recommended items, and truth rows."""
    directory = tmp_path_factory.mktemp("set-measures-random")
    rng = np.random.default_rng(7)
    rows = []
    for user in range(40):
        items = rng.choice(np.arange(90, 191), size=12, replace=False)
        for item in items:
            rows.append((f"u{user}", int(item), round(float(rng.random()), 1)))
    recs = pd.DataFrame(rows, columns=["user_id", "item_id", "score"])
    recs.to_parquet(directory / "recs.parquet", index=False)
    train = pd.DataFrame(
        {
            "user_id": [f"u{u}" for u in rng.integers(0, 45, 300)],
            "item_id": rng.integers(95, 200, 300).astype(np.int64),
        }
    )
    train.to_parquet(directory / "train.parquet", index=False)
    truth = recs.groupby("user_id").head(3)[["user_id", "item_id"]].assign(relevance=1)
    truth.to_parquet(directory / "truth.parquet", index=False)
    return directory


def test_hand_derived_values_on_replays_example(replay_case):
    """Top-2 lists {3, 7}, {5, 8}, {4, 9}: 5 of the 9 training items are covered (7 is
    not in training); of T = 13 training rows items 3 and 4 have 1, items 5, 8 and 9
    have 2, so novelty = (2 log2 13 + 3 (log2 13 - 1)) / 5 = log2 13 - 3/5 over 5 rows,
    1 left out."""
    summary = _evaluate(
        replay_case, "out", "--run", "recs.parquet", "--qrels", "truth.parquet",
        "--measures", "P@2,Coverage@2,Novelty@2", "--train", "train.parquet",
    )  # fmt: skip
    run = summary["runs"]["recs"]
    assert run["measures"]["Coverage@2"] == 5 / 9
    assert run["measures"]["Novelty@2"] == pytest.approx(math.log2(13) - 0.6, abs=1e-15)
    assert run["set_measures"]["Novelty@2"] == {"k": 2, "rows": 6, "rows_unseen_in_train": 1}
    assert run["set_measures"]["Coverage@2"]["recommended_outside_catalog"] == 1
    assert "Coverage@2" in summary["compat"]["definitions"]
    assert summary["parameters"]["set_measures"] == ["Coverage@2", "Novelty@2"]
    per_query = pq.read_table(replay_case / "out" / "per_query.parquet").to_pandas()
    assert set(per_query["measure"]) == {"P@2"}  # no per-query rows of set measures
    rows = pq.read_table(replay_case / "out" / "summary.parquet").to_pandas()
    assert list(rows["measure"]) == ["P@2", "Coverage@2", "Novelty@2"]


def test_replay_profile_computes_replays_novelty():
    """Under compat="replay", Novelty@2 is RePlay's: per train user 1 - seen share of
    the top-2 (user 1: both unseen, 1; users 2, 3: 0), mean 1/3 (RePlay's docstring);
    Coverage@2 is RePlay's Coverage, the same definition: 0.5555555555555556."""
    ev = sparkeval.evaluate_recommendations(
        None, REPLAY_RECS, TRUTH, "Precision@2,Coverage@2,Novelty@2", train=REPLAY_TRAIN,
        compat="replay",
    )  # fmt: skip
    measures = ev.report["runs"]["run"]["measures"]
    assert measures["Coverage@2"] == 0.5555555555555556
    assert measures["Novelty@2"] == 1 / 3
    assert ev.report["compat"]["definitions"]["Novelty@2"].startswith("RePlay's Novelty")
    assert ev.report["runs"]["run"]["set_measures"]["Novelty@2"]["users_without_lists"] == 0


def test_rectools_spellings_match_its_documented_values():
    """RecTools' docstring examples: MeanInvUserFreq per user (1.585, 1.585, 0) at k=1
    and (1.585, 1.585, 0.7925) at k=3 (log2 3 and log2 3 / 2); AvgRecPopularity per
    user (3, 1, 1) at k=1 and (2.5, 2, 1.5) at k=3; CatalogCoverage counts items."""
    reco = pd.DataFrame(
        {"user_id": [1, 2, 2, 3, 3], "item_id": [3, 2, 3, 1, 2], "rank": [1, 1, 2, 1, 2]}
    )
    prev = pd.DataFrame({"user_id": [1, 1, 2, 3], "item_id": [1, 2, 1, 1]})
    truth = pd.DataFrame({"user_id": [1, 2, 3], "item_id": [3, 2, 1]})
    third = math.log2(3)
    for k, expected in ((1, 2 * third / 3), (3, (2 * third + third / 2) / 3)):
        ev = sparkeval.evaluate_recommendations(
            None, reco, truth, f"Precision@{k},MeanInvUserFreq@{k},CatalogCoverage@{k}",
            train=prev, compat="rectools",
        )  # fmt: skip
        measures = ev.report["runs"]["run"]["measures"]
        assert measures[f"MeanInvUserFreq@{k}"] == pytest.approx(expected, rel=1e-15)
        assert measures[f"CatalogCoverage@{k}"] == 3.0
    reco = pd.DataFrame(
        {
            "user_id": [1, 1, 2, 2, 2, 3, 3],
            "item_id": [1, 2, 3, 1, 2, 3, 2],
            "rank": [1, 2, 1, 2, 3, 1, 2],
        }
    )
    prev = pd.DataFrame({"user_id": [1, 1, 2, 2, 3, 3], "item_id": [1, 2, 1, 3, 1, 2]})
    for k, expected in ((1, 5 / 3), (3, 2.0)):
        ev = sparkeval.evaluate_recommendations(
            None, reco, truth, f"Precision@{k},AvgRecPopularity@{k}", train=prev,
            compat="rectools",
        )  # fmt: skip
        assert ev.report["runs"]["run"]["measures"][f"AvgRecPopularity@{k}"] == expected


def test_equal_to_diversity_and_in_process(random_case):
    """Coverage@k and Novelty@k equal ``sparkeval diversity --k k``'s catalog_coverage
    and novelty (its own reading, cut and sums), at two cutoffs with tied scores; the
    in-process API gives the same bits."""
    summary = _evaluate(
        random_case, "out", "--run", "recs.parquet", "--qrels", "truth.parquet",
        "--measures", "nDCG@5,Coverage@5,Novelty@5,Coverage@9,Novelty@9",
        "--train", "train.parquet",
    )  # fmt: skip
    measures = summary["runs"]["recs"]["measures"]
    recs = pd.read_parquet(random_case / "recs.parquet")
    truth = pd.read_parquet(random_case / "truth.parquet")
    held = sparkeval.evaluate_recommendations(
        None, recs, truth, "nDCG@5,Coverage@5,Novelty@5,Coverage@9,Novelty@9",
        train=str(random_case / "train.parquet"),
    )  # fmt: skip
    in_process = held.report["runs"]["run"]["measures"]
    for k in (5, 9):
        result = _cli(
            random_case, "diversity", "--engine", "local", "--run", "recs.parquet",
            "--train", "train.parquet", "--k", str(k), "--out", f"div{k}",
        )  # fmt: skip
        assert result.returncode == 0, result.stderr
        diversity = json.loads((random_case / f"div{k}" / "summary.json").read_text())
        assert measures[f"Coverage@{k}"] == diversity["coverage"]["catalog_coverage"]
        assert measures[f"Novelty@{k}"] == diversity["novelty"]["novelty"]
        unseen = summary["runs"]["recs"]["set_measures"][f"Novelty@{k}"]["rows_unseen_in_train"]
        assert unseen == diversity["novelty"]["recommended_rows_unseen_in_train"]
        for name in (f"Coverage@{k}", f"Novelty@{k}"):
            assert in_process[name] == measures[name]
    assert 0 < measures["Coverage@5"] < measures["Coverage@9"] < 1


def test_spark_engine_writes_the_local_engines_summary(random_case):
    """``--engine spark`` (run rows read and ranked by Spark) writes the same
    summary.json, byte for byte, as the local engine."""
    extra = (
        "--run", "recs.parquet", "--qrels", "truth.parquet", "--train", "train.parquet",
        "--measures", "nDCG@5,Coverage@5,Novelty@5",
    )  # fmt: skip
    local = _evaluate(random_case, "out-local", *extra)
    on_spark = _evaluate(random_case, "out-spark", *extra, engine="spark")
    assert on_spark == local
    assert (random_case / "out-spark" / "summary.json").read_bytes() == (
        random_case / "out-local" / "summary.json"
    ).read_bytes()


def test_spark_api_equals_in_process_for_the_peers_spellings(spark, random_case):
    """On Spark DataFrames the peers' measures (RePlay's Novelty, RecTools'
    MeanInvUserFreq, AvgRecPopularity, CatalogCoverage) equal the in-process values
    to the bit."""
    recs = pd.read_parquet(random_case / "recs.parquet")
    truth = pd.read_parquet(random_case / "truth.parquet")
    train = pd.read_parquet(random_case / "train.parquet")
    cases = {
        "replay": "Precision@4,Novelty@4,Coverage@4,Surprisal@4,Surprisal@15",
        "rectools": "Precision@4,MeanInvUserFreq@4,AvgRecPopularity@4,CatalogCoverage@4",
    }
    for profile, measures in cases.items():
        held = sparkeval.evaluate_recommendations(
            None, recs, truth, measures, train=train, compat=profile
        )
        on_spark = sparkeval.evaluate_recommendations(
            spark, spark.createDataFrame(recs), spark.createDataFrame(truth), measures,
            train=spark.createDataFrame(train), compat=profile,
        )  # fmt: skip
        try:
            assert on_spark.report["runs"] == held.report["runs"]
            rows = {r["measure"]: r["value"] for r in on_spark.summary.collect()}
            assert rows == held.report["runs"]["run"]["measures"]
        finally:
            on_spark.unpersist()


def test_refusals(replay_case):
    """Without training data the CLI names --train and the API train=; a peer's
    spelling sparkeval does not compute, or a variant with parameters, is refused."""
    result = _cli(
        replay_case, "evaluate", "--run", "recs.parquet", "--qrels", "truth.parquet",
        "--measures", "P@2,Coverage@2", "--out", "refused",
    )  # fmt: skip
    assert result.returncode != 0
    assert "--train PATH" in result.stderr
    assert not (replay_case / "refused").exists()
    with pytest.raises(ConfigError, match="train="):
        sparkeval.evaluate_recommendations(None, REPLAY_RECS, TRUTH, "P@2,Novelty@2")
    with pytest.raises(ConfigError, match=r"Surprisal\(k=2\)@2.*takes no parameters"):
        sparkeval.evaluate_recommendations(
            None, REPLAY_RECS, TRUTH, "Precision@2,Surprisal(k=2)@2", train=REPLAY_TRAIN,
            compat="replay",
        )  # fmt: skip
    with pytest.raises(ConfigError, match="takes no parameters"):
        split_set_measures(["CatalogCoverage(normalize=True)@2"], "rectools")
    with pytest.raises(ConfigError, match="Microsoft Recommenders"):
        split_set_measures(["novelty@2"], "recommenders")


def test_names_per_profile():
    """The same spellings mean sparkeval's definitions outside the peers' profiles."""
    ranking, sets = split_set_measures(["nDCG@10", "coverage@10,novelty@5"], "trec")
    assert ranking == ["nDCG@10"]
    assert [(m.name, m.kind, m.k, m.typed) for m in sets] == [
        ("Coverage@10", "catalog_coverage", 10, "coverage@10"),
        ("Novelty@5", "novelty", 5, "novelty@5"),
    ]
    assert split_set_measures(["Coverage@10", "Novelty@5"], "mllib")[1][1].kind == "novelty"
    kinds = {
        profile: [m.kind for m in split_set_measures(["Coverage@3,Novelty@3"], profile)[1]]
        for profile in ("trec", "replay", "rectools")
    }
    assert kinds == {
        "trec": ["catalog_coverage", "novelty"],
        "replay": ["catalog_coverage", "unseen_share"],
        "rectools": ["catalog_coverage", "novelty"],
    }
    assert split_set_measures(["CatalogCoverage@3"], "rectools")[1][0].kind == "distinct_items"


def test_a_trec_run_is_measured_by_the_local_engine(replay_case):
    """The local engine measures the rows it reads from a TREC text run (tag ``recs``)
    as it does those of the Parquet run: the same values, without Spark (``--engine
    local`` would refuse a run that needs it)."""
    ranked = REPLAY_RECS.sort_values(["user_id", "score"], ascending=[True, False])
    lines = [
        f"{row.user_id} Q0 {row.item_id} {rank} {row.score} recs"
        for rank, row in zip(
            ranked.groupby("user_id").cumcount() + 1, ranked.itertuples(), strict=True
        )
    ]
    (replay_case / "recs.txt").write_text("\n".join(lines) + "\n")
    extra = ("--qrels", "truth.parquet", "--measures", "P@2,Coverage@3,Novelty@3")
    text = _evaluate(
        replay_case, "out-text", "--run", "recs.txt", *extra, "--train", "train.parquet"
    )
    table = _evaluate(
        replay_case, "out-table", "--run", "recs.parquet", *extra, "--train", "train.parquet"
    )
    assert text["runs"]["recs"]["measures"] == table["runs"]["recs"]["measures"]
    # top-3: {3, 7, 10}, {5, 8, 11}, {4, 9, 2}: all but 7 and 10 are training items, 7 of 9
    assert text["runs"]["recs"]["measures"]["Coverage@3"] == 7 / 9


def test_set_measures_refuse_a_tie_rule_they_do_not_follow(tmp_path: Path) -> None:
    """The top-k lists of Coverage@k are cut with ties by doc id: another tie rule is
    refused by name, on the command line and in Python, rather than half followed."""
    import pandas as pd

    from sparkeval.errors import ConfigError
    from sparkeval.evaluation.options import EvaluateConfig

    run = pd.DataFrame({"query_id": ["u1"], "doc_id": ["a"], "score": [1.0], "rank": [1]})
    qrels = pd.DataFrame({"query_id": ["u1"], "doc_id": ["a"], "relevance": [1]})
    train = pd.DataFrame({"query_id": ["u1"], "doc_id": ["a"]})
    with pytest.raises(ConfigError, match="cuts each run's top-k lists with tied scores"):
        sparkeval.evaluate(None, run, qrels, ["AP", "Coverage@5"], train=train, ties="rank")
    with pytest.raises(ConfigError, match="it does not follow --ties rank"):
        EvaluateConfig.load(
            run=[str(tmp_path / "r.txt")], qrels=str(tmp_path / "q.txt"),
            measures=["AP", "Coverage@5"], train=str(tmp_path / "t.txt"), ties="rank",
            out=str(tmp_path / "out"),
        )  # fmt: skip


def test_replay_surprisal_by_hand_on_every_engine(replay_case):
    """RePlay's Surprisal@2 on its documented example: U = 3 training users; item 3 has
    1 of them (weight log2 3 / log2 3 = 1), items 5, 8, 9 have 2 (weight
    log2(3/2) / log2 3 = 1 - 1/log2 3), item 7 none (cold, weight 1). Users: {3, 7} gives
    (1 + 1) / 2 = 1, {5, 8} gives 1 - 1/log2 3, {4, 9} (item 4: 1 user) gives
    (2 - 1/log2 3) / 2; the mean of the three is RePlay's 0.6845351232142715. The CLI on
    Spark (the replay profile's relevance rule needs it) and the in-process API give the
    same bits."""
    w = 1 - 1 / math.log2(3)
    want = (1 + w + (1 + w) / 2) / 3
    extra = (
        "--run", "recs.parquet", "--qrels", "truth.parquet", "--train", "train.parquet",
        "--compat", "replay", "--measures", "Precision@2,Surprisal@2,Surprisal@7",
    )  # fmt: skip
    on_spark = _evaluate(replay_case, "surprisal-spark", *extra, engine="spark")
    measures = on_spark["runs"]["recs"]["measures"]
    assert measures["Surprisal@2"] == pytest.approx(want, abs=1e-15)
    assert measures["Surprisal@2"] == pytest.approx(0.6845351232142715, abs=1e-12)
    assert on_spark["runs"]["recs"]["set_measures"]["Surprisal@2"] == {
        "k": 2, "users": 3, "train_users": 3, "rows_unseen_in_train": 1,
    }  # fmt: skip
    assert on_spark["compat"]["definitions"]["Surprisal@2"].startswith("RePlay's Surprisal")
    held = sparkeval.evaluate_recommendations(
        None, REPLAY_RECS, TRUTH, "Precision@2,Surprisal@2,Surprisal@7", train=REPLAY_TRAIN,
        compat="replay",
    )  # fmt: skip
    for name in ("Surprisal@2", "Surprisal@7"):
        assert held.report["runs"]["run"]["measures"][name] == measures[name]
    # user 3 has 3 rows: at k = 7 each user's sum is divided by 7, not by its rows
    assert measures["Surprisal@7"] < measures["Surprisal@2"]


def test_surprisal_only_under_replay():
    """Outside the replay profile ``Surprisal@k`` is a ranking measure's name, not a set
    measure (the registry refuses it as unknown); a training set of one user leaves
    log2 U = 0 and the value undefined (NaN), with its counts."""
    assert split_set_measures(["Surprisal@3"], "trec")[1] == []
    one = pd.DataFrame({"user_id": [1, 1], "item_id": [3, 5]})
    ev = sparkeval.evaluate_recommendations(
        None, REPLAY_RECS, TRUTH, "Precision@2,Surprisal@2", train=one, compat="replay"
    )
    run = ev.report["runs"]["run"]
    assert math.isnan(run["measures"]["Surprisal@2"])
    assert run["set_measures"]["Surprisal@2"]["train_users"] == 1


def test_the_peers_comparisons_of_two_runs_need_a_reference_run():
    """RePlay's Unexpectedness and RecTools' Intersection compare a run with a reference
    run: asked for without one, the error names --reference-run (reference_run= in
    Python); with parameters they are refused as the other set measures are."""
    assert split_set_measures(["Unexpectedness@5"], "replay")[1][0].kind == "unexpectedness"
    assert split_set_measures(["Intersection@5"], "rectools")[1][0].kind == "intersection"
    with pytest.raises(ConfigError, match="takes no parameters"):
        split_set_measures(["Intersection(ref_k=3)@5"], "rectools")
    with pytest.raises(ConfigError, match=r"it needs a reference run.*reference_run="):
        sparkeval.evaluate_recommendations(
            None, REPLAY_RECS, TRUTH, "Precision@2,Intersection@2", compat="rectools"
        )


#: a 3-user toy catalog: training a:{x, y}, b:{x, z}, c:{x} (T = 5 rows, U = 3 users;
#: item x has 3 rows and 3 users, y and z 1 each), top-2 lists a: [z, w], b: [y, x]
#: (w not in training), c without a list
TOY_TRAIN = pd.DataFrame({"query_id": ["a", "a", "b", "b", "c"], "doc_id": list("xyxzx")})
TOY_LISTS = pd.DataFrame({"query_id": ["a", "a", "b", "b"], "doc_id": list("zwyx")})
#: each kind's per-user values by its formula (set_values' docstring):
#: unseen_share: a 1 - 0/2, b 1 - 1/2 (x seen), c 1 (no list);
#: inverse_user_frequency: a (log2 3 + log2 3) / 2 (w absent: u = 1), b (log2 3 + 0) / 2;
#: recommended_popularity: a (1 + 0) / 2, b (1 + 3) / 2;
#: surprisal at k = 2 (weights log2(3 / u_i) / log2 3: x 0, y and z 1, w cold 1):
#: a (1 + 1) / 2, b (1 + 0) / 2
TOY_PER_USER = {
    "unseen_share": {"a": 1.0, "b": 0.5, "c": 1.0},
    "inverse_user_frequency": {"a": math.log2(3), "b": math.log2(3) / 2},
    "recommended_popularity": {"a": 0.5, "b": 2.0},
    "surprisal": {"a": 1.0, "b": 0.5},
}


def _exact_mean(values) -> float:
    """The mean of doubles from their exact rational sum, rounded once."""
    from fractions import Fraction

    return float(sum(Fraction(v) for v in values) / len(values))


def test_per_user_values_by_hand_on_a_toy_catalog():
    """Each mean-over-users kind gives each user the value its formula gives by hand,
    sorted by user id, and the exact mean of those values is the kind's value to the
    bit; the catalog-level kinds and the row mean ``novelty`` have none."""
    from sparkeval.diversity.set_values import PER_USER_KINDS, local_per_user, local_value

    assert set(TOY_PER_USER) == PER_USER_KINDS
    for kind, expected in TOY_PER_USER.items():
        frame = local_per_user(kind, TOY_LISTS, TOY_TRAIN, 2)
        assert list(frame["query_id"]) == list(expected)
        assert frame["value"].tolist() == pytest.approx(list(expected.values()), rel=1e-15)
        value = local_value(kind, TOY_LISTS, TOY_TRAIN, 2)["value"]
        assert value == _exact_mean(frame["value"].tolist())
    assert local_value("unseen_share", TOY_LISTS, TOY_TRAIN)["users_without_lists"] == 1
    for kind in ("catalog_coverage", "distinct_items", "novelty"):
        with pytest.raises(ValueError, match="no per-user values"):
            local_per_user(kind, TOY_LISTS, TOY_TRAIN)


def test_per_user_values_of_replays_example():
    """RePlay's documented case at k = 2: users 1, 2, 3 have the Novelty 1, 0, 0 (user
    1's items 3 and 7 are not in its history; users 2 and 3 saw both), mean 1/3."""
    from sparkeval.diversity.set_values import local_per_user
    from sparkeval.evaluation.set_measures import ranked_cut

    recs = REPLAY_RECS.rename(columns={"user_id": "query_id", "item_id": "doc_id"}).astype(
        {"query_id": str, "doc_id": str}
    )
    ranked = ranked_cut(recs)
    lists = ranked[ranked["_rank"] <= 2][["query_id", "doc_id"]]
    train = REPLAY_TRAIN.rename(columns={"user_id": "query_id", "item_id": "doc_id"})
    frame = local_per_user("unseen_share", lists, train.astype(str))
    assert frame["value"].tolist() == [1.0, 0.0, 0.0]
    assert _exact_mean(frame["value"].tolist()) == 1 / 3


@pytest.mark.spark
def test_spark_per_user_values_equal_local(spark, random_case):
    """On Spark each user's value of every mean-over-users kind is the local one to the
    bit, in the same order (40 users' tied lists cut at 4, training with repeats and
    users without lists)."""
    from sparkeval.diversity.set_values import PER_USER_KINDS, local_per_user, spark_per_user
    from sparkeval.evaluation.set_measures import ranked_cut

    recs = pd.read_parquet(random_case / "recs.parquet")
    recs = recs.rename(columns={"user_id": "query_id", "item_id": "doc_id"})
    recs = recs.astype({"doc_id": str})
    ranked = ranked_cut(recs)
    lists = ranked[ranked["_rank"] <= 4][["query_id", "doc_id"]].reset_index(drop=True)
    train = pd.read_parquet(random_case / "train.parquet")
    train = train.rename(columns={"user_id": "query_id", "item_id": "doc_id"})
    train = train.astype({"doc_id": str})
    spark_lists, spark_train = spark.createDataFrame(lists), spark.createDataFrame(train)
    for kind in sorted(PER_USER_KINDS):
        local = local_per_user(kind, lists, train, 4)
        rows = spark_per_user(kind, spark_lists, spark_train, 4).collect()
        assert [r["query_id"] for r in rows] == list(local["query_id"]), kind
        assert [r["value"] for r in rows] == local["value"].tolist(), kind
    shares = local_per_user("unseen_share", lists, train)
    assert set(shares["query_id"]) == set(train["query_id"])  # every training user
    assert (shares["value"] == 1.0).any() and (shares["value"] < 1.0).any()


def test_surprisal_per_user_is_undefined_with_one_training_user():
    """With one training user log2 U = 0: each user's Surprisal is NaN, as the mean."""
    from sparkeval.diversity.set_values import local_per_user

    one = TOY_TRAIN[TOY_TRAIN["query_id"] == "a"]
    frame = local_per_user("surprisal", TOY_LISTS, one, 2)
    assert list(frame["query_id"]) == ["a", "b"]
    assert frame["value"].isna().all()


#: RecTools' documented MeanInvUserFreq case (its docstring): at k = 3 users 1, 2, 3
#: get log2 3, log2 3 and log2 3 / 2 (U = 3 training users; item 1 has all 3, item 2
#: one, item 3 none: u = 1); AvgRecPopularity (t_i: item 1 3 rows, item 2 1, item 3 0)
#: gives user 1 [3] -> 0, user 2 [2, 3] -> 0.5, user 3 [1, 2] -> 2
RECTOOLS_RECO = pd.DataFrame(
    {"user_id": [1, 2, 2, 3, 3], "item_id": [3, 2, 3, 1, 2], "score": [1.0, 2.0, 1.0, 2.0, 1.0]}
)
RECTOOLS_PREV = pd.DataFrame({"user_id": [1, 1, 2, 3], "item_id": [1, 2, 1, 1]})
RECTOOLS_TRUTH = pd.DataFrame({"user_id": [1, 2], "item_id": [3, 2], "relevance": [1, 1]})


@pytest.fixture(scope="module")
def rectools_case(tmp_path_factory) -> Path:
    directory = tmp_path_factory.mktemp("set-measures-rectools")
    RECTOOLS_RECO.to_parquet(directory / "recs.parquet", index=False)
    RECTOOLS_PREV.to_parquet(directory / "train.parquet", index=False)
    RECTOOLS_TRUTH.to_parquet(directory / "truth.parquet", index=False)
    return directory


def test_per_user_rows_are_written_by_hand(rectools_case):
    """``per_user_set.parquet`` holds each user's MeanInvUserFreq@3 and
    AvgRecPopularity@3 (RecTools' documented values, derived above), sorted by user
    then measure order, user 3 without qrels included; CatalogCoverage has no rows;
    each summary value is the exact mean of its rows; ``--per-query`` prints them
    after the run's per-query rows. (``--relevance grade``: the profile's own rule is
    applied by Spark, and the local engine runs with the grades.)"""
    third = math.log2(3)
    result = _cli(
        rectools_case, "evaluate", "--engine", "local", "--out", "out", "--run",
        "recs.parquet", "--qrels", "truth.parquet", "--train", "train.parquet",
        "--compat", "rectools", "--relevance", "grade", "--per-query",
        "--measures", "Precision@3,MeanInvUserFreq@3,CatalogCoverage@3,AvgRecPopularity@3",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    rows = pq.read_table(rectools_case / "out" / "per_user_set.parquet").to_pylist()
    got = [(r["run_id"], r["query_id"], r["measure"], r["value"]) for r in rows]
    want = [
        ("recs", "1", "MeanInvUserFreq@3", third),
        ("recs", "1", "AvgRecPopularity@3", 0.0),
        ("recs", "2", "MeanInvUserFreq@3", third),
        ("recs", "2", "AvgRecPopularity@3", 0.5),
        ("recs", "3", "MeanInvUserFreq@3", third / 2),
        ("recs", "3", "AvgRecPopularity@3", 2.0),
    ]
    assert [g[:3] for g in got] == [w[:3] for w in want]
    assert [g[3] for g in got] == pytest.approx([w[3] for w in want], rel=1e-15)
    summary = json.loads((rectools_case / "out" / "summary.json").read_text())
    measures = summary["runs"]["recs"]["measures"]
    for name in ("MeanInvUserFreq@3", "AvgRecPopularity@3"):
        assert measures[name] == _exact_mean([r["value"] for r in rows if r["measure"] == name])
    per_query = pq.read_table(rectools_case / "out" / "per_query.parquet").to_pandas()
    assert set(per_query["measure"]) == {"P@3"}
    printed = [[c.strip() for c in line.split("\t")] for line in result.stdout.splitlines()]
    first = printed.index(["MeanInvUserFreq@3", "1", "1.5850"])
    assert printed[first - 1] == ["P@3", "2", "0.3333"]  # after the run's per-query rows
    assert printed[first + 5] == ["AvgRecPopularity@3", "3", "2.0000"]
    assert not [c for c in printed if c[0] == "CatalogCoverage@3" and c[1] != "all"]


@pytest.mark.spark
def test_per_user_rows_are_the_same_bytes_on_spark(rectools_case):
    """``--engine spark`` writes the local engine's ``per_user_set.parquet`` and
    ``summary.json`` byte for byte."""
    extra = (
        "--run", "recs.parquet", "--qrels", "truth.parquet", "--train", "train.parquet",
        "--compat", "rectools", "--relevance", "grade", "--measures",
        "Precision@2,AvgRecPopularity@2,MeanInvUserFreq@2,CatalogCoverage@2",
    )  # fmt: skip
    _evaluate(rectools_case, "bytes-local", *extra)
    _evaluate(rectools_case, "bytes-spark", *extra, engine="spark")
    for name in ("summary.json", "per_user_set.parquet/part-00000.parquet"):
        local = (rectools_case / "bytes-local" / name).read_bytes()
        assert (rectools_case / "bytes-spark" / name).read_bytes() == local, name
    written = rectools_case / "bytes-spark" / "per_user_set.parquet"
    assert sorted(p.name for p in written.iterdir()) == ["part-00000.parquet"]


def test_no_per_user_file_without_per_user_measures(replay_case):
    """Coverage@k and sparkeval's Novelty@k have no per-user values: no file."""
    _evaluate(
        replay_case, "no-per-user", "--run", "recs.parquet", "--qrels", "truth.parquet",
        "--measures", "P@2,Coverage@2,Novelty@2", "--train", "train.parquet",
    )  # fmt: skip
    assert not (replay_case / "no-per-user" / "per_user_set.parquet").exists()
