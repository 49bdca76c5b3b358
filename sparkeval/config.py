"""Job configuration: YAML files and command-line options, validated before Spark starts.

A config file holds the same keys as the ``evaluate`` options (underscores for
dashes).  Relative paths in a config file are relative to the file's directory.
Options given on the command line win over the file.  Unknown keys are errors.

Example ``conf/demo.yaml``::

    run: [../demo-results/data/run_strong.txt, ../demo-results/data/run_weak.txt]
    qrels: ../demo-results/data/qrels.txt
    measures: [official, nDCG@10]
    out: ../demo-results/from-config
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import yaml

from sparkeval.compat import CompatPlan, plan_compat
from sparkeval.engine.plans.near_dup_flags import check_flags_available
from sparkeval.engine.worker.assemble import QUERY_POLICIES, EvalOptions
from sparkeval.errors import ConfigError
from sparkeval.io.columns import parse_mapping
from sparkeval.io.readers import FORMATS
from sparkeval.io.truth import RelevanceRule
from sparkeval.measures.names import parse_measures

#: who reads Parquet inputs (see sparkeval.io.direct): the workers where possible, or Spark
READERS: tuple[str, ...] = ("auto", "spark")


@dataclass(frozen=True)
class EvaluateConfig:
    """Everything the ``evaluate`` job needs; see ``sparkeval evaluate --help``."""

    run: tuple[str, ...]
    qrels: str
    measures: tuple[str, ...]
    out: str
    queries: str = "qrels"
    rel_level: int = 1
    depth: int | None = None
    names: str = "canonical"
    per_query: bool = False
    master: str | None = None
    format: str | None = None
    run_format: str | None = None
    qrels_format: str | None = None
    run_columns: Mapping[str, str] | None = None
    qrels_columns: Mapping[str, str] | None = None
    overwrite: bool = False
    buckets: int | None = None
    app_name: str = "sparkeval-evaluate"
    spark: Mapping[str, str] = field(default_factory=dict)
    compat: str = "trec"
    relevance: str | None = None
    relevance_threshold: float | None = None
    near_duplicates: str | None = None
    near_duplicates_format: str | None = None
    reader: str = "auto"

    def validate(self) -> EvaluateConfig:
        """Check every value; raises ConfigError naming the key and what is expected."""
        if not self.run:
            raise ConfigError("key 'run': at least one run path is required")
        if not self.qrels:
            raise ConfigError("key 'qrels': a qrels path is required")
        if not self.out:
            raise ConfigError("key 'out': an output directory is required")
        if self.queries not in QUERY_POLICIES:
            raise ConfigError(
                f"key 'queries': {self.queries!r} is not one of {', '.join(QUERY_POLICIES)}"
            )
        if self.reader not in READERS:
            raise ConfigError(f"key 'reader': {self.reader!r} is not one of {', '.join(READERS)}")
        if self.names not in ("canonical", "trec"):
            raise ConfigError(f"key 'names': {self.names!r} is not one of canonical, trec")
        for key in ("format", "run_format", "qrels_format", "near_duplicates_format"):
            value = getattr(self, key)
            if value is not None and value not in FORMATS:
                raise ConfigError(f"key '{key}': {value!r} is not one of {', '.join(FORMATS)}")
        _whole(self.rel_level, "rel_level", minimum=0)
        if self.depth is not None:
            _whole(self.depth, "depth", minimum=1)
        if self.buckets is not None:
            _whole(self.buckets, "buckets", minimum=1)
        for key, kind in (("run_columns", "run"), ("qrels_columns", "qrels")):
            try:
                parse_mapping(getattr(self, key), kind)
            except ConfigError as exc:
                raise ConfigError(f"key '{key}': {exc}") from None
        try:
            parse_measures(list(self.measures))
        except ValueError as exc:
            raise ConfigError(f"key 'measures': {exc}") from None
        EvalOptions(self.queries, self.rel_level, self.depth)  # type: ignore[arg-type]
        plan = self.plan()
        if not self.near_duplicates:
            check_flags_available(plan.measures, "--near-duplicates PATH (key 'near_duplicates')")
        return self

    def inputs(self) -> list[str]:
        """Every input path (runs, qrels, near-duplicate pairs), for output-path checks."""
        return [*self.run, self.qrels, *([self.near_duplicates] if self.near_duplicates else [])]

    def plan(self) -> CompatPlan:
        """Measures, query policy and relevance rule of the compatibility profile.

        Under the ``mllib`` and ``recommenders`` profiles the profile fixes the
        query policy; ``queries`` must then be left at its default.
        """
        if self.compat != "trec" and self.rel_level != 1:
            raise ConfigError(
                f"key 'rel_level': compat profile {self.compat!r} sets relevance itself; "
                f"use relevance or relevance_threshold (got rel_level {self.rel_level})"
            )
        rule = RelevanceRule.from_options(self.relevance, self.relevance_threshold)
        queries = None if self.compat != "trec" and self.queries == "qrels" else self.queries
        return plan_compat(self.compat, list(self.measures), rule, queries)


def _whole(value: Any, key: str, minimum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ConfigError(f"key '{key}': expected a whole number >= {minimum}, got {value!r}")


_TYPES: dict[str, tuple[type, ...]] = {
    "run": (list, str),
    "qrels": (str,),
    "measures": (list, str),
    "out": (str,),
    "queries": (str,),
    "rel_level": (int,),
    "depth": (int, type(None)),
    "names": (str,),
    "per_query": (bool,),
    "master": (str, type(None)),
    "format": (str, type(None)),
    "run_format": (str, type(None)),
    "qrels_format": (str, type(None)),
    "run_columns": (dict, str, type(None)),
    "qrels_columns": (dict, str, type(None)),
    "overwrite": (bool,),
    "buckets": (int, type(None)),
    "app_name": (str,),
    "spark": (dict,),
    "compat": (str,),
    "relevance": (str, type(None)),
    "relevance_threshold": (int, float, type(None)),
    "near_duplicates": (str, type(None)),
    "near_duplicates_format": (str, type(None)),
    "reader": (str,),
}
_PATH_KEYS = ("run", "qrels", "out", "near_duplicates")


def load_config_file(path: str) -> dict[str, Any]:
    """Read a YAML config with the safe loader; relative paths become file-relative."""
    file = Path(path)
    if not file.is_file():
        raise ConfigError(f"{path}: config file not found")
    try:
        data = yaml.safe_load(file.read_text())
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML ({exc})") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping of keys to values at the top level")
    check_keys(data, source=path)
    base = file.resolve().parent
    for key in _PATH_KEYS:
        if key in data and data[key] is not None:
            if isinstance(data[key], list):
                data[key] = [_rebase(base, p) for p in data[key]]
            else:
                data[key] = _rebase(base, data[key])
    return data


def _rebase(base: Path, value: Any) -> Any:
    if not isinstance(value, str) or "://" in value or Path(value).is_absolute():
        return value
    return str(base / value)


def check_keys(data: Mapping[str, Any], source: str) -> None:
    """Unknown keys and wrong value types are errors that name the key."""
    valid = {f.name for f in fields(EvaluateConfig)}
    for key, value in data.items():
        if key not in valid:
            hint = difflib.get_close_matches(str(key), sorted(valid), n=1)
            suggestion = f" (did you mean {hint[0]!r}?)" if hint else ""
            raise ConfigError(
                f"{source}: unknown key {key!r}{suggestion}; valid keys: {', '.join(sorted(valid))}"
            )
        allowed = _TYPES[key]
        if isinstance(value, bool) and bool not in allowed:
            ok = False
        else:
            ok = isinstance(value, allowed)
        if not ok:
            names = " or ".join("null" if t is type(None) else t.__name__ for t in allowed)
            raise ConfigError(f"{source}: key {key!r} expects {names}, got {value!r}")


def _as_list(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    return tuple(str(v) for v in value)


def build_config(file_values: Mapping[str, Any], cli_values: Mapping[str, Any]) -> EvaluateConfig:
    """Merge config-file values with command-line values (given ones win) and validate."""
    merged: dict[str, Any] = dict(file_values)
    for key, value in cli_values.items():
        if value is not None and value != () and value != []:
            merged[key] = value
    check_keys(merged, source="options")
    for key in ("run", "qrels", "measures", "out"):
        if not merged.get(key):
            flag = "--" + key.replace("_", "-")
            raise ConfigError(f"missing {flag} (or key {key!r} in the config file)")
    merged["run"] = _as_list(merged["run"])
    merged["measures"] = _as_list(merged["measures"])
    merged["spark"] = {str(k): str(v) for k, v in (merged.get("spark") or {}).items()}
    return EvaluateConfig(**merged).validate()
