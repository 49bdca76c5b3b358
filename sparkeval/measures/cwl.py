"""cwl_eval's C/W/L measures as ir_measures names them: SDCG, NERR8, NERR9, NERR10,
NERR11, INST, INSQ and BPM.

In the C/W/L framework a user reads rank i and continues to rank i+1 with
probability C_i. The weight of rank i is

    W_i = P_i / sum_{j=1}^{N} P_j,   P_i = prod_{j<i} C_j   (P_1 = 1),

and a measure is the expected rate of gain sum_i W_i g_i. As cwl_eval computes them:

* the ranking is read to N = 1000 ranks (cwl_eval's depth): docs below rank 1000 are
  dropped and a shorter ranking is padded with gain-0 ranks up to 1000, so the
  normaliser sum_j P_j runs over 1000 ranks whatever the ranking's length;
* the gain of a doc judged with grade g is (clip(max(g, 0), min_rel, max_rel) - min_rel)
  / (max_rel - min_rel), in [0, 1] (ir_measures' scaling; a negative grade counts as
  0); a doc without a qrels entry has gain 0;
* an empty ranking scores 0 (every gain is 0), and so does a query without relevant docs.

No measure here depends on the qrels beyond the retrieved docs' grades (nothing is
divided by an ideal ranking). The padding ranks make the tail of the normaliser a
closed form of each segment's length L = min(n, N), so kernels only touch the
retrieved docs.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from sparkeval.measures.batch import NONPOOL, UNJUDGED, RankedBatch
from sparkeval.measures.registry import Param, measure

#: ranks cwl_eval reads of every ranking (its default max_n)
CWL_DEPTH = 1000

CWL = "cwl_eval (ireval/cwl), through ir_measures' cwl_eval provider"
AMM = "Azzopardi, Mackenzie & Moffat, ICTIR 2021 (ERR is not C/W/L)"
MIN_REL = Param(
    int, 0, help="the grade whose gain is 0 (lower grades are clipped to it; ir_measures' min_rel)"
)
MAX_REL = Param(
    int,
    None,
    required=True,
    help="the grade whose gain is 1 (higher grades are clipped to it; ir_measures' max_rel, "
    "required as there)",
)
T_PARAM = Param(
    float,
    1.0,
    minimum=0.0,
    exclusive_minimum=True,
    help="T > 0, the total gain the user wants (gains scaled to [0, 1])",
)
GAIN_TEXT = (
    "gain g_i = (clip(max(grade, 0), min_rel, max_rel) - min_rel) / (max_rel - min_rel), "
    "0 without a qrels entry; ranks beyond 1000 dropped, shorter rankings padded to 1000 "
    "ranks of gain 0"
)
GAIN_PARAMS = {"min_rel": MIN_REL, "max_rel": MAX_REL}
#: what cwl_eval's depth does to the measures whose published weights never reach 0
ENDLESS_TEXT = (
    "; the published weights run without end, cwl_eval's stop at rank 1000 and are "
    "renormalised there (INSQ with T = 1 has 0.15% of its weight past rank 1000)"
)


def check_gain_range(values: Mapping[str, Any]) -> str | None:
    """The error of a grade range that scales no gain (min_rel must be below max_rel)."""
    if values["max_rel"] is not None and values["min_rel"] >= values["max_rel"]:
        return f"min_rel={values['min_rel']} must be below max_rel={values['max_rel']}"
    return None


# ---------------------------------------------------------------- shared pieces
def cwl_gains(b: RankedBatch, p: Mapping[str, Any]) -> np.ndarray:
    """Each retrieved doc's gain in [0, 1] (see the module doc); 0 beyond rank 1000."""
    low, high = p["min_rel"], p["max_rel"]
    grade = np.where(b.rel == UNJUDGED, 0, np.maximum(b.rel, 0))
    scaled = (np.clip(grade, low, high) - low) / float(high - low)
    return np.where((b.rel == NONPOOL) | (b.positions > CWL_DEPTH), 0.0, scaled)


def read_lengths(b: RankedBatch) -> np.ndarray:
    """L = min(n, 1000) per segment: the ranks of the ranking cwl_eval reads."""
    return np.minimum(b.lengths, CWL_DEPTH)


