"""Parse rating-error requests such as ``RMSE, TopL_AE(L=3), Lp(p=inf), MAE_per_user``.

Each request names one base error of :data:`sparkeval.measures.rating.RATING_ERRORS`
and, optionally, its parameter.  A request always yields two values, named
distinctly: the pooled value (``TopL_AE(L=3)``) and the mean over users of the
per-user values (``TopL_AE_per_user(L=3)``); asking for either name is the same
request.

Example:
    >>> [r.name for r in parse_rating_measures("RMSE, TopL_AE(L=3), MAE_per_user, rmse")]
    ['RMSE', 'TopL_AE(L=3)', 'MAE']
    >>> parse_rating_measures("Lp(p=inf)")[0].per_user_name
    'Lp_per_user(p=inf)'
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass

from sparkeval.measures.names import split_top_level
from sparkeval.measures.rating import RATING_ERRORS, RatingError

PER_USER = "_per_user"
DEFAULT_RATING_MEASURES = ("RMSE", "MAE", "R2")

_REQUEST = re.compile(r"^(?P<name>[A-Za-z][A-Za-z0-9_]*)(?:\((?P<params>[^()]*)\))?$")
_BASES = {name.lower(): name for name, err in RATING_ERRORS.items() if not err.per_user}


@dataclass(frozen=True)
class RatingRequest:
    """One requested rating error: its base kind and parameter value.

    Attributes:
        kind: base error name (``RMSE``, ``TopL_AE``, ...).
        value: the parameter value (``L`` or ``p``); None for the default or none.
    """

    kind: str
    value: float | None = None

    @property
    def error(self) -> RatingError:
        """The pooled form of the error."""
        return RATING_ERRORS[self.kind]

    @property
    def per_user_error(self) -> RatingError:
        """The per-user form of the error."""
        return RATING_ERRORS[self.kind + PER_USER]

    @property
    def parameter(self) -> float | None:
        """The effective parameter value (the default when none was given)."""
        return self.error.default if self.value is None else self.value

    def _suffix(self) -> str:
        if self.value is None:
            return ""
        v = self.value
        text = "inf" if math.isinf(v) else (str(int(v)) if float(v).is_integer() else repr(v))
        return f"({self.error.param}={text})"

    @property
    def name(self) -> str:
        """Name of the pooled value (``TopL_AE(L=3)``)."""
        return self.kind + self._suffix()

    @property
    def per_user_name(self) -> str:
        """Name of the mean of per-user values (``TopL_AE_per_user(L=3)``)."""
        return self.kind + PER_USER + self._suffix()


def valid_rating_names() -> str:
    """The accepted names, for error messages."""
    parts = []
    for name, err in RATING_ERRORS.items():
        if err.per_user:
            continue
        parts.append(f"{name}({err.param}=…)" if err.param else name)
    return ", ".join(parts) + f" (each also as NAME{PER_USER})"


def parse_rating_measure(text: str) -> RatingRequest:
    """Parse one request; raises ValueError naming the request and what is valid."""
    raw = text.strip()
    match = _REQUEST.match(raw)
    if not match:
        raise ValueError(
            f"rating measure {raw!r} is not NAME or NAME(param=value); "
            f"valid: {valid_rating_names()}"
        )
    name = match["name"]
    if name.lower().endswith(PER_USER):
        name = name[: -len(PER_USER)]
    kind = _BASES.get(name.lower())
    if kind is None:
        raise ValueError(f"unknown rating measure {raw!r}; valid: {valid_rating_names()}")
    err = RATING_ERRORS[kind]
    value: float | None = None
    if match["params"] is not None and match["params"].strip():
        key, sep, given = match["params"].partition("=")
        if not sep or key.strip() != err.param:
            expected = f"{err.param}=…" if err.param else "no parameter"
            raise ValueError(f"rating measure {raw!r}: {kind} takes {expected}")
        try:
            value = float(given.strip())
        except ValueError:
            raise ValueError(
                f"rating measure {raw!r}: {err.param}={given.strip()!r} is not a number"
            ) from None
        err.validate(value)
        if value == err.default:
            value = None
    return RatingRequest(kind, value)


def parse_rating_measures(spec: str | Iterable[str] | None) -> list[RatingRequest]:
    """Parse a comma separated list (or names), removing repeats; None gives the defaults."""
    if spec is None:
        items: list[str] = list(DEFAULT_RATING_MEASURES)
    elif isinstance(spec, str):
        items = _split(spec)
    else:
        items = [part for item in spec for part in _split(item)]
    out: list[RatingRequest] = []
    for item in items:
        request = parse_rating_measure(item)
        if request not in out:
            out.append(request)
    if not out:
        raise ValueError(f"no rating measures given; valid: {valid_rating_names()}")
    return out


def _split(text: str) -> list[str]:
    """Split on commas and whitespace outside parentheses."""
    return split_top_level(text, "()", ", \t\n\r\f\v")
