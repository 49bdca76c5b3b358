"""Config files: safe YAML, validated before Spark starts, CLI options win."""

from __future__ import annotations

import pytest

from sparkeval.config import build_config, load_config_file
from sparkeval.errors import ConfigError

BASE = "run: a\nqrels: q\nmeasures: AP\nout: o\n"


def write(tmp_path, text: str):
    path = tmp_path / "job.yaml"
    path.write_text(text)
    return str(path)


def test_paths_are_relative_to_the_file_and_cli_wins(tmp_path) -> None:
    values = load_config_file(
        write(tmp_path, "run: [a.txt, /abs/b.txt]\nqrels: q.txt\nmeasures: [AP, P@5]\nout: res\n")
    )
    assert values["run"] == [str(tmp_path / "a.txt"), "/abs/b.txt"]
    config = build_config(values, {"measures": ["nDCG@10"], "depth": 50})
    assert config.measures == ("nDCG@10",)
    assert config.depth == 50
    assert config.qrels == str(tmp_path / "q.txt")


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        (
            BASE + "measure: AP\n",
            "unknown key 'measure' (did you mean 'measures'?)",
        ),
        (BASE + "depth: ten\n", "key 'depth' expects int or null"),
        (
            BASE + "depth: 0\n",
            "key 'depth': expected a whole number >= 1",
        ),
        (BASE + "queries: all\n", "key 'queries'"),
        ("run: a\nqrels: q\nmeasures: [nDGC@10]\nout: o\n", "unknown measure 'nDGC@10'"),
        (BASE + "per_query: 1\n", "key 'per_query' expects bool"),
        ("- just\n- a list\n", "expected a mapping"),
        ("run: [a\n", "not valid YAML"),
        ("run: !!python/object/apply:os.system ['echo hi']\n", "not valid YAML"),
    ],
)
def test_bad_configs(tmp_path, text: str, fragment: str) -> None:
    with pytest.raises(ConfigError) as info:
        build_config(load_config_file(write(tmp_path, text)), {})
    assert fragment in str(info.value)


def test_missing_required_key(tmp_path) -> None:
    with pytest.raises(ConfigError, match="missing --qrels"):
        build_config(load_config_file(write(tmp_path, "run: a\nmeasures: AP\nout: o\n")), {})


def test_missing_config_file(tmp_path) -> None:
    with pytest.raises(ConfigError, match="config file not found"):
        load_config_file(str(tmp_path / "none.yaml"))
