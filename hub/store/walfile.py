"""Reading a SQLite ``-wal`` and ``-shm`` file without SQLite: header, salts, frame checksums.

Source: the SQLite file format, section 4 "The Write-Ahead Log"
(https://www.sqlite.org/fileformat2.html#walformat). A WAL is a 32-byte header (magic
``0x377f0682``/``0x377f0683`` naming the checksum byte order, format 3007000, page size,
checkpoint sequence, salt-1, salt-2, a checksum of the first 24 bytes) then frames of a
24-byte header (page number, database size in pages after a commit else 0, the two salts, a
cumulative checksum) and one page. A frame is valid when its salts equal the header's and its
checksum, seeded by the previous frame's (the first by the header's), matches; SQLite applies
the valid frames up to the last commit frame and ignores the rest. The ``-shm`` (wal-index)
starts with two copies of a 48-byte header in native byte order that repeats the WAL's salts.

The checksum recurrence ``s0 += x0 + s1; s1 += x1 + s0`` over 32-bit word pairs is linear
(``S' = M S + (x0, x0 + x1)``, ``M = [[1, 1], [1, 2]]`` mod 2**32), so a frame's checksum is
computed with numpy from precomputed powers of ``M`` instead of a Python loop per word.
"""

from __future__ import annotations

import struct
import sys
from dataclasses import dataclass, field

import numpy as np

MAGICS = {0x377F0682: "<", 0x377F0683: ">"}
"""WAL magic -> byte order of the checksum words (``<`` little-, ``>`` big-endian)."""
WAL_HEADER = 32
FRAME_HEADER = 24
FRAMES_PER_READ = 256
"""Frames checked per numpy batch."""


@dataclass
class WalInfo:
    """What a ``-wal`` file holds.

    Attributes:
        valid: magic, format and header checksum are right (else SQLite ignores the file).
        page_size: bytes per page the WAL was written for.
        checkpoint_seq: the header's checkpoint sequence number.
        salts: ``(salt-1, salt-2)`` of the header.
        frames: valid frames up to the last commit frame (what SQLite would apply).
        pages: page numbers of those frames.
        db_pages: the database size in pages after the last valid commit (0: none).
        problem: why ``valid`` is False, else "".
    """

    valid: bool = False
    page_size: int = 0
    checkpoint_seq: int = 0
    salts: tuple[int, int] = (0, 0)
    frames: int = 0
    pages: set[int] = field(default_factory=set)
    db_pages: int = 0
    problem: str = ""


_POWERS: dict[int, tuple[np.ndarray, ...]] = {}


def _powers(n: int) -> tuple[np.ndarray, ...]:
    """``(a, b, c, d)``: entries of ``M**(n-1-k)`` for k = 0..n-1 (uint32, wrapping)."""
    if n not in _POWERS:
        a, b, c, d = (np.empty(n, np.uint32) for _ in range(4))
        m = (1, 0, 0, 1)
        with np.errstate(over="ignore"):
            for j in range(n):
                a[n - 1 - j], b[n - 1 - j], c[n - 1 - j], d[n - 1 - j] = m
                p, q, r, s = m
                m = (
                    (p + r) & 0xFFFFFFFF,
                    (q + s) & 0xFFFFFFFF,
                    (p + 2 * r) & 0xFFFFFFFF,
                    (q + 2 * s) & 0xFFFFFFFF,
                )
        _POWERS[n] = (a, b, c, d, np.array(m, np.uint64))  # m is now M**n
    return _POWERS[n]


def checksums(words: np.ndarray, seed: tuple[int, int]) -> tuple[int, int]:
    """The WAL checksum of ``words`` (shape (n, 2) uint32: the pairs x0, x1) from ``seed``."""
    a, b, c, d, mn = _powers(len(words))
    v0 = words[:, 0]
    with np.errstate(over="ignore"):
        v1 = words[:, 0] + words[:, 1]
        s0 = int(np.sum(a * v0 + b * v1, dtype=np.uint64)) & 0xFFFFFFFF
        s1 = int(np.sum(c * v0 + d * v1, dtype=np.uint64)) & 0xFFFFFFFF
    p, q, r, s = (int(x) for x in mn)
    return (
        (p * seed[0] + q * seed[1] + s0) & 0xFFFFFFFF,
        (r * seed[0] + s * seed[1] + s1) & 0xFFFFFFFF,
    )


