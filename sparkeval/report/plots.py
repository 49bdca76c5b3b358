"""Report plots drawn with matplotlib's Agg backend, returned as PNG data URIs.

Each function returns ``data:image/png;base64,...`` so that the HTML report is one
self-contained file that needs no network. Every figure has the same size
(:data:`FIGSIZE` at :data:`DPI`), so the report can lay them out in an even grid.
Binary measures (:func:`is_binary`) get their own plots: won/tied/lost counts
(:func:`outcome_bars`) instead of sorted deltas, the share of queries with 1
(:func:`share_plot`) instead of box plots.

Example:
    >>> import numpy as np
    >>> uri = delta_bars(np.array([0.1, -0.2, 0.05]), "run A", "nDCG@10", True)
    >>> uri.startswith("data:image/png;base64,")
    True
"""

from __future__ import annotations

import base64
import functools
import io
import math
from collections.abc import Callable, Mapping, Sequence
from statistics import NormalDist
from typing import Any

import numpy as np

#: resolution of every figure
DPI = 96
#: size of every figure in inches: 672 × 336 pixels at :data:`DPI`
FIGSIZE = (7.0, 3.5)
#: |delta| at most this counts as a tie, as in the comparison's wins/ties/losses
TIE_TOLERANCE = 1e-12
_WIN = "#2b8a3e"
_LOSS = "#c92a2a"
_TIE = "#868e96"
_BASELINE = "#ced4da"
_RUN = "#a5d8ff"


def plain_text(draw: Callable[..., str]) -> Callable[..., str]:
    """Draw with matplotlib's mathtext off: run ids and measure names are text, and a
    ``$`` in one (``run$2``) would otherwise start a formula and fail the report."""

    @functools.wraps(draw)
    def drawn(*args: Any, **kwargs: Any) -> str:
        import matplotlib

        with matplotlib.rc_context({"text.parse_math": False}):
            return draw(*args, **kwargs)

    return drawn


def _figure():  # -> (Figure, Axes)
    import matplotlib

    matplotlib.use("Agg", force=True)
    from matplotlib.figure import Figure

    fig = Figure(figsize=FIGSIZE, dpi=DPI, layout="constrained")
    return fig, fig.add_subplot(1, 1, 1)


def _to_uri(fig) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI)  # no tight bounding box: every PNG one size
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def is_binary(values: np.ndarray) -> bool:
    """Whether per-query values are all 0 or 1 (and there is at least one).

    Example:
        >>> is_binary(np.array([0.0, 1.0, 1.0])), is_binary(np.array([0.0, 0.5]))
        (True, False)
        >>> is_binary(np.array([]))
        False
    """
    v = np.asarray(values, dtype=np.float64)
    return bool(v.size) and bool(np.isin(v, (0.0, 1.0)).all())


def wilson_interval(k: int, n: int, alpha: float = 0.05) -> tuple[float, float]:
    """Wilson score interval of a proportion ``k / n`` at level ``1 - alpha``
    (NaN bounds when ``n`` is 0).

    Example: 5 of 10 at alpha 0.05 (z = 1.96) give
    0.5 ± 1.96 · sqrt(0.025 + 0.009604) / 1.38416, about (0.2366, 0.7634)::

        >>> [round(b, 4) for b in wilson_interval(5, 10)]
        [0.2366, 0.7634]
    """
    if n <= 0:
        return math.nan, math.nan
    z = NormalDist().inv_cdf(1 - alpha / 2)
    p = k / n
    scale = 1 + z * z / n
    center = (p + z * z / (2 * n)) / scale
    half = z / scale * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return max(0.0, center - half), min(1.0, center + half)


@plain_text
def distribution_plot(values_by_run: Mapping[str, np.ndarray], measure: str, baseline: str) -> str:
    """Box plots (with the mean marked) of one measure's per-query values, one box per run.

    The baseline comes first and is drawn in grey.
    """
    runs = list(values_by_run)
    data = [np.asarray(values_by_run[r], dtype=np.float64) for r in runs]
    fig, ax = _figure()
    if any(d.size for d in data):
        boxes = ax.boxplot(
            [d if d.size else np.array([np.nan]) for d in data],
            patch_artist=True,
            showmeans=True,
            widths=0.6,
            meanprops={
                "marker": "D",
                "markerfacecolor": "white",
                "markeredgecolor": "black",
                "markersize": 5,
            },
            medianprops={"color": "black"},
        )
        for run, patch in zip(runs, boxes["boxes"], strict=True):
            patch.set_facecolor(_BASELINE if run == baseline else _RUN)
    ax.set_xticks(range(1, len(runs) + 1))
    ax.set_xticklabels([_short(r) for r in runs], rotation=20, ha="right")
    ax.set_ylabel(measure)
    ax.set_title(f"{measure}: per-query values")
    ax.grid(axis="y", alpha=0.3)
    return _to_uri(fig)


def delta_title(run: str, baseline: str, measure: str) -> str:
    """The title of a delta plot: ``run − baseline run: measure``."""
    return f"{_short(run)} − {_short(baseline)}: {measure}"


