"""SHA-1 of many short byte strings at once in numpy: the token hashes of MinHash
(:func:`sparkeval.lsh.minhash.sha1_hash`) without a Python call per token.

Each message is padded as FIPS 180-4 says (a ``0x80`` byte, zeros, its length in bits
as a big-endian 64-bit number, to a multiple of 64 bytes); messages of the same number
of blocks are compressed together, a chunk of them at a time, every step of the 80
rounds one numpy operation over the chunk. Only the first 4 or 8 digest bytes are
kept, read little-endian, as datasketch's ``sha1_hash32`` and ``sha1_hash64`` read
them.

Example:
    SHA-1 of ``b"a"`` is ``86f7e437…`` and of ``b"b"`` ``e9d71f5e…``, so their 32-bit
    token hashes are ``0x37e4f786`` and ``0x5e1fd7e9``:

    >>> data = np.frombuffer(b"ab", dtype=np.uint8)
    >>> [hex(v) for v in sha1_prefixes(data, np.array([0, 1, 2]), 32).tolist()]
    ['0x37e4f786', '0x5e1fd7e9']
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

#: messages compressed together (a few MB of words in flight)
_CHUNK = 1 << 14
_INITIAL = (0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0)
_ROUND_CONSTANTS = (0x5A827999, 0x6ED9EBA1, 0x8F1BBCDC, 0xCA62C1D6)


def _rotl(x: np.ndarray, n: int, out: np.ndarray, spare: np.ndarray) -> np.ndarray:
    """``x`` rotated left by ``n`` bits into ``out`` (``spare``: scratch space)."""
    np.right_shift(x, np.uint32(32 - n), out=spare)
    np.left_shift(x, np.uint32(n), out=out)
    return np.bitwise_or(out, spare, out=out)


def _compress(state: list[np.ndarray], words: np.ndarray) -> list[np.ndarray]:
    """One SHA-1 block of each message: ``words`` (16, n) big-endian words; the 80
    rounds in place over a window of 16 schedule words."""
    n = words.shape[1]
    w = np.array(words, dtype=np.uint32, order="C")
    a, b, c, d, e = (s.copy() for s in state)
    f, t1, t2 = (np.empty(n, np.uint32) for _ in range(3))
    for t in range(80):
        wt = w[t % 16]
        if t >= 16:  # w[t] = rotl1(w[t-3] ^ w[t-8] ^ w[t-14] ^ w[t-16])
            np.bitwise_xor(w[(t - 3) % 16], w[(t - 8) % 16], out=t1)
            np.bitwise_xor(t1, w[(t - 14) % 16], out=t1)
            np.bitwise_xor(t1, wt, out=t1)
            _rotl(t1, 1, wt, t2)
        if t < 20:  # (b & c) | (~b & d), as d ^ (b & (c ^ d))
            np.bitwise_xor(c, d, out=f)
            np.bitwise_and(f, b, out=f)
            np.bitwise_xor(f, d, out=f)
        elif 40 <= t < 60:  # the majority of b, c, d, as (b & c) | ((b | c) & d)
            np.bitwise_or(b, c, out=f)
            np.bitwise_and(f, d, out=f)
            np.bitwise_and(b, c, out=t1)
            np.bitwise_or(f, t1, out=f)
        else:
            np.bitwise_xor(b, c, out=f)
            np.bitwise_xor(f, d, out=f)
        # the new a = rotl5(a) + f + e + k + w[t], computed in e's array
        np.add(e, f, out=e)
        np.add(e, wt, out=e)
        np.add(e, np.uint32(_ROUND_CONSTANTS[t // 20]), out=e)
        np.add(e, _rotl(a, 5, t1, t2), out=e)
        np.copyto(b, _rotl(b, 30, t1, t2))
        a, b, c, d, e = e, a, b, c, d
    return [s + v for s, v in zip(state, (a, b, c, d, e), strict=True)]


def _padded(data: np.ndarray, starts: np.ndarray, lengths: np.ndarray, blocks: int) -> np.ndarray:
    """The padded messages as ``(blocks * 16, n)`` big-endian words (``data`` ends in
    ``blocks * 64`` spare bytes at least: each message's window is copied whole, then
    the bytes past its end are cleared)."""
    n = len(lengths)
    width = blocks * 64
    padded = np.lib.stride_tricks.sliding_window_view(data, width)[starts]
    padded *= np.arange(width) < lengths[:, None]
    padded[np.arange(n), lengths] = 0x80
    bits = (lengths * 8).astype(">u8")
    padded[:, width - 8 :] = bits.view(np.uint8).reshape(n, 8)
    return padded.view(">u4").astype(np.uint32).T


def sha1_prefixes(data: np.ndarray, offsets: np.ndarray, width: int = 32) -> np.ndarray:
    """The first ``width / 8`` bytes (``width`` 32 or 64) of the SHA-1 digest of each
    message ``data[offsets[i]:offsets[i + 1]]``, read little-endian (``uint32`` or
    ``uint64``)."""
    offsets = np.asarray(offsets, dtype=np.int64)
    starts, lengths = offsets[:-1], np.diff(offsets)
    blocks_of = (lengths + 9 + 63) // 64
    spare = 64 * int(blocks_of.max(initial=1))
    data = np.concatenate([np.asarray(data, dtype=np.uint8), np.zeros(spare, np.uint8)])
    h0 = np.zeros(len(lengths), dtype=np.uint32)
    h1 = np.zeros(len(lengths), dtype=np.uint32)
    with np.errstate(over="ignore"):
        for blocks in np.unique(blocks_of).tolist():
            group = np.flatnonzero(blocks_of == blocks)
            for lo in range(0, len(group), _CHUNK):
                part = group[lo : lo + _CHUNK]
                words = _padded(data, starts[part], lengths[part], blocks)
                state = [np.full(len(part), v, dtype=np.uint32) for v in _INITIAL]
                for block in range(blocks):
                    state = _compress(state, words[16 * block : 16 * block + 16])
                h0[part], h1[part] = state[0], state[1]
    low = h0.byteswap()
    if width == 32:
        return low
    return low.astype(np.uint64) | (h1.byteswap().astype(np.uint64) << np.uint64(32))


def sha1_prefixes_of_text(values: pa.Array, width: int = 32) -> np.ndarray:
    """:func:`sha1_prefixes` of the UTF-8 bytes of each string of ``values`` (a
    ``string`` or ``large_string`` array without nulls)."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    values = pc.cast(values, pa.large_string()) if pa.types.is_string(values.type) else values
    offsets = np.frombuffer(values.buffers()[1], dtype=np.int64)[
        values.offset : values.offset + len(values) + 1
    ]
    data_buffer = values.buffers()[2]
    data = np.zeros(0, np.uint8) if data_buffer is None else np.frombuffer(data_buffer, np.uint8)
    return sha1_prefixes(data, offsets, width)
