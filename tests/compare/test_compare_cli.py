"""``sparkeval compare`` end to end: exit codes, gate reasons, outputs, report rendering."""

from __future__ import annotations

import json
import os
import re
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from sparkeval.cli import main
from tests.conftest import ROOT

pytestmark = pytest.mark.spark

N_QUERIES = 12


def _write_inputs(root: Path) -> tuple[Path, Path, Path]:
    """Known values: run 'worse' loses 0.2 nDCG@10 on every query; 'same' ties the baseline."""
    rng = np.random.default_rng(3)
    base = rng.uniform(0.3, 0.9, N_QUERIES).round(3)
    rows = []
    for i in range(N_QUERIES):
        q = f"q{i:02d}"
        rows += [
            ("base", q, "nDCG@10", float(base[i])),
            ("base", q, "AP", float(base[i]) / 2),
            ("worse", q, "nDCG@10", float(base[i]) - 0.2),
            ("worse", q, "AP", float(base[i]) / 2 + 0.01),
            ("same", q, "nDCG@10", float(base[i])),
            ("same", q, "AP", float(base[i]) / 2),
        ]
    per_query = root / "eval" / "per_query.parquet"
    per_query.parent.mkdir(parents=True)
    pd.DataFrame(rows, columns=["run_id", "query_id", "measure", "value"]).to_parquet(per_query)
    runs = []
    for run in ("base", "worse", "same"):
        for i in range(N_QUERIES):
            order = rng.permutation(15) if run == "worse" else np.arange(15)
            runs += [(run, f"q{i:02d}", f"doc{d}", float(15 - r)) for r, d in enumerate(order)]
    runs_path = root / "runs.parquet"
    pd.DataFrame(runs, columns=["run_id", "query_id", "doc_id", "score"]).to_parquet(runs_path)
    extra = root / "lsh"
    extra.mkdir()
    (extra / "summary.json").write_text(
        json.dumps({"near_duplicates": {"pairs": 42, "threshold": 0.8}, "bands": [18, 7]})
    )
    return per_query.parent, runs_path, extra


@pytest.fixture(scope="module")
def inputs(tmp_path_factory, spark):
    return _write_inputs(tmp_path_factory.mktemp("compare-cli"))


@pytest.fixture(scope="module")
def failed_gate(inputs, tmp_path_factory):
    eval_dir, runs, extra = inputs
    out = tmp_path_factory.mktemp("compare-out") / "cmp"
    code = main(
        [
            "compare",
            "--per-query",
            str(eval_dir),
            "--baseline",
            "base",
            "--permutations",
            "5000",
            "--bootstrap",
            "500",
            "--seed",
            "1",
            "--runs",
            str(runs),
            "--extra-summary",
            str(extra),
            "--k",
            "5",
            "--fail-if",
            "nDCG@10 drop > 1% p<0.05",
            "--fail-if",
            "AP < 0.01",
            "--out",
            str(out),
        ]
    )
    return code, out


def test_failed_gate_exit_code_and_reasons(failed_gate) -> None:
    code, out = failed_gate
    assert code == 3
    summary = json.loads((out / "summary.json").read_text())
    gate = summary["gate"]
    assert gate["passed"] is False
    assert gate["conditions"] == ["nDCG@10 drop > 1% p<0.05", "AP < 0.01"]
    assert [(f["run_id"], f["condition"]) for f in gate["failures"]] == [
        ("worse", "nDCG@10 drop > 1% p<0.05")
    ]
    assert "p_randomization_holm" in gate["failures"][0]["message"]
    assert (out / "_SUCCESS").exists()


