"""Comparing runs: paired significance tests, rank distances, quality gates.

The statistics (:mod:`sparkeval.compare.stats`), rank distances
(:mod:`sparkeval.compare.rank_distance`) and gate conditions
(:mod:`sparkeval.compare.gate`) are pure Python/numpy; the Spark glue lives in
:mod:`sparkeval.compare.pipeline`.
"""
