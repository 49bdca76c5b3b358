"""Options declared once: a dataclass field with its help text, flag and converter.

Every config field is an option. Its type annotation says which values it takes
(from a config file, the command line or Python keyword arguments), its metadata
says how the command line spells it. :func:`option` builds such a field.

Example:
    >>> from dataclasses import dataclass, fields
    >>> @dataclass(frozen=True, kw_only=True)
    ... class Example:
    ...     depth: int | None = option(None, help="keep the first N docs", metavar="N")
    >>> spec = OptionSpec.of(fields(Example)[0], {"depth": int | None})
    >>> spec.flag, spec.allowed, spec.required
    ('--depth', (<class 'int'>, <class 'NoneType'>), False)
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import MISSING, dataclass
from typing import Any

from sparkeval.errors import ConfigError

#: what :func:`option` stores in a field's metadata
_META = "sparkeval_option"


@dataclass(frozen=True)
class OptionMeta:
    """How one config key appears on the command line and in files."""

    help: str | None = None
    metavar: str | None = None
    choices: Sequence[str] | None = None
    flag: str | None = None
    cli: bool = True
    path: bool = False
    convert: Callable[[Any], Any] | None = None
    positional: bool = False


def option(
    default: Any = MISSING,
    *,
    help: str | None = None,
    metavar: str | None = None,
    choices: Sequence[str] | None = None,
    flag: str | None = None,
    cli: bool = True,
    path: bool = False,
    convert: Callable[[Any], Any] | None = None,
    positional: bool = False,
    default_factory: Callable[[], Any] | Any = MISSING,
) -> Any:
    """A config field: ``default`` (none: the key is required) and how it is given.

    Args:
        default: the value when the key is not given; leave out for a required key.
        help: the ``--help`` text.
        metavar: the value's name in ``--help``.
        choices: the values accepted (checked for files and keyword arguments too).
        flag: the command-line flag (default ``--`` + the key with dashes).
        cli: ``False`` for keys only a config file or Python can set (``spark``).
        path: relative paths in a config file are relative to the file's directory.
        convert: applied to the checked value (e.g. a comma list to a tuple).
        positional: given on the command line without a flag (a list: any number).
        default_factory: a callable giving the default (for mutable defaults).
    """
    meta = OptionMeta(
        help, metavar, tuple(choices) if choices else None, flag, cli, path, convert, positional
    )
    if default_factory is not MISSING:
        return dataclasses.field(default_factory=default_factory, metadata={_META: meta})
    return dataclasses.field(default=default, metadata={_META: meta})


def input_path(help: str, default: Any = MISSING) -> Any:
    """An option naming a file or directory the command reads (``--key PATH``).

    Relative paths in a config file are relative to the file's directory; a list
    type (``tuple[str, ...]``) takes several.  A pipe, ``/dev/stdin`` or ``/dev/fd/N``
    is read into a temporary file first (:mod:`sparkeval.io.streams`).
    """
    from sparkeval.io.streams import readable_paths

    return option(default, help=help, metavar="PATH", path=True, convert=readable_paths)


_NAMES = {type(None): "null", dict: "dict", list: "list"}


@dataclass(frozen=True)
class OptionSpec:
    """One option of a config class, read off its field and type annotation."""

    key: str
    hint: Any
    meta: OptionMeta
    required: bool

    @classmethod
    def of(cls, field: dataclasses.Field, hints: Mapping[str, Any]) -> OptionSpec:
        meta = field.metadata.get(_META, OptionMeta())
        required = field.default is MISSING and field.default_factory is MISSING
        return cls(field.name, hints[field.name], meta, required)

    @property
    def flag(self) -> str:
        """The command-line flag, e.g. ``--rel-level``."""
        return self.meta.flag or "--" + self.key.replace("_", "-")

    @property
    def allowed(self) -> tuple[type, ...]:
        """The Python types a file or keyword argument may give (in declaration order)."""
        out: list[type] = []
        for part in _union_parts(self.hint):
            origin = typing.get_origin(part) or part
            if origin in (tuple, list, Sequence):
                out += [list, tuple, str]
            elif origin in (dict, Mapping):
                out.append(dict)
            elif origin is float:
                out += [int, float]
            else:
                out.append(origin)
        return tuple(dict.fromkeys(out))

    @property
    def is_flag(self) -> bool:
        """A boolean switch (``--overwrite``)."""
        return self.allowed == (bool,)

    @property
    def is_list(self) -> bool:
        """A repeatable option collected into a tuple (``--run A --run B``)."""
        return any(typing.get_origin(p) in (tuple, list) for p in _union_parts(self.hint))

    def type_names(self) -> str:
        """``int or null``: the allowed types as an error message names them."""
        shown = [t for t in self.allowed if not (t is tuple and list in self.allowed)]
        return " or ".join(_NAMES.get(t, t.__name__) for t in shown)

    def scalar_type(self) -> type | None:
        """The converter the command line applies (``int``, ``float``) or None for text
        (also where text is one of the accepted types)."""
        parts = _union_parts(self.hint)
        if str in parts:
            return None
        for part in parts:
            if part in (int, float):
                return part
        return None


def _union_parts(hint: Any) -> tuple[Any, ...]:
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        return typing.get_args(hint)
    return (hint,)


def option_specs(config_class: type) -> list[OptionSpec]:
    """Every option of a config dataclass, in declaration order."""
    hints = typing.get_type_hints(config_class)
    return [OptionSpec.of(f, hints) for f in dataclasses.fields(config_class)]


def check_positive(value: int | None, key: str) -> None:
    """A count option given as 0 or less, or beyond 2^63-1 (Spark's counts and
    comparisons are 64-bit), is a ConfigError naming the key."""
    if value is not None and value < 1:
        raise ConfigError(f"key '{key}': expected a whole number >= 1, got {value}")
    if value is not None and value > 2**63 - 1:
        raise ConfigError(f"key '{key}': expected a whole number <= 2^63-1, got {value}")


def check_seed(seed: int) -> None:
    """A seed datasketch's MinHash (and numpy's legacy generator) takes: 0 to 2^32-1."""
    if not 0 <= seed < 2**32:
        raise ConfigError(f"--seed must be a whole number from 0 to 2^32-1, got {seed}")