def test_outputs_written(failed_gate) -> None:
    _, out = failed_gate
    table = pd.read_parquet(out / "comparison.parquet")
    assert set(table["run_id"]) == {"worse", "same"}
    worse = table[(table.run_id == "worse") & (table.measure == "nDCG@10")].iloc[0]
    assert worse["delta"] == pytest.approx(-0.2)
    assert worse["losses"] == N_QUERIES and worse["n_queries"] == N_QUERIES
    # 2^12 = 4096 <= 5000: exact; only the two constant sign vectors are as extreme
    assert worse["p_randomization"] == pytest.approx(2 / 4096)
    same = table[(table.run_id == "same") & (table.measure == "nDCG@10")].iloc[0]
    assert same["ties"] == N_QUERIES and same["p_randomization"] == 1.0
    assert np.isnan(same["p_ttest"])  # all differences zero: undefined
    deltas = pd.read_parquet(out / "deltas.parquet")
    assert len(deltas) == 2 * 2 * N_QUERIES
    rd = pd.read_parquet(out / "rank_distance.parquet")
    assert set(rd["run_id"]) == {"worse", "same"}
    same_rd = rd[rd.run_id == "same"]
    assert (same_rd["kendall_tau"] == 1.0).all()
    assert same_rd["rbo"].to_numpy() == pytest.approx(np.ones(N_QUERIES))
    summary = json.loads((out / "summary.json").read_text())
    assert summary["exposure"]["vs_baseline"]["same"]["js"] == 0.0
    assert summary["runs"]["base"]["queries"] == N_QUERIES
    md = (out / "report.md").read_text()
    assert "Quality gate: FAILED" in md and "| worse | nDCG@10 |" in md
    headings = [line for line in md.splitlines() if line.startswith("### ")]
    assert headings[:4] == [
        "### Verdict",
        "### Quality gate: FAILED ❌",
        "### Each run's mean",
        "### Differences from the baseline",
    ]
    assert "near_duplicates.pairs" in md


def test_gate_passes_exit_0(inputs, tmp_path) -> None:
    eval_dir, _, _ = inputs
    out = tmp_path / "ok"
    code = main(
        [
            "compare",
            "--per-query",
            str(eval_dir / "per_query.parquet"),
            "--baseline",
            "base",
            "--run",
            "same",
            "--measures",
            "ndcg_cut_10",
            "--permutations",
            "100",
            "--bootstrap",
            "50",
            "--no-plots",
            "--fail-if",
            "nDCG@10 < 0.01",
            "--fail-if",
            "ndcg_cut_10 drop > 0.001",
            "--out",
            str(out),
        ]
    )
    assert code == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["gate"] == {
        "conditions": ["nDCG@10 < 0.01", "ndcg_cut_10 drop > 0.001"],
        "passed": True,
        "failures": [],
    }
    assert summary["runs_compared"] == ["same"] and summary["measures"] == ["nDCG@10"]


def test_bad_condition_exits_2_before_writing(inputs, tmp_path, capsys) -> None:
    eval_dir, _, _ = inputs
    out = tmp_path / "never"
    code = main(
        [
            "compare",
            "--per-query",
            str(eval_dir),
            "--baseline",
            "base",
            "--fail-if",
            "nDCG@10 ~ 0.3",
            "--out",
            str(out),
        ]
    )
    assert code == 2
    assert "bad --fail-if condition" in capsys.readouterr().err
    assert not out.exists()


def test_condition_on_a_measure_not_compared_exits_2(inputs, tmp_path, capsys) -> None:
    eval_dir, _, _ = inputs
    out = tmp_path / "never"
    code = main(
        [
            "compare",
            "--per-query",
            str(eval_dir),
            "--baseline",
            "base",
            "--measures",
            "AP",
            "--no-plots",
            "--permutations",
            "10",
            "--bootstrap",
            "10",
            "--fail-if",
            "nDCG@10 < 0.3",
            "--out",
            str(out),
        ]
    )
    assert code == 2
    assert "is not compared" in capsys.readouterr().err
    assert not out.exists()


