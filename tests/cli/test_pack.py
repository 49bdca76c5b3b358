"""``sparkeval pack``: what the archive would hold, the sparkeval wheel, and its errors
(exit 2, one line, nothing left at the target). The archive itself, on a cluster, is
tested in ``tests/reliability/test_packed_environment.py``."""

from __future__ import annotations

import base64
import hashlib
import os
import subprocess
import sys
import zipfile
from importlib import metadata

import pytest

from sparkeval.cli import main
from sparkeval.errors import EXIT_INPUT, EXIT_OK
from sparkeval.packing.wheel import build_wheel
from tests.jobs import CLI, job_env

#: sparkeval's direct runtime dependencies besides pyspark (pyproject.toml)
RUNTIME = ("pandas", "pyarrow", "isal", "numpy", "datasketch", "pyyaml", "scipy", "matplotlib")


def _name(pin: str) -> str:
    return pin.split("==")[0].lower().replace("_", "-")


def test_requirements_pin_the_installed_versions_without_pyspark_and_py4j(capsys) -> None:
    assert main(["pack", "--requirements"]) == EXIT_OK
    pins = capsys.readouterr().out.splitlines()
    assert pins == sorted(pins, key=_name)
    for pin in pins:
        name, _, version = pin.partition("==")
        assert metadata.version(name) == version, pin
    names = {_name(pin) for pin in pins}
    assert set(RUNTIME) <= names
    assert "python-dateutil" in names  # pandas' own dependencies are pinned too
    assert not names & {"pyspark", "py4j", "sparkeval"}


def test_the_wheel_holds_the_package_files_and_the_installed_metadata(tmp_path) -> None:
    wheel = build_wheel(tmp_path)
    version = metadata.version("sparkeval")
    assert wheel.name == f"sparkeval-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        files = {name: archive.read(name) for name in names}
    info = f"sparkeval-{version}.dist-info"
    for name in ("sparkeval/__init__.py", "sparkeval/py.typed", "sparkeval/log4j2.properties"):
        assert name in names
    assert not [name for name in names if "__pycache__" in name or name.endswith(".pyc")]
    assert b"\nName: sparkeval\n" in files[f"{info}/METADATA"]
    assert b"sparkeval = sparkeval.cli:main" in files[f"{info}/entry_points.txt"]
    assert b"Tag: py3-none-any" in files[f"{info}/WHEEL"]
    record = files[f"{info}/RECORD"].decode().splitlines()
    assert sorted(line.split(",")[0] for line in record) == sorted(names)
    for line in record:
        name, digest, size = line.split(",")
        if name.endswith("RECORD"):
            continue
        data = files[name]
        expected = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
        assert (digest, size) == (f"sha256={expected.decode()}", str(len(data))), name
    assert build_wheel(tmp_path).read_bytes() == wheel.read_bytes()  # the same bytes again


def _one_error_line(stderr: str) -> str:
    """The error line of a failed command; it must be alone, with no traceback."""
    errors = [line for line in stderr.splitlines() if line.startswith("sparkeval pack: error:")]
    assert len(errors) == 1 and "Traceback" not in stderr, stderr
    return errors[0]


@pytest.mark.parametrize("name", ["env.zip", "env.tar", "env"])
def test_an_archive_spark_cannot_unpack_is_refused(name, tmp_path, capsys) -> None:
    assert main(["pack", "--out", str(tmp_path / name)]) == EXIT_INPUT
    assert ".tar.gz or .tgz" in _one_error_line(capsys.readouterr().err)
    assert list(tmp_path.iterdir()) == []


def test_an_existing_archive_is_kept_without_overwrite(tmp_path, capsys) -> None:
    target = tmp_path / "env.tar.gz"
    target.write_bytes(b"an earlier archive")
    assert main(["pack", "--out", str(target)]) == EXIT_INPUT
    assert "pass --overwrite" in _one_error_line(capsys.readouterr().err)
    assert target.read_bytes() == b"an earlier archive"
    assert list(tmp_path.iterdir()) == [target]


def test_a_directory_is_not_replaced_even_with_overwrite(tmp_path, capsys) -> None:
    target = tmp_path / "env.tar.gz"
    target.mkdir()
    assert main(["pack", "--out", str(target), "--overwrite"]) == EXIT_INPUT
    assert "is a directory" in _one_error_line(capsys.readouterr().err)
    assert target.is_dir() and list(tmp_path.iterdir()) == [target]


def test_without_venv_pack_the_command_says_how_to_install_it(tmp_path) -> None:
    """As on a machine without the ``pack`` extra: the import of venv-pack fails."""
    target = tmp_path / "env.tar.gz"
    code = (
        "import sys; sys.modules['venv_pack'] = None; from sparkeval.cli import main; "
        f"sys.exit(main(['pack', '--out', {str(target)!r}]))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], env=job_env(), capture_output=True, text=True
    )
    assert done.returncode == EXIT_INPUT
    assert "pip install 'sparkeval[pack]'" in _one_error_line(done.stderr)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow
def test_a_pip_failure_is_one_line_and_leaves_nothing(tmp_path) -> None:
    """pip with no index and no configuration finds none of the packages: the command
    fails with pip's own reason, and neither the archive nor a partial file is left."""
    pytest.importorskip("venv_pack", reason="venv-pack is not installed (the test extra has it)")
    links = tmp_path / "links"  # an empty place to look for packages
    links.mkdir()
    target = tmp_path / "env.tar.gz"
    env = job_env(PIP_CONFIG_FILE=os.devnull, PIP_NO_INDEX="1", PIP_FIND_LINKS=str(links))
    done = subprocess.run(
        [*CLI, "pack", "--out", str(target)], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == EXIT_INPUT, done.stderr
    line = _one_error_line(done.stderr)
    assert "pip could not install sparkeval's dependencies: ERROR:" in line, line
    assert list(tmp_path.iterdir()) == [links]
