"""Reading audio files into :class:`Audio`: 16 kHz mono int16, ready for ASR."""

from __future__ import annotations

import logging
import mmap
import os
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import numpy as np
import soxr

from hub.audio.format import RATE
from hub.audio.pcm import convert, decode, mix_plan, to_int16
from hub.audio.riff import (
    MAX_CHANNELS,
    MAX_RATE,
    MIN_RATE,
    RIFF_IDS,
    WavFormat,
    parse_wav,
    whole_frames,
)
from hub.errors import BadInputError
from hub.paths import NotRegularFileError, open_regular

log = logging.getLogger("hub.audio")


@dataclass(frozen=True, eq=False)
class Audio:
    """One utterance's audio, converted for ASR.

    Attributes:
        samples: int16, mono, shape (n,), at ``rate``; read-only.
        rate: samples per second; always :data:`RATE` after :func:`load_wav`.
        source_rate: the file's rate (Hz).
        source_channels: the file's channel count.
        source_format: ``pcm8``, ``pcm16``, ``pcm24``, ``pcm32``, ``pcm24in32``, ``float32``,
            ``float64`` (``s8``/``u8`` widths of raw input follow the same names).
        warnings: what was repaired or converted, one line each.
    """

    samples: np.ndarray
    rate: int
    source_rate: int
    source_channels: int
    source_format: str
    warnings: tuple[str, ...] = ()

    @property
    def duration_s(self) -> float:
        """Length in seconds (``len(samples) / rate``)."""
        return len(self.samples) / self.rate


MAX_AUDIO_S = 600.0
"""Longest audio a file may hold (seconds, from its format and the bytes present): a longer
one is refused as ``bad_input`` ("too long: ..."), never converted."""

_HEAD_BYTES = 4096
"""Bytes read first: a file that is not WAV at all is refused from these alone."""


def _open(path: str | Path) -> BinaryIO:
    """``path`` opened for reading when it is a regular file.

    Raises:
        BadInputError: "not a regular file: <path>" (a device, FIFO or socket: reading it
            may never end), "cannot read <path>: <strerror>".
    """
    try:
        return open_regular(path)
    except NotRegularFileError:
        raise BadInputError(f"not a regular file: {path}", node="audio", file=str(path)) from None
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise BadInputError(f"cannot read {path}: {reason}", node="audio", file=str(path)) from None


def _check_length(nbytes: int, fmt: WavFormat, path) -> None:
    """BadInputError "too long: ..." when ``nbytes`` of ``fmt`` last over :data:`MAX_AUDIO_S`."""
    seconds = nbytes / (fmt.frame_bytes * fmt.rate)
    if seconds > MAX_AUDIO_S:
        raise BadInputError(
            f"too long: {path} ({seconds:.0f} s of audio; at most {MAX_AUDIO_S:.0f} s)",
            node="audio",
            file=str(path),
        )


def _finish(decoded: np.ndarray, rate: int, name: str, notes: tuple[str, ...], path) -> Audio:
    """Convert decoded float frames (n, ch) at ``rate`` to an :class:`Audio`, logging it."""
    channels = decoded.shape[1]
    samples, downmix_note = convert(decoded, rate)
    repairs = list(notes) + ([downmix_note] if downmix_note else [])
    for note in repairs:
        log.warning("%s: %s", path, note)
    conversion = []
    if rate != RATE or channels != 1:
        verb = "resampled" if rate != RATE else "downmixed"
        conversion.append(f"{verb} {rate}->{RATE} Hz, {channels}ch->1ch")
        log.info("%s %d Hz/%dch -> %d Hz/1ch: %s", verb, rate, channels, RATE, path)
    samples.flags.writeable = False
    audio = Audio(samples, RATE, rate, channels, name, tuple(repairs + conversion))
    log.debug("loaded %s: %.2f s of %s", path, audio.duration_s, name)
    return audio


STREAM_BYTES = 32 << 20
"""Files larger than this are mapped, not read, and converted block by block (a 10-minute
44.1 kHz stereo file then costs a few MB beyond its 16 kHz result)."""

_BLOCK_FRAMES = 1 << 18
"""Frames per block of the streamed conversion (about 6 s at 44.1 kHz)."""

_MAGIC = {
    b"fLaC": "FLAC",
    b"OggS": "Ogg",
    b"ID3": "MP3",
    b"\xff\xfb": "MP3",
    b"\xff\xf3": "MP3",
    b"\xff\xf2": "MP3",
    b"FORM": "AIFF",
    b"\x1aE\xdf\xa3": "WebM",
    b"0&\xb2u": "WMA",
}
"""Leading bytes of audio containers the hub does not read, and their names."""