def continuation_products(b: RankedBatch, factors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(P_i = prod_{j<i} f_j at each doc, prod_{j<=L} f_j per segment) for factors f_j >= 0
    of the docs within rank 1000 (the others count as 1).

    A product is exp(sum of logs), 0 once a factor is 0.
    """
    f = np.where(b.positions <= CWL_DEPTH, factors, 1.0)
    zero = f == 0.0
    logs = np.log(np.where(zero, 1.0, f))
    zeros = zero.astype(np.float64)
    before = np.exp(b.segment_cumsum(logs) - logs)
    before = np.where(b.segment_cumsum(zeros) - zeros > 0, 0.0, before)
    whole = np.where(b.segment_sum(zeros) > 0, 0.0, np.exp(b.segment_sum(logs)))
    return before, whole


def running_sum(b: RankedBatch, values: np.ndarray) -> np.ndarray:
    """G_i = g_1 + ... + g_i within each segment, added left to right and rounded after
    every addition, as cwl_eval's cumulative sum (its stopping rules compare G_i with T,
    so a compensated sum could stop one rank apart); 0 past rank 1000, which is not read.

    The loop runs over ranks (at most 1000), each step for all segments.
    """
    out = np.zeros(len(values), dtype=np.float64)
    if len(values) == 0:
        return out
    last = min(int(b.positions.max()), CWL_DEPTH)
    order = np.argsort(b.positions, kind="stable")
    bounds = np.searchsorted(b.positions[order], np.arange(1, last + 2))
    running = np.zeros(b.n_segments, dtype=np.float64)
    for rank in range(len(bounds) - 1):
        docs = order[bounds[rank] : bounds[rank + 1]]
        segs = b.seg[docs]
        running[segs] = running[segs] + values[docs]
        out[docs] = running[segs]
    return out


def last_value(b: RankedBatch, values: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """values at each segment's rank ``lengths`` (0 where that is 0)."""
    out = np.zeros(b.n_segments, dtype=np.float64)
    has = lengths > 0
    out[has] = values[b.starts[:-1][has] + lengths[has] - 1]
    return out


def rate(b: RankedBatch, weights: np.ndarray, gains: np.ndarray, tail: np.ndarray) -> np.ndarray:
    """sum_i P_i g_i / (sum_{i<=L} P_i + tail): the expected rate of gain, ``tail`` being
    the padding ranks' part of the normaliser."""
    inside = b.positions <= CWL_DEPTH
    norm = b.segment_sum(np.where(inside, weights, 0.0)) + tail
    return b.segment_sum(np.where(inside, weights * gains, 0.0)) / norm


def _cut(k: int | None) -> int:
    """The ranks a cutoff lets the user read (cwl_eval reads at most 1000)."""
    if k is None:
        raise ValueError("a cwl_eval measure with a cutoff was computed without one")
    return min(k, CWL_DEPTH)


# ---------------------------------------------------------------------- SDCG
@measure(
    "SDCG",
    description=(
        "scaled DCG (cwl_eval's NDCG-k): sum_{i<=k} g_i / log2(i+1) divided by "
        "sum_{i<=k} 1 / log2(i+1), DCG over the DCG of k docs of full gain whatever the "
        "qrels hold; C_i = log2(i+1) / log2(i+2) for i < k, else 0; " + GAIN_TEXT
    ),
    cutoff="required",
    rel=False,
    params=GAIN_PARAMS,
    references=CWL + "; Järvelin & Kekäläinen, ACM TOIS 20(4), 2002; Moffat et al., "
    "ACM TOIS 35(3), 2017 (C/W/L)",
    check=check_gain_range,
)
def sdcg(b: RankedBatch, k: int | None, p: Mapping[str, Any]) -> np.ndarray:
    """SDCG@k = sum_{i<=min(k,1000)} g_i w_i / sum_{i<=min(k,1000)} w_i, w_i = 1/log2(i+1)."""
    cut = _cut(k)
    discount = 1.0 / np.log2(b.positions + 1.0)
    weights = np.where(b.positions <= cut, discount, 0.0)
    full = float((1.0 / np.log2(np.arange(2, cut + 2, dtype=np.float64))).sum())
    return b.segment_sum(weights * cwl_gains(b, p)) / full


# ---------------------------------------------------------------------- NERR
@measure(
    "NERR8",
    description=(
        "not-but-nearly ERR, equation 8 (gain-based stopping truncated at k): "
        "C_i = 1 - g_i for i < k, else 0; P_i = prod_{j<i} (1 - g_j) for i <= k; value "
        "sum_i P_i g_i / sum_i P_i; " + GAIN_TEXT
    ),
    cutoff="required",
    rel=False,
    params=GAIN_PARAMS,
    references=CWL + "; " + AMM,
    check=check_gain_range,
)
def nerr8(b: RankedBatch, k: int | None, p: Mapping[str, Any]) -> np.ndarray:
    """P_i = Q_i = prod_{j<i} (1 - g_j) for i <= k; the padding ranks L < i <= k each
    weigh Q_{L+1}."""
    cut, gains = _cut(k), cwl_gains(b, p)
    before, whole = continuation_products(b, 1.0 - gains)
    weights = np.where(b.positions <= cut, before, 0.0)
    padding = np.maximum(cut - read_lengths(b), 0)
    return rate(b, weights, gains, whole * padding)


