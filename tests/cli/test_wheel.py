"""The package people install: the wheel and sdist build, hold what they must, and the
wheel installed into a fresh environment runs ``sparkeval demo`` (outside the checkout).

The fresh environment gets sparkeval only from the wheel; its dependencies are the
ones of the environment running the tests, made visible by a path file (pyspark alone
would take minutes to install again).
"""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import tarfile
import zipfile
from pathlib import Path

import pytest

import sparkeval
from tests.conftest import ROOT

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def dist(tmp_path_factory) -> Path:
    pytest.importorskip("build", reason="the build package builds the wheel (pip install build)")
    out = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "build",
            "--no-isolation",
            "--sdist",
            "--wheel",
            "--outdir",
            str(out),
        ],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    )
    return out


def test_the_version_is_written_once(dist: Path) -> None:
    assert [p.name for p in dist.glob("*.whl")] == [
        f"sparkeval-{sparkeval.__version__}-py3-none-any.whl"
    ]
    assert f'version = "{sparkeval.__version__}"' not in (ROOT / "pyproject.toml").read_text()
    assert f"## {sparkeval.__version__}" in (ROOT / "CHANGELOG.md").read_text()


def test_the_wheel_holds_the_package_data(dist: Path) -> None:
    wheel = next(dist.glob("*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    for needed in ("sparkeval/py.typed", "sparkeval/log4j2.properties", "sparkeval/cli.py"):
        assert needed in names
    modules = {str(p.relative_to(ROOT)) for p in (ROOT / "sparkeval").rglob("*.py")}
    assert modules <= names, sorted(modules - names)[:5]


def test_the_sdist_holds_the_jobs_configs_and_docs(dist: Path) -> None:
    sdist = next(dist.glob("*.tar.gz"))
    with tarfile.open(sdist) as archive:
        names = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
    for needed in ("jobs/evaluate.py", "conf/demo.yaml", "CHANGELOG.md", "README.md"):
        assert needed in names


def test_the_installed_wheel_runs_the_demo(dist: Path, tmp_path: Path) -> None:
    fresh = tmp_path / "fresh"
    subprocess.run([sys.executable, "-m", "venv", str(fresh)], check=True)
    python = fresh / "bin" / "python"
    wheel = next(dist.glob("*.whl"))
    subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--no-deps", "--no-index", str(wheel)],
        check=True,
    )
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    # the dependencies of this environment (its sparkeval is a checkout, not a site dir)
    Path(site, "test-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    where = subprocess.run(
        [str(python), "-c", "import sparkeval; print(sparkeval.__file__)"],
        cwd=tmp_path, env=env, capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    assert where.startswith(site), where
    demo = subprocess.run(
        [str(fresh / "bin" / "sparkeval"), "demo", "--out", "demo-results"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert demo.returncode == 0, demo.stderr[-3000:]
    assert (tmp_path / "demo-results" / "results" / "_SUCCESS").is_file()
    assert "nDCG@10" in demo.stdout
