"""The SQL text options accept: row conditions (``--where``) and catalog table names.

A condition such as ``--where "dt = '2026-11-01' AND score >= 0"`` is Spark SQL, and
Spark's full expression language can call any static Java method
(``reflect('java.io.File', 'createTempFile', ...)``), read files, or run scripts.  So
options that take SQL accept a documented subset of expressions only:

* column references: ``score``, ``` `my column` ```, ``t.dt``;
* literals: numbers as Spark writes them (``3``, ``-1.5``, ``1e3``, ``10L``, ``2.5BD``),
  strings in single or double quotes (Spark's escapes), ``TRUE``, ``FALSE``, ``NULL``,
  ``DATE '2026-11-01'``, ``TIMESTAMP '2026-11-01 10:00:00'``;
* comparisons ``= == <> != < <= > >= <=>``, arithmetic ``+ - * / %`` (and a sign),
  ``AND``, ``OR``, ``NOT``, ``[NOT] IN (...)``, ``[NOT] BETWEEN ... AND ...``,
  ``[NOT] LIKE ... [ESCAPE '...']``, ``IS [NOT] NULL``, parentheses;
* ``CAST(x AS type)`` to a plain type (``string``, ``int``, ``bigint``, ``double``,
  ``decimal(p, s)``, ``date``, ``timestamp``, ...);
* the functions in :data:`FUNCTIONS` (text and dates: ``lower``, ``upper``, ``trim``,
  ``length``, ``substring``, ``concat``, ``coalesce``, ``to_date``, ``year``, ...).

Anything else (another function, a subquery, a comment, a lambda, ``::``, ``CASE``) is
a :class:`~sparkeval.errors.ConfigError` naming the option and what was refused.

**How it is checked.** The text is parsed here, in Python, by a small recursive-descent
parser of exactly that subset: no JVM is needed, so the check runs while the config is
loaded, before Spark starts (and in ``--dry-run``), and also for a Spark Connect
client, which has no parser of its own.  Spark is then handed not the user's text but
the condition written back from the checked tree (:func:`spark_condition`): every name
back-quoted, every operation in parentheses, and each literal token as it was written,
where strings, names and numbers are cut out of the text by the same rules as Spark's
lexer.  So what Spark parses is the tree that was checked, and no difference between
this parser and Spark's (or a general SQL parser's) can carry a function call past the
check.  Spark's own parser was not used because it needs a running JVM; a general SQL
parser package would still leave Spark parsing the original text.

Example:
    >>> spark_condition("dt = '2026-11-01' and score >= -1", "--where")
    "((`dt` = '2026-11-01') AND (`score` >= (-1)))"
    >>> check_condition("reflect('java.io.File', 'createTempFile', 'x', '.y') IS NOT NULL",
    ...                 "--where")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    sparkeval.errors.ConfigError: --where ...: the function reflect is not accepted; ...
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sparkeval.errors import ConfigError

#: the functions a condition may call (lower case), all of them pure functions of
#: their arguments (or of the date): text, numbers and dates
FUNCTIONS = frozenset(
    {
        "abs",
        "char_length",
        "coalesce",
        "concat",
        "current_date",
        "date",
        "date_add",
        "date_sub",
        "datediff",
        "day",
        "dayofmonth",
        "length",
        "lower",
        "ltrim",
        "month",
        "rtrim",
        "substr",
        "substring",
        "to_date",
        "trim",
        "upper",
        "year",
    }
)

#: the types ``CAST(x AS type)`` may name (lower case); ``decimal`` may take ``(p, s)``,
#: ``varchar`` and ``char`` a length
TYPES = frozenset(
    {
        "bigint",
        "boolean",
        "byte",
        "char",
        "date",
        "dec",
        "decimal",
        "double",
        "float",
        "int",
        "integer",
        "long",
        "numeric",
        "real",
        "short",
        "smallint",
        "string",
        "timestamp",
        "timestamp_ltz",
        "timestamp_ntz",
        "tinyint",
        "varchar",
    }
)

#: what a refused condition's message lists
SUBSET = (
    "conditions may use columns, literals, comparisons, arithmetic, AND/OR/NOT, IN, "
    "BETWEEN, LIKE, IS [NOT] NULL, parentheses, CAST and the functions "
    + ", ".join(sorted(FUNCTIONS))
    + " (user guide: docs/evaluate.md, 'Conditions are a subset of SQL')"
)

#: the longest condition accepted, and the deepest nesting of parentheses and operators
MAX_LENGTH = 10_000
MAX_DEPTH = 64

_KEYWORDS = frozenset(
    {"and", "or", "not", "in", "between", "like", "escape", "is", "null", "true", "false"}
    | {"cast", "as"}
)
#: words that start a construct outside the subset, and what it is called
_CONSTRUCTS = {
    "select": "a subquery",
    "with": "a subquery",
    "values": "a subquery",
    "case": "CASE",
    "interval": "an INTERVAL literal",
}
_COMPARISONS = ("<=>", "==", "<>", "!=", "<=", ">=", "=", "<", ">")
#: Spark's number literals: integers with a type suffix, or decimals and exponents
#: with an optional floating or big-decimal suffix (a letter, digit or _ right after
#: one makes the whole word a name in Spark: refused here)
_NUMBER = re.compile(
    r"(?:\d+[lsy]|(?:\d+\.\d*|\.\d+|\d+)(?:e[+-]?\d+)?(?:bd|[df])?)(?![a-z0-9_])", re.I
)
#: quoted tokens as Spark's lexer cuts them: a quote, then any characters but that
#: quote and backslash, backslash escapes, or the quote doubled
_STRING = re.compile(r"'(?:[^'\\]|\\.|'')*'|\"(?:[^\"\\]|\\.|\"\")*\"", re.S)
_QUOTED_NAME = re.compile(r"`(?:[^`]|``)*`", re.S)
_NAME = re.compile(r"[a-z_][a-z0-9_]*", re.I)
_SPACE = re.compile(r"[ \t\r\n\f\v]+")
_PUNCTUATION = ("(", ")", ",", ".", "+", "-", "*", "/", "%")


@dataclass(frozen=True)
class _Token:
    kind: str  # name, quoted, string, number, op, end
    text: str
    at: int


class _Refused(Exception):
    """A condition outside the subset (the message says what)."""


def _tokens(text: str) -> list[_Token]:
    tokens = []
    at = 0
    while at < len(text):
        space = _SPACE.match(text, at)
        if space:
            at = space.end()
            continue
        if text.startswith(("--", "/*"), at):
            raise _Refused(f"a comment at character {at + 1} is not accepted")
        for kind, pattern in (("string", _STRING), ("quoted", _QUOTED_NAME)):
            found = pattern.match(text, at)
            if found:
                tokens.append(_Token(kind, found.group(), at))
                at = found.end()
                break
        else:
            char = text[at]
            if char in "'\"`":
                raise _Refused(f"the quote {char} at character {at + 1} is never closed")
            number = _NUMBER.match(text, at) if char.isdigit() or char == "." else None
            name = _NAME.match(text, at)
            if number:
                tokens.append(_Token("number", number.group(), at))
                at = number.end()
            elif char.isdigit():
                word = re.match(r"[a-z0-9_.]+", text[at:], re.I)
                shown = word.group() if word else char
                raise _Refused(f"{shown!r} at character {at + 1} is not a number or a name")
            elif name:
                tokens.append(_Token("name", name.group(), at))
                at = name.end()
            else:
                operator = next(
                    (op for op in (*_COMPARISONS, *_PUNCTUATION) if text.startswith(op, at)),
                    None,
                )
                if operator is None:
                    raise _Refused(f"{char!r} at character {at + 1} is not accepted")
                tokens.append(_Token("op", operator, at))
                at += len(operator)
    tokens.append(_Token("end", "", len(text)))
    return tokens


class _Parser:
    """The subset's grammar, from the loosest operator to the tightest; each method
    returns the Spark SQL of what it parsed, parenthesised."""

    def __init__(self, text: str) -> None:
        self.tokens = _tokens(text)
        self.index = 0
        self.depth = 0

    # -- tokens

    @property
    def current(self) -> _Token:
        return self.tokens[self.index]

    def keyword(self, *words: str) -> bool:
        """Whether the current token is an unquoted name among ``words``."""
        token = self.current
        return token.kind == "name" and token.text.lower() in words

    def take_keyword(self, *words: str) -> str | None:
        if self.keyword(*words):
            self.index += 1
            return self.tokens[self.index - 1].text.upper()
        return None

    def take_op(self, *ops: str) -> str | None:
        token = self.current
        if token.kind == "op" and token.text in ops:
            self.index += 1
            return token.text
        return None

    def expect_op(self, op: str, where: str) -> None:
        if self.take_op(op) is None:
            raise self.unexpected(f"expected {op!r} {where}")

    def unexpected(self, expected: str) -> _Refused:
        token = self.current
        if token.kind == "end":
            return _Refused(f"the condition ends early ({expected})")
        return _Refused(f"{token.text!r} at character {token.at + 1} is not accepted ({expected})")

    # -- grammar

    def condition(self) -> str:
        result = self.disjunction()
        if self.current.kind != "end":
            raise self.unexpected("expected an operator or the end")
        return result

    def nested(self) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise _Refused(f"nested more than {MAX_DEPTH} deep")

    def disjunction(self) -> str:
        self.nested()
        result = self.conjunction()
        while self.take_keyword("or"):
            result = f"({result} OR {self.conjunction()})"
        self.depth -= 1
        return result

    def conjunction(self) -> str:
        result = self.negation()
        while self.take_keyword("and"):
            result = f"({result} AND {self.negation()})"
        return result

    def negation(self) -> str:
        if self.take_keyword("not"):
            self.nested()
            result = f"(NOT {self.negation()})"
            self.depth -= 1
            return result
        return self.predicate()

    def predicate(self) -> str:
        value = self.comparison()
        if self.take_keyword("is"):
            negated = " NOT" if self.take_keyword("not") else ""
            if not self.take_keyword("null"):
                raise self.unexpected("IS [NOT] NULL is the only IS test accepted")
            return f"({value} IS{negated} NULL)"
        negated = " NOT" if self.take_keyword("not") else ""
        if self.take_keyword("in"):
            self.expect_op("(", "after IN (a list of values; subqueries are not accepted)")
            items = [self.disjunction()]
            while self.take_op(","):
                items.append(self.disjunction())
            self.expect_op(")", "to close the IN list")
            return f"({value}{negated} IN ({', '.join(items)}))"
        if self.take_keyword("between"):
            low = self.additive()
            if not self.take_keyword("and"):
                raise self.unexpected("expected AND in BETWEEN ... AND ...")
            return f"({value}{negated} BETWEEN {low} AND {self.additive()})"
        if self.take_keyword("like"):
            pattern = self.additive()
            if self.take_keyword("escape"):
                escape = self.current
                if escape.kind != "string":
                    raise self.unexpected("ESCAPE takes a quoted character")
                self.index += 1
                return f"({value}{negated} LIKE {pattern} ESCAPE {escape.text})"
            return f"({value}{negated} LIKE {pattern})"
        if negated:
            raise self.unexpected("expected IN, BETWEEN or LIKE after NOT")
        return value

    def comparison(self) -> str:
        left = self.additive()
        operator = self.take_op(*_COMPARISONS)
        if operator is None:
            return left
        return f"({left} {operator} {self.additive()})"

    def additive(self) -> str:
        result = self.multiplicative()
        while (operator := self.take_op("+", "-")) is not None:
            result = f"({result} {operator} {self.multiplicative()})"
        return result

    def multiplicative(self) -> str:
        result = self.unary()
        while (operator := self.take_op("*", "/", "%")) is not None:
            result = f"({result} {operator} {self.unary()})"
        return result

    def unary(self) -> str:
        sign = self.take_op("-", "+")
        if sign is None:
            return self.primary()
        self.nested()
        if self.current.kind == "number":  # Spark reads -1 as the literal -1
            number = self.current.text
            self.index += 1
            result = f"({sign}{number})"
        else:
            result = f"({sign} {self.unary()})"
        self.depth -= 1
        return result

    def primary(self) -> str:
        token = self.current
        if token.kind in ("number", "string"):
            self.index += 1
            return token.text
        if token.kind == "quoted":
            return self.column()
        if self.take_op("("):
            inner = self.disjunction()
            self.expect_op(")", "to close the parenthesis")
            return inner
        if token.kind != "name":
            raise self.unexpected("expected a column, a literal, a function or '('")
        word = token.text.lower()
        following = self.tokens[self.index + 1]
        if word in ("null", "true", "false"):
            self.index += 1
            return word.upper()
        if word in ("date", "timestamp") and following.kind == "string":
            self.index += 2
            return f"{word.upper()} {following.text}"
        if word == "cast" and following.kind == "op" and following.text == "(":
            return self.cast()
        if following.kind == "string":
            raise _Refused(
                f"{token.text}{following.text} at character {token.at + 1} is not accepted "
                "(typed literals: DATE '...' and TIMESTAMP '...')"
            )
        if following.kind == "op" and following.text == "(":
            return self.call()
        if word in _KEYWORDS:
            raise self.unexpected("a keyword where a value was expected")
        if word in _CONSTRUCTS:
            raise _Refused(
                f"{_CONSTRUCTS[word]} at character {token.at + 1} is not accepted "
                f"(a column named {token.text} is written `{token.text}`)"
            )
        return self.column()

    def column(self) -> str:
        parts = [self.name_part()]
        while self.take_op("."):
            parts.append(self.name_part())
        return ".".join(parts)

    def name_part(self) -> str:
        token = self.current
        if token.kind == "quoted":
            self.index += 1
            return token.text
        if token.kind == "name":
            self.index += 1
            return f"`{token.text}`"
        raise self.unexpected("expected a column name")

    def call(self) -> str:
        name = self.current.text.lower()
        if name not in FUNCTIONS:
            raise _Refused(f"the function {name} is not accepted")
        self.index += 2  # the name and "("
        self.nested()
        arguments = []
        if self.take_op(")") is None:
            arguments.append(self.disjunction())
            while self.take_op(","):
                arguments.append(self.disjunction())
            self.expect_op(")", f"to close {name}(...)")
        self.depth -= 1
        return f"{name}({', '.join(arguments)})"

    def cast(self) -> str:
        self.index += 2  # CAST and "("
        self.nested()
        value = self.disjunction()
        if not self.take_keyword("as"):
            raise self.unexpected("expected AS in CAST(value AS type)")
        token = self.current
        kind = token.text.lower()
        if token.kind != "name" or kind not in TYPES:
            raise _Refused(
                f"CAST to {token.text!r} is not accepted (types: {', '.join(sorted(TYPES))})"
            )
        self.index += 1
        sizes = []
        if self.take_op("("):
            while True:
                size = self.current
                if size.kind != "number" or not size.text.isdigit():
                    raise self.unexpected("a type's size is a whole number")
                sizes.append(size.text)
                self.index += 1
                if self.take_op(")"):
                    break
                self.expect_op(",", "between a type's sizes")
        self.expect_op(")", "to close CAST(...)")
        self.depth -= 1
        shape = f"({', '.join(sizes)})" if sizes else ""
        return f"CAST({value} AS {kind.upper()}{shape})"


def spark_condition(text: str, option: str) -> str:
    """The Spark SQL that keeps the rows ``text`` keeps, written back from its checked
    parse (see the module's docstring for the subset and why).

    Raises:
        ConfigError: ``text`` is empty, too long, or outside the subset; one line naming
            ``option`` (``--where``), the condition and what was refused.
    """
    shown = _shown(text)
    if not isinstance(text, str) or not text.strip():
        raise ConfigError(f"{option} {shown}: the condition is empty")
    if len(text) > MAX_LENGTH:
        raise ConfigError(f"{option}: a condition of more than {MAX_LENGTH} characters")
    try:
        return _Parser(text).condition()
    except _Refused as why:
        raise ConfigError(f"{option} {shown}: {why}; {SUBSET}") from None


def check_condition(text: str | None, option: str) -> None:
    """Refuse a condition outside the subset (:func:`spark_condition`); None passes."""
    if text is not None:
        spark_condition(text, option)


def _shown(text: object) -> str:
    """``text`` quoted for a one-line message (double quotes, as on a command line)."""
    shown = repr(text)
    if isinstance(text, str) and '"' not in text and shown.startswith("'"):
        shown = '"' + shown[1:-1].replace("\\'", "'") + '"'
    return shown


#: a catalog table name: up to three plain identifiers, ``[catalog.][db.]name``
_TABLE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*){0,2}")


def check_table_name(name: str, option: str, given: str | None = None) -> str:
    """``name`` when it is a plain catalog table name, ``[catalog.][db.]name`` of
    letters, digits and ``_`` (not starting with a digit); returns it.

    ``given`` is the value as the user wrote it, for the message (``table:NAME`` on an
    input option), when it is more than ``name``.

    Raises:
        ConfigError: anything else (``x; DROP TABLE y``, ``../../etc/passwd``, quotes),
            naming ``option``.
    """
    if not isinstance(name, str) or not _TABLE_NAME.fullmatch(name):
        raise ConfigError(
            f"{option} {_shown(name if given is None else given)}: a catalog table is named "
            "by plain identifiers, [catalog.][db.]name (letters, digits and _, not starting "
            "with a digit)"
        )
    return name
