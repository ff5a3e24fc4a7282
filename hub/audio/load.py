"""Reading audio files into :class:`Audio`: 16 kHz mono int16, ready for ASR."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from hub.audio.pcm import TARGET_RATE, convert, decode
from hub.audio.riff import (
    MAX_CHANNELS, MAX_RATE, MIN_RATE, RIFF_IDS, WavFormat, parse_wav, whole_frames,
)
from hub.errors import BadInputError

log = logging.getLogger("hub.audio")


@dataclass(frozen=True, eq=False)
class Audio:
    """One utterance's audio, converted for ASR.

    Attributes:
        samples: int16, mono, shape (n,), at ``rate``; read-only.
        rate: samples per second; always :data:`TARGET_RATE` after :func:`load_wav`.
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


def _read_bytes(path: str | Path) -> bytes:
    """The whole file; OSError becomes BadInputError "cannot read <path>: <strerror>"."""
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise BadInputError(f"cannot read {path}: {reason}", node="audio", file=str(path)) from None


def _finish(decoded: np.ndarray, rate: int, name: str, notes: tuple[str, ...], path) -> Audio:
    """Convert decoded float frames (n, ch) at ``rate`` to an :class:`Audio`, logging it."""
    channels = decoded.shape[1]
    samples, downmix_note = convert(decoded, rate)
    repairs = list(notes) + ([downmix_note] if downmix_note else [])
    for note in repairs:
        log.warning("%s: %s", path, note)
    conversion = []
    if rate != TARGET_RATE or channels != 1:
        verb = "resampled" if rate != TARGET_RATE else "downmixed"
        conversion.append(f"{verb} {rate}->{TARGET_RATE} Hz, {channels}ch->1ch")
        log.info("%s %d Hz/%dch -> %d Hz/1ch: %s", verb, rate, channels, TARGET_RATE, path)
    samples.flags.writeable = False
    audio = Audio(samples, TARGET_RATE, rate, channels, name, tuple(repairs + conversion))
    log.debug("loaded %s: %.2f s of %s", path, audio.duration_s, name)
    return audio


def load_wav(path: str | Path) -> Audio:
    """Read any PCM or float WAV and convert it to 16 kHz mono int16.

    Handles 8/16/24/32-bit integer and 32/64-bit float samples, WAVE_FORMAT_EXTENSIBLE,
    RIFX and RF64 containers, extra chunks before or after the data, and a data size that is
    0, 0xFFFFFFFF or otherwise wrong (the bytes present are used, with a warning). Memory is
    sized from the bytes present, never from the header. Zero samples is not an error.

    Raises:
        BadInputError: ``"not a RIFF/WAVE file: <path>"``, ``"truncated/corrupt WAV header:
            <path>"``, ``"unsupported WAV format: <path> (<detail>)"`` or
            ``"cannot read <path>: <strerror>"``.
    """
    layout = parse_wav(_read_bytes(path), str(path))
    fmt = layout.fmt
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


def read_pcm(path: str | Path, *, rate: int, channels: int = 1, width: int = 2,
             encoding: str | None = None) -> Audio:
    """Read headerless little-endian PCM (a ``.pcm``/``.raw`` capture) and convert it.

    Args:
        rate: sample rate of the bytes (Hz).
        channels: interleaved channels.
        width: bytes per sample: 1, 2, 3 or 4 (4 or 8 with ``encoding="float"``).
        encoding: ``"signed"``, ``"unsigned"`` or ``"float"``; default unsigned for width 1
            (ALSA's U8, like 8-bit WAV) and signed otherwise.
    Raises:
        BadInputError: ``"unsupported PCM format: <path> (<detail>)"`` for invalid
            parameters, ``"cannot read <path>: <strerror>"``.
    """
    fmt = _raw_format(path, rate, channels, width, encoding)
    buf = _read_bytes(path)
    used, partial = whole_frames(len(buf), fmt.frame_bytes)
    notes = [partial] if partial else []
    if buf[:4] in RIFF_IDS:
        notes.insert(0, "file has a RIFF header; decoded as raw PCM anyway")
    decoded = decode(memoryview(buf)[:used], fmt)
    name = fmt.name if width > 1 else ("u8" if fmt.encoding == "unsigned" else "s8")
    return _finish(decoded, rate, name, tuple(notes), path)