@plain_text
def delta_bars(
    deltas: np.ndarray, run: str, measure: str, higher_is_better: bool, baseline: str = "baseline"
) -> str:
    """Per-query deltas (run − baseline) sorted descending, as bars coloured by outcome.

    Green bars are queries the run wins (respecting the measure's direction), red
    ones losses, grey ties. Many queries are drawn as a filled curve instead of bars.
    """
    d = np.sort(np.asarray(deltas, dtype=np.float64))[::-1]
    fig, ax = _figure()
    x = np.arange(d.size)
    better = d > 0 if higher_is_better else d < 0
    worse = d < 0 if higher_is_better else d > 0
    colors = np.where(better, _WIN, np.where(worse, _LOSS, _TIE))
    if d.size <= 400:
        ax.bar(x, d, width=1.0, color=colors, linewidth=0)
    else:
        ax.fill_between(
            x,
            d,
            0,
            where=d >= 0,
            color=_WIN if higher_is_better else _LOSS,
            step="mid",
            linewidth=0,
        )
        ax.fill_between(
            x, d, 0, where=d < 0, color=_LOSS if higher_is_better else _WIN, step="mid", linewidth=0
        )
    ax.axhline(0.0, color="black", linewidth=0.8)
    if d.size:
        ax.axhline(
            float(d.mean()),
            color="#1864ab",
            linewidth=1.0,
            linestyle="--",
            label=f"mean {d.mean():+.4f}",
        )
        ax.legend(loc="upper right", fontsize=8, frameon=False)
    ax.set_xlim(-0.5, max(d.size, 1) - 0.5)
    ax.set_xlabel(f"queries, sorted by delta (n={d.size})")
    ax.set_ylabel(f"Δ {measure}")
    ax.set_title(delta_title(run, baseline, measure))
    ax.grid(axis="y", alpha=0.3)
    return _to_uri(fig)


def outcome_counts(deltas: np.ndarray, higher_is_better: bool) -> tuple[int, int, int]:
    """Queries (won, tied, lost) by the run, in the measure's direction.

    Example:
        >>> outcome_counts(np.array([1.0, 0.0, -1.0, 1.0]), True)
        (2, 1, 1)
        >>> outcome_counts(np.array([1.0, 0.0, -1.0, 1.0]), False)
        (1, 1, 2)
    """
    d = np.asarray(deltas, dtype=np.float64)
    tied = np.abs(d) <= TIE_TOLERANCE
    up = (d > 0) & ~tied
    down = (d < 0) & ~tied
    won, lost = (up, down) if higher_is_better else (down, up)
    return int(won.sum()), int(tied.sum()), int(lost.sum())


@plain_text
def outcome_bars(
    deltas: np.ndarray, run: str, measure: str, higher_is_better: bool, baseline: str = "baseline"
) -> str:
    """The delta plot of a binary measure: bars of the queries won, tied and lost.

    Sorted 0/±1 differences would only show blocks; their counts say the same plainly.
    """
    won, tied, lost = outcome_counts(deltas, higher_is_better)
    n = won + tied + lost
    fig, ax = _figure()
    labels = ["won", "tied", "lost"]
    counts = [won, tied, lost]
    ax.barh(labels, counts, color=[_WIN, _TIE, _LOSS], height=0.6)
    ax.invert_yaxis()
    for y, c in enumerate(counts):
        share = f" ({100 * c / n:.0f}%)" if n else ""
        ax.annotate(f"{c}{share}", (c, y), xytext=(4, 0), textcoords="offset points", va="center")
    ax.set_xlim(0, max(n, 1) * 1.15)
    mean = float(np.mean(deltas)) if n else math.nan
    ax.set_xlabel(f"queries (n={n}); mean Δ {mean:+.4f}")
    ax.set_title(delta_title(run, baseline, measure))
    ax.grid(axis="x", alpha=0.3)
    return _to_uri(fig)


@plain_text
def share_plot(
    values_by_run: Mapping[str, np.ndarray], measure: str, baseline: str, alpha: float = 0.05
) -> str:
    """The distribution plot of a binary measure: each run's share of queries with 1,
    with its Wilson interval (:func:`wilson_interval`); the baseline first, in grey."""
    runs = list(values_by_run)
    fig, ax = _figure()
    shares, lows, highs = [], [], []
    for run in runs:
        v = np.asarray(values_by_run[run], dtype=np.float64)
        k, n = int((v == 1.0).sum()), int(v.size)
        low, high = wilson_interval(k, n, alpha)
        share = k / n if n else math.nan
        shares.append(share)
        lows.append(share - low if n else 0.0)
        highs.append(high - share if n else 0.0)
        if n:
            ax.annotate(
                f"{k}/{n}",
                (len(shares) - 1, high),
                xytext=(0, 3),
                textcoords="offset points",
                ha="center",
                fontsize=8,
            )
    x = np.arange(len(runs))
    ax.bar(
        x,
        np.nan_to_num(shares),
        width=0.6,
        color=[_BASELINE if r == baseline else _RUN for r in runs],
        yerr=[lows, highs],
        capsize=4,
    )
    ax.set_xticks(x)
    ax.set_xticklabels([_short(r) for r in runs], rotation=20, ha="right")
    ax.set_ylim(0, 1.12)
    ax.set_ylabel("share of queries with 1")
    ax.set_title(f"{measure}: share of queries with 1 ({(1 - alpha) * 100:g}% Wilson interval)")
    ax.grid(axis="y", alpha=0.3)
    return _to_uri(fig)


def _short(text: str, width: int = 28) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def plot_labels(items: Sequence[str]) -> list[str]:
    """Shortened labels as drawn on the axes (for tests and captions)."""
    return [_short(t) for t in items]