@measure(
    "NERR9",
    description=(
        "not-but-nearly ERR, equation 9 (gain-based stopping and a 1/i discount, truncated "
        "at k): C_i = i / (i+1) (1 - g_i) for i < k, else 0; P_i = (1/i) prod_{j<i} "
        "(1 - g_j) for i <= k; value sum_i P_i g_i / sum_i P_i; " + GAIN_TEXT
    ),
    cutoff="required",
    rel=False,
    params=GAIN_PARAMS,
    references=CWL + "; " + AMM,
    check=check_gain_range,
)
def nerr9(b: RankedBatch, k: int | None, p: Mapping[str, Any]) -> np.ndarray:
    """P_i = Q_i / i for i <= k; the padding ranks add Q_{L+1} (H_k - H_L), H the
    harmonic numbers."""
    cut, gains = _cut(k), cwl_gains(b, p)
    before, whole = continuation_products(b, 1.0 - gains)
    weights = np.where(b.positions <= cut, before / b.positions, 0.0)
    harmonic = np.concatenate(([0.0], np.cumsum(1.0 / np.arange(1, cut + 1, dtype=np.float64))))
    lengths = np.minimum(read_lengths(b), cut)
    return rate(b, weights, gains, whole * (harmonic[cut] - harmonic[lengths]))


@measure(
    "NERR10",
    description=(
        "not-but-nearly ERR, equation 10 (gain-based stopping with RBP's persistence p, to "
        "rank 1000): C_i = p (1 - g_i); P_i = p^(i-1) prod_{j<i} (1 - g_j); value "
        "sum_i P_i g_i / sum_i P_i; " + GAIN_TEXT + "; the published weights run without end, "
        "cwl_eval's stop at rank 1000 and are renormalised there (the weight past rank 1000 "
        "is at most p^1000 / (1 - p))"
    ),
    rel=False,
    params={
        "p": Param(float, 0.9, minimum=0.0, maximum=1.0, help="persistence p in [0, 1]"),
        **GAIN_PARAMS,
    },
    references=CWL + "; " + AMM,
    check=check_gain_range,
)
def nerr10(b: RankedBatch, k: int | None, p: Mapping[str, Any]) -> np.ndarray:
    """P_i = prod_{j<i} p (1 - g_j); the padding ranks add P_{L+1} sum_{m<N-L} p^m."""
    gains, pers = cwl_gains(b, p), p["p"]
    before, whole = continuation_products(b, pers * (1.0 - gains))
    powers = np.concatenate(([0.0], np.cumsum(pers ** np.arange(CWL_DEPTH, dtype=np.float64))))
    return rate(b, before, gains, whole * powers[CWL_DEPTH - read_lengths(b)])


def _insq_weights(positions: np.ndarray, T: float) -> np.ndarray:
    """prod_{j<i} ((j + 2T - 1) / (j + 2T))^2 = (2T / (i - 1 + 2T))^2 (a telescoping
    product), INSQ's P_i at ranks i."""
    return (2.0 * T / (positions - 1.0 + 2.0 * T)) ** 2


def _insq_tails(T: float) -> np.ndarray:
    """tails[L] = sum_{i=L+1}^{N} (2T / (i - 1 + 2T))^2 for L = 0..N."""
    weights = _insq_weights(np.arange(1, CWL_DEPTH + 1, dtype=np.float64), T)
    return np.concatenate((np.cumsum(weights[::-1])[::-1], [0.0]))


@measure(
    "NERR11",
    description=(
        "not-but-nearly ERR, equation 11 (gain-based stopping with INST's goal T, to rank "
        "1000): C_i = ((i + 2T - 1) / (i + 2T))^2 (1 - g_i); P_i = (2T / (i - 1 + 2T))^2 "
        "prod_{j<i} (1 - g_j); value sum_i P_i g_i / sum_i P_i; " + GAIN_TEXT + ENDLESS_TEXT
    ),
    rel=False,
    params={"T": T_PARAM, **GAIN_PARAMS},
    references=CWL + "; " + AMM,
    check=check_gain_range,
)
def nerr11(b: RankedBatch, k: int | None, p: Mapping[str, Any]) -> np.ndarray:
    """P_i = u_i Q_i with u_i INSQ's weight; past L, P_i = Q_{L+1} u_i, so the padding
    ranks add Q_{L+1} sum_{i>L} u_i."""
    gains, T = cwl_gains(b, p), p["T"]
    before, whole = continuation_products(b, 1.0 - gains)
    weights = _insq_weights(b.positions.astype(np.float64), T) * before
    return rate(b, weights, gains, whole * _insq_tails(T)[read_lengths(b)])


