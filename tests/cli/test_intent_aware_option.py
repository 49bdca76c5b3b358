"""``evaluate --subtopic-qrels`` (key ``subtopic_qrels``; ``subtopic_qrels=`` in
Python): the intent-aware measures on the local engine and the in-process API, and the
refusals that name what is missing.

Expected values: the hand derivation of ``tests/measures/test_intent_aware.py``
(pyndeval's documented example): strec@5 = 2/3, MAP-IA = 0.5, NRBP = 0.390625,
P-IA@5 = 0.2.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

import sparkeval
from sparkeval.cli import main
from sparkeval.errors import ConfigError, InputError

SUBTOPICS = "0 a A 1\n0 b B 1\n0 b D 1\n0 c C 1\n7 a A 1\n"  # query 7: not in the run
RUN = "0 Q0 A 1 9.3 r\n0 Q0 D 2 8.4 r\n0 Q0 E 3 8.1 r\n0 Q0 B 4 7.6 r\n9 Q0 A 1 1.0 r\n"
QRELS = "0 0 A 1\n0 0 B 1\n0 0 C 1\n0 0 D 1\n"
MEASURES = "P@5,strec@5,AP_IA,NRBP,P_IA@5"


@pytest.fixture
def inputs(tmp_path: Path) -> Path:
    (tmp_path / "subtopics.txt").write_text(SUBTOPICS)
    (tmp_path / "run.txt").write_text(RUN)
    (tmp_path / "qrels.txt").write_text(QRELS)
    return tmp_path


def _expected(measures: dict) -> None:
    assert measures["strec@5"] == pytest.approx(2 / 3, rel=1e-12)
    assert measures["MAP-IA"] == pytest.approx(0.5, rel=1e-12)
    assert measures["NRBP"] == pytest.approx(0.390625, rel=1e-12)
    assert measures["P-IA@5"] == pytest.approx(0.2, rel=1e-12)


def test_cli_option_on_the_local_engine(inputs):
    code = main(
        ["evaluate", "--engine", "local", "--run", str(inputs / "run.txt"), "--qrels",
         str(inputs / "qrels.txt"), "--subtopic-qrels", str(inputs / "subtopics.txt"),
         "--measures", MEASURES, "--out", str(inputs / "out"), "--quiet"]
    )  # fmt: skip
    assert code == 0
    summary = json.loads((inputs / "out" / "summary.json").read_text())
    run = summary["runs"]["r"]
    _expected(run["measures"])
    assert run["intent_aware"]["strec@5"] == {"queries": 1, "run_only": 1, "qrels_only": 1}
    assert summary["parameters"]["intent_aware"] == ["strec@5", "MAP-IA", "NRBP", "P-IA@5"]
    assert "alpha" in summary["compat"]["definitions"]["NRBP"]
    assert summary["inputs"]["subtopic_qrels"] == str(inputs / "subtopics.txt")
    rows = pq.read_table(inputs / "out" / "summary.parquet").to_pandas()
    assert list(rows["measure"]) == ["P@5", "strec@5", "MAP-IA", "NRBP", "P-IA@5"]
    # query 0, the one query of both inputs, by hand (the module docstring's values)
    per_query = pq.read_table(inputs / "out" / "per_query_intent_aware.parquet")
    assert per_query.column_names == ["run_id", "query_id", "measure", "value"]
    assert per_query.to_pylist() == [
        {"run_id": "r", "query_id": "0", "measure": name, "value": pytest.approx(value)}
        for name, value in (("strec@5", 2 / 3), ("MAP-IA", 0.5), ("NRBP", 0.390625),
                            ("P-IA@5", 0.2))
    ]  # fmt: skip


def test_config_key_and_parquet_subtopic_qrels(inputs):
    table = pd.DataFrame(
        [line.split() for line in SUBTOPICS.splitlines()],
        columns=["query_id", "subtopic_id", "doc_id", "relevance"],
    ).astype({"relevance": "int64"})
    table.to_parquet(inputs / "subtopics.parquet", index=False)
    config = inputs / "job.yaml"
    config.write_text(
        f"run: [{inputs / 'run.txt'}]\nqrels: {inputs / 'qrels.txt'}\n"
        f"subtopic_qrels: {inputs / 'subtopics.parquet'}\nmeasures: [{MEASURES}]\n"
        f"out: {inputs / 'conf'}\nengine: local\n"
    )
    assert main(["evaluate", "--config", str(config), "--quiet"]) == 0
    summary = json.loads((inputs / "conf" / "summary.json").read_text())
    _expected(summary["runs"]["r"]["measures"])


def test_python_api_in_process():
    run = pd.DataFrame(
        [line.split()[:5] for line in RUN.splitlines()],
        columns=["query_id", "q0", "doc_id", "rank", "score"],
    ).astype({"score": "float64"})[["query_id", "doc_id", "score"]]
    qrels = pd.DataFrame({"query_id": ["0"] * 4, "doc_id": list("ABCD"), "relevance": [1] * 4})
    subtopics = pd.DataFrame(
        [line.split() for line in SUBTOPICS.splitlines()],
        columns=["query_id", "subtopic_id", "doc_id", "relevance"],
    ).astype({"relevance": "int64"})
    ev = sparkeval.evaluate(None, run, qrels, MEASURES, subtopic_qrels=subtopics)
    _expected(ev.report["runs"]["run"]["measures"])
    assert set(ev.summary["measure"]) == {"P@5", "strec@5", "MAP-IA", "NRBP", "P-IA@5"}
    with pytest.raises(ConfigError, match="subtopic_qrels="):
        sparkeval.evaluate(None, run, qrels, MEASURES)
    with pytest.raises(ConfigError, match="ties='rank'"):
        sparkeval.evaluate(None, run, qrels, MEASURES, subtopic_qrels=subtopics, ties="rank")


def _config_error(inputs: Path, measures: str, **extra: str) -> str:
    from sparkeval.evaluation.options import EvaluateConfig

    values = {"run": [str(inputs / "run.txt")], "qrels": str(inputs / "qrels.txt"),
              "out": str(inputs / "x"), "measures": [measures], **extra}  # fmt: skip
    with pytest.raises(ConfigError) as caught:
        EvaluateConfig.load(None, values)
    return str(caught.value)


def test_refusals_name_the_option(inputs):
    path = str(inputs / "subtopics.txt")
    assert "--subtopic-qrels PATH (key 'subtopic_qrels'" in _config_error(
        inputs, "nDCG@10,alpha-nDCG@20"
    )
    assert "does not follow --ties rank" in _config_error(
        inputs, "nDCG@10,alpha-nDCG@20", ties="rank", subtopic_qrels=path
    )
    assert "under --compat trec only" in _config_error(
        inputs, "nDCG@10,ERR_IA@20", compat="mllib", subtopic_qrels=path
    )
    assert "judged_only=True" in _config_error(
        inputs, "nDCG@10,alpha_nDCG(judged_only=True)@20", subtopic_qrels=path
    )
    assert "give one as well" in _config_error(inputs, "alpha-nDCG@20", subtopic_qrels=path)


def test_bad_subtopic_qrels_are_named(inputs):
    from sparkeval.io.subtopic_qrels import read_subtopic_qrels

    (inputs / "bad.txt").write_text("0 a A 1\n0 a B\n")
    with pytest.raises(InputError, match=r"bad.txt, line 2: expected"):
        read_subtopic_qrels(str(inputs / "bad.txt"))
    (inputs / "twice.txt").write_text("0 a A 1\n0 a A 0\n")
    with pytest.raises(InputError, match="judged more than once"):
        read_subtopic_qrels(str(inputs / "twice.txt"))


def test_csv_and_tsv_subtopic_qrels(inputs):
    from sparkeval.io.subtopic_qrels import read_subtopic_qrels

    (inputs / "s.csv").write_text("topic,subtopic,docno,grade\n1,a,d1,2\n1,b,d2,0\n")
    (inputs / "s.tsv").write_text("query_id\tsubtopic_id\tdoc_id\trelevance\n1\ta\td1\t2\n")
    csv = read_subtopic_qrels(str(inputs / "s.csv"))
    assert csv.to_dict("list") == {
        "query_id": ["1", "1"], "subtopic_id": ["a", "b"], "doc_id": ["d1", "d2"],
        "relevance": [2, 0],
    }  # fmt: skip
    assert read_subtopic_qrels(str(inputs / "s.tsv"))["relevance"].tolist() == [2]
    (inputs / "bad.csv").write_text("query_id,doc_id,relevance\n1,d1,1\n")
    with pytest.raises(InputError, match="no subtopic_id column"):
        read_subtopic_qrels(str(inputs / "bad.csv"))
