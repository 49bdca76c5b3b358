"""The comparison report reads top down: verdict, gate, means, differences, plots, details.

A small hand-made summary and comparison table (no Spark). Two runs, A and B, against
the baseline ``base`` on three measures, alpha 0.05:

============  ==========  ========  =====  =====  ===============================
run, measure  baseline    run       Δ      p      verdict
============  ==========  ========  =====  =====  ===============================
A nDCG@10     0.40        0.35      -0.05  0.01   worse, -0.05 / 0.40 = -12.5%
A HitRate@10  0.60        0.80      +0.20  0.20   did not move
A loss        0.25        0.30      +0.05  0.02   worse (lower is better), +20.0%
B nDCG@10     0.40        0.44      +0.04  0.003  better, +0.04 / 0.40 = +10.0%
B HitRate@10  0.60        0.60      0.00   1.0    did not move
B loss        0.25        0.20      -0.05  0.05   did not move (p = alpha is not < alpha)
============  ==========  ========  =====  =====  ===============================

p is the Holm-adjusted randomization p-value. HitRate@10's per-query values are all 0
or 1, the others are not.
"""

from __future__ import annotations

import base64
import re
import struct
from typing import Any

import numpy as np
import pandas as pd
import pytest

from sparkeval.compare.pipeline import COMPARISON_COLUMNS
from sparkeval.report import html as report_html
from sparkeval.report import plots
from sparkeval.report.html import render_html
from sparkeval.report.markdown import render_markdown

MEASURES = ["nDCG@10", "HitRate@10", "loss"]
HIGHER = {"nDCG@10": True, "HitRate@10": True, "loss": False}
# run, measure, baseline mean, run mean, delta, Holm-adjusted randomization p
ROWS = [
    ("A", "nDCG@10", 0.40, 0.35, -0.05, 0.01),
    ("A", "HitRate@10", 0.60, 0.80, 0.20, 0.20),
    ("A", "loss", 0.25, 0.30, 0.05, 0.02),
    ("B", "nDCG@10", 0.40, 0.44, 0.04, 0.003),
    ("B", "HitRate@10", 0.60, 0.60, 0.0, 1.0),
    ("B", "loss", 0.25, 0.20, -0.05, 0.05),
]
# per-query 0/1 values of HitRate@10 on 10 queries; deltas A - base: +1 on q0, q1, q7,
# -1 on q4, 0 elsewhere: A wins 3, ties 6, loses 1
HIT_BASE = [0, 0, 1, 1, 1, 1, 0, 0, 1, 1]
HIT_A = [1, 1, 1, 1, 0, 1, 0, 1, 1, 1]
HIT_B = HIT_BASE


def _comparison(rows: list[tuple[str, str, float, float, float, float]]) -> pd.DataFrame:
    records = []
    for run, measure, base, mean, delta, p in rows:
        records.append(
            {
                "run_id": run,
                "baseline": "base",
                "measure": measure,
                "mean": mean,
                "baseline_mean": base,
                "delta": delta,
                "p_ttest": p,
                "p_randomization": p,
                "ci_low": delta - 0.02,
                "ci_high": delta + 0.02,
                "wins": 3,
                "ties": 6,
                "losses": 1,
                "p_ttest_holm": p,
                "p_randomization_holm": p,
                "n_queries": 10,
                "n_run_only": 0,
                "n_baseline_only": 0,
                "n_undefined": 0,
                "randomization_exact": True,
                "higher_is_better": HIGHER[measure],
            }
        )
    return pd.DataFrame(records, columns=list(COMPARISON_COLUMNS))


def _measure(mean: float, low: float | None, high: float | None, undefined: int = 0) -> dict:
    return {
        "mean": mean,
        "ci_low": low,
        "ci_high": high,
        "n_defined": 10 - undefined,
        "n_undefined": undefined,
    }