def test_subprocess_cli(inputs, tmp_path) -> None:
    eval_dir, _, _ = inputs
    out = tmp_path / "sub"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "sparkeval.cli",
            "compare",
            "--per-query",
            str(eval_dir),
            "--baseline",
            "base",
            "--measures",
            "nDCG@10",
            "--permutations",
            "200",
            "--bootstrap",
            "100",
            "--no-plots",
            "--master",
            "local[1]",
            "--fail-if",
            "nDCG@10 drop > 0.1",
            "--out",
            str(out),
            "--quiet",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    # a scheduler's log: exit 3 and one line saying which condition failed, nothing else
    assert proc.returncode == 3, proc.stderr[-2000:]
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr[-2000:]
    assert lines[0].startswith("sparkeval compare: gate failed: run worse: nDCG@10 drop 0.2 > 0.1")
    assert "nDCG@10 drop > 0.1" in lines[0]
    assert json.loads((out / "summary.json").read_text())["gate"]["passed"] is False
    # stdout: the comparison table, a header line and a row per compared run and measure
    table = [line.split("\t") for line in proc.stdout.splitlines()]
    assert table[0][:5] == ["run_id", "measure", "mean", "baseline", "delta"]
    rows = {(row[0], row[1]): row for row in table[1:]}
    assert rows[("worse", "nDCG@10")][4].startswith("-0.2")


def _chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    pytest.skip("headless Chromium is not installed (apt-get install chromium)")
    return ""


