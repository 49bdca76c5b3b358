"""Make Parquet files written by Spark byte-identical from run to run.

Spark's Parquet writer (parquet-java) fills the ``encodings`` list of every column
chunk in the file footer from a ``HashSet`` of enum values, whose iteration order
follows identity hash codes and so changes from one JVM to the next: the same rows
give files that differ in the order of a few footer bytes.  :func:`sort_footer_encodings`
walks the footer (Thrift compact protocol) and sorts each of those lists in place;
the list holds the same values, so lengths, offsets and everything else are unchanged
and the file stays valid (the order carries no meaning in the format).

Example::

    sort_footer_encodings(Path("out/per_query.parquet/part-00000.parquet"))  # -> True
"""

from __future__ import annotations

from pathlib import Path

_MAGIC = b"PAR1"
# Thrift compact protocol type ids
_BOOL_TRUE, _BOOL_FALSE, _BYTE, _I16, _I32, _I64, _DOUBLE = 1, 2, 3, 4, 5, 6, 7
_BINARY, _LIST, _SET, _MAP, _STRUCT = 8, 9, 10, 11, 12
# field path FileMetaData.row_groups[*].columns[*].meta_data.encodings
_ROW_GROUPS, _COLUMNS, _META_DATA, _ENCODINGS = 4, 1, 3, 2


class FooterFormatError(ValueError):
    """The footer is not the Thrift structure this module understands."""


class _Reader:
    def __init__(self, data: bytearray) -> None:
        self.data = data
        self.pos = 0

    def byte(self) -> int:
        if self.pos >= len(self.data):
            raise FooterFormatError("footer ends early")
        value = self.data[self.pos]
        self.pos += 1
        return value

    def varint(self) -> int:
        shift = result = 0
        while True:
            b = self.byte()
            result |= (b & 0x7F) << shift
            if not b & 0x80:
                return result
            shift += 7
            if shift > 70:
                raise FooterFormatError("varint too long")

    def skip(self, kind: int) -> None:
        if kind in (_BOOL_TRUE, _BOOL_FALSE):
            return
        if kind == _BYTE:
            self.pos += 1
        elif kind in (_I16, _I32, _I64):
            self.varint()
        elif kind == _DOUBLE:
            self.pos += 8
        elif kind == _BINARY:
            length = self.varint()  # read before pos: the varint itself moves pos
            self.pos += length
        elif kind in (_LIST, _SET):
            size, element = self.list_header()
            for _ in range(size):
                self.skip_element(element)
        elif kind == _MAP:
            size = self.varint()
            if size:
                types = self.byte()
                for _ in range(size):
                    self.skip(types >> 4)
                    self.skip(types & 0x0F)
        elif kind == _STRUCT:
            self.struct({})
        else:
            raise FooterFormatError(f"unknown Thrift type {kind}")
        if self.pos > len(self.data):
            raise FooterFormatError("footer ends early")

    def skip_element(self, kind: int) -> None:
        # booleans inside a list take one byte each
        if kind in (_BOOL_TRUE, _BOOL_FALSE):
            self.pos += 1
        else:
            self.skip(kind)

    def list_header(self) -> tuple[int, int]:
        header = self.byte()
        size = header >> 4
        if size == 15:
            size = self.varint()
        return size, header & 0x0F

    def struct(self, handlers: dict) -> None:
        """Read a struct; ``handlers`` maps a field id to a callable reading that field."""
        field = 0
        while True:
            header = self.byte()
            kind = header & 0x0F
            if kind == 0:
                return
            delta = header >> 4
            if delta:
                field += delta
            else:
                raw = self.varint()
                field = (raw >> 1) ^ -(raw & 1)
            handler = handlers.get(field)
            if handler is not None and kind == handler[0]:
                handler[1]()
            else:
                self.skip(kind)


def _sort_footer(footer: bytearray) -> bool:
    """Sort every column chunk's ``encodings`` list in ``footer``; True if bytes changed."""
    reader = _Reader(footer)
    changed = False

    def encodings() -> None:
        nonlocal changed
        size, element = reader.list_header()
        if element != _I32:
            raise FooterFormatError("encodings is not a list of i32")
        start = reader.pos
        values = [reader.varint() for _ in range(size)]
        end = reader.pos
        ordered = bytearray()
        for value in sorted(values, key=lambda v: (v >> 1) ^ -(v & 1)):
            while value >= 0x80:
                ordered.append((value & 0x7F) | 0x80)
                value >>= 7
            ordered.append(value)
        if footer[start:end] != ordered:
            footer[start:end] = ordered  # same values, same length
            changed = True

    def meta_data() -> None:
        reader.struct({_ENCODINGS: (_LIST, encodings)})

    def column_chunk() -> None:
        reader.struct({_META_DATA: (_STRUCT, meta_data)})

    def each(read_element) -> None:
        size, element = reader.list_header()
        if element != _STRUCT:
            raise FooterFormatError("expected a list of structs")
        for _ in range(size):
            read_element()

    def row_group() -> None:
        reader.struct({_COLUMNS: (_LIST, lambda: each(column_chunk))})

    reader.struct({_ROW_GROUPS: (_LIST, lambda: each(row_group))})
    if reader.pos != len(footer):
        raise FooterFormatError("footer has trailing bytes")
    return changed


def sort_footer_encodings(path: Path) -> bool:
    """Sort the footer's encodings lists of the Parquet file at ``path`` in place.

    Returns True when the file was rewritten.  Files that are not plain Parquet
    (for example encrypted ones) are left alone; a footer that cannot be parsed
    raises :class:`FooterFormatError` without touching the file.
    """
    with open(path, "r+b") as handle:
        handle.seek(0, 2)
        size = handle.tell()
        if size < 12:
            return False
        handle.seek(size - 8)
        tail = handle.read(8)
        if tail[4:] != _MAGIC:
            return False
        length = int.from_bytes(tail[:4], "little")
        if length <= 0 or length > size - 12:
            raise FooterFormatError(f"{path}: footer length {length} out of range")
        handle.seek(size - 8 - length)
        footer = bytearray(handle.read(length))
        if not _sort_footer(footer):
            return False
        handle.seek(size - 8 - length)
        handle.write(footer)
    return True