def _summary(sampled: bool = False) -> dict[str, Any]:
    return {
        "baseline": "base",
        "runs_compared": ["A", "B"],
        "measures": MEASURES,
        "settings": {"permutations": 1000, "bootstrap": 500, "seed": 7, "alpha": 0.05},
        "runs": {
            # the baseline listed last: the means table still puts it first
            "A": {
                "queries": 10,
                "measures": {
                    "nDCG@10": _measure(0.35, 0.25, 0.45, undefined=2),
                    "HitRate@10": _measure(0.8, 0.5, 1.0),
                    "loss": _measure(0.30, None, None),
                },
            },
            "B": {
                "queries": 10,
                "measures": {
                    "nDCG@10": _measure(0.44, 0.34, 0.54),
                    "HitRate@10": _measure(0.6, 0.25, 0.95),
                    "loss": _measure(0.20, 0.15, 0.25),
                },
            },
            "base": {
                "queries": 10,
                "measures": {
                    "nDCG@10": _measure(0.40, 0.30, 0.50),
                    "HitRate@10": _measure(0.6, 0.25, 0.95),
                    "loss": _measure(0.25, 0.20, 0.30),
                },
            },
        },
        "gate": {
            "conditions": ["nDCG@10 drop > 1% p<0.05"],
            "passed": False,
            "failures": [{"run_id": "A", "message": "run A: nDCG@10 drop 12.5% > 1%"}],
        },
        "plots": {"sampled": sampled},
        "notes": ["a note for the details"],
    }


def _plot_values() -> pd.DataFrame:
    rows = []
    cont = np.linspace(0.1, 0.9, 10)
    for run, shift_ndcg, shift_loss in (("base", 0.0, 0.0), ("A", -0.05, 0.05), ("B", 0.04, -0.05)):
        for q in range(10):
            rows.append((run, "nDCG@10", f"q{q}", float(cont[q] + shift_ndcg)))
            rows.append((run, "loss", f"q{q}", float(cont[::-1][q] / 3 + shift_loss)))
    for run, hits in (("base", HIT_BASE), ("A", HIT_A), ("B", HIT_B)):
        rows += [(run, "HitRate@10", f"q{q}", float(h)) for q, h in enumerate(hits)]
    return pd.DataFrame(rows, columns=["run_id", "measure", "query_id", "value"])


def _plot_deltas() -> pd.DataFrame:
    values = _plot_values()
    base = values[values.run_id == "base"].set_index(["measure", "query_id"])["value"]
    out = []
    for run in ("A", "B"):
        run_values = values[values.run_id == run].set_index(["measure", "query_id"])["value"]
        delta = (run_values - base).rename("delta").reset_index()
        out.append(delta.assign(run_id=run))
    return pd.concat(out)[["run_id", "measure", "query_id", "delta"]]


@pytest.fixture(scope="module")
def page() -> str:
    return render_html(
        _summary(sampled=True),
        _comparison(ROWS),
        _plot_values(),
        _plot_deltas(),
        {"Summary of lsh": {"pairs": 42}},
    )


def _section(page: str, sid: str) -> str:
    found = re.search(rf'<section id="{sid}">(.*?)</section>', page, re.S)
    assert found, f"no section {sid}"
    return found[1]


def _cells(table_html: str) -> list[list[str]]:
    body = table_html.split("<tbody>")[1].split("</tbody>")[0]
    rows = re.findall(r"<tr>(.*?)</tr>", body, re.S)
    return [re.findall(r"<td[^>]*>(.*?)</td>", row, re.S) for row in rows]


def _png_size(uri: str) -> tuple[int, int]:
    data = base64.b64decode(uri.split(",", 1)[1])
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


# ----------------------------------------------------------------------------- HTML


def test_sections_come_top_down(page: str) -> None:
    ids = re.findall(r'<section id="([^"]+)"><h2>', page)
    assert ids == ["verdict", "gate", "means", "differences", "plots", "details"]


def test_verdict_table_lists_the_significant_changes(page: str) -> None:
    verdict = _section(page, "verdict")
    assert "Holm-adjusted randomization test, α = 0.05" in verdict
    assert _cells(verdict.split('<table class="verdict">')[1]) == [
        ["A", "nDCG@10", "0.4000", "0.3500", "-0.0500", "-12.5%", "0.01", "worse"],
        ["A", "loss", "0.2500", "0.3000", "+0.0500", "+20.0%", "0.02", "worse"],
        ["B", "nDCG@10", "0.4000", "0.4400", "+0.0400", "+10.0%", "0.003", "better"],
    ]
    assert '<td class="worse">worse</td>' in verdict
    assert '<td class="better">better</td>' in verdict


def test_verdict_lists_what_did_not_move(page: str) -> None:
    verdict = _section(page, "verdict")
    unmoved = verdict.split('<ul class="unmoved">')[1].split("</ul>")[0]
    assert re.findall(r"<li>(.*?)</li>", unmoved) == [
        "<code>A</code>: HitRate@10 (Δ +0.2000)",
        "<code>B</code>: HitRate@10 (Δ +0.0000), loss (Δ -0.0500)",
    ]


