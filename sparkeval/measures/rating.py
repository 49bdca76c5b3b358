"""Rating-prediction errors over (user, true rating, predicted rating) triples.

Residual e_k = p_k - q_k for true ratings p and predictions q.  Each error comes in
two forms, named distinctly:

* *pooled* (``RMSE``): one value over all pairs of all users;
* *per user* (``RMSE_per_user``): the error of each user's pairs, then the
  arithmetic mean over users (users whose value is undefined are left out).

Inputs are flat numpy arrays: ``user`` holds any integer user codes (the pairs
need not be sorted), ``truth`` and ``pred`` the ratings.

Example:
    >>> import numpy as np
    >>> u = np.array([0, 0, 1]); t = np.array([3.0, 4.0, 5.0]); q = np.array([2.0, 4.0, 3.0])
    >>> float(RATING_ERRORS["MAE"].compute(u, t, q))
    1.0
    >>> float(RATING_ERRORS["MAE_per_user"].compute(u, t, q))
    1.25
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

#: per-group error: (group ids 0..G-1, residuals, number of groups, parameter) -> (G,)
GroupError = Callable[[np.ndarray, np.ndarray, int, float | None], np.ndarray]


@dataclass(frozen=True)
class UserGroups:
    """Rating rows grouped by user: the sorted distinct users, each row's user index into
    them, the ratings and the residuals ``truth - pred``.

    Example:
        >>> groups = UserGroups.of(np.array(["b", "a", "b"]), [4.0, 3.0, 5.0], [3.5, 3.0, 5.0])
        >>> groups.users.tolist(), groups.index.tolist(), groups.residual.tolist()
        (['a', 'b'], [1, 0, 1], [0.5, 0.0, 0.0])
    """

    users: np.ndarray
    index: np.ndarray
    truth: np.ndarray
    residual: np.ndarray

    @property
    def size(self) -> int:
        return len(self.users)

    @classmethod
    def of(cls, user: np.ndarray, truth: np.ndarray, pred: np.ndarray) -> UserGroups:
        """The rows ``user, truth, pred`` grouped (ValueError: unequal lengths, a NaN)."""
        user = np.asarray(user)
        truth = np.asarray(truth, dtype=np.float64)
        pred = np.asarray(pred, dtype=np.float64)
        if not (len(user) == len(truth) == len(pred)):
            raise ValueError("user, truth and pred must have the same length")
        if np.isnan(truth).any() or np.isnan(pred).any():
            raise ValueError("ratings and predictions must not be NaN")
        users, index = np.unique(user, return_inverse=True)
        return cls(users, index.astype(np.int64), truth, truth - pred)


def _counts(g: np.ndarray, n: int) -> np.ndarray:
    return np.bincount(g, minlength=n).astype(np.float64)


def _undefined_if_empty(values: np.ndarray, counts: np.ndarray) -> np.ndarray:
    return np.where(counts > 0, values, np.nan)


def _rmse(g: np.ndarray, e: np.ndarray, n: int, _: float | None) -> np.ndarray:
    c = _counts(g, n)
    with np.errstate(over="ignore"):  # an overflow is reported by the caller, by name
        squares = e * e
    return _undefined_if_empty(np.sqrt(np.bincount(g, squares, n) / np.maximum(c, 1)), c)


def _mae(g: np.ndarray, e: np.ndarray, n: int, _: float | None) -> np.ndarray:
    c = _counts(g, n)
    return _undefined_if_empty(np.bincount(g, np.abs(e), n) / np.maximum(c, 1), c)


def _max_ae(g: np.ndarray, e: np.ndarray, n: int, _: float | None) -> np.ndarray:
    out = np.zeros(n)
    np.maximum.at(out, g, np.abs(e))
    return _undefined_if_empty(out, _counts(g, n))


def _top_l(g: np.ndarray, e: np.ndarray, n: int, size: float | None) -> np.ndarray:
    size = int(size or 1)
    a = np.abs(e)
    order = np.lexsort((-a, g))
    gs = g[order]
    starts = np.concatenate(([0], np.cumsum(np.bincount(gs, minlength=n))))[:-1]
    rank = np.arange(len(order)) - starts[gs]
    keep = rank < size
    return _undefined_if_empty(np.bincount(gs[keep], a[order][keep], n), _counts(g, n))


def _lp(g: np.ndarray, e: np.ndarray, n: int, power: float | None) -> np.ndarray:
    power = float(power or 2.0)
    if np.isinf(power):
        return _max_ae(g, e, n, None)
    with np.errstate(over="ignore"):  # an overflow is reported by the caller, by name
        norm = np.bincount(g, np.abs(e) ** power, n) ** (1.0 / power)
    return _undefined_if_empty(norm, _counts(g, n))


def _r2_groups(truth: np.ndarray, g: np.ndarray, e: np.ndarray, n: int) -> np.ndarray:
    c = _counts(g, n)
    mean = np.bincount(g, truth, n) / np.maximum(c, 1)
    ss_tot = np.bincount(g, (truth - mean[g]) ** 2, n)
    ss_res = np.bincount(g, e * e, n)
    out = np.full(n, np.nan)
    np.divide(ss_res, ss_tot, out=out, where=ss_tot > 0)
    return 1.0 - out


def _explained_variance_groups(
    truth: np.ndarray, g: np.ndarray, e: np.ndarray, n: int
) -> np.ndarray:
    c = _counts(g, n)
    size = np.maximum(c, 1)
    truth_mean = np.bincount(g, truth, n) / size
    error_mean = np.bincount(g, e, n) / size
    var_truth = np.bincount(g, (truth - truth_mean[g]) ** 2, n)
    var_error = np.bincount(g, (e - error_mean[g]) ** 2, n)
    out = np.full(n, np.nan)
    np.divide(var_error, var_truth, out=out, where=var_truth > 0)
    return 1.0 - out


@dataclass(frozen=True)
class RatingError:
    """One rating-error measure.

    Attributes:
        name: distinct name (``MAE`` pooled, ``MAE_per_user`` per user then mean).
        description: definition with its formula.
        per_user: True for the per-user-then-mean form.
        kind: the base error (``RMSE``, ``MAE``, ``MaxAE``, ``TopL_AE``, ``Lp``, ``R2``,
            ``ExpVar``).
        param: name of the parameter (``L`` or ``p``), if any.
        default: the parameter's default value.
        higher_is_better: False for errors, True for R².
    """

    name: str
    description: str
    per_user: bool
    kind: str
    param: str | None = None
    default: float | None = None
    higher_is_better: bool = False

    def per_group(
        self, user: np.ndarray, truth: np.ndarray, pred: np.ndarray, value: float | None = None
    ) -> np.ndarray:
        """The error of each user (users in ``np.unique(user)`` order); NaN if undefined."""
        return self.of_groups(UserGroups.of(user, truth, pred), value)

    def of_groups(self, groups: UserGroups, value: float | None = None) -> np.ndarray:
        """:meth:`per_group` of rows already grouped by user (several errors of the same
        rows group them once)."""
        return self._groups(groups.truth, groups.index, groups.residual, groups.size, value)

    def _groups(
        self, truth: np.ndarray, g: np.ndarray, e: np.ndarray, n: int, value: float | None
    ) -> np.ndarray:
        if self.kind == "R2":
            return _r2_groups(truth, g, e, n)
        if self.kind == "ExpVar":
            return _explained_variance_groups(truth, g, e, n)
        param = self.default if value is None else value
        return _KERNELS[self.kind](g, e, n, param)

    def compute(
        self, user: np.ndarray, truth: np.ndarray, pred: np.ndarray, value: float | None = None
    ) -> float:
        """The measure's single value (pooled, or the mean over users); NaN if undefined."""
        if value is not None:
            self.validate(value)
        groups = UserGroups.of(user, truth, pred)
        truth, e = groups.truth, groups.residual
        if len(e) == 0:
            return float("nan")
        if not self.per_user:
            return float(self._groups(truth, np.zeros(len(e), np.int64), e, 1, value)[0])
        per = self.of_groups(groups, value)
        per = per[~np.isnan(per)]
        return float(per.mean()) if len(per) else float("nan")

    def validate(self, value: float) -> None:
        """Reject a parameter value outside its domain."""
        if self.param is None:
            raise ValueError(f"{self.name} takes no parameter")
        if self.param == "L" and (value < 1 or float(value) != int(value)):
            raise ValueError(f"{self.name}: L must be a whole number >= 1, got {value!r}")
        if self.param == "p" and not value >= 1:
            raise ValueError(f"{self.name}: p must be >= 1 (inf allowed), got {value!r}")


