"""ARCHITECTURE.md names only modules and folders that exist, and every package is in it."""

from __future__ import annotations

import importlib
import re

from tests.conftest import ROOT

DOC = ROOT / "ARCHITECTURE.md"
#: ``sparkeval/engine/worker/assemble.py``, ``sparkeval/job/``, ``tests/engine/``, ``jobs/``
PATH = re.compile(r"`((?:sparkeval|tests|jobs|bench|conf)(?:/[\w.]+)*/?)`")
#: ``sparkeval.engine.worker.assemble``
MODULE = re.compile(r"`(sparkeval(?:\.\w+)+)`")


def test_every_path_and_module_named_exists() -> None:
    text = DOC.read_text()
    paths = PATH.findall(text)
    modules = MODULE.findall(text)
    assert paths and modules
    missing = [p for p in paths if not (ROOT / p).exists()]
    missing += [name for name in modules if not _resolves(name)]
    assert not missing, f"ARCHITECTURE.md names what the tree does not have: {missing}"


def _resolves(dotted: str) -> bool:
    """A module, or an attribute of the longest importable module prefix."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            target = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attribute in parts[cut:]:
            if not hasattr(target, attribute):
                return False
            target = getattr(target, attribute)
        return True
    return False


def test_every_package_of_sparkeval_is_described() -> None:
    text = DOC.read_text()
    packages = sorted(
        str(p.parent.relative_to(ROOT))
        for p in (ROOT / "sparkeval").rglob("__init__.py")
        if p.parent != ROOT / "sparkeval"
    )
    absent = [p for p in packages if f"`{p}/`" not in text]
    assert not absent, f"packages missing from ARCHITECTURE.md: {absent}"