# --------------------------------------------------------------- INST, INSQ
@measure(
    "INSQ",
    description=(
        "INSQ: C_i = ((i + 2T - 1) / (i + 2T))^2, so P_i = (2T / (i - 1 + 2T))^2, the same "
        "weights for every ranking; value sum_{i<=1000} P_i g_i / sum_{i<=1000} P_i; "
        + GAIN_TEXT
        + ENDLESS_TEXT
    ),
    rel=False,
    params={"T": T_PARAM, **GAIN_PARAMS},
    references=CWL + "; Moffat, Scholer & Thomas, ADCS 2012",
    check=check_gain_range,
)
def insq(b: RankedBatch, k: int | None, p: Mapping[str, Any]) -> np.ndarray:
    """sum_i u_i g_i / sum_{i<=N} u_i, u_i = (2T / (i - 1 + 2T))^2."""
    gains, T = cwl_gains(b, p), p["T"]
    weights = _insq_weights(b.positions.astype(np.float64), T)
    inside = b.positions <= CWL_DEPTH
    return b.segment_sum(np.where(inside, weights * gains, 0.0)) / float(_insq_tails(T)[0])


def trigamma(x: np.ndarray) -> np.ndarray:
    """psi_1(x) = sum_{m>=0} 1 / (x + m)^2 for x > 0."""
    from scipy.special import polygamma

    return np.asarray(polygamma(1, x), dtype=np.float64)


@measure(
    "INST",
    description=(
        "INST, INSQ adapting to the gain still wanted: C_i = ((i + T + T_i - 1) / "
        "(i + T + T_i))^2 with T_i = T - G_i, G_i = g_1 + ... + g_i; P_i = prod_{j<i} C_j; "
        "value sum_i P_i g_i / sum_{i<=1000} P_i; " + GAIN_TEXT + ENDLESS_TEXT
    ),
    rel=False,
    params={"T": T_PARAM, **GAIN_PARAMS},
    references=CWL + "; Moffat, Bailey, Scholer & Thomas, ADCS 2015",
    check=check_gain_range,
)
def inst(b: RankedBatch, k: int | None, p: Mapping[str, Any]) -> np.ndarray:
    """Past L the gain is 0, so C_j = ((j - 1 + a) / (j + a))^2 with a = 2T - G_L
    telescopes: P_i = P_{L+1} ((L + a) / (i - 1 + a))^2, and the padding ranks add
    P_{L+1} (L + a)^2 (psi_1(L + a) - psi_1(N + a))."""
    gains, T = cwl_gains(b, p), p["T"]
    cumulative = running_sum(b, gains)
    left = b.positions + 2.0 * T - cumulative
    before, whole = continuation_products(b, ((left - 1.0) / left) ** 2)
    lengths = read_lengths(b)
    start = lengths + 2.0 * T - last_value(b, cumulative, lengths)
    padding = start**2 * (trigamma(start) - trigamma(start + (CWL_DEPTH - lengths)))
    return rate(b, before, gains, whole * padding)


# ----------------------------------------------------------------------- BPM
@measure(
    "BPM",
    description=(
        "static Bejeweled Player Model (cwl_eval's BPM-Static, K = k, every doc costing 1): "
        "the user reads to rank s = min(k, 1000, the first rank where G_i = g_1 + ... + g_i "
        ">= T) and the value is G_s / s (C_i = 1 while i < k and G_i < T, else 0); "
        "G_i is added in rank order as cwl_eval does; the gains are cwl_eval's scaled "
        "grades, not the paper's own; " + GAIN_TEXT
    ),
    cutoff="required",
    rel=False,
    params={"T": T_PARAM, **GAIN_PARAMS},
    references=CWL + "; Zhang et al., SIGIR 2017",
    check=check_gain_range,
)
def bpm(b: RankedBatch, k: int | None, p: Mapping[str, Any]) -> np.ndarray:
    """G is nondecreasing, so the ranks before the first G_i >= T are those with G_i < T."""
    cut, gains = _cut(k), cwl_gains(b, p)
    cumulative = running_sum(b, gains)
    inside = b.positions <= CWL_DEPTH
    short = b.segment_sum((inside & (cumulative < p["T"])).astype(np.float64)).astype(np.int64)
    reached = short < read_lengths(b)
    stop = np.where(reached, np.minimum(short + 1, cut), cut)
    read = b.positions <= stop[b.seg]
    return b.segment_sum(np.where(read, gains, 0.0)) / stop
