"""Loading a command's typed config: a YAML/JSON file, the command line, keyword arguments.

The same rules hold for every command:

* keys are the option names with underscores (``rel_level``); a file may also spell
  them with dashes;
* values given later win: the file, then the command line, then keyword arguments;
* an unknown key, a value of the wrong type or a missing required key is a
  :class:`~sparkeval.errors.ConfigError` naming the key (and the file), raised before
  Spark starts;
* relative paths in a file are relative to the file's directory.

Example:
    >>> from sparkeval.job.options import option
    >>> @dataclass(frozen=True, kw_only=True)
    ... class Toy(JobConfig):
    ...     out: str = option(help="output directory")
    ...     depth: int | None = option(None)
    >>> Toy.load(out="o", depth=3)
    Toy(out='o', depth=3)
    >>> Toy.load(out="o", dpeth=3)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    sparkeval.errors.ConfigError: options: unknown key 'dpeth' (did you mean 'depth'?); ...
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Self

from sparkeval.errors import ConfigError
from sparkeval.job.options import OptionSpec, option_specs

#: the largest config file read (a config is a few keys; a huge file is a mistake)
MAX_CONFIG_BYTES = 1 << 20
#: the most values a YAML config may hold once its aliases are expanded ("billion laughs")
MAX_CONFIG_VALUES = 100_000


@dataclass(frozen=True, kw_only=True)
class JobConfig:
    """Base of every command's config: a frozen dataclass whose fields are options."""

    @classmethod
    def options(cls) -> list[OptionSpec]:
        """The options of this config, in declaration order."""
        return option_specs(cls)

    @classmethod
    def load(
        cls,
        file: str | None = None,
        cli: Mapping[str, Any] | None = None,
        **values: Any,
    ) -> Self:
        """The validated config from a file, command-line values and keyword arguments.

        ``cli`` holds the parsed command line (a value of ``None`` or an empty list
        means "not given"); ``values`` are Python keyword arguments and win over both.
        """
        specs = {spec.key: spec for spec in cls.options()}
        merged: dict[str, Any] = {}
        if file:
            file_values = _option_names_as_keys(read_config_file(file), specs, file)
            _check_values(file_values, specs, source=file)
            merged.update(_rebased(file_values, specs, Path(file).resolve().parent))
        given = {k: v for k, v in (cli or {}).items() if v is not None and v != [] and v != ()}
        given.update(_option_names_as_keys(values, specs, "options"))
        _check_values(given, specs, source="options")
        for key, value in given.items():
            earlier = merged.get(key)
            if isinstance(value, Mapping) and isinstance(earlier, Mapping):
                merged[key] = {**earlier, **value}  # settings merge key by key
            else:
                merged[key] = value
        for spec in specs.values():
            if spec.required and merged.get(spec.key) in (None, "", [], ()):
                raise ConfigError(f"missing {spec.flag} (or key {spec.key!r} in the config file)")
        _check_table_names(merged, specs)
        return cls(**{k: _normalised(specs[k], v) for k, v in merged.items()}).validate()

    def validate(self) -> Self:
        """Check values beyond their types; raises ConfigError naming the key."""
        return self

    def preflight(self) -> None:
        """Checks of the machine (paths, the output target) made before Spark starts."""


def read_config_file(path: str) -> dict[str, Any]:
    """A config file's mapping (YAML with the safe loader, or JSON), keys with underscores."""
    file = Path(path)
    if file.is_dir():
        raise ConfigError(f"{path}: a directory, not a config file")
    if not file.is_file():
        raise ConfigError(f"{path}: config file not found")
    if file.stat().st_size > MAX_CONFIG_BYTES:
        raise ConfigError(f"{path}: config file larger than {MAX_CONFIG_BYTES} bytes")
    raw = file.read_bytes()
    try:
        text = raw.decode("utf-8-sig")  # a byte order mark (some editors write one) is no key
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise ConfigError(f"{path}:{line}: not UTF-8 text (byte {raw[exc.start]:#04x})") from None
    if file.suffix.lower() == ".json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"{path}: not valid JSON ({exc})") from None
    else:
        data = _load_yaml(text, path)
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping of keys to values at the top level")
    return {str(key).replace("-", "_"): value for key, value in data.items()}


def _load_yaml(text: str, path: str) -> Any:
    """A YAML document with the safe loader, refused when its aliases expand it beyond
    :data:`MAX_CONFIG_VALUES` values (or make it refer to itself)."""
    import yaml

    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        if node is not None and _expanded_size(node, {}) > MAX_CONFIG_VALUES:
            raise ConfigError(
                f"{path}: YAML aliases expand the config beyond {MAX_CONFIG_VALUES} values"
            )
        if node is not None:
            _refuse_repeated_keys(node, path)
        return loader.construct_document(node) if node is not None else None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML ({exc})") from None
    except RecursionError:
        raise ConfigError(f"{path}: YAML nested too deeply or an alias refers to itself") from None
    finally:
        loader.dispose()


