"""``sparkeval measures``: the measure catalogue, generated from the registry."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TextIO

from sparkeval.job.command import Command
from sparkeval.job.config import JobConfig
from sparkeval.job.options import option
from sparkeval.measures import REGISTRY, Family, Param
from sparkeval.measures.intent_aware_names import CATALOGUE as INTENT_AWARE
from sparkeval.measures.names import ALIASES, SETS, closest_families
from sparkeval.measures.rating import RATING_ERRORS
from sparkeval.measures.registry import REL_PARAM, TREC_FIELD, format_value

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

_CUTOFF = {"none": "no cutoff", "optional": "optional @k", "required": "@k required"}
_AGGREGATE = {
    "mean": "mean over queries",
    "sum": "sum over queries",
    "gmean": "geometric mean (values floored at 1e-5)",
}


@dataclass(frozen=True, kw_only=True)
class MeasuresConfig(JobConfig):
    """Which families to list, and how."""

    format: str = option(
        "text",
        choices=("text", "markdown"),
        help="plain text (default) or a Markdown table for documentation",
    )
    names: tuple[str, ...] = option(
        (), positional=True, metavar="FAMILY", help="only these families (default: all)"
    )


def run(spark: SparkSession | None, config: MeasuresConfig) -> list[Family]:
    """The families to list (every one by default); an unknown name is a ConfigError."""
    return _select(list(config.names))


def show(families: list[Family], config: MeasuresConfig, stdout: TextIO) -> None:
    """The catalogue as text or Markdown."""
    write = write_markdown if config.format == "markdown" else write_text
    write(stdout, families, with_ratings=not config.names)


def _select(names: list[str]) -> list[Family]:
    if not names:
        return list(REGISTRY.values())
    from sparkeval.errors import ConfigError

    out = []
    for name in names:
        family = ALIASES.get(name, name)
        if family not in REGISTRY:
            near = closest_families(name)
            raise ConfigError(
                f"unknown measure family {name!r}; did you mean {', '.join(near[:-1])} or "
                f"{near[-1]}? ('sparkeval measures' without a name lists them all)"
            )
        out.append(REGISTRY[family])
    return out


def syntax(fam: Family) -> str:
    """How a family is written: ``nDCG(gain=…,gains=…)[@k]``."""
    params = [n for n in fam.params]
    text = fam.name
    if params:
        text += "(" + ",".join(f"{n}=…" for n in params) + ")"
    return text + {"none": "", "optional": "[@k]", "required": "@k"}[fam.cutoff]


def describe_param(name: str, param: Param) -> str:
    """``gain: linear|exp|jarvelin, default linear — help``."""
    if name == "rel" and param == REL_PARAM:
        kind = "int, default: the run's relevance level (1)"
    else:
        kinds = {
            int: "int",
            float: "number",
            str: "text",
            tuple: "list a;b;c",
            dict: "grade map g:v;g:v",
        }
        kind = "|".join(str(c) for c in param.choices) if param.choices else kinds[param.kind]
        if param.required:
            kind += ", required"
        elif param.default is not None:
            kind += f", default {format_value(param.default)}"
        else:
            kind += ", optional"
    return f"{name}: {kind}" + (f" — {param.help}" if param.help else "")


def trec_names(fam: Family) -> list[str]:
    """trec_eval names (patterns) and parameter syntax of a family."""
    patterns = (p for p in (fam.trec, fam.trec_cut) if p)
    names = [TREC_FIELD.sub(lambda m: f"<{m.group(1)}>", p) for p in patterns]
    for tp in fam.trec_params:
        if tp.mode == "one":  # printed as set_F_0.5 for -m set_F.0.5
            names.append(f"{tp.base}_<{tp.param}>")
        example = {
            "cutoffs": "k1,k2,…",
            "each": "v1,v2,…",
            "list": "v1,v2,…",
            "pairs": "g1=v1,g2=v2,…",
            "one": "v",
        }[tp.mode]
        names.append(f"-m {tp.base}.{example}")
    return names


def family_record(fam: Family) -> dict[str, Any]:
    """Everything the catalogue shows about one family."""
    return {
        "name": fam.name,
        "syntax": syntax(fam),
        "params": [describe_param(n, p) for n, p in fam.params.items()],
        "cutoff": _CUTOFF[fam.cutoff]
        + (f" (default @{fam.default_cutoff})" if fam.default_cutoff else ""),
        "trec": trec_names(fam),
        "direction": "higher is better" if fam.higher_is_better else "lower is better",
        "aggregate": _AGGREGATE[fam.aggregate] + ("" if fam.per_query else "; no per-query value"),
        "definition": fam.description,
        "undefined": fam.undefined,
        "references": fam.references,
    }


def write_text(out: TextIO, families: list[Family], with_ratings: bool = True) -> None:
    for fam in families:
        rec = family_record(fam)
        out.write(f"{rec['syntax']}\n")
        out.write(f"    {rec['definition']}\n")
        if rec["params"]:
            out.write("    parameters: " + "; ".join(rec["params"]) + "\n")
        out.write(f"    cutoff: {rec['cutoff']}; {rec['direction']}; all = {rec['aggregate']}\n")
        out.write("    trec_eval: " + (", ".join(rec["trec"]) or "—") + "\n")
        if rec["undefined"]:
            out.write(f"    null when: {rec['undefined']}\n")
        if rec["references"]:
            out.write(f"    references: {rec['references']}\n")
        out.write("\n")
    if with_ratings:
        out.write("Rating errors (user, true rating p, prediction q; e = p - q):\n")
        for err in RATING_ERRORS.values():
            param = ""
            if err.param:
                param = f" (parameter {err.param}, default {format_value(err.default)})"
            out.write(f"  {err.name}{param}: {err.description}\n")
        out.write(
            "\nIntent-aware measures (evaluate --subtopic-qrels; ndeval's definitions, "
            "mean over the queries of both the run and the subtopic qrels):\n"
        )
        for syntax_, peer, params, definition in INTENT_AWARE:
            out.write(f"  {syntax_} (ir_measures {peer}; {params}): {definition}\n")
        out.write(
            "\nMeasure sets: "
            + ", ".join(f"{name} ({len(members)} measures)" for name, members in SETS.items())
            + "\n"
        )


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def write_markdown(out: TextIO, families: list[Family], with_ratings: bool = True) -> None:
    out.write("| measure | parameters | trec_eval | direction | aggregate | definition |\n")
    out.write("|---|---|---|---|---|---|\n")
    for fam in families:
        rec = family_record(fam)
        definition = rec["definition"]
        if rec["undefined"]:
            definition += f"; null when {rec['undefined']}"
        if rec["references"]:
            definition += f" ({rec['references']})"
        cells = [
            f"`{rec['syntax']}`",
            "<br>".join(rec["params"]) or "—",
            "<br>".join(f"`{t}`" for t in rec["trec"]) or "—",
            rec["direction"],
            rec["aggregate"],
            definition,
        ]
        out.write("| " + " | ".join(_cell(c) for c in cells) + " |\n")
    if with_ratings:
        out.write("\n| rating error | parameter | direction | definition |\n|---|---|---|---|\n")
        for err in RATING_ERRORS.values():
            param = f"{err.param} (default {format_value(err.default)})" if err.param else "—"
            direction = "higher is better" if err.higher_is_better else "lower is better"
            out.write(f"| `{err.name}` | {param} | {direction} | {_cell(err.description)} |\n")
        out.write(
            "\n| intent-aware measure (`--subtopic-qrels`) | ir_measures | parameters "
            "(default) | definition |\n|---|---|---|---|\n"
        )
        for syntax_, peer, params, definition in INTENT_AWARE:
            out.write(f"| `{syntax_}` | `{peer}` | {params} | {_cell(definition)} |\n")


COMMAND = Command(
    name="measures",
    help="list every measure with its parameters, trec_eval names and definition",
    description="Print the measure catalogue: every ranking measure family (syntax, "
    "parameters, cutoff rule, trec_eval names, direction, aggregate, definition, "
    "references) and the rating-error measures.",
    config=MeasuresConfig,
    run=run,
    show=show,
    uses_spark=False,
)
