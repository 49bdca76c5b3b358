"""Every command's rerun writes byte-identical files (all but ``timings.json``, and
``summary.parquet``, whose rows are identical but for their ``evaluated_at`` time).

Each command runs twice on the same inputs and settings (the configs of the
``spark-submit`` test); the file lists and SHA-256 of both outputs must match, and no
output holds Spark's UUID part names, ``.crc`` files or inner ``_SUCCESS`` markers.
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from sparkeval.cli import main
from tests.cli.test_spark_submit_jobs import JOBS
from tests.jobs import collection, tree

pytestmark = pytest.mark.spark

#: commands that write a results directory (pack writes an archive file: tests/cli/test_pack.py)
COMMANDS = [c for c in JOBS if c not in ("measures", "jvm-archive", "demo", "pack")]


@pytest.fixture(scope="module")
def inputs(spark, tmp_path_factory) -> Path:
    directory = tmp_path_factory.mktemp("rerun")
    collection(directory)
    for name, text in {
        "predictions.csv": "user,item,prediction\nu1,a,4.0\nu1,b,2.5\nu2,a,3.0\n",
        "truth.csv": "user,item,rating\nu1,a,5.0\nu1,b,2.0\nu2,a,3.0\n",
        "recs.csv": "user_id,item_id,score\nu1,a,0.9\nu1,b,0.8\nu2,a,0.7\nu2,b,0.6\nu3,c,0.5\n",
        "docs.csv": "doc_id,text\n"
        "d1,the quick brown fox jumps over the lazy dog and runs far away from home\n"
        "d2,the quick brown fox jumps over the lazy dog and runs far away from home today\n"
        "d3,something else entirely\n",
    }.items():
        (directory / name).write_text(text)
    assert run(directory, "evaluate", "evaluated") == 0
    return directory


def run(directory: Path, command: str, out: str) -> int:
    text, _ = JOBS[command]
    config = directory / f"{out}.yaml"
    config.write_text(text + f"out: {out}\n")
    return main([command, "--config", str(config)])


@pytest.mark.parametrize("command", COMMANDS)
def test_a_rerun_writes_byte_identical_files(inputs: Path, command: str, capsys) -> None:
    first, second = f"{command}-1", f"{command}-2"
    assert run(inputs, command, first) == 0, capsys.readouterr().err[-3000:]
    assert run(inputs, command, second) == 0, capsys.readouterr().err[-3000:]
    varying = ("timings.json", "summary.parquet")
    files_1 = {k: v for k, v in tree(inputs / first).items() if k not in varying}
    files_2 = {k: v for k, v in tree(inputs / second).items() if k not in varying}
    assert files_1 == files_2
    tables = [pq.read_table(inputs / out / "summary.parquet") for out in (first, second)]
    assert tables[0].num_rows > 0
    assert tables[0].drop(["evaluated_at"]).equals(tables[1].drop(["evaluated_at"]))
    for name in files_1:
        part = Path(name).name
        assert not part.endswith(".crc"), name
        assert part == "_SUCCESS" or "_SUCCESS" not in name, name
        assert not part.startswith("part-") or part.count("-") == 1, name  # no Spark UUIDs
    summary = json.loads((inputs / first / "summary.json").read_text())
    assert "timings_s" not in summary and "seconds" not in summary