_HEADERLESS = (".pcm", ".raw")
"""Suffixes of headerless sample captures (BC-04): no rate or format to read them by."""


def _unsupported(head: bytes, path) -> None:
    """Raise a clear BadInputError for a file named as another audio format (``x.flac``),
    unless its bytes are RIFF/WAVE after all; a ``.wav`` that is not WAV is BC-04's
    "not a RIFF/WAVE file" (:func:`hub.audio.riff.parse_wav`)."""
    suffix = Path(str(path)).suffix.lower()
    if suffix in ("", ".wav", ".wave") or head[:4] in RIFF_IDS:
        return
    if suffix in _HEADERLESS:
        raise BadInputError(
            f"unsupported: {path}: headerless PCM (its rate and sample format are not in the "
            "file); only WAV is read (convert it: sox -t raw -r RATE -e signed -b 16 -c 1 "
            "IN OUT.wav)",
            node="audio",
            file=str(path),
        )
    kind = next((name for magic, name in _MAGIC.items() if head.startswith(magic)), None)
    if kind is None and head[4:8] == b"ftyp":
        kind = "MP4/M4A"
    raise BadInputError(
        f"unsupported: {path}: {kind or suffix} audio; only WAV is read "
        "(convert it: sox IN -r 16000 -c 1 -b 16 OUT.wav)",
        node="audio",
        file=str(path),
    )


def _blocks(data: memoryview, fmt: WavFormat, release=None):
    """Decoded float32 blocks (n, ch) of ``data``; ``release(start, stop)`` after each."""
    step = _BLOCK_FRAMES * fmt.frame_bytes
    for start in range(0, len(data), step):
        yield decode(data[start : start + step], fmt)
        if release is not None:
            release(start, min(start + step, len(data)))


def _convert_streamed(data: memoryview, fmt: WavFormat, release) -> tuple[np.ndarray, str | None]:
    """:func:`hub.audio.pcm.convert` block by block: two RMS passes, then mix and resample."""
    n = len(data) // fmt.frame_bytes
    keep, note = np.ones(fmt.channels, bool), None
    if fmt.channels > 1 and n:
        sq = np.zeros(fmt.channels)
        for block in _blocks(data, fmt, release):
            b = block.astype(np.float64)
            sq += np.einsum("ij,ij->j", b, b)

        def mix_rms(mask):
            total = 0.0
            for block in _blocks(data, fmt, release):
                m = block[:, mask].mean(axis=1).astype(np.float64)
                total += float(m @ m)
            return (total / n) ** 0.5

        keep, note = mix_plan(np.sqrt(sq / n), mix_rms)
    stream = (
        soxr.ResampleStream(fmt.rate, RATE, 1, dtype="float32", quality="HQ")
        if fmt.rate != RATE
        else None
    )
    out = []
    for block in _blocks(data, fmt, release):
        mono = np.ascontiguousarray(block[:, keep].mean(axis=1), dtype=np.float32)
        out.append(to_int16(stream.resample_chunk(mono) if stream else mono))
    if stream is not None:
        out.append(to_int16(stream.resample_chunk(np.zeros(0, np.float32), last=True)))
    return np.concatenate(out) if out else np.zeros(0, np.int16), note


def _address(buf) -> int:
    return np.frombuffer(buf, np.uint8).ctypes.data if len(buf) else 0


def _load_mapped(f: BinaryIO, path) -> Audio:
    """A large WAV read through mmap and converted by blocks, each block's pages released."""
    with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mm:
        view = memoryview(mm)
        layout = parse_wav(view, str(path))
        base = _address(layout.data) - _address(view)

        def release(start: int, stop: int) -> None:
            low = (base + start) // mmap.PAGESIZE * mmap.PAGESIZE
            mm.madvise(mmap.MADV_DONTNEED, low, base + stop - low)

        try:
            _check_length(len(layout.data), layout.fmt, path)
            samples, note = _convert_streamed(layout.data, layout.fmt, release)
        finally:
            fmt, warnings = layout.fmt, layout.warnings
            layout.data.release()
            del layout
            view.release()
    return _finish_mono(samples, fmt, tuple(warnings) + ((note,) if note else ()), path)


def _finish_mono(samples: np.ndarray, fmt: WavFormat, notes: tuple[str, ...], path) -> Audio:
    """An :class:`Audio` from converted samples (the streamed path of :func:`_finish`)."""
    for note in notes:
        log.warning("%s: %s", path, note)
    conversion = []
    if fmt.rate != RATE or fmt.channels != 1:
        verb = "resampled" if fmt.rate != RATE else "downmixed"
        conversion.append(f"{verb} {fmt.rate}->{RATE} Hz, {fmt.channels}ch->1ch")
    samples.flags.writeable = False
    return Audio(samples, RATE, fmt.rate, fmt.channels, fmt.name, tuple(notes) + tuple(conversion))


