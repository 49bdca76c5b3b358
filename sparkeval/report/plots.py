"""Report plots drawn with matplotlib's Agg backend, returned as PNG data URIs.

Each function returns ``data:image/png;base64,...`` so that the HTML report is one
self-contained file that needs no network.

Example:
    >>> import numpy as np
    >>> uri = delta_bars(np.array([0.1, -0.2, 0.05]), "run A", "nDCG@10", True)
    >>> uri.startswith("data:image/png;base64,")
    True
"""

from __future__ import annotations

import base64
import io
from collections.abc import Mapping, Sequence

import numpy as np

_DPI = 96
_WIN = "#2b8a3e"
_LOSS = "#c92a2a"
_TIE = "#868e96"


def _figure(width: float, height: float):  # -> (Figure, Axes)
    import matplotlib

    matplotlib.use("Agg", force=True)
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=_DPI)
    return fig, fig.add_subplot(1, 1, 1)


def _to_uri(fig) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", bbox_inches="tight", dpi=_DPI)
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def distribution_plot(values_by_run: Mapping[str, np.ndarray], measure: str, baseline: str) -> str:
    """Box plots (with the mean marked) of one measure's per-query values, one box per run.

    The baseline comes first and is drawn in grey.
    """
    runs = list(values_by_run)
    data = [np.asarray(values_by_run[r], dtype=np.float64) for r in runs]
    fig, ax = _figure(max(4.0, 1.1 * len(runs) + 2.0), 3.2)
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
            patch.set_facecolor("#ced4da" if run == baseline else "#a5d8ff")
    ax.set_xticks(range(1, len(runs) + 1))
    ax.set_xticklabels([_short(r) for r in runs], rotation=20, ha="right")
    ax.set_ylabel(measure)
    ax.set_title(f"{measure}: per-query values")
    ax.grid(axis="y", alpha=0.3)
    return _to_uri(fig)


def delta_title(run: str, baseline: str, measure: str) -> str:
    """The title of a delta plot: ``run − baseline run: measure``."""
    return f"{_short(run)} − {_short(baseline)}: {measure}"


def delta_bars(
    deltas: np.ndarray, run: str, measure: str, higher_is_better: bool, baseline: str = "baseline"
) -> str:
    """Per-query deltas (run − baseline) sorted descending, as bars coloured by outcome.

    Green bars are queries the run wins (respecting the measure's direction), red
    ones losses, grey ties. Many queries are drawn as a filled curve instead of bars.
    """
    d = np.sort(np.asarray(deltas, dtype=np.float64))[::-1]
    fig, ax = _figure(6.4, 2.8)
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


def _short(text: str, width: int = 28) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def plot_labels(items: Sequence[str]) -> list[str]:
    """Shortened labels as drawn on the axes (for tests and captions)."""
    return [_short(t) for t in items]
