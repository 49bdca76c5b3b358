"""The intent-aware (diversity) measures of TREC's ``ndeval`` for one query, in numpy.

A query has subtopics (intents) i = 1..m, judged in subtopic qrels
``query subtopic doc grade``; J(d, i) = 1 when doc d's grade for subtopic i is >= rel,
else 0. Only the m subtopics with at least one relevant doc count (ndeval's "actual
subtopics"); a query with none (m = 0) scores 0 on every measure.

With the run ranked (score descending, tied scores by the doc id's text ascending, as
``pyndeval`` ranks it) and r_{i,k} = sum_{j<=k} J(d_j, i) the docs of subtopic i in the
top k, the gain of rank k is

    g_k = sum_i J(d_k, i) (1 - alpha)^{r_{i,k-1}}

and, for a cutoff k (ndeval's "ideal ideal" normalisation, a rank 1 doc relevant to
every subtopic at every rank):

* ``alpha-DCG@k``  = sum_{j<=k} g_j / log2(1 + j), divided by
  sum_{j<=k} m (1 - alpha)^{j-1} / log2(1 + j) when k >= 2 (ndeval leaves k = 1
  undivided: alpha-DCG@1 = g_1);
* ``ERR-IA@k``     = sum_{j<=k} g_j / j, divided by sum_{j<=k} m (1 - alpha)^{j-1} / j
  when k >= 2 (ERR-IA@1 = g_1);
* ``alpha-nDCG@k`` and ``nERR-IA@k``: the value over the same value of the ideal
  ranking, 0 when the run's value is 0;
* ``NRBP``  = (1 - (1 - alpha) beta) / m * sum_j g_j beta^{j-1}, over every rank;
* ``nNRBP`` = NRBP over the ideal ranking's NRBP (0 when m = 0, where ndeval divides
  0 by 0);
* ``P-IA@k``  = sum_{j<=k} sum_i J(d_j, i) / (k m);
* ``strec@k`` = |{i : r_{i,k} > 0}| / m (subtopic recall);
* ``MAP-IA``  = (1/m) sum_i (1/R_i) sum_{j : J(d_j, i)} r_{i,j} / j, R_i the relevant
  docs of subtopic i in the qrels.

The ideal ranking is ndeval's greedy one over every doc of the query's qrels: at each
rank the doc of the largest gain sum_i J(d, i) (1 - alpha)^{r_i} given the docs
already placed, ties to the largest doc id (byte-wise).

Example (two subtopics, docs A: {1}, B: {1, 2}; the run ranks A, then B):

    >>> import numpy as np
    >>> judged = np.array([[True, False], [True, True]])
    >>> g = gains(judged, 0.5)
    >>> g.tolist()
    [1.0, 1.5]
    >>> round(alpha_dcg(g, 2, m=2, alpha=0.5), 6)  # (1 + 1.5/log2 3) / (2 + 1/log2 3)
    0.739812
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: ndeval's defaults of alpha (redundancy) and beta (NRBP's patience)
DEFAULT_ALPHA = 0.5
DEFAULT_BETA = 0.5


def gains(judged: np.ndarray, alpha: float) -> np.ndarray:
    """g_k of each rank of ``judged`` (ranks x subtopics, booleans J(d_k, i))."""
    if judged.shape[0] == 0:
        return np.zeros(0)
    j = judged.astype(np.float64)
    before = np.cumsum(j, axis=0) - j  # r_{i,k-1}
    return np.asarray((j * np.power(1.0 - alpha, before)).sum(axis=1), dtype=np.float64)


def _discount(ranks: int) -> np.ndarray:
    """1 / log2(1 + k) for k = 1..ranks, as ndeval computes it (log 2 / log(k + 1))."""
    k = np.arange(1, ranks + 1, dtype=np.float64)
    out = np.log(2.0) / np.log(k + 1.0)
    if ranks:
        out[0] = 1.0
    return out


def _cut_sum(weighted: np.ndarray, k: int) -> float:
    return float(weighted[:k].sum())


def _ideal_ideal(m: int, alpha: float, k: int, weight: np.ndarray) -> float:
    """sum_{j<=k} m (1 - alpha)^{j-1} weight_j."""
    return float((m * np.power(1.0 - alpha, np.arange(k, dtype=np.float64)) * weight).sum())


def alpha_dcg(g: np.ndarray, k: int, m: int, alpha: float) -> float:
    """ndeval's alpha-DCG@k of the gains ``g`` (see the module text)."""
    if m == 0:
        return 0.0
    total = _cut_sum(g * _discount(len(g)), k)
    return total if k == 1 else total / _ideal_ideal(m, alpha, k, _discount(k))


def err_ia(g: np.ndarray, k: int, m: int, alpha: float) -> float:
    """ndeval's ERR-IA@k of the gains ``g`` (see the module text)."""
    if m == 0:
        return 0.0
    inverse = 1.0 / np.arange(1, len(g) + 1, dtype=np.float64)
    total = _cut_sum(g * inverse, k)
    if k == 1:
        return total
    return total / _ideal_ideal(m, alpha, k, 1.0 / np.arange(1, k + 1, dtype=np.float64))


def nrbp(g: np.ndarray, m: int, alpha: float, beta: float) -> float:
    """ndeval's NRBP of the gains ``g`` over every rank (see the module text)."""
    if m == 0:
        return 0.0
    decay = np.power(beta, np.arange(len(g), dtype=np.float64))
    return float((g * decay).sum()) * (1.0 - (1.0 - alpha) * beta) / m


