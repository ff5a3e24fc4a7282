"""Sample conversion: bytes -> float32 frames -> mono -> 16 kHz int16.

Resampling is libsoxr (``soxr``, "HQ" quality: a linear-phase windowed-sinc filter with
passband to about 0.91 of the Nyquist rate and about 140 dB stopband; see the soxr docs),
never nearest-neighbour or linear interpolation.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import soxr

from hub.audio.format import RATE
from hub.audio.riff import WavFormat

NEAR_SILENT_DB = 20.0
"""A channel this many dB (RMS) below the loudest channel is left out of the downmix."""

CANCEL_RATIO = 0.25
"""If the average of the kept channels has less than this fraction of the loudest channel's
RMS, the channels cancel (anti-phase wiring) and the loudest channel alone is used."""


def decode(raw: bytes | memoryview, fmt: WavFormat) -> np.ndarray:
    """Decode interleaved sample bytes (whole frames only) into float32 in [-1, 1].

    Returns:
        float32 array of shape (frames, channels). Non-finite float samples become 0,
        float samples beyond +-1 are clipped.
    """
    order = ">" if fmt.big_endian else "<"
    if fmt.encoding == "float":
        x = np.frombuffer(raw, f"{order}f{fmt.width}").astype(np.float32)
        x = np.clip(np.nan_to_num(x, nan=0.0, posinf=1.0, neginf=-1.0), -1.0, 1.0)
    elif fmt.width == 3:
        x = _int24(np.frombuffer(raw, np.uint8), fmt.big_endian).astype(np.float32) * 2.0**-23
    elif fmt.encoding == "unsigned":
        x = (np.frombuffer(raw, np.uint8).astype(np.float32) - 128.0) * 2.0**-7
    else:
        scale = np.float32(2.0 ** (1 - 8 * fmt.width))
        x = np.frombuffer(raw, f"{order}i{fmt.width}").astype(np.float32) * scale
    return x.reshape(-1, fmt.channels)


def _int24(b: np.ndarray, big_endian: bool) -> np.ndarray:
    """Packed 3-byte signed integers -> int32 values in [-2**23, 2**23)."""
    b = b.reshape(-1, 3)
    lo, mid, hi = (b[:, 2], b[:, 1], b[:, 0]) if big_endian else (b[:, 0], b[:, 1], b[:, 2])
    signed_hi = hi.view(np.int8).astype(np.int32)
    return lo.astype(np.int32) | (mid.astype(np.int32) << 8) | (signed_hi << 16)


def as_float_frames(samples: np.ndarray) -> np.ndarray:
    """Any int or float sample array, shape (n,) or (n, ch), as float32 (n, ch) in [-1, 1]."""
    x = np.asarray(samples)
    if x.ndim == 1:
        x = x[:, None]
    if x.ndim != 2:
        raise ValueError(f"samples must have shape (n,) or (n, channels), got {x.shape}")
    if np.issubdtype(x.dtype, np.integer):
        bits = 8 * x.dtype.itemsize
        offset = 2.0 ** (bits - 1) if np.issubdtype(x.dtype, np.unsignedinteger) else 0.0
        return ((x.astype(np.float64) - offset) * 2.0 ** (1 - bits)).astype(np.float32)
    return x.astype(np.float32, copy=False)


_BLOCK = 1 << 18
"""Frames per block when accumulating RMS in float64 (bounds the temporary copy)."""


def _rms(x: np.ndarray) -> np.ndarray:
    """RMS along axis 0 (per channel for (n, ch)), summed in float64 block by block."""
    total = np.zeros(x.shape[1:])
    for start in range(0, len(x), _BLOCK):
        part = x[start : start + _BLOCK].astype(np.float64)
        total += np.einsum("i...,i...->...", part, part)
    return np.sqrt(total / max(len(x), 1))


def mix_plan(rms: np.ndarray, mix_rms) -> tuple[np.ndarray, str | None]:
    """Which channels to average, from each channel's RMS (the rule of :func:`downmix`).

    Args:
        rms: RMS per channel, shape (ch,).
        mix_rms: ``mix_rms(keep)`` -> the RMS of the average of the channels in the boolean
            mask ``keep`` (the caller computes it over the whole file, at once or by blocks).
    Returns:
        (boolean mask of the channels to average, a note when it is not a plain mean).
    """
    channels = len(rms)
    loudest = int(np.argmax(rms >= rms.max() * 10 ** (-1 / 20)))  # first within 1 dB
    if rms[loudest] == 0.0:
        return np.ones(channels, bool), None
    keep = rms >= rms[loudest] * 10 ** (-NEAR_SILENT_DB / 20)
    if mix_rms(keep) < CANCEL_RATIO * rms[loudest]:
        only = np.zeros(channels, bool)
        only[loudest] = True
        return only, (
            f"downmix: channels cancel (anti-phase); used channel {loudest + 1} of {channels}"
        )
    if keep.all():
        return keep, None
    used = ", ".join(str(i + 1) for i in np.flatnonzero(keep))
    return keep, f"downmix: used channel {used} of {channels} (others near-silent)"


def downmix(x: np.ndarray) -> tuple[np.ndarray, str | None]:
    """Mix float32 frames (n, ch) down to mono (n,), and say how when it is not a plain mean.

    Rule (chosen per file, from the whole file's channel RMS; :func:`mix_plan`):

    - channels more than :data:`NEAR_SILENT_DB` below the loudest are left out, so speech
      recorded on one channel only keeps its level (BC-02b) instead of being halved and
      mixed with the other channel's noise;
    - the remaining channels are averaged (for correlated speech this keeps the level and
      averages uncorrelated noise down);
    - if that average cancels (RMS below :data:`CANCEL_RATIO` of the loudest channel: one
      channel wired in anti-phase), the loudest channel alone is used (the first of those
      within 1 dB of the loudest, so ties pick the left channel).
    """
    if x.shape[1] == 1:
        return x[:, 0], None
    if len(x) == 0:
        return np.zeros(0, np.float32), None
    keep, note = mix_plan(_rms(x), lambda k: float(_rms(x[:, k].mean(axis=1))))
    if keep.sum() == 1:
        return x[:, int(np.flatnonzero(keep)[0])], note
    return x[:, keep].mean(axis=1), note


def to_int16(mono: np.ndarray) -> np.ndarray:
    """float samples in [-1, 1] -> int16 (round half to even, clipped to the int16 range)."""
    return np.clip(np.rint(mono * 32768.0), -32768, 32767).astype(np.int16)


def convert(samples: np.ndarray, rate: int) -> tuple[np.ndarray, str | None]:
    """Downmix and resample to :data:`RATE`; returns int16 (n,) and the downmix note."""
    mono, note = downmix(as_float_frames(samples))
    if rate != RATE and len(mono):
        mono = soxr.resample(np.ascontiguousarray(mono), rate, RATE, quality="HQ")
    return to_int16(mono), note


def to_mono_16k(samples: np.ndarray, rate: int) -> np.ndarray:
    """Downmix (see :func:`downmix`) and resample with soxr to 16 kHz mono int16.

    Args:
        samples: float32 in [-1, 1] (int arrays are scaled by their range), shape (n, ch) or (n,).
        rate: their sample rate in Hz.
    Returns:
        int16 array of shape (m,), m ~= n * 16000 / rate.
    Raises:
        ValueError: ``samples`` is not 1- or 2-dimensional, or ``rate`` <= 0.
    """
    if rate <= 0:
        raise ValueError(f"rate must be positive, got {rate}")
    return convert(samples, rate)[0]


@dataclass(frozen=True)
class AudioChunk:
    """The audio of one sentence.

    Attributes:
        pcm: int16 little-endian mono samples.
        rate: sample rate in Hz, the voice's own.
        text: the sentence as spoken (normalized).
    """

    pcm: bytes
    rate: int
    text: str

    @property
    def frames(self) -> int:
        """Number of samples."""
        return len(self.pcm) // 2

    @property
    def seconds(self) -> float:
        """Duration in seconds."""
        return self.frames / self.rate
