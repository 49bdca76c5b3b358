"""The report leads with the finding: with three runs compared, one of them clearly
worse on one measure, that regression is a row of the verdict table on the first
screen, and its plot leads that run's plots, although the plots are capped and
alphabetical order would leave it out."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from sparkeval.cli import main
from sparkeval.compare.pipeline import natural_order

pytestmark = pytest.mark.spark

#: 12 measures x 3 compared runs = 36 pairs, beyond the 24 plots of a report
MEASURES = ["AP", "P@10", "P@100", "P@1000", "P@15", "P@5", "R@10", "R@100", "RR", "nDCG@10"]
MEASURES += ["nDCG@20", "nDCG@5"]


@pytest.fixture(scope="module")
def report(spark, tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("findings")
    rng = np.random.default_rng(7)
    rows = []
    for q in range(40):
        for m in MEASURES:
            base = float(rng.uniform(0.4, 0.9))
            rows.append(("bm25", f"q{q:02d}", m, base))
            rows.append(("a_dense", f"q{q:02d}", m, base + float(rng.normal(0, 0.01))))
            rows.append(("b_hybrid", f"q{q:02d}", m, base + float(rng.normal(0, 0.01))))
            drop = 0.42 if m == "nDCG@10" else 0.0  # the key finding: a clear regression
            rows.append(("weak", f"q{q:02d}", m, base - drop + float(rng.normal(0, 0.01))))
    per_query = root / "eval" / "per_query.parquet"
    per_query.parent.mkdir()
    pd.DataFrame(rows, columns=["run_id", "query_id", "measure", "value"]).to_parquet(per_query)
    out = root / "cmp"
    argv = ["compare", "--per-query", str(per_query.parent), "--baseline", "bm25"]
    assert main([*argv, "--permutations", "2000", "--bootstrap", "200", "--out", str(out)]) == 0
    return out


def test_the_verdict_names_the_regression(report: Path) -> None:
    page = (report / "report.html").read_text()
    verdict = re.search(r'<section id="verdict">(.*?)</section>', page, re.S)
    assert verdict, "no verdict section"
    row = re.search(r"<tr><td[^>]*>weak</td><td[^>]*>nDCG@10</td>(.*?)</tr>", verdict[1], re.S)
    assert row, verdict[1]
    cells = re.findall(r"<td[^>]*>(.*?)</td>", row[1])
    # baseline, run value, delta, relative change, p (Holm), outcome
    assert re.fullmatch(r"-0\.4\d{3}", cells[2]) and cells[-1] == "worse"
    assert page.index('<section id="verdict">') < page.index('<table class="summary">')


def test_plots_lead_with_the_regression_and_represent_every_run(report: Path) -> None:
    page = (report / "report.html").read_text()
    alts = re.findall(r'<img alt="per-query delta of (\S+) on ([^":]+)', page)
    assert len(alts) == 24
    # grouped by run in the runs' order; within a run, significant and large first
    runs = [run for run, _ in alts]
    assert runs == sorted(runs)
    assert {run for run, _ in alts} == {"a_dense", "b_hybrid", "weak"}
    assert next(m for run, m in alts if run == "weak") == "nDCG@10"


def test_measures_keep_their_natural_order(report: Path) -> None:
    summary = json.loads((report / "summary.json").read_text())
    assert summary["measures"] == sorted(MEASURES, key=natural_order)
    assert summary["measures"][:4] == ["AP", "P@5", "P@10", "P@15"]


def test_plot_titles_name_the_baseline_run() -> None:
    from sparkeval.report.plots import delta_title

    assert delta_title("weak", "bm25", "nDCG@10") == "weak − bm25: nDCG@10"


def test_the_regression_is_on_the_first_screen_in_chromium(report: Path, tmp_path: Path) -> None:
    browser = next(
        (p for n in ("chromium", "chromium-browser", "google-chrome") if (p := shutil.which(n))),
        None,
    )
    if browser is None:
        pytest.skip("headless Chromium is not installed (apt-get install chromium)")
    # a copy of the page with a script that lists the verdict rows inside the first screen
    probe = tmp_path / "probe.html"
    script = (
        "<script>window.addEventListener('load', () => {"
        "const seen = [...document.querySelectorAll('#verdict tbody tr')].filter(r =>"
        " r.getBoundingClientRect().bottom <= window.innerHeight).map(r =>"
        " [...r.cells].slice(0, 2).map(c => c.textContent).join(' '));"
        "document.body.setAttribute('data-first-screen', JSON.stringify(seen));});</script>"
    )
    probe.write_text((report / "report.html").read_text().replace("</body>", script + "</body>"))
    dom = subprocess.run(
        [browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         f"--user-data-dir={tmp_path / 'profile'}", "--window-size=1280,1000",
         "--virtual-time-budget=5000", "--dump-dom", probe.as_uri()],
        capture_output=True, text=True, timeout=120, check=True,
    ).stdout  # fmt: skip
    found = re.search(r"data-first-screen=\"(.*?)\"", dom)
    assert found, dom[:500]
    first_screen = json.loads(found[1].replace("&quot;", '"'))
    assert "weak nDCG@10" in first_screen, first_screen
