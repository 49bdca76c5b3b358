"""Every command's options are documented: help text, no reST markup in ``--help``."""

from __future__ import annotations

import pytest

from sparkeval.cli import build_parser, command_name, load_command
from sparkeval.commands import COMMAND_MODULES

COMMANDS = [load_command(module) for module in COMMAND_MODULES]


@pytest.mark.parametrize("command", COMMANDS, ids=[c.name for c in COMMANDS])
def test_every_option_has_help_text(command) -> None:
    undocumented = [s.flag for s in command.config.options() if s.meta.cli and not s.meta.help]
    assert not undocumented, f"{command.name}: options without help: {undocumented}"


@pytest.mark.parametrize("module", COMMAND_MODULES)
def test_help_is_plain_text(module) -> None:
    text = (
        build_parser(command_name(module))
        ._subparsers._group_actions[0]
        .choices[command_name(module)]
        .format_help()
    )
    for markup in ("``", ":mod:", ":func:", ":class:"):
        assert markup not in text, f"{command_name(module)} --help shows {markup!r}"
    assert "--config FILE" in text


@pytest.mark.parametrize(
    "argv",
    [
        ["evaluate", "--run", "r.txt", "--run-id", "a"],  # not --run-id-column
        ["evaluate", "--run", "r.txt", "--meas", "AP"],  # not --measures
        ["rating-errors", "--pred", "p.csv"],  # not --predictions
    ],
)
def test_an_abbreviated_option_is_not_taken_for_a_longer_one(argv, capsys) -> None:
    with pytest.raises(SystemExit) as exit_info:
        build_parser(argv[0]).parse_args(argv)
    assert exit_info.value.code == 2
    assert f"unrecognized arguments: {argv[-2]} {argv[-1]}" in capsys.readouterr().err