def load_wav(path: str | Path) -> Audio:
    """Read any PCM or float WAV and convert it to 16 kHz mono int16.

    Handles 8/16/24/32-bit integer and 32/64-bit float samples, WAVE_FORMAT_EXTENSIBLE,
    RIFX and RF64 containers, extra chunks before or after the data, and a data size that is
    0, 0xFFFFFFFF or otherwise wrong (the bytes present are used, with a warning). Memory is
    sized from the bytes present, never from the header. Zero samples is not an error.
    Files over :data:`STREAM_BYTES` are mapped and converted block by block (soxr's
    ``ResampleStream``), so memory stays near the size of the 16 kHz result. Only a regular
    file is opened (a device or FIFO could be read forever); its first bytes are checked
    before the rest is read, and audio longer than :data:`MAX_AUDIO_S` is refused.

    Raises:
        BadInputError: ``"not a RIFF/WAVE file: <path>"``, ``"truncated/corrupt WAV header:
            <path>"``, ``"unsupported WAV format: <path> (<detail>)"``, ``"not a regular file:
            <path>"``, ``"too long: <path> (<n> s of audio; at most 600 s)"`` or
            ``"cannot read <path>: <strerror>"``; ``"unsupported: <path>: FLAC audio; ..."``
            for a FLAC, Ogg, MP3, MP4, AIFF, WebM or WMA file (by its bytes or its suffix).
    """
    with _open(path) as f:
        head = f.read(_HEAD_BYTES)
        _unsupported(head[:12], path)
        if head[:4] not in RIFF_IDS:
            parse_wav(head, str(path))  # raises "not a RIFF/WAVE file" before the rest is read
        if os.fstat(f.fileno()).st_size > STREAM_BYTES:
            return _load_mapped(f, path)
        buf = head + f.read(STREAM_BYTES + 1 - len(head))
        if len(buf) > STREAM_BYTES:  # it grew while read
            return _load_mapped(f, path)
    layout = parse_wav(buf, str(path))
    fmt = layout.fmt
    _check_length(len(layout.data), fmt, path)
    return _finish(decode(layout.data, fmt), fmt.rate, fmt.name, layout.warnings, path)


def _raw_format(path, rate: int, channels: int, width: int, encoding: str | None) -> WavFormat:
    """Check the raw PCM parameters; BadInputError "unsupported PCM format" when invalid."""
    encoding = encoding or ("unsigned" if width == 1 else "signed")
    widths = {"signed": (1, 2, 3, 4), "unsigned": (1,), "float": (4, 8)}
    if encoding not in widths or width not in widths[encoding]:
        detail = f"{encoding} samples of width {width}"
    elif not MIN_RATE <= rate <= MAX_RATE:
        detail = f"{rate} Hz"
    elif not 1 <= channels <= MAX_CHANNELS:
        detail = f"{channels} channels"
    else:
        return WavFormat(encoding, channels, rate, width, 8 * width)
    raise BadInputError(f"unsupported PCM format: {path} ({detail})", node="audio", file=str(path))


def read_pcm(
    path: str | Path, *, rate: int, channels: int = 1, width: int = 2, encoding: str | None = None
) -> Audio:
    """Read headerless little-endian PCM (a ``.pcm``/``.raw`` capture) and convert it.

    Args:
        rate: sample rate of the bytes (Hz).
        channels: interleaved channels.
        width: bytes per sample: 1, 2, 3 or 4 (4 or 8 with ``encoding="float"``).
        encoding: ``"signed"``, ``"unsigned"`` or ``"float"``; default unsigned for width 1
            (ALSA's U8, like 8-bit WAV) and signed otherwise.
    Raises:
        BadInputError: ``"unsupported PCM format: <path> (<detail>)"`` for invalid
            parameters, ``"not a regular file: <path>"``, ``"too long: ..."`` (over
            :data:`MAX_AUDIO_S`), ``"cannot read <path>: <strerror>"``.
    """
    fmt = _raw_format(path, rate, channels, width, encoding)
    cap = int(MAX_AUDIO_S * rate) * fmt.frame_bytes
    with _open(path) as f:
        buf = f.read(cap + 1)
    _check_length(len(buf), fmt, path)
    used, partial = whole_frames(len(buf), fmt.frame_bytes)
    notes = [partial] if partial else []
    if buf[:4] in RIFF_IDS:
        notes.insert(0, "file has a RIFF header; decoded as raw PCM anyway")
    decoded = decode(memoryview(buf)[:used], fmt)
    name = fmt.name if width > 1 else ("u8" if fmt.encoding == "unsigned" else "s8")
    return _finish(decoded, rate, name, tuple(notes), path)
