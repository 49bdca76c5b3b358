"""Spark parameters carry their types, so the type checker sees every Spark call."""

from __future__ import annotations

import ast

from tests.conftest import ROOT

#: parameter names that hold a DataFrame wherever they appear
FRAME_NAMES = ("df", "frame", "run_df", "qrels_df", "runs_df")


def test_every_spark_and_dataframe_parameter_is_annotated() -> None:
    untyped = []
    for path in sorted((ROOT / "sparkeval").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for arg in node.args.args + node.args.kwonlyargs:
                wanted = {"spark": "SparkSession"}.get(arg.arg)
                if arg.arg in FRAME_NAMES:
                    wanted = "DataFrame"
                annotation = ast.unparse(arg.annotation) if arg.annotation else ""
                if wanted and wanted not in annotation:
                    where = f"{path.relative_to(ROOT)}:{node.lineno} {node.name}({arg.arg})"
                    untyped.append(where)
    assert not untyped, "unannotated Spark parameters: " + ", ".join(untyped)
