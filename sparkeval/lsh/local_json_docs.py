"""A ``near-duplicates`` docs file in JSON Lines read in this process, for the local
engine: the columns and values Spark's JSON reader gives the Spark job, or a hand-back
to Spark (:class:`~sparkeval.io.direct_input.NotDirect`) wherever its reading could
differ.

Spark infers one schema over every line (its fields sorted by name), so a line is
taken here when it is one JSON object read alike by Python's ``json`` and Spark's
parser; the columns used (doc id, text, tokens, weights) must hold values of one kind
whose Spark type is certain:

* ``doc_id``: strings on every line, or integers (``bigint``) on every line;
* ``text``: strings or nulls (a missing key is null), one string at least;
* ``tokens``: arrays of strings, or arrays of integers, no null, one token at least;
* ``weights``: arrays of finite numbers (``array<double>``), no null.

A line that both Python and Spark refuse (cut short, not an object, plain text, a
trailing comma, a control character in a string) is the error the Spark run reports
(:func:`~sparkeval.io.readers.bad_json_line`), naming the file and the line. Left to
Spark: a file that is not one local plain or gzip file, a line that is not valid UTF-8
or holds U+FFFD or a byte-order mark, a carriage return inside a line, a ``null`` line,
an array of objects, text after the object, single quotes, ``NaN`` or ``Infinity``, a
key given twice or two keys that differ only in case, a non-ASCII key, and values of
other kinds in the columns used (nested, booleans, fractions as ids, integers beyond 64
bits, mixed kinds).

Example::

    docs = read_json_docs("docs.jsonl")
    columns = json_doc_columns(docs, {"doc_id": "id", "text": "body"}, "docs.jsonl")
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from sparkeval.errors import InputError
from sparkeval.io.direct_input import NotDirect, local_single_file
from sparkeval.io.direct_text import open_bytes
from sparkeval.io.readers import bad_json_line

#: JSON whitespace both parsers skip around a value
_BLANK = " \t"
#: the range of Spark's ``bigint``
_LONG = (-(1 << 63), (1 << 63) - 1)
#: text that Spark's parser may read where Python's refuses the line (single quotes,
#: non-numeric numbers, a plus sign)
_SPARK_ONLY = ("'", "NaN", "INF", "Infinity", "+")


class _Different(ValueError):
    """A value Python's ``json`` and Spark's parser may read differently."""


def _no_constant(name: str) -> Any:
    raise _Different(f"the number {name}")


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    record = dict(pairs)
    if len(record) != len(pairs):
        raise _Different("a key given twice in one object")
    return record


_DECODER = json.JSONDecoder(object_pairs_hook=_unique_keys, parse_constant=_no_constant)


@dataclass(frozen=True)
class JsonDocs:
    """The records of a JSON Lines docs file and their columns.

    Attributes:
        names: every key of any record, sorted (the columns of Spark's schema).
        records: one dict per JSON object, in file order (blank lines skipped).
    """

    names: list[str]
    records: list[dict[str, Any]]


def _record(line: str, number: int, path: str) -> dict[str, Any] | None:
    """The object of one line, or None for a blank line.

    Raises:
        InputError: a line Spark's reader fails on too (:func:`bad_json_line`'s message).
        NotDirect: a line that Spark may read otherwise than Python.
    """
    if line.strip(_BLANK) == "":
        return None
    if not line.strip():
        raise NotDirect(f"{path}:{number}: a line of other whitespace than spaces and tabs")
    start = len(line) - len(line.lstrip(_BLANK))
    try:
        value, end = _DECODER.raw_decode(line, start)
    except _Different as exc:
        raise NotDirect(f"{path}:{number}: {exc}") from None
    except ValueError:
        value, end = _NOT_PARSED, len(line)
    if isinstance(value, dict):
        if line[end:].strip(_BLANK):
            raise NotDirect(f"{path}:{number}: text after the JSON object")
        return value
    if value is None or isinstance(value, list) or line[start] == "[":
        raise NotDirect(f"{path}:{number}: a line of null or a JSON array")
    if any(text in line for text in _SPARK_ONLY):
        raise NotDirect(f"{path}:{number}: a line that Spark's JSON parser may read")
    raise InputError(bad_json_line(path) or f"{path}:{number}: not one JSON object")


#: a line Python's parser refuses
_NOT_PARSED = object()


def read_json_docs(path: str) -> JsonDocs:
    """Every record of the JSON Lines docs file ``path``.

    Raises:
        InputError: a line that is not one JSON object to Spark either.
        NotDirect: what this reader leaves to Spark (see the module text).
    """
    local = local_single_file(path)
    if local is None:
        raise NotDirect(f"{path}: not one local JSON Lines file")
    try:
        with open_bytes(local) as handle:
            data = handle.read()
    except (OSError, EOFError) as exc:
        raise NotDirect(f"{path}: a file this reader does not read ({exc})") from None
    if data.startswith(b"\xef\xbb\xbf"):
        raise NotDirect(f"{path}: a byte-order mark")
    records = []
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    for number, raw in enumerate(lines, start=1):
        if raw.endswith(b"\r"):
            raw = raw[:-1]
        if b"\r" in raw:
            raise NotDirect(f"{path}:{number}: a carriage return inside the line")
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise NotDirect(f"{path}:{number}: a line that is not valid UTF-8") from None
        if "\ufffd" in line or "\ufeff" in line:
            raise NotDirect(f"{path}:{number}: a replacement character or byte-order mark")
        record = _record(line, number, path)
        if record is not None:
            records.append(record)
    if not records:
        raise NotDirect(f"{path}: no JSON object")
    names = sorted({key for record in records for key in record})
    _check_names(names, path)
    return JsonDocs(names, records)


def _check_names(names: list[str], path: str) -> None:
    folded = [name.lower() for name in names]
    if len(set(folded)) != len(folded):
        raise NotDirect(f"{path}: two keys that differ only in case")
    if not all(name.isascii() and name for name in names):
        raise NotDirect(f"{path}: an empty or non-ASCII key")


def _text_value(value: Any) -> bool:
    """A string whose UTF-8 Spark and Python agree on (no lone surrogate)."""
    if not isinstance(value, str):
        return False
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _long(value: Any) -> bool:
    return type(value) is int and _LONG[0] <= value <= _LONG[1]


def _ids(values: list[Any], column: str, path: str) -> pa.Array:
    if all(_text_value(v) for v in values):
        return pa.array(values, pa.string())
    if all(_long(v) for v in values):
        return pa.array(values, pa.int64())
    raise NotDirect(f"{path}: column {column} holds other values than all strings or all integers")


def _texts(values: list[Any], column: str, path: str) -> pa.Array:
    if not all(v is None or _text_value(v) for v in values) or all(v is None for v in values):
        raise NotDirect(f"{path}: column {column} holds other values than strings and nulls")
    return pa.array(values, pa.string())


def _tokens(values: list[Any], column: str, path: str) -> pa.Array:
    if not all(isinstance(v, list) for v in values):
        raise NotDirect(f"{path}: column {column} holds other values than arrays")
    flat = [token for tokens in values for token in tokens]
    if flat and all(_text_value(t) for t in flat):
        return pa.array(values, pa.list_(pa.string()))
    if flat and all(_long(t) for t in flat):
        return pa.array(values, pa.list_(pa.int64()))
    raise NotDirect(f"{path}: column {column} holds other tokens than all strings or integers")


def _number(value: Any) -> bool:
    if type(value) is int:
        return _long(value)
    return type(value) is float and math.isfinite(value)


def _weights(values: list[Any], column: str, path: str) -> pa.Array:
    good = all(isinstance(v, list) and all(_number(w) for w in v) for v in values)
    if not good:
        raise NotDirect(f"{path}: column {column} holds other values than arrays of numbers")
    return pa.array([[float(w) for w in v] for v in values], pa.list_(pa.float64()))


_READERS = {"doc_id": _ids, "text": _texts, "tokens": _tokens, "weights": _weights}


def json_doc_columns(docs: JsonDocs, used: Mapping[str, str], path: str) -> dict[str, pa.Array]:
    """The ``used`` columns ({canonical: key}) of the records by their canonical names,
    typed as Spark's reader types them (see the module text).

    Raises:
        NotDirect: values whose Spark type or value could differ.
    """
    columns = {}
    for canonical, key in used.items():
        values = [record.get(key) for record in docs.records]
        if canonical == "doc_id" and any(v is None for v in values):
            raise NotDirect(f"{path}: a null doc id")
        columns[canonical] = _READERS[canonical](values, key, path)
    return columns