def _words(data: bytes, order: str) -> np.ndarray:
    return np.frombuffer(data, dtype=np.dtype(order + "u4")).reshape(-1, 2)


def read_header(head: bytes) -> tuple[WalInfo, str]:
    """The header's fields (``info.valid`` False with ``info.problem`` when it is not a WAL
    header SQLite would use) and the checksum byte order."""
    info = WalInfo()
    if len(head) < WAL_HEADER:
        info.problem = "shorter than a WAL header"
        return info, ">"
    magic, version, size, seq, salt1, salt2, c1, c2 = struct.unpack(">8I", head[:WAL_HEADER])
    order = MAGICS.get(magic)
    info.page_size, info.checkpoint_seq, info.salts = size, seq, (salt1, salt2)
    if order is None:
        info.problem = f"bad magic 0x{magic:08x}"
    elif version != 3007000:
        info.problem = f"unknown WAL format {version}"
    elif size < 512 or size > 65536 or size & (size - 1):
        info.problem = f"bad page size {size}"
    elif checksums(_words(head[:24], order), (0, 0)) != (c1, c2):
        info.problem = "header checksum mismatch"
    else:
        info.valid = True
    return info, order or ">"


def read_wal(path: str) -> WalInfo:
    """Parse the WAL at ``path`` (see the module doc).

    Raises:
        OSError: it cannot be read.
    """
    with open(path, "rb") as f:
        head = f.read(WAL_HEADER)
        info, order = read_header(head)
        if not info.valid:
            return info
        seed = struct.unpack(">2I", head[24:32])
        frame = FRAME_HEADER + info.page_size
        index, pages = 0, []
        while True:
            block = f.read(frame * FRAMES_PER_READ)
            count = len(block) // frame
            for i in range(count):
                raw = block[i * frame : (i + 1) * frame]
                pgno, commit, salt1, salt2, c1, c2 = struct.unpack(">6I", raw[:24])
                if (salt1, salt2) != info.salts:
                    return info
                seed = checksums(_words(raw[:8] + raw[24:], order), seed)
                if seed != (c1, c2):
                    return info
                index += 1
                pages.append(pgno)
                if commit:
                    info.frames, info.db_pages = index, commit
                    info.pages.update(pages)
                    pages = []
            if count < FRAMES_PER_READ:
                return info


def read_shm_salts(path: str) -> tuple[tuple[int, int], int] | None:
    """``((salt-1, salt-2), page size)`` from a ``-shm``'s wal-index header, or None when
    the file holds no initialised header (too short, the two copies differ, not iVersion
    3007000)."""
    try:
        with open(path, "rb") as f:
            head = f.read(96)
    except OSError:
        return None
    if len(head) < 96 or head[:48] != head[48:96]:
        return None
    order = "<" if sys.byteorder == "little" else ">"
    version, _unused, _change, is_init, _big, size = struct.unpack(order + "3IBBH", head[:16])
    if version != 3007000 or not is_init:
        return None
    salt1, salt2 = struct.unpack(">2I", head[32:40])  # SQLite copies the WAL's bytes as is
    return (salt1, salt2), (65536 if size == 1 else size)


def db_page_size(path: str) -> int | None:
    """The page size in the database file's header (bytes 16-17; 1 means 65536), or None."""
    try:
        with open(path, "rb") as f:
            head = f.read(100)
    except OSError:
        return None
    if len(head) < 100 or not head.startswith(b"SQLite format 3\0"):
        return None
    size = struct.unpack(">H", head[16:18])[0]
    return 65536 if size == 1 else size
