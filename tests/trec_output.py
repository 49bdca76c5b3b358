"""Parse trec_eval-style tables (``measure<TAB>query<TAB>value``)."""

from __future__ import annotations

from pathlib import Path


def parse_table(text: str) -> dict[tuple[str, str], str]:
    """{(measure, query): value text}; comment lines (``#``) are skipped."""
    values: dict[tuple[str, str], str] = {}
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        parts = line.split("\t")
        if len(parts) != 3:
            raise ValueError(f"not a trec_eval table line: {line!r}")
        values[(parts[0].strip(), parts[1].strip())] = parts[2].strip()
    return values


def read_table(path: Path) -> dict[tuple[str, str], str]:
    return parse_table(path.read_text())
