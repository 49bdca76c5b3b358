"""Small calls: a warm local session, and no Spark at all.

The cost a unit test or a notebook pays per call, beside its peers in the same run:

* warm local Spark session (``local[2]``, Spark's default 200 shuffle partitions):
  ``sparkeval.evaluate`` against MLlib's ``RankingEvaluator`` on 5 queries x 10 docs
  (one metric, nDCG@10) and on 1,000 x 100 (MLlib's 4 metrics: P@10, R@10, MAP, nDCG@10,
  one ``evaluate()`` each, on lists built and cached once); sparkeval's run and qrels
  frames cached, then as ``spark.createDataFrame`` makes them of pandas frames (local
  data) and of lists of rows (an RDD of unknown size), what unit tests pass;
* in process, no JVM: ``sparkeval.evaluate(None, pandas, pandas)`` against pytrec_eval
  on the same 4 measures, at 1,000 x 100 and 100,000 x 100.

Usage::

    python bench/bench_small.py [--repeat 20] [--large 100000]

Medians of ``--repeat`` calls of each system (half as many at 1,000 x 100 on Spark), the
two systems called in alternation after warm-up calls, printed as a Markdown table with
the ratio peer / sparkeval (above 1: sparkeval is faster).
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import numpy as np
import pandas as pd


def collection(queries: int, docs: int, seed: int = 1) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A run (distinct scores per query) and graded qrels of ``docs`` judged per query."""
    rng = np.random.default_rng(seed)
    qids = np.repeat([f"q{q}" for q in range(queries)], docs)
    dids = np.tile([f"d{d}" for d in range(docs)], queries)
    run = pd.DataFrame({"query_id": qids, "doc_id": dids, "score": rng.permutation(len(qids))})
    grades = rng.choice([0, 0, 0, 1, 2], size=len(qids))
    qrels = pd.DataFrame({"query_id": qids, "doc_id": dids, "relevance": grades})
    return run, qrels[qrels["relevance"] >= 0]


def alternating_medians(
    ours: Callable[[], object], theirs: Callable[[], object], repeat: int, warmup: int = 2
) -> tuple[float, float]:
    """Medians of ``repeat`` timed calls of each, in alternation (ours, theirs, ours,
    ...) after ``warmup`` untimed calls of each: a session that warms up as it goes
    favours neither."""
    for _ in range(warmup):
        ours()
        theirs()
    times: tuple[list[float], list[float]] = ([], [])
    for _ in range(repeat):
        for call, timed in zip((ours, theirs), times, strict=True):
            start = time.perf_counter()
            call()
            timed.append(time.perf_counter() - start)
    return statistics.median(times[0]), statistics.median(times[1])


def mllib_lists(spark, run: pd.DataFrame, qrels: pd.DataFrame):
    """MLlib's input: per query, the ranked doc indices and the relevant doc indices."""
    ranked = run.sort_values(["query_id", "score"], ascending=[True, False])
    index = {d: float(i) for i, d in enumerate(sorted(run["doc_id"].unique()))}
    predictions = ranked.groupby("query_id")["doc_id"].apply(lambda s: [index[d] for d in s])
    relevant = qrels[qrels["relevance"] > 0].groupby("query_id")["doc_id"]
    labels = relevant.apply(lambda s: [index[d] for d in s])
    rows = [(predictions[q], labels.get(q, [])) for q in predictions.index]
    return spark.createDataFrame(rows, "prediction array<double>, label array<double>").cache()


#: how the benchmark makes the run and qrels frames, and the label of its rows
FRAMES = {
    "cached": "cached frames",
    "pandas": "frames of local data",
    "rows": "frames of lists of rows",
}


def frames_of(spark, run: pd.DataFrame, qrels: pd.DataFrame, kind: str):
    """The run and qrels frames: ``spark.createDataFrame`` of the pandas frames
    (``pandas``: local data), the same cached (``cached``), or of lists of tuples
    (``rows``: an RDD, of a size Spark does not know)."""
    if kind == "rows":
        run_types = "query_id string, doc_id string, score bigint"
        qrels_types = "query_id string, doc_id string, relevance bigint"
        return (
            spark.createDataFrame(list(run.itertuples(index=False, name=None)), run_types),
            spark.createDataFrame(list(qrels.itertuples(index=False, name=None)), qrels_types),
        )
    run_df, qrels_df = spark.createDataFrame(run), spark.createDataFrame(qrels)
    if kind == "cached":
        run_df, qrels_df = run_df.cache(), qrels_df.cache()
        run_df.count(), qrels_df.count()
    return run_df, qrels_df


