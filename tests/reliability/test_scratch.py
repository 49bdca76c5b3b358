"""Scratch directories: named by host and process, and those of dead processes removed."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from sparkeval.scratch import (
    SCRATCH_PREFIXES,
    new_scratch_directory,
    process_alive,
    remove_dead_scratch,
)
from tests.jobs import dead_pid, host_label


def test_a_finished_process_is_dead_and_this_one_alive() -> None:
    assert not process_alive(dead_pid())
    assert process_alive(os.getpid())
    assert process_alive(os.getppid())


def test_only_scratch_of_dead_processes_on_this_host_is_removed(tmp_path: Path) -> None:
    host, dead, live = host_label(), dead_pid(), os.getppid()
    names = {
        **{f"{prefix}{host}-{dead}-k3j_x9q1": False for prefix in SCRATCH_PREFIXES},
        f"sparkeval-handoff-{host}-{live}-k3j_x9q1": True,  # a live process
        f"sparkeval-results-elsewhere-{dead}-k3j_x9q1": True,  # another host: cannot tell
        "sparkeval-handoff-k3j_x9q1": True,  # not named with its process
        f"spark-{host}-{dead}-k3j_x9q1": True,  # not a scratch directory of this module
    }
    for name in names:
        (tmp_path / name).mkdir()
        (tmp_path / name / "unit-000000-bucket-00000.arrow").write_bytes(b"rows")
    a_file = tmp_path / f"sparkeval-handoff-{host}-{dead}-fi1e_xyz"
    a_file.write_bytes(b"not a directory")

    removed = remove_dead_scratch(tmp_path)

    assert sorted(p.name for p in removed) == sorted(n for n, kept in names.items() if not kept)
    for name, kept in names.items():
        assert (tmp_path / name).exists() == kept, name
    assert a_file.exists()


def test_a_new_scratch_directory_names_its_host_and_process_and_sweeps_its_parent(
    tmp_path: Path,
) -> None:
    stale = tmp_path / f"sparkeval-results-{host_label()}-{dead_pid()}-k3j_x9q1"
    (stale / "wide-00000.arrow").parent.mkdir()
    (stale / "wide-00000.arrow").write_bytes(b"rows")

    made = new_scratch_directory("sparkeval-handoff-", str(tmp_path))

    assert made.parent == tmp_path and made.is_dir()
    assert re.fullmatch(rf"sparkeval-handoff-{host_label()}-{os.getpid()}-[a-z0-9_]+", made.name)
    assert not stale.exists()
    with pytest.raises(ValueError, match="scratch prefix"):
        new_scratch_directory("other-", str(tmp_path))
