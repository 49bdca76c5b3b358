"""sparkeval's runtime dependencies, pinned at the versions installed in this environment.

The requirements of the installed ``sparkeval`` distribution are followed through the
installed distributions' metadata (markers evaluated for this interpreter, extras that
a requirement asks for included, the ``extra == ...`` requirements of sparkeval itself
left out) and each distribution reached is pinned at its installed version, so that
the packed environment computes with the same libraries as the driver. pyspark and py4j,
and what only they need, are not followed: Spark puts its own on its Python workers'
path.

Example:
    >>> pins = pinned_requirements()
    >>> any(pin.startswith("numpy==") for pin in pins)
    True
    >>> any(pin.lower().startswith(("pyspark==", "py4j==")) for pin in pins)
    False
"""

from __future__ import annotations

import re
from importlib import metadata

from packaging.requirements import InvalidRequirement, Requirement

from sparkeval.errors import EnvironmentProblem

#: distributions left out of the packed environment: Spark provides them to its workers
PROVIDED_BY_SPARK = frozenset({"pyspark", "py4j"})


def canonical_name(name: str) -> str:
    """A distribution name as package indexes compare them (PEP 503).

    Example:
        >>> canonical_name("PyYAML"), canonical_name("pytrec_eval.Terrier")
        ('pyyaml', 'pytrec-eval-terrier')
    """
    return re.sub(r"[-_.]+", "-", name).lower()


def _distribution(name: str, wanted_by: str) -> metadata.Distribution:
    try:
        return metadata.distribution(name)
    except metadata.PackageNotFoundError:
        raise EnvironmentProblem(
            f"{name} is not installed in this environment ({wanted_by} requires it), so its "
            "version cannot be pinned; install sparkeval's dependencies first"
        ) from None


def _requirements(dist: metadata.Distribution, extras: frozenset[str]) -> list[Requirement]:
    """The requirements of ``dist`` that apply here with ``extras`` asked for."""
    wanted = []
    environments = [{"extra": extra} for extra in sorted(extras | {""})]
    for text in dist.requires or ():
        try:
            requirement = Requirement(text)
        except InvalidRequirement as exc:  # metadata a build tool wrote: not expected
            name = dist.metadata["Name"]
            raise EnvironmentProblem(f"{name}'s metadata has a bad requirement: {exc}") from None
        marker = requirement.marker
        if marker is None or any(marker.evaluate(env) for env in environments):
            wanted.append(requirement)
    return wanted


def pinned_requirements(
    root: str = "sparkeval", excluded: frozenset[str] = PROVIDED_BY_SPARK
) -> list[str]:
    """``NAME==VERSION`` of every installed distribution ``root`` needs at run time,
    ``root`` itself and ``excluded`` (and what is reached only through them) left out;
    sorted by name.

    Raises:
        EnvironmentProblem: a needed distribution is not installed.
    """
    done: dict[str, frozenset[str]] = {}  # canonical name: extras followed
    pinned: dict[str, str] = {}
    todo: list[tuple[str, frozenset[str], str]] = [(root, frozenset(), root)]
    while todo:
        name, extras, wanted_by = todo.pop()
        key = canonical_name(name)
        if key in done and extras <= done[key]:
            continue
        extras = extras | done.get(key, frozenset())
        done[key] = extras
        dist = _distribution(name, wanted_by)
        if key != canonical_name(root):
            pinned[key] = f"{dist.metadata['Name']}=={dist.version}"
        for requirement in _requirements(dist, extras):
            if canonical_name(requirement.name) in excluded:
                continue
            todo.append((requirement.name, frozenset(requirement.extras), dist.metadata["Name"]))
    return [pinned[key] for key in sorted(pinned)]