def precision_ia(judged: np.ndarray, k: int, m: int) -> float:
    """P-IA@k: the relevant (doc, subtopic) pairs of the top k over k m."""
    return float(judged[:k].sum()) / (k * m) if m else 0.0


def subtopic_recall(judged: np.ndarray, k: int, m: int) -> float:
    """strec@k: the subtopics with a relevant doc in the top k, over m."""
    return float(judged[:k].any(axis=0).sum()) / m if m else 0.0


def ap_ia(judged: np.ndarray, relevant: np.ndarray, m: int) -> float:
    """MAP-IA of one query: the mean over the m subtopics with relevant docs of their
    average precision (``relevant``: R_i per subtopic)."""
    if m == 0 or judged.shape[0] == 0:
        return 0.0
    j = judged.astype(np.float64)
    ranks = np.arange(1, j.shape[0] + 1, dtype=np.float64)[:, None]
    per_subtopic = (j * np.cumsum(j, axis=0) / ranks).sum(axis=0)
    has = relevant > 0
    return float((per_subtopic[has] / relevant[has]).sum()) / m


def ideal_order(doc_ids: list[str], judged: np.ndarray, alpha: float) -> np.ndarray:
    """ndeval's greedy ideal ranking of the qrels docs ``doc_ids`` (rows of ``judged``):
    the row indices, best first (see the module text for its ties). The docs relevant
    to no subtopic gain nothing wherever they stand: they follow, largest id first."""
    keys = [d.encode("utf-8") for d in doc_ids]
    by_id = sorted(range(len(doc_ids)), key=lambda i: keys[i], reverse=True)  # largest first
    useful = [i for i in by_id if judged[i].any()]
    rest = [i for i in by_id if not judged[i].any()]
    rows = judged[useful].astype(np.float64).reshape(len(useful), judged.shape[1])
    n = len(useful)
    weight = np.ones(judged.shape[1], dtype=np.float64)
    left = np.ones(n, dtype=bool)
    out = np.empty(n, dtype=np.int64)
    for rank in range(n):
        total = np.zeros(n, dtype=np.float64)
        for i in range(rows.shape[1]):  # subtopic by subtopic, as ndeval adds them
            total = total + rows[:, i] * weight[i]
        score = np.where(left, total, -1.0)
        best = int(np.argmax(score))  # the first maximum: the largest id among ties
        out[rank] = useful[best]
        left[best] = False
        weight = weight * np.where(rows[best] > 0, 1.0 - alpha, 1.0)
    return np.concatenate([out, np.asarray(rest, dtype=np.int64)])


@dataclass(frozen=True)
class QueryJudgements:
    """One query's subtopic judgements: its judged docs, J as booleans (docs x
    subtopics), R_i, m, and the gains of its ideal ranking (per alpha)."""

    doc_ids: list[str]
    judged: np.ndarray
    relevant: np.ndarray
    m: int

    @classmethod
    def of(cls, doc_ids: list[str], judged: np.ndarray) -> QueryJudgements:
        relevant = judged.sum(axis=0)
        return cls(doc_ids, judged, relevant, int((relevant > 0).sum()))

    def run_rows(self, ranked_docs: list[str]) -> np.ndarray:
        """J of each rank of a ranked list of doc ids (unjudged docs: all False)."""
        index = {d: i for i, d in enumerate(self.doc_ids)}
        out = np.zeros((len(ranked_docs), self.judged.shape[1]), dtype=bool)
        for rank, doc in enumerate(ranked_docs):
            row = index.get(doc)
            if row is not None:
                out[rank] = self.judged[row]
        return out

    def ideal_gains(self, alpha: float) -> np.ndarray:
        return gains(self.judged[ideal_order(self.doc_ids, self.judged, alpha)], alpha)


def query_value(
    kind: str,
    k: int | None,
    rows: np.ndarray,
    query: QueryJudgements,
    alpha: float,
    beta: float,
    ideal: np.ndarray | None = None,
) -> float:
    """The value of one measure ``kind`` (``alpha_dcg``, ``alpha_ndcg``, ``err_ia``,
    ``nerr_ia``, ``nrbp``, ``nnrbp``, ``p_ia``, ``strec``, ``ap_ia``) at cutoff ``k``
    for the ranked rows ``rows`` (J per rank); ``ideal``: the ideal ranking's gains."""
    m = query.m
    if kind in ("p_ia", "strec", "ap_ia"):
        if kind == "ap_ia":
            return ap_ia(rows, query.relevant, m)
        assert k is not None
        return precision_ia(rows, k, m) if kind == "p_ia" else subtopic_recall(rows, k, m)
    g = gains(rows, alpha)
    if kind in ("nrbp", "nnrbp"):
        value = nrbp(g, m, alpha, beta)
        if kind == "nrbp" or value == 0.0:
            return value
        assert ideal is not None
        return value / nrbp(ideal, m, alpha, beta)
    assert k is not None
    base = alpha_dcg if kind in ("alpha_dcg", "alpha_ndcg") else err_ia
    value = base(g, k, m, alpha)
    if kind in ("alpha_dcg", "err_ia") or value == 0.0:
        return value
    assert ideal is not None
    return value / base(ideal, k, m, alpha)
