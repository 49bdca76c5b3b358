"""Documentation generated from the registry stays in sync with it."""

from __future__ import annotations

import contextlib
import io

from sparkeval.cli import main
from tests.conftest import ROOT


def test_measure_catalogue_doc_matches_the_registry() -> None:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["measures", "--format", "markdown"]) == 0
    assert (ROOT / "docs" / "MEASURES.md").read_text() == out.getvalue(), (
        "docs/MEASURES.md is stale: regenerate it with "
        "'sparkeval measures --format markdown > docs/MEASURES.md'"
    )


def test_readme_quick_start_has_two_commands() -> None:
    text = (ROOT / "README.md").read_text().splitlines()
    start = text.index("## Quick start")
    fence = [i for i, line in enumerate(text) if i > start and line.startswith("```")]
    block = [line for line in text[fence[0] + 1 : fence[1]] if line.strip()]
    assert len(block) == 2
    assert "sparkeval demo" in block[0] and "pytest" in block[1]


def test_readme_stays_short_and_the_guide_holds_the_rest() -> None:
    """The README is an overview; the user guide in docs/ (built by mkdocs.yml) has the
    details, the measure catalogue among its pages."""
    assert len((ROOT / "README.md").read_text().splitlines()) < 250
    nav = (ROOT / "mkdocs.yml").read_text()
    assert "MEASURES.md" in nav and "api.md" in nav
