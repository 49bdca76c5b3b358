"""Reports of a comparison: a self-contained HTML page and a Markdown summary."""
