"""Config files: safe YAML, validated before Spark starts, CLI options win."""

from __future__ import annotations

import pytest

from sparkeval.errors import ConfigError
from sparkeval.evaluation.options import EvaluateConfig
from sparkeval.job.config import read_config_file

BASE = "run: a\nqrels: q\nmeasures: AP\nout: o\n"


def write(tmp_path, text: str):
    path = tmp_path / "job.yaml"
    path.write_text(text)
    return str(path)


def test_paths_are_relative_to_the_file_and_cli_wins(tmp_path) -> None:
    path = write(
        tmp_path, "run: [a.txt, /abs/b.txt]\nqrels: q.txt\nmeasures: [AP, P@5]\nout: res\n"
    )
    config = EvaluateConfig.load(path, {"measures": ["nDCG@10"], "depth": 50})
    assert config.run == (str(tmp_path / "a.txt"), "/abs/b.txt")
    assert config.measures == ("nDCG@10",)
    assert config.depth == 50
    assert config.qrels == str(tmp_path / "q.txt")
    assert config.out == str(tmp_path / "res")


def test_keyword_arguments_win_over_file_and_command_line(tmp_path) -> None:
    path = write(tmp_path, BASE + "depth: 5\n")
    assert EvaluateConfig.load(path, {"depth": 7}, depth=9).depth == 9


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
        EvaluateConfig.load(write(tmp_path, text))
    assert fragment in str(info.value)


def test_missing_required_key(tmp_path) -> None:
    with pytest.raises(ConfigError, match="missing --qrels"):
        EvaluateConfig.load(write(tmp_path, "run: a\nmeasures: AP\nout: o\n"))


def test_missing_config_file(tmp_path) -> None:
    with pytest.raises(ConfigError, match="config file not found"):
        read_config_file(str(tmp_path / "none.yaml"))


def test_oversized_config_file_is_refused(tmp_path) -> None:
    path = write(tmp_path, BASE + "# " + "x" * (1 << 20) + "\n")
    with pytest.raises(ConfigError, match="larger than"):
        EvaluateConfig.load(path)


def test_dashed_keys_in_a_file_are_the_same_keys(tmp_path) -> None:
    assert EvaluateConfig.load(write(tmp_path, BASE + "rel-level: 2\n")).rel_level == 2


def test_alias_bombs_are_refused_quickly(tmp_path) -> None:
    # "billion laughs": 9 levels of 9 aliases would expand to 9**9 values
    lines = ['a0: &a0 ["lol"]']
    for level in range(1, 10):
        lines.append(f"a{level}: &a{level} [" + ", ".join([f"*a{level - 1}"] * 9) + "]")
    path = write(tmp_path, "\n".join(lines) + "\n")
    with pytest.raises(ConfigError, match="aliases expand the config beyond"):
        read_config_file(path)


def test_a_few_aliases_are_fine_and_self_reference_is_refused(tmp_path) -> None:
    text = "run: [&r a.txt]\nqrels: *r\nmeasures: [AP, P@5]\nout: o\n"
    config = EvaluateConfig.load(write(tmp_path, text))
    assert config.qrels == config.run[0] and config.measures == ("AP", "P@5")
    with pytest.raises(ConfigError, match="refers to itself"):
        read_config_file(write(tmp_path, "run: &r [a, *r]\n"))


def test_a_config_that_is_not_utf8_names_its_line(tmp_path) -> None:
    path = tmp_path / "job.yaml"
    path.write_bytes(b"run: a\nqrels: caf\xe9\n")  # Latin-1
    with pytest.raises(ConfigError, match=r"job.yaml:2: not UTF-8 text \(byte 0xe9\)"):
        read_config_file(str(path))


def test_option_names_are_keys_too(tmp_path) -> None:
    from sparkeval.compare.options import CompareConfig

    text = "per_query: eval\nbaseline: base\nrun: [a, b]\nout: o\n"
    assert CompareConfig.load(write(tmp_path, text)).compared == ("a", "b")
    with pytest.raises(ConfigError, match="'compared' and 'run' name the same option"):
        CompareConfig.load(write(tmp_path, text + "compared: [c]\n"))


def test_a_key_given_twice_is_refused_naming_both_lines(tmp_path) -> None:
    text = "run: a\nqrels: q\nmeasures: AP\nout: o\nspark:\n  spark.ui.enabled: 'false'\n"
    text += "  spark.ui.enabled: 'true'\n"
    with pytest.raises(
        ConfigError, match=r"job.yaml:7: key 'spark.ui.enabled' given twice \(first on line 6\)"
    ):
        read_config_file(write(tmp_path, text))
    with pytest.raises(ConfigError, match=r"job.yaml:5: key 'measures' given twice"):
        read_config_file(write(tmp_path, BASE + "measures: P@5\n"))