def test_verdict_when_nothing_moved() -> None:
    quiet = [(r, m, b, v, d, 0.5) for r, m, b, v, d, _ in ROWS]
    page = render_html(_summary(), _comparison(quiet), None, None)
    verdict = _section(page, "verdict")
    assert "No run differs significantly from <code>base</code> on any measure" in verdict
    assert "<table" not in verdict
    assert "<code>A</code>: nDCG@10 (Δ -0.0500), HitRate@10 (Δ +0.2000), loss (Δ +0.0500)" in (
        verdict
    )
    text = render_markdown(_summary(), _comparison(quiet))
    assert "**No run differs significantly from `base` on any measure**" in text


def test_gate_section(page: str) -> None:
    gate = page.split('<section id="gate">')[1].split("</section>")[0]
    assert '<span class="fail">FAILED</span>' in gate
    assert "run A: nDCG@10 drop 12.5% &gt; 1%" in gate


def test_means_with_their_intervals_baseline_first(page: str) -> None:
    means = _section(page, "means")
    headers = re.findall(r"<th>(.*?)</th>", means)
    assert headers == ["measure", "base (baseline)", "A", "B"]
    rows = _cells(means)
    assert rows[0] == ["queries", "10", "10", "10"]
    assert rows[1] == [
        "nDCG@10",
        '0.4000 <span class="ci">[0.3000, 0.5000]</span>',
        '0.3500 <span class="ci">[0.2500, 0.4500]</span> <span class="muted">(2 undef.)</span>',
        '0.4400 <span class="ci">[0.3400, 0.5400]</span>',
    ]
    # no interval (fewer than two values): the mean alone
    assert rows[3][2] == "0.3000"
    assert "95% Student t interval" in means


def test_differences_table_and_legend(page: str) -> None:
    diff = _section(page, "differences")
    assert "percentile bootstrap of the mean Δ" in diff
    rows = _cells(diff.split('<table class="summary">')[1])
    assert len(rows) == 6
    assert rows[0][:6] == ["A", "nDCG@10", "0.3500", "0.4000", "-0.0500 *†", "[-0.0700, -0.0300]"]


def test_plots_grouped_by_run_and_binary_measures_get_other_plots(page: str) -> None:
    section = _section(page, "plots")
    assert "deterministic sample of the queries" in section
    runs = re.findall(r'<h3 class="run"><code>(\w+)</code>', section)
    assert runs == ["A", "B"]
    groups = section.split('<h3 id="distributions">')[0].split('<h3 class="run">')[1:]
    # A: significant pairs by relative size (loss 0.05/0.25 before nDCG@10 0.05/0.40),
    # then the rest; B: its significant nDCG@10, then loss (0.2) before HitRate@10 (0)
    kinds_a = re.findall(r'<figure data-kind="([\w-]+)"><img alt="([^"]+)"', groups[0])
    assert kinds_a == [
        ("sorted-deltas", "per-query delta of A on loss"),
        ("sorted-deltas", "per-query delta of A on nDCG@10"),
        ("outcomes", "per-query delta of A on HitRate@10: queries won, tied, lost"),
    ]
    kinds_b = re.findall(r'<figure data-kind="([\w-]+)"><img alt="([^"]+)"', groups[1])
    assert [k for k, _ in kinds_b] == ["sorted-deltas", "sorted-deltas", "outcomes"]
    dist = section.split('<h3 id="distributions">')[1]
    assert re.findall(r'<figure data-kind="([\w-]+)"><img alt="([^"]+)"', dist) == [
        ("box", "distribution of nDCG@10"),
        ("share", "share of queries with HitRate@10 = 1"),
        ("box", "distribution of loss"),
    ]
    assert "display:grid" in page and "repeat(2," in page


def test_binary_plots_get_the_counts(monkeypatch) -> None:
    calls: dict[str, Any] = {}
    real_outcomes, real_share = plots.outcome_bars, plots.share_plot

    def outcomes(deltas, run, measure, higher, baseline="baseline"):
        calls[f"outcomes {run}"] = plots.outcome_counts(deltas, higher)
        return real_outcomes(deltas, run, measure, higher, baseline)

    def share(values_by_run, measure, baseline, alpha=0.05):
        calls["share"] = {r: (int(v.sum()), v.size) for r, v in values_by_run.items()}
        return real_share(values_by_run, measure, baseline, alpha)

    monkeypatch.setattr(report_html.plots, "outcome_bars", outcomes)
    monkeypatch.setattr(report_html.plots, "share_plot", share)
    render_html(_summary(), _comparison(ROWS), _plot_values(), _plot_deltas())
    # A - base on HitRate@10: +1 on q0, q1, q7, -1 on q4; B equals the baseline
    assert calls["outcomes A"] == (3, 6, 1)
    assert calls["outcomes B"] == (0, 10, 0)
    assert calls["share"] == {"base": (6, 10), "A": (8, 10), "B": (6, 10)}


