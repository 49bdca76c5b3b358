"""What the direct read (:mod:`sparkeval.io.direct`) plans and reads: an input in read
units (:class:`DirectInput`), every input of an evaluation (:class:`DirectPlan`), the
form of the rows read (:data:`RUN_SCHEMA`, :data:`QRELS_SCHEMA`) and the signal that
hands an input back to Spark's readers (:class:`NotDirect`); shared by the Parquet,
TREC text (:mod:`sparkeval.io.direct_text`) and CSV (:mod:`sparkeval.io.direct_csv`)
readers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sparkeval.errors import ConfigError
from sparkeval.formats import RUN_CODE
from sparkeval.storage import files as storage_files
from sparkeval.storage.stores import StoreSettings
from sparkeval.storage.uris import is_remote

#: characters that make a path a pattern (Spark expands them; the direct read does not)
GLOB_CHARS = set("*?[]{}")


#: the form of the rows :func:`~sparkeval.io.direct.read_unit` returns (whose query
#: ids may also come dictionary-encoded:
#: :func:`~sparkeval.engine.transport.arrow_exchange.bucket_slices` decodes them)
RUN_SCHEMA = pa.schema(
    [
        (RUN_CODE, pa.int32()),
        ("query_id", pa.string()),
        ("doc_id", pa.string()),
        ("score", pa.float64()),
    ]
)


QRELS_SCHEMA = pa.schema(
    [("query_id", pa.string()), ("doc_id", pa.string()), ("relevance", pa.int64())]
)


class NotDirect(RuntimeError):
    """A value the direct path does not judge; the Spark readers take over.

    Raised in a Python worker, it reaches the driver inside Spark's task-failure text;
    :meth:`found_in` recognises it there, so the marker lives in this class alone.

    Example:
        >>> wrapped = RuntimeError("Job aborted: " + str(NotDirect("a.parquet: nulls")))
        >>> NotDirect.found_in(wrapped).reason
        'a.parquet: nulls'
        >>> NotDirect.found_in(RuntimeError("another failure")) is None
        True
    """

    #: start of the message of a task that found a value for the Spark readers to judge
    MARK = "[sparkeval:not-direct] "

    def __init__(self, reason: str) -> None:
        super().__init__(self.MARK + reason)
        self.reason = reason

    def __reduce__(self) -> tuple[type[NotDirect], tuple[str]]:
        """Pickled by its reason (a local worker process raises it to the CLI's)."""
        return type(self), (self.reason,)

    @classmethod
    def found_in(cls, exc: BaseException) -> NotDirect | None:
        """The signal carried by ``exc`` (itself, or a Spark failure that wraps it), if any."""
        if isinstance(exc, cls):
            return exc
        text = str(exc)
        if cls.MARK not in text:
            return None
        return cls(text.split(cls.MARK, 1)[1].splitlines()[0])


@dataclass(frozen=True)
class DirectInput:
    """An input the workers read in units: Parquet row groups, or byte ranges of text.

    Attributes:
        kind: ``run`` or ``qrels``.
        path: the path as given (for messages).
        units: ``(file, row group)`` pairs (text: ``(file, range index)``), one read
            task each.
        columns: ``(canonical, source column)`` pairs (none for text).
        run_id: the run id of every row when the file has no run id column (the tag
            of a TREC run's first line).
        size: uncompressed bytes of the columns read (text: of the file; sizes the
            exchange and the buckets).
        rows: the number of rows (0 for text: not counted before it is read).
        fmt: ``parquet``, ``trec``, ``csv`` or ``tsv``.
        ranges: for text, the ``[start, end)`` byte range of each unit (of a gzip file,
            ``(part, parts)``: :func:`sparkeval.io.direct_text.read_text_range`).
        header: for CSV and TSV, the column names of the header line.
        where: for Parquet, the rows to keep, as
            :func:`~sparkeval.io.scan_filter.condition_spec` gives them
            (a filtered DataFrame's); None keeps every row.
        score: for a Parquet run, the score computed from file columns, as
            :func:`~sparkeval.io.scan_values.value_spec` gives it (a
            DataFrame's computed score); None: the ``score`` of ``columns``.
        store: for files on a remote store, the settings the workers open it with
            (:mod:`sparkeval.storage.stores`); None for local files.
    """

    kind: str
    path: str
    units: tuple[tuple[str, int], ...]
    columns: tuple[tuple[str, str], ...]
    run_id: str | None
    size: int
    rows: int
    fmt: str = "parquet"
    ranges: tuple[tuple[int, int], ...] = ()
    header: tuple[str, ...] = ()
    where: tuple | None = None
    score: tuple | None = None
    store: StoreSettings | None = None

    @property
    def files(self) -> list[str]:
        """The files the units are read from, sorted, each once."""
        return sorted({file for file, _ in self.units})


#: compressions Spark's text readers undo that the workers leave to them (gzip they read)
_OTHER_COMPRESSIONS = (".bz2", ".xz", ".zst", ".zstd", ".lz4", ".snappy", ".deflate", ".zip")


def local_single_file(path: str) -> str | None:
    """The file ``path`` names (local: ``file://`` or plain, no glob characters, made
    absolute, as the workers that open it may run in another directory than this
    process; or a remote URI), when it is one file, plain or gzip; None otherwise."""
    if is_remote(path):
        try:
            if storage_files.kind(path) != "file":
                return None
        except ConfigError:
            return None  # no filesystem here for the store: Spark's readers may have one
        return None if path.lower().endswith(_OTHER_COMPRESSIONS) else path
    local = path[len("file://") :] if path.startswith("file://") else path
    if "://" in local or GLOB_CHARS & set(local) or not Path(local).is_file():
        return None
    if Path(local).suffix.lower() in _OTHER_COMPRESSIONS:
        return None
    return str(Path(local).absolute())  # the workers may run in another directory


def run_codes(
    source: DirectInput, names: pa.Array | pa.ChunkedArray | None, rows: int, run_ids: Sequence[str]
) -> pa.Array:
    """The run code (index into ``run_ids``) of each of ``rows`` rows: of its run id in
    ``names``, or of the input's one run id when it has no run id column.

    Raises:
        NotDirect: a run id not among ``run_ids`` (or null).
    """
    if names is None:
        code = list(run_ids).index(str(source.run_id))
        return pa.array(np.full(rows, code, np.int32))  # not a list: 30 ms per 700k rows
    codes = pc.index_in(names, value_set=pa.array(list(run_ids), pa.string()))
    if codes.null_count:
        raise NotDirect(f"{source.path}: a run id not among {list(run_ids)}")
    return codes.cast(pa.int32())


@dataclass(frozen=True)
class DirectPlan:
    """Every input of an evaluation, read directly: the runs, the qrels and the run ids."""

    runs: tuple[DirectInput, ...]
    qrels: DirectInput
    run_ids: tuple[str, ...]

    @property
    def inputs(self) -> tuple[DirectInput, ...]:
        return (*self.runs, self.qrels)

    @property
    def size(self) -> int:
        return sum(source.size for source in self.inputs)

    @property
    def row_groups(self) -> list[tuple[DirectInput, int]]:
        """Every row group of every input as ``(input, unit)``, in a fixed order: the
        *unit index* of a row group is its position here."""
        return [(source, unit) for source in self.inputs for unit in range(len(source.units))]
