"""RIFF/WAVE chunk parser that trusts the bytes present, not the lengths in the header.

Python's ``wave`` module reads a data size of 0 as 0 frames, trusts 0xFFFFFFFF and rejects
float and WAVE_FORMAT_EXTENSIBLE in places; this parser walks the chunks itself.

Sources: Microsoft/IBM "Multimedia Programming Interface and Data Specifications 1.0" (1991:
RIFF chunks, the pad byte after an odd-length chunk, ``fmt `` and ``data``); Microsoft
"WAVEFORMATEXTENSIBLE" (mmreg.h / ksmedia.h: cbSize 22, valid bits, channel mask, sub-format
GUID ``xxxxxxxx-0000-0010-8000-00AA00389B71``); EBU Tech 3306 (RF64, sizes set to 0xFFFFFFFF).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from hub.errors import BadInputError

RIFF_IDS = {b"RIFF": "<", b"RIFX": ">", b"RF64": "<", b"BW64": "<"}
"""Container ids and their byte order (RIFX is the big-endian RIFF)."""

MIN_RATE, MAX_RATE = 1000, 768000
"""Sample rates outside this range are refused as unsupported (a corrupt header, in practice)."""

MAX_CHANNELS = 64
"""More channels than this is refused as unsupported (a corrupt header, in practice)."""

_PCM, _FLOAT, _EXTENSIBLE = 0x0001, 0x0003, 0xFFFE
_TAG_NAMES = {
    0x0002: "MS ADPCM",
    0x0006: "A-law",
    0x0007: "mu-law",
    0x0011: "IMA ADPCM",
    0x0031: "GSM 6.10",
    0x0050: "MPEG",
    0x0055: "MP3",
    0x00FF: "AAC",
}
_GUID_TAILS = (
    bytes.fromhex("00001000800000aa00389b71"),  # KSDATAFORMAT_SUBTYPE_*, LE
    bytes.fromhex("00000010800000aa00389b71"),
)  # the same, big-endian fields


@dataclass(frozen=True)
class WavFormat:
    """How the sample bytes are laid out.

    ``encoding`` is ``"signed"``, ``"unsigned"`` (8-bit WAV) or ``"float"``; ``width`` is the
    container size of one sample in bytes; ``valid_bits`` <= 8 * width (left-justified).
    """

    encoding: str
    channels: int
    rate: int
    width: int
    valid_bits: int
    big_endian: bool = False

    @property
    def frame_bytes(self) -> int:
        """Bytes per frame (one sample of every channel)."""
        return self.channels * self.width

    @property
    def name(self) -> str:
        """``pcm8``, ``pcm16``, ``pcm24``, ``pcm32``, ``pcm24in32``, ``float32``, ``float64``."""
        bits = 8 * self.width
        if self.encoding == "float":
            return f"float{bits}"
        if self.valid_bits < bits:
            return f"pcm{self.valid_bits}in{bits}"
        return f"pcm{bits}"


@dataclass(frozen=True)
class WavLayout:
    """A parsed WAV file: its format, the audio bytes (whole frames only) and warnings."""

    fmt: WavFormat
    data: memoryview
    warnings: tuple[str, ...]


def _truncated(path: str) -> BadInputError:
    return BadInputError(f"truncated/corrupt WAV header: {path}", node="audio", file=path)


def _unsupported(path: str, detail: str) -> BadInputError:
    return BadInputError(f"unsupported WAV format: {path} ({detail})", node="audio", file=path)


def _plausible_chunk(buf: memoryview, pos: int) -> bool:
    """True when ``buf[pos:pos+8]`` looks like a chunk header (4 printable ASCII id bytes)."""
    return pos + 8 <= len(buf) and all(0x20 <= b <= 0x7E for b in buf[pos : pos + 4])


def _next_chunk(buf: memoryview, body: int, size: int) -> int:
    """Offset of the chunk after one of ``size`` bytes at ``body``, skipping the pad byte.

    Some writers omit the pad byte after an odd-length chunk; when the padded offset does
    not hold a chunk header but the unpadded one does, the unpadded one is used.
    """
    end = body + size
    if size % 2 and not _plausible_chunk(buf, end + 1) and _plausible_chunk(buf, end):
        return end
    return end + size % 2


def whole_frames(nbytes: int, frame_bytes: int) -> tuple[int, str | None]:
    """Bytes that form whole frames, and a warning when a partial frame is dropped."""
    used = nbytes - nbytes % frame_bytes
    if used == nbytes:
        return used, None
    return used, f"dropped {nbytes - used} bytes of a partial frame at the end"


def _container(buf: memoryview, path: str) -> tuple[str, list[str]]:
    """Check the 12-byte RIFF/WAVE header; return the byte order and warnings."""
    order = RIFF_IDS.get(bytes(buf[:4]))
    if order is None:
        raise BadInputError(f"not a RIFF/WAVE file: {path}", node="audio", file=path)
    if len(buf) < 12:
        raise _truncated(path)
    if bytes(buf[8:12]) != b"WAVE":
        raise BadInputError(f"not a RIFF/WAVE file: {path}", node="audio", file=path)
    riff_size = struct.unpack_from(order + "I", buf, 4)[0]
    warnings = []
    if riff_size + 8 != len(buf) and bytes(buf[:4]) in (b"RIFF", b"RIFX"):
        warnings.append(f"header RIFF size {riff_size} disagrees with file size {len(buf)}")
    return order, warnings


def _data_extent(buf: memoryview, body: int, size: int) -> tuple[int, int, str | None]:
    """(audio byte count, next chunk offset, warning) of the ``data`` chunk at ``body``.

    A size of 0, or one larger than the bytes left (0xFFFFFFFF from streaming writers), is
    replaced by the bytes actually present up to the end of the file.
    """
    present = len(buf) - body
    if size <= present and (size > 0 or present == 0):
        return size, _next_chunk(buf, body, size), None
    note = f"header data size {size} disagrees with file; using {present} bytes present"
    return present, len(buf), note


def _walk(buf: memoryview, order: str, path: str) -> tuple[memoryview, slice, list[str]]:
    """Walk the chunks after the RIFF header; return the fmt body, the data slice, warnings."""
    pos, fmt, data, warnings = 12, None, None, []
    while pos + 8 <= len(buf):
        if not _plausible_chunk(buf, pos):
            if data is None:
                raise _truncated(path)
            note, data = _after_data(buf, pos, data)
            warnings.append(note)
            break
        cid, size = bytes(buf[pos : pos + 4]), struct.unpack_from(order + "I", buf, pos + 4)[0]
        body = pos + 8
        if cid == b"data" and data is None:
            count, pos, note = _data_extent(buf, body, size)
            data = slice(body, body + count)
            warnings += [note] if note else []
            continue
        if body + size > len(buf):
            if fmt is None or data is None:
                raise _truncated(path)
            warnings.append(f"chunk {cid.decode('ascii')!r} cut short at the end; ignored")
            break
        if cid == b"fmt " and fmt is None:
            fmt = buf[body : body + size]
        pos = _next_chunk(buf, body, size)
    if fmt is None or data is None:
        raise _truncated(path)
    return fmt, data, warnings


def _after_data(buf: memoryview, pos: int, data: slice) -> tuple[str, slice]:
    """Bytes at ``pos`` are not a chunk: a warning, and the data slice to use.

    Right after the data chunk they are more audio (a header finalised too early, trust the
    bytes present), unless they are an ID3 tag; anywhere else they are ignored.
    """
    if pos in (data.stop, data.stop + 1) and bytes(buf[pos : pos + 3]) != b"ID3":
        note = (
            f"header data size {data.stop - data.start} disagrees with file; "
            f"using {len(buf) - data.start} bytes present"
        )
        return note, slice(data.start, len(buf))
    return f"ignored {len(buf) - pos} bytes after the last chunk", data


def _guid_tag(sub: memoryview, order: str, path: str) -> int:
    """Format tag inside a WAVE_FORMAT_EXTENSIBLE sub-format GUID.

    The tag is the GUID's first 32-bit field. In RIFX files some writers (sox) store a
    16-bit tag, then the other 14 bytes in little-endian order; both layouts are accepted.
    """
    low, high = struct.unpack_from(order + "HH", sub, 0)
    if (low and high) or bytes(sub[4:16]) not in _GUID_TAILS:
        raise _unsupported(path, f"extensible sub-format {bytes(sub).hex()}")
    return low or high


def _parse_fmt(fmt: memoryview, order: str, path: str) -> tuple[WavFormat, list[str]]:
    """Decode the ``fmt `` chunk body into a :class:`WavFormat`, checking it is supported."""
    if len(fmt) < 16:
        raise _truncated(path)
    tag, channels, rate, _, align, bits = struct.unpack_from(order + "HHIIHH", fmt, 0)
    valid = bits
    if tag == _EXTENSIBLE:
        if len(fmt) < 40:
            raise _truncated(path)
        valid = struct.unpack_from(order + "H", fmt, 18)[0] or bits
        tag = _guid_tag(fmt[24:40], order, path)
    _check_ranges(channels, rate, path)
    encoding = _encoding(tag, bits, valid, path)
    spec = WavFormat(encoding, channels, rate, bits // 8, valid, order == ">")
    warnings = []
    if align != spec.frame_bytes:
        warnings.append(
            f"header block align {align} disagrees with {channels}ch x {bits}-bit;"
            f" using {spec.frame_bytes}"
        )
    return spec, warnings


def _check_ranges(channels: int, rate: int, path: str) -> None:
    if channels == 0 or channels > MAX_CHANNELS:
        raise _unsupported(path, f"{channels} channels")
    if not MIN_RATE <= rate <= MAX_RATE:
        raise _unsupported(path, f"{rate} Hz")


def _encoding(tag: int, bits: int, valid: int, path: str) -> str:
    """``signed``/``unsigned``/``float`` for a supported tag and sample size, else raise."""
    if tag == _PCM:
        if bits not in (8, 16, 24, 32) or not 0 < valid <= bits:
            raise _unsupported(path, f"{valid}-bit PCM")
        return "unsigned" if bits == 8 else "signed"
    if tag == _FLOAT:
        if bits not in (32, 64) or valid != bits:
            raise _unsupported(path, f"{valid}-bit float")
        return "float"
    name = _TAG_NAMES.get(tag, "unknown")
    raise _unsupported(path, f"format tag 0x{tag:04X}, {name}")


def parse_wav(buf: bytes | memoryview, path: str) -> WavLayout:
    """Parse a whole WAV file held in memory.

    Args:
        buf: the file's bytes.
        path: the file name, used in messages only.
    Returns:
        :class:`WavLayout` whose ``data`` holds the whole frames present (possibly 0).
    Raises:
        BadInputError: "not a RIFF/WAVE file: <path>", "truncated/corrupt WAV header: <path>"
            or "unsupported WAV format: <path> (<detail>)".
    """
    buf = memoryview(buf).cast("B")
    order, warnings = _container(buf, path)
    fmt_body, data, walk_notes = _walk(buf, order, path)
    spec, fmt_notes = _parse_fmt(fmt_body, order, path)
    used, partial = whole_frames(data.stop - data.start, spec.frame_bytes)
    notes = warnings + walk_notes + fmt_notes + ([partial] if partial else [])
    return WavLayout(spec, buf[data.start : data.start + used], tuple(notes))