def spark_rows(
    spark, size: tuple[int, int], repeat: int, kind: str = "cached"
) -> list[tuple[str, float, float, str]]:
    """One row: sparkeval on the run and qrels frames made as :func:`frames_of` makes
    them against MLlib."""
    from pyspark.ml.evaluation import RankingEvaluator

    import sparkeval

    queries, docs = size
    run, qrels = collection(queries, docs)
    run_df, qrels_df = frames_of(spark, run, qrels, kind)
    lists = mllib_lists(spark, run, qrels)
    lists.count()
    if queries <= 10:
        ours = ["nDCG@10"]
        mllib = [("ndcgAtK", 10)]
    else:
        ours = ["P@10", "R@10", "AP", "nDCG@10"]
        mllib = [("precisionAtK", 10), ("recallAtK", 10), ("meanAveragePrecision", 10)]
        mllib.append(("ndcgAtK", 10))
    evaluators = [RankingEvaluator(metricName=m, k=k) for m, k in mllib]

    def sparkeval_call() -> None:
        sparkeval.evaluate(spark, run_df, qrels_df, ours).unpersist()

    def mllib_call() -> None:
        for evaluator in evaluators:
            evaluator.evaluate(lists)

    reps = repeat if queries <= 10 else max(3, repeat // 2)
    label = f"warm Spark, {queries} x {docs}, {len(ours)} measure(s), {FRAMES[kind]}"
    row = (label, *alternating_medians(sparkeval_call, mllib_call, reps), "MLlib RankingEvaluator")
    for frame in (run_df, qrels_df, lists):
        frame.unpersist()  # a cached frame stands in for equal local data
    return [row]


def in_process_rows(size: tuple[int, int], repeat: int) -> list[tuple[str, float, float, str]]:
    import pytrec_eval

    import sparkeval

    queries, docs = size
    run, qrels = collection(queries, docs)

    def sparkeval_call() -> None:
        sparkeval.evaluate(None, run, qrels, ["P@10", "R@10", "AP", "nDCG@10"])

    def pytrec_call() -> None:
        qrel: dict[str, dict[str, int]] = {}
        for q, d, r in qrels.itertuples(index=False):
            qrel.setdefault(q, {})[d] = int(r)
        ranking: dict[str, dict[str, float]] = {}
        for q, d, s in run.itertuples(index=False):
            ranking.setdefault(q, {})[d] = float(s)
        measures = {"P_10", "recall_10", "map", "ndcg_cut_10"}
        pytrec_eval.RelevanceEvaluator(qrel, measures).evaluate(ranking)

    reps = repeat if queries <= 10_000 else max(1, repeat // 10)
    label = f"no Spark, {queries} x {docs}, 4 measures"
    medians = alternating_medians(sparkeval_call, pytrec_call, reps, 1)
    return [(label, *medians, "pytrec_eval (dicts built inside)")]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--large", type=int, default=100_000, help="queries of the large case")
    args = parser.parse_args()
    from sparkeval.spark import build_session

    conf = {"spark.ui.enabled": "false", "spark.sql.shuffle.partitions": "200"}  # Spark default
    spark = build_session("local[2]", "bench-small", conf)
    rows = []
    for kind in FRAMES:
        for size in ((5, 10), (1000, 100)):
            rows += spark_rows(spark, size, args.repeat, kind)
    spark.stop()
    rows += in_process_rows((1000, 100), args.repeat)
    rows += in_process_rows((args.large, 100), args.repeat)
    print("| case | sparkeval | peer | peer | peer / sparkeval |")
    print("|---|---|---|---|---|")
    for label, ours, theirs, peer in rows:
        print(f"| {label} | {ours:.3f} s | {theirs:.3f} s | {peer} | {theirs / ours:.2f}x |")


if __name__ == "__main__":
    main()
