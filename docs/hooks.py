"""MkDocs hooks: the guide also publishes the project's Markdown files outside ``docs/``.

``RELIABILITY.md``, ``ARCHITECTURE.md`` and the benchmark records ``bench/*.md`` live
beside the code they describe, and the README links them there. The guide's pages link
them the same way, by their path in the repository (``../RELIABILITY.md``,
``../bench/RESULTS.md``), so the links work when the Markdown is read in the
repository. At build time these files are added to the site at the same path under
the site's root, and the pages' links to them are rewritten to point there.
"""

from __future__ import annotations

import posixpath
import re
from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files

#: Markdown files outside ``docs/`` published with the guide (globs from the top level)
OUTSIDE = ("RELIABILITY.md", "ARCHITECTURE.md", "bench/*.md")

#: a Markdown link target, ``](target)`` or ``](target#anchor)``
LINK = re.compile(r"\]\(([^)\s#]+)(#[^)\s]*)?\)")


def _top(config: Any) -> Path:
    return Path(config.config_file_path).resolve().parent


def _outside_files(config: Any) -> list[str]:
    top = _top(config)
    return sorted(
        path.relative_to(top).as_posix() for pattern in OUTSIDE for path in top.glob(pattern)
    )


def on_files(files: Files, config: Any, **kwargs: Any) -> Files:
    """Add the files of :data:`OUTSIDE` to the site, each at its repository path."""
    top = _top(config)
    for name in _outside_files(config):
        files.append(File.generated(config, name, abs_src_path=str(top / name)))
    return files


def on_page_markdown(markdown: str, page: Any, config: Any, **kwargs: Any) -> str:
    """Rewrite a guide page's links to a file of :data:`OUTSIDE` (by its repository
    path, ``../bench/RESULTS.md``) to that file's place in the site."""
    top = _top(config)
    docs = Path(config.docs_dir).resolve()
    source = page.file.abs_src_path
    if source is None or not Path(source).resolve().is_relative_to(docs):
        return markdown  # one of the outside files: its links are already relative
    page_dir = Path(source).resolve().parent
    published = set(_outside_files(config))
    site_dir = posixpath.dirname(page.file.src_uri)

    def rewrite(match: re.Match[str]) -> str:
        target, anchor = match.group(1), match.group(2) or ""
        if "://" in target:
            return match.group(0)
        resolved = (page_dir / target).resolve()
        if not resolved.is_relative_to(top):
            return match.group(0)
        name = resolved.relative_to(top).as_posix()
        if name not in published:
            return match.group(0)
        return f"]({posixpath.relpath(name, site_dir or '.')}{anchor})"

    return LINK.sub(rewrite, markdown)
