"""The config of ``sparkeval evaluate`` (:class:`EvaluateConfig`), checked before Spark starts.

The command (:mod:`sparkeval.commands.evaluate`) declares it; the job body
(:func:`sparkeval.evaluation.job.run_evaluate`) and the local engine read it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Self

from sparkeval.compat import COMPAT_PROFILES, CompatPlan, plan_compat, replay_mode
from sparkeval.engine.local_processes import MAX_WORKERS as MAX_LOCAL_WORKERS
from sparkeval.engine.local_processes import PARALLEL_BYTES
from sparkeval.engine.worker.assemble import QUERY_POLICIES, EvalOptions, check_ties_allowed
from sparkeval.errors import ConfigError
from sparkeval.formats import TIE_RULES
from sparkeval.io.columns import parse_mapping
from sparkeval.io.readers import FORMATS, TABLE_PREFIX
from sparkeval.io.sql_text import check_condition, check_table_name
from sparkeval.io.truth import RelevanceRule
from sparkeval.job.engine_choice import ENGINE_HELP, ENGINES
from sparkeval.job.options import input_path, option
from sparkeval.job.spark_options import OutputJobConfig
from sparkeval.measures.intent_aware_names import IntentAwareMeasure, split_intent_aware
from sparkeval.measures.names import parse_measures
from sparkeval.measures.near_dup import check_flags_available
from sparkeval.measures.set_names import (
    SetMeasure,
    check_set_inputs,
    split_set_measures,
)

#: who reads Parquet inputs (see sparkeval.io.direct): the workers where possible, or Spark
READERS: tuple[str, ...] = ("auto", "spark")


@dataclass(frozen=True, kw_only=True)
class EvaluateConfig(OutputJobConfig):
    """Everything the ``evaluate`` job needs; see ``sparkeval evaluate --help``."""

    run: tuple[str, ...] = input_path("run file or directory (repeatable)", ())
    qrels: str | None = input_path("relevance judgements", None)
    run_table: tuple[str, ...] = option(
        (), metavar="NAME", help="a run table of the session's catalog (repeatable)"
    )
    qrels_table: str | None = option(
        None, metavar="NAME", help="a qrels (truth) table of the session's catalog"
    )
    where: str | None = option(
        None,
        metavar="SQL",
        help="keep the run rows where this SQL condition holds, e.g. \"dt = '2026-11-01'\" "
        "(applied first: partitions are pruned; columns, literals, comparisons, arithmetic, "
        "AND/OR/NOT, IN, BETWEEN, LIKE, IS NULL, CAST and common text and date functions)",
    )
    qrels_where: str | None = option(
        None, metavar="SQL", help="keep the qrels rows where this SQL condition holds"
    )
    run_id_column: str | None = option(
        None,
        metavar="NAME",
        help="the column (or partition, dt=...) holding the run id: each value is a run",
    )
    measures: tuple[str, ...] = option(
        (),
        help="comma separated measure names (nDCG@10, AP, P@5, map, ndcg_cut_10, ...) "
        "or sets (official, all_trec); see 'sparkeval measures'",
        metavar="LIST",
    )
    trec_eval: bool = option(
        False,
        help="trec_eval's defaults: its official measures (unless --measures), its names, "
        "--queries both and its table, for a byte-for-byte diff against trec_eval",
    )
    queries: str = option(
        "qrels",
        choices=QUERY_POLICIES,
        help="queries averaged: qrels (default; missing from a run scores 0), both, run, "
        "union (run or qrels)",
    )
    rel_level: int = option(1, metavar="N", help="grade >= N is relevant (default 1, trec_eval -l)")
    depth: int | None = option(
        None, metavar="N", help="keep the first N docs per query after sorting (trec_eval -M)"
    )
    names: str = option(
        "canonical",
        choices=("canonical", "trec", "requested"),
        help="measure names in outputs: canonical (default), trec (trec_eval's) or "
        "requested (as typed; summary.json's measure_names gives the canonical names)",
    )
    per_query: bool = option(False, help="print per-query values too")
    print_as: str = option(
        "trec",
        choices=("trec", "table"),
        help="how stdout shows the results: trec (trec_eval's measure/query/value lines, "
        "default) or table (tab-separated, a row per run and a column per measure)",
    )
    format: str | None = option(None, choices=FORMATS, help="format of all inputs")
    run_format: str | None = option(None, choices=FORMATS, help="format of the runs")
    qrels_format: str | None = option(None, choices=FORMATS, help="format of the qrels")
    run_columns: Mapping[str, str] | str | None = option(
        None, metavar="MAP", help="explicit run columns, e.g. query_id=user,doc_id=item,score=pred"
    )
    qrels_columns: Mapping[str, str] | str | None = option(
        None, metavar="MAP", help="explicit qrels columns, e.g. relevance=rating"
    )
    buckets: int | None = option(
        None,
        metavar="B",
        help="hash buckets of queries (default spark.sql.shuffle.partitions, at most 4 per core)",
    )
    compat: str = option(
        "trec",
        choices=COMPAT_PROFILES,
        help="reproduce another evaluator: trec (default), mllib (Spark RankingMetrics), "
        "recommenders (Microsoft Recommenders), replay (RePlay) or rectools (RecTools); "
        "see docs/recommenders.md",
    )
    relevance: str | None = option(
        None,
        choices=("grade", "all"),
        help="truth relevance: grade (integer grades, default) or all (every truth item)",
    )
    relevance_threshold: float | None = option(
        None,
        metavar="T",
        help="truth ratings >= T are relevant (grade 1), others grade 0; under --compat "
        "recommenders: keep the recommendations with score >= T (its by_threshold)",
    )
    relevant_only: bool = option(
        False,
        help="keep only relevant truth rows: a query (user) without a relevant item is not "
        "judged (with --compat recommenders and a threshold: the truth, not the "
        "recommendations, is filtered by it)",
    )
    ties: str = option(
        "doc-id",
        choices=TIE_RULES,
        help="how tied scores are ordered: doc-id (default: doc id descending, trec_eval's), "
        "rank (the run's rank: a TREC run's rank field, a table's rank, position or pos "
        "column, ascending; then doc id descending) or input-order (the order of the run's "
        "lines or rows, then doc id descending; the local engine only: --engine local, or "
        "auto on small local files)",
    )
    near_duplicates: str | None = input_path(
        "near-duplicate pairs doc_a, doc_b (e.g. the pairs.parquet of 'sparkeval "
        "near-duplicates'): a doc that near-duplicates a higher-ranked doc gains nothing, "
        "and NearDup@k becomes available",
        None,
    )
    near_duplicates_format: str | None = option(
        None,
        choices=FORMATS,
        help="format of the pairs (default from the extension; trec means whitespace "
        "separated 'doc_a doc_b' lines)",
    )
    train: str | None = input_path(
        "training interactions (user, item): the catalogue and item popularity of the "
        "measures of the recommendation set, Coverage@k and Novelty@k",
        None,
    )
    reference_run: str | None = option(
        None,
        metavar="RUN_ID",
        help="the run, among the runs evaluated, that Intersection@k (RecTools') and "
        "Unexpectedness@k (RePlay's) compare each run's top-k lists with; its own row is "
        "its comparison with itself",
    )
    item_categories: str | None = input_path(
        "an item -> category table (item_id, category; Parquet, CSV, TSV or JSONL), one "
        "row per item: the categories of CategoricalDiversity@k (RePlay's)",
        None,
    )
    subtopic_qrels: str | None = input_path(
        "subtopic qrels of the intent-aware measures (alpha-nDCG@k, ERR-IA@k, ...): "
        "ndeval's 'query subtopic doc grade' lines, or Parquet, CSV or TSV with columns "
        "query_id, subtopic_id, doc_id, relevance",
        None,
    )
    reader: str = option(
        "auto",
        choices=READERS,
        help="who reads Parquet inputs: auto (default: the Python workers read plain "
        "local Parquet row groups themselves and exchange Arrow payloads; anything else "
        "is read by Spark) or spark (always Spark's readers)",
    )
    engine: str = option("auto", choices=ENGINES, help=ENGINE_HELP)
    local_workers: int = option(
        0,
        metavar="N",
        help="processes of the local engine: 0 (default) one per core for inputs of "
        f"{PARALLEL_BYTES >> 20} MiB or more, else one; N: that many",
    )

    def validate(self) -> Self:
        """Check every value; raises ConfigError naming the key and what is expected.

        ``trec_eval`` is applied here: the config returned has trec_eval's measures
        (when none were given), names and query policy.
        """
        if self.trec_eval:
            if self.compat != "trec":
                raise ConfigError("--trec-eval reproduces trec_eval: it takes no --compat")
            preset = replace(
                self,
                trec_eval=False,
                measures=self.measures or ("official",),
                names="trec",
                queries="both" if self.queries == "qrels" else self.queries,
            )
            return preset.validate()
        if not self.measures:
            raise ConfigError("missing --measures (or key 'measures' in the config file)")
        if not self.run and not self.run_table:
            raise ConfigError("missing --run (or key 'run' in the config file) or --run-table")
        if self.qrels is None and self.qrels_table is None:
            raise ConfigError(
                "missing --qrels (or key 'qrels' in the config file) or --qrels-table"
            )
        if self.qrels is not None and self.qrels_table is not None:
            raise ConfigError("give either --qrels or --qrels-table, not both")
        check_condition(self.where, "--where")
        check_condition(self.qrels_where, "--qrels-where")
        for name in self.run_table:
            check_table_name(name, "--run-table")
        if self.qrels_table is not None:
            check_table_name(self.qrels_table, "--qrels-table")
        _whole(self.rel_level, "rel_level", minimum=0)
        if self.depth is not None:
            _whole(self.depth, "depth", minimum=1)
        if self.buckets is not None:
            _whole(self.buckets, "buckets", minimum=1)
        _whole(self.local_workers, "local_workers", minimum=0, maximum=MAX_LOCAL_WORKERS)
        for key, kind in (("run_columns", "run"), ("qrels_columns", "qrels")):
            try:
                parse_mapping(getattr(self, key), kind)
            except ConfigError as exc:
                raise ConfigError(f"key '{key}': {exc}") from None
        try:
            other, intent_aware = split_intent_aware(self.measures)
            ranking, sets = split_set_measures(other, self.compat)
            self._check_intent_aware(intent_aware, ranking)
            check_set_inputs(sets, self.set_input_values())
            if sets and not ranking:
                raise ConfigError(
                    f"{sets[0].typed} comes with the ranking measures of an evaluation: give "
                    "one as well (e.g. nDCG@10), or use sparkeval diversity --train"
                )
            if sets and self.ties != "doc-id":
                raise ConfigError(
                    f"key 'ties': {sets[0].typed} cuts each run's top-k lists with tied "
                    "scores by doc id, the default tie rule; it does not follow --ties "
                    f"{self.ties}"
                )
            # RePlay's aggregation modes (NDCG-Median@10) are parsed by the profile's plan
            plain = [n for n in ranking if self.compat != "replay" or replay_mode(n) is None]
            if plain or not ranking:
                parse_measures(plain)
        except ValueError as exc:
            raise ConfigError(f"key 'measures': {exc}") from None
        EvalOptions(self.queries, self.rel_level, self.depth)  # type: ignore[arg-type]
        self._check_ties()
        plan = self.plan()
        if not self.near_duplicates:
            check_flags_available(plan.measures, "--near-duplicates PATH (key 'near_duplicates')")
        return self

    def _check_intent_aware(self, measures: list[IntentAwareMeasure], ranking: list[str]) -> None:
        """Refuse intent-aware measures without subtopic qrels, without a ranking
        measure beside them, or with a tie rule or profile they do not follow."""
        if not measures:
            return
        first = measures[0].typed
        if not self.subtopic_qrels:
            raise ConfigError(
                f"{first} is an intent-aware measure: it needs subtopic qrels, "
                "--subtopic-qrels PATH (key 'subtopic_qrels'; subtopic_qrels= in Python)"
            )
        if not ranking:
            raise ConfigError(
                f"{first} comes with the ranking measures of an evaluation: give one as "
                "well (e.g. nDCG@10)"
            )
        if self.ties != "doc-id":
            raise ConfigError(
                f"key 'ties': {first} ranks tied scores by doc id ascending, as ndeval "
                f"does; it does not follow --ties {self.ties}"
            )
        if self.compat != "trec":
            raise ConfigError(
                f"key 'compat': {first} is computed as ndeval computes it, under --compat "
                f"trec only (got {self.compat})"
            )

    def _check_ties(self) -> None:
        """Refuse, by name, the tie rules the inputs of this command cannot honour."""
        if self.ties == "input-order" and (self.engine == "spark" or self.reads_tables()):
            raise ConfigError(input_order_refusal("key 'ties'"))
        check_ties_allowed(self.ties, bool(self.near_duplicates))

    def input_paths(self) -> list[str]:
        """Every input path (runs, qrels, near-duplicate pairs), for output-path checks;
        catalog tables are not paths."""
        paths = [*self.run, *([self.qrels] if self.qrels else [])]
        paths += [self.near_duplicates] if self.near_duplicates else []
        paths += [self.item_categories] if self.item_categories else []
        paths += [self.subtopic_qrels] if self.subtopic_qrels else []
        return [*paths, *([self.train] if self.train else [])]

    def set_measures(self) -> list[SetMeasure]:
        """The measures of the whole recommendation set asked for (``Coverage@k``, ...),
        computed from the top-k lists and ``train``, beside the evaluation."""
        return split_set_measures(split_intent_aware(self.measures)[0], self.compat)[1]

    def intent_aware_measures(self) -> list[IntentAwareMeasure]:
        """The intent-aware measures asked for (``alpha-nDCG@k``, ...), computed from
        the runs and ``subtopic_qrels``, beside the evaluation."""
        return split_intent_aware(self.measures)[1]

    def set_input_values(self) -> dict[str, str | None]:
        """The inputs of the set measures by config key (None when not given)."""
        return {
            "train": self.train,
            "reference_run": self.reference_run,
            "item_categories": self.item_categories,
        }

    def set_inputs(self) -> str:
        """What the set measures read, in words (``with train.parquet, against run
        'base'``), for the status line."""
        parts = [f"with {self.train}"] if self.train else []
        if self.reference_run is not None:
            parts.append(f"against run {self.reference_run!r}")
        if self.item_categories:
            parts.append(f"with the categories of {self.item_categories}")
        return ", ".join(parts)

    def input_tables(self) -> list[str]:
        """The catalog tables read (``--run-table``, ``--qrels-table``)."""
        return [*self.run_table, *([self.qrels_table] if self.qrels_table else [])]

    def run_inputs(self) -> list[str]:
        """The run paths, then the catalog tables as ``table:NAME``."""
        return [*self.run, *(f"{TABLE_PREFIX}{name}" for name in self.run_table)]

    def qrels_input(self) -> str:
        """The qrels path, or the catalog table as ``table:NAME``."""
        return self.qrels or f"{TABLE_PREFIX}{self.qrels_table}"

    def run_column_map(self) -> Mapping[str, str] | str | None:
        """``run_columns`` with ``run_id_column`` as the run id column."""
        if self.run_id_column is None:
            return self.run_columns
        mapping = dict(parse_mapping(self.run_columns, "run"))
        return {**mapping, "run_id": self.run_id_column}

    def reads_tables(self) -> bool:
        """Inputs only Spark can read: catalog tables."""
        return bool(self.run_table or self.qrels_table)

    def dry_run_checks(self) -> list[str]:
        """Each run's and the qrels' columns resolved on their schemas, as the read does."""
        from sparkeval.io.columns import parse_mapping
        from sparkeval.job.dry_run import check_run_or_qrels, input_schema

        plan = self.plan()
        names = [m.name for m in plan.measures]
        names += [f"{mode.name} (of {mode.base.name})" for mode in plan.modes]
        lines = [f"measures: {', '.join(names)}"]
        run_map = parse_mapping(self.run_column_map(), "run")
        for path in self.run:
            schema = input_schema(path, self.run_format or self.format)
            lines.append(check_run_or_qrels(schema, "run", run_map))
        tables = [*self.run_table, *([self.qrels_table] if self.qrels_table else [])]
        lines += [f"table {name}: read through the catalog, not checked here" for name in tables]
        if self.qrels is not None:
            qrels = input_schema(self.qrels, self.qrels_format or self.format)
            if plan.relevance.kind == "grade":
                qrels_map = parse_mapping(self.qrels_columns, "qrels")
                lines.append(check_run_or_qrels(qrels, "qrels", qrels_map))
            else:
                lines.append(qrels.describe())
        if self.near_duplicates:
            lines.append(input_schema(self.near_duplicates).describe())
        if self.train:
            from sparkeval.io.columns import TRAIN_ALIASES
            from sparkeval.job.dry_run import check_list_table

            train = input_schema(self.train)
            lines.append(check_list_table(train, TRAIN_ALIASES, ("query_id", "doc_id")))
        if self.item_categories:
            from sparkeval.io.columns import CATEGORY_ALIASES
            from sparkeval.job.dry_run import check_list_table

            table = input_schema(self.item_categories)
            lines.append(check_list_table(table, CATEGORY_ALIASES, ("doc_id", "category")))
        return lines

    def plan(self) -> CompatPlan:
        """Measures, query policy and relevance rule of the compatibility profile.

        Under the ``mllib`` and ``recommenders`` profiles the profile sets the query
        policy (``mllib``: ``union``, or ``both`` when asked; ``recommenders``: ``both``).
        """
        if self.compat != "trec" and self.rel_level != 1:
            raise ConfigError(
                f"key 'rel_level': compat profile {self.compat!r} sets relevance itself; "
                f"use relevance or relevance_threshold (got rel_level {self.rel_level})"
            )
        rule = RelevanceRule.from_options(
            self.relevance, self.relevance_threshold, self.relevant_only
        )
        queries = None if self.compat != "trec" and self.queries == "qrels" else self.queries
        ranking = split_set_measures(split_intent_aware(self.measures)[0], self.compat)[0]
        return plan_compat(self.compat, ranking, rule, queries, self.ties)


def _whole(value: Any, key: str, minimum: int, maximum: int | None = None) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ConfigError(f"key '{key}': expected a whole number >= {minimum}, got {value!r}")
    if maximum is not None and value > maximum:
        raise ConfigError(f"key '{key}': expected a whole number <= {maximum}, got {value!r}")


def input_order_refusal(where: str) -> str:
    """The refusal of ``--ties input-order`` where Spark would read the inputs: the
    local engine's readers keep the order of a file's lines and rows
    (:mod:`sparkeval.io.tie_keys`), Spark's read a file in parts."""
    return (
        f"{where}: input-order keeps the order of a run's lines or rows, which only the "
        "local engine reads in order (--engine local, or auto on small local files; the "
        "Python API on tables held in memory); Spark reads files and tables in parts: "
        "use --ties rank (a rank column or a TREC run's rank field)"
    )
