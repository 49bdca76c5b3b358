"""Readers for runs and qrels (TREC text, Parquet, CSV, JSON Lines)."""

from sparkeval.io.readers import FORMATS, detect_format, read_qrels, read_run, read_runs

__all__ = ["FORMATS", "detect_format", "read_qrels", "read_run", "read_runs"]