def test_every_figure_has_one_size(page: str) -> None:
    uris = re.findall(r'src="(data:image/png;base64,[^"]+)"', page)
    assert len(uris) == 6 + 3  # 2 runs x 3 delta plots, 3 distribution plots
    # 7.0 x 3.5 inches at 96 dpi
    assert {_png_size(u) for u in uris} == {(672, 336)}


def test_delta_plots_are_capped_with_a_note() -> None:
    page = render_html(
        _summary(), _comparison(ROWS), _plot_values(), _plot_deltas(), max_delta_plots=4
    )
    section = _section(page, "plots")
    assert "4 of 6 run × measure pairs shown" in section
    groups = section.split('<h3 class="run">')[1:]
    # overall order: each run's leader (A loss, B nDCG@10), the other significant pair
    # (A nDCG@10), then A HitRate@10 (0.2 / 0.6) before B loss (0.05 / 0.25): cut there
    assert re.findall(r'alt="per-query delta of (\w+) on ([^":]+)', "".join(groups)) == [
        ("A", "loss"),
        ("A", "nDCG@10"),
        ("A", "HitRate@10"),
        ("B", "nDCG@10"),
    ]


def test_details_hold_settings_extras_and_notes(page: str) -> None:
    details = _section(page, "details")
    assert "1000 sign flips" in details and "500 resamples" in details
    assert "seed 7" in details and "α = 0.05" in details
    assert "Summary of lsh" in details and "a note for the details" in details


def test_no_plots_says_so() -> None:
    page = render_html(_summary(), _comparison(ROWS), None, None)
    assert "No plots in this report." in _section(page, "plots")
    assert "<img" not in page


# ----------------------------------------------------------------------------- Markdown


def test_markdown_reads_top_down() -> None:
    text = render_markdown(_summary(), _comparison(ROWS), {"Summary of lsh": {"pairs": 42}})
    headings = [line for line in text.splitlines() if line.startswith("### ")]
    assert headings == [
        "### Verdict",
        "### Quality gate: FAILED ❌",
        "### Each run's mean",
        "### Differences from the baseline",
        "### Summary of lsh",
    ]
    lines = text.splitlines()
    assert "| A | nDCG@10 | 0.4000 | 0.3500 | -0.0500 | -12.5% | 0.01 | worse ▼ |" in lines
    assert "| A | loss | 0.2500 | 0.3000 | +0.0500 | +20.0% | 0.02 | worse ▼ |" in lines
    assert "| B | nDCG@10 | 0.4000 | 0.4400 | +0.0400 | +10.0% | 0.003 | better ▲ |" in lines
    assert "- `A`: HitRate@10 (Δ +0.2000)" in lines
    assert "- `B`: HitRate@10 (Δ +0.0000), loss (Δ -0.0500)" in lines
    assert "| measure | base (baseline) | A | B |" in lines
    assert (
        "| nDCG@10 | 0.4000 [0.3000, 0.5000] | 0.3500 [0.2500, 0.4500] (2 undef.) "
        "| 0.4400 [0.3400, 0.5400] |"
    ) in lines
    assert "![" not in text and "data:image" not in text
    assert text.index("| A | nDCG@10 | 0.3500 | 0.4000 |") > text.index("### Differences")


def test_dollar_signs_in_names_are_drawn_as_text() -> None:
    from sparkeval.report import plots

    # two dollar signs would start and end a mathtext formula, which fails to parse
    weird = "run$\\frac$"
    deltas = np.array([0.1, -0.2, 0.0])
    assert plots.delta_bars(deltas, weird, "nDCG$@10$", True, "base$x$").startswith("data:")
    assert plots.outcome_bars(np.array([1.0, -1.0]), weird, "hit$^$", True, "b").startswith("data:")
    values = {weird: np.array([0.2, 0.4]), "base$x$": np.array([0.3])}
    assert plots.distribution_plot(values, "AP$_$", "base$x$").startswith("data:")
    assert plots.share_plot({weird: np.array([0.0, 1.0])}, "hit$$", weird).startswith("data:")