_KERNELS: dict[str, GroupError] = {
    "RMSE": _rmse,
    "MAE": _mae,
    "MaxAE": _max_ae,
    "TopL_AE": _top_l,
    "Lp": _lp,
}

_BASE = (
    ("RMSE", "root mean squared error sqrt(mean(e^2))", None, None, False),
    ("MAE", "mean absolute error mean(|e|)", None, None, False),
    ("MaxAE", "largest absolute error max|e| (Chebyshev, L-infinity)", None, None, False),
    ("TopL_AE", "sum of the L largest |e| (largest-L norm; all of them if fewer)", "L", 1.0, False),
    ("Lp", "Hölder norm of the residuals (sum |e|^p)^(1/p)", "p", 2.0, False),
    (
        "R2",
        "coefficient of determination 1 - sum e^2 / sum (p - mean p)^2; "
        "undefined when the true ratings are constant",
        None,
        None,
        True,
    ),
    (
        "ExpVar",
        "explained variance 1 - Var(e) / Var(p) (population variances; equals R2 "
        "when the residuals have mean 0); undefined when the true ratings are "
        "constant",
        None,
        None,
        True,
    ),
)


def _build() -> dict[str, RatingError]:
    out = {}
    for name, text, param, default, higher in _BASE:
        out[name] = RatingError(
            name, f"{text}, pooled over all pairs", False, name, param, default, higher
        )
        out[f"{name}_per_user"] = RatingError(
            f"{name}_per_user",
            f"{text}, per user, then the mean over users",
            True,
            name,
            param,
            default,
            higher,
        )
    return out


#: every rating-error measure by name
RATING_ERRORS: dict[str, RatingError] = _build()


def rating_errors(
    user: np.ndarray, truth: np.ndarray, pred: np.ndarray, names: list[str] | None = None
) -> dict[str, float]:
    """Compute several rating errors (all by default) with their default parameters."""
    chosen = names if names is not None else list(RATING_ERRORS)
    unknown = [n for n in chosen if n not in RATING_ERRORS]
    if unknown:
        raise ValueError(
            f"unknown rating error(s) {', '.join(unknown)}; valid: " + ", ".join(RATING_ERRORS)
        )
    return {n: RATING_ERRORS[n].compute(user, truth, pred) for n in chosen}