def _refuse_repeated_keys(node: Any, path: str) -> None:
    """A key given twice in one mapping (YAML keeps the last one silently) is an error
    naming the key and both lines."""
    import yaml

    stack, seen_nodes = [node], set()
    while stack:
        current = stack.pop()
        if id(current) in seen_nodes:
            continue
        seen_nodes.add(id(current))
        if isinstance(current, yaml.MappingNode):
            lines: dict[str, int] = {}
            for key, value in current.value:
                if isinstance(key, yaml.ScalarNode):
                    line = key.start_mark.line + 1
                    if key.value in lines:
                        raise ConfigError(
                            f"{path}:{line}: key {key.value!r} given twice (first on line "
                            f"{lines[key.value]}); give it once"
                        )
                    lines[key.value] = line
                stack.append(value)
        elif isinstance(current, yaml.SequenceNode):
            stack.extend(current.value)


def _expanded_size(node: Any, sizes: dict[int, int]) -> int:
    """The number of values ``node`` stands for with every alias expanded (memoised by
    node, so a shared node is counted where it is used, at the cost of one visit)."""
    key = id(node)
    if key in sizes:
        if sizes[key] < 0:
            raise RecursionError  # the node contains itself
        return sizes[key]
    sizes[key] = -1
    if isinstance(node.value, list):
        children = [
            c for item in node.value for c in (item if isinstance(item, tuple) else (item,))
        ]
        total = 1 + sum(_expanded_size(child, sizes) for child in children)
    else:
        total = 1
    sizes[key] = total
    return total


def _option_names_as_keys(
    data: Mapping[str, Any], specs: Mapping[str, OptionSpec], source: str
) -> dict[str, Any]:
    """``data`` with option names used as keys (``run`` for ``--run``, whose key is
    ``compared``) turned into the keys; a value given under both names is refused."""
    aliases = {
        spec.flag[2:].replace("-", "_"): key
        for key, spec in specs.items()
        if spec.flag[2:].replace("-", "_") not in specs
    }
    out: dict[str, Any] = {}
    named: dict[str, str] = {}
    for name, value in data.items():
        key = aliases.get(name, name)
        if key in out:
            first, second = sorted((named[key], name))
            raise ConfigError(f"{source}: {first!r} and {second!r} name the same option; give one")
        out[key], named[key] = value, name
    return out


def _check_values(data: Mapping[str, Any], specs: Mapping[str, OptionSpec], source: str) -> None:
    """Unknown keys, wrong value types and values outside the choices name the key."""
    for key, value in data.items():
        spec = specs.get(key)
        if spec is None:
            hint = difflib.get_close_matches(str(key), sorted(specs), n=1)
            suggestion = f" (did you mean {hint[0]!r}?)" if hint else ""
            raise ConfigError(
                f"{source}: unknown key {key!r}{suggestion}; valid keys: {', '.join(sorted(specs))}"
            )
        allowed = spec.allowed
        ok = bool in allowed if isinstance(value, bool) else isinstance(value, allowed)
        if not ok:
            raise ConfigError(f"{source}: key {key!r} expects {spec.type_names()}, got {value!r}")
        choices = spec.meta.choices
        if choices and value is not None and value not in choices:
            raise ConfigError(f"key {key!r}: {value!r} is not one of {', '.join(choices)}")


def _rebased(data: dict[str, Any], specs: Mapping[str, OptionSpec], base: Path) -> dict[str, Any]:
    """Relative paths of path options made relative to the config file's directory."""

    def rebase(value: Any) -> Any:
        if not isinstance(value, str) or "://" in value or Path(value).is_absolute():
            return value
        if value.startswith("table:"):  # a catalog table, not a path
            return value
        return str(base / value)

    out = dict(data)
    for key, value in data.items():
        if specs[key].meta.path and value is not None:
            out[key] = [rebase(v) for v in value] if isinstance(value, list) else rebase(value)
    return out


def _check_table_names(values: Mapping[str, Any], specs: Mapping[str, OptionSpec]) -> None:
    """Every ``table:NAME`` given to a path option names a plain catalog table
    (:func:`sparkeval.io.sql_text.check_table_name`), before anything reads it."""
    from sparkeval.io.readers import TABLE_PREFIX
    from sparkeval.io.sql_text import check_table_name

    for key, value in values.items():
        if not specs[key].meta.path:
            continue
        for item in value if isinstance(value, list | tuple) else [value]:
            if isinstance(item, str) and item.startswith(TABLE_PREFIX):
                check_table_name(item[len(TABLE_PREFIX) :], specs[key].flag, item)


def _normalised(spec: OptionSpec, value: Any) -> Any:
    """Lists as tuples of strings, mappings as plain dicts, then the option's converter."""
    if spec.is_list and value is not None:
        value = (value,) if isinstance(value, str) else tuple(str(v) for v in value)
    elif isinstance(value, Mapping):
        value = dict(value)
    if spec.meta.convert is not None and value is not None:
        value = spec.meta.convert(value)
    return value