def _run_chromium(browser: str, profile: Path, *arguments: str) -> str:
    """The stdout of a headless Chromium run with ``arguments`` (checked)."""
    return subprocess.run(
        [*_chromium_args(browser, profile), *arguments],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout


def _chromium_args(browser: str, profile: Path) -> list[str]:
    return [
        browser,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={profile}",
    ]


def _png_size(path: Path) -> tuple[int, int]:
    """(width, height) from a PNG's IHDR chunk."""
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    width, height = struct.unpack(">II", head[16:24])
    return width, height


def test_report_renders_in_headless_chromium(inputs, failed_gate, tmp_path) -> None:
    browser = _chromium()
    eval_dir, _, _ = inputs
    _, out = failed_gate
    page = (out / "report.html").resolve().as_uri()
    dom = _run_chromium(browser, tmp_path / "p1", "--dump-dom", page)
    # top down: what changed, the gate, the means, the differences, then plots and details
    sections = re.findall(r'<section id="([^"]+)">\s*<h2>', dom)
    assert sections == ["verdict", "gate", "means", "differences", "plots", "details"]
    # 'worse' loses 0.2 nDCG@10 on each of the 12 queries: exact p = 2/4096, Holm over
    # two runs 4/4096 < 0.05; it gains 0.01 AP on each, the same p; 'same' never moves
    per_query = pd.read_parquet(eval_dir / "per_query.parquet")
    base = per_query[(per_query.run_id == "base") & (per_query.measure == "nDCG@10")]
    base_mean = float(base["value"].mean())
    verdict = dom.split('<section id="verdict">')[1].split("</section>")[0]
    cells = [
        re.findall(r"<td[^>]*>(.*?)</td>", row)
        for row in re.findall(r"<tr>(.*?)</tr>", verdict.split("<tbody>")[1])
    ]
    rows = {(row[0], row[1]): row[2:] for row in cells}
    assert sorted(rows) == [("worse", "AP"), ("worse", "nDCG@10")]
    assert rows[("worse", "nDCG@10")] == [
        f"{base_mean:.4f}",
        f"{base_mean - 0.2:.4f}",
        "-0.2000",
        f"{-0.2 / base_mean * 100:+.1f}%",
        "&lt;0.001",
        "worse",
    ]
    assert rows[("worse", "AP")][2] == "+0.0100" and rows[("worse", "AP")][-1] == "better"
    assert "<code>same</code>: AP (Δ +0.0000), nDCG@10 (Δ +0.0000)" in verdict
    assert '<table class="summary">' in dom
    # one row per (run, measure) in the summary table
    body = dom.split('<table class="summary">')[1].split("</table>")[0]
    assert body.count("<tr>") == 1 + 4
    assert '<td class="l">worse</td><td class="l">nDCG@10</td>' in body
    assert "FAILED" in dom and "Summary of lsh" in dom and "near_duplicates.pairs" in dom
    images = [chunk.split('"')[0] for chunk in dom.split('src="data:image/png;base64,')[1:]]
    assert len(images) == 2 + 4  # 2 distribution plots + 4 delta plots
    assert all(len(img) > 5000 for img in images)
    # at 1400 px the plots sit two to a row, none shrunk below 600 px
    probe = tmp_path / "probe.html"
    script = (
        "<script>window.addEventListener('load', () => {"
        "const boxes = [...document.querySelectorAll('.plots img')].map(i => {"
        "const r = i.getBoundingClientRect(); return [Math.round(r.top), Math.round(r.width)];});"
        "document.body.setAttribute('data-boxes', JSON.stringify(boxes));});</script>"
    )
    probe.write_text((out / "report.html").read_text().replace("</body>", script + "</body>"))
    probed = _run_chromium(
        browser,
        tmp_path / "p3",
        "--window-size=1400,1000",
        "--virtual-time-budget=5000",
        "--dump-dom",
        probe.as_uri(),
    )
    found = re.search(r'data-boxes="(.*?)"', probed)
    assert found, probed[:500]
    boxes = json.loads(found[1].replace("&quot;", '"'))
    assert len(boxes) == 6
    assert all(width >= 600 for _, width in boxes), boxes
    tops = [top for top, _ in boxes]
    # per run: its two delta plots on one row; then the two distribution plots on one row
    assert tops[0] == tops[1] and tops[2] == tops[3] and tops[4] == tops[5], boxes
    assert len(set(tops)) == 3, boxes
    shot = tmp_path / "report.png"
    subprocess.run(
        [
            *_chromium_args(browser, tmp_path / "p2"),
            f"--screenshot={shot}",
            "--window-size=1400,1600",
            page,
        ],
        capture_output=True,
        timeout=120,
        check=True,
    )
    assert shot.exists()
    assert _png_size(shot) == (1400, 1600)
    from matplotlib.image import imread

    pixels = imread(str(shot))
    gray = pixels[..., :3].mean(axis=-1)
    assert (gray < 0.5).mean() > 0.01  # text and plot ink, not a blank page
    assert gray.std() > 0.05


def test_rank_distance_command(inputs, tmp_path) -> None:
    _, runs, _ = inputs
    out = tmp_path / "rd"
    code = main(
        [
            "rank-distance",
            "--runs",
            str(runs),
            "--baseline",
            "base",
            "--run",
            "same",
            "--run",
            "worse",
            "--k",
            "5",
            "--depth",
            "10",
            "--out",
            str(out),
        ]
    )
    assert code == 0
    table = pd.read_parquet(out / "rank_distance.parquet")
    assert len(table) == 2 * N_QUERIES
    same = table[table.run_id == "same"]
    assert (same["overlap"] == 10).all()  # depth 10, same docs in the same order
    assert (same["footrule"] == 0).all() and (same["jaccard_at_k"] == 1.0).all()
    summary = json.loads((out / "summary.json").read_text())
    assert summary["rank_distance"]["runs"]["same"]["queries"]["paired"] == N_QUERIES
    assert summary["rank_distance"]["depth"] == 10
    assert summary["exposure"]["vs_baseline"]["same"]["js"] == 0.0
    # a missing required option is exit 2 (before Spark starts), as a bad value is
    assert main(["rank-distance", "--baseline", "base", "--out", str(tmp_path / "x")]) == 2
    assert (
        main(
            [
                "rank-distance",
                "--runs",
                str(runs),
                "--baseline",
                "nope",
                "--out",
                str(tmp_path / "y"),
            ]
        )
        == 2
    )
