"""``--config FILE`` for the job entries: a YAML or JSON mapping of option -> value.

Keys are option names without dashes (``num_perm`` or ``num-perm``); ``true`` turns a
flag on; options given on the command line come after the file's and so win.

Example:
    >>> argv_with_config(["--out", "x"])
    ['--out', 'x']
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from sparkeval.errors import ConfigError


def config_argv(path: str) -> list[str]:
    """The options of a config file as command-line arguments."""
    p = Path(path)
    if not p.exists():
        raise ConfigError(f"config file {path} does not exist")
    text = p.read_text()
    if p.suffix.lower() in (".yaml", ".yml"):
        import yaml

        data = yaml.safe_load(text)
    else:
        data = json.loads(text)
    if not isinstance(data, dict):
        raise ConfigError(f"config file {path} must hold a mapping of option names to values")
    argv: list[str] = []
    for key, value in data.items():
        flag = "--" + str(key).replace("_", "-")
        if value is True:
            argv.append(flag)
        elif value is False or value is None:
            continue
        elif isinstance(value, (dict, list)):
            raise ConfigError(f"config file {path}: key {key} must be a single value")
        else:
            argv += [flag, str(value)]
    return argv


def argv_with_config(argv: Sequence[str]) -> list[str]:
    """Replace ``--config FILE`` in ``argv`` by the file's options (placed first)."""
    args = list(argv)
    if "--config" not in args:
        return args
    i = args.index("--config")
    if i + 1 >= len(args):
        raise ConfigError("--config needs a file name")
    path = args[i + 1]
    rest = args[:i] + args[i + 2 :]
    return config_argv(path) + rest
