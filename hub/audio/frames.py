"""Cutting :class:`~hub.audio.load.Audio` into frames, and a cheap speech-presence check."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from hub.audio.load import Audio


def frames(audio: Audio, frame_ms: int = 30) -> Iterator[bytes]:
    """Yield the samples as int16 little-endian byte chunks of ``frame_ms`` for streaming ASR.

    Every chunk holds ``rate * frame_ms // 1000`` samples (960 bytes at 16 kHz, 30 ms) except
    the last, which holds what is left (never padded). No chunk for zero samples.

    Raises:
        ValueError: ``frame_ms`` gives less than one sample per frame.
    """
    step = audio.rate * frame_ms // 1000
    if step <= 0:
        raise ValueError(f"frame_ms={frame_ms} gives no samples at {audio.rate} Hz")
    data = audio.samples.astype("<i2", copy=False)
    for start in range(0, len(data), step):
        yield data[start : start + step].tobytes()


def frame_levels(audio: Audio, frame_ms: int = 30) -> np.ndarray:
    """RMS level of each whole ``frame_ms`` frame in dBFS (0 dBFS: full-scale square wave).

    Returns:
        float64 array of shape (len(samples) // frame_samples,); digital silence is -120.
    """
    step = audio.rate * frame_ms // 1000
    count = len(audio.samples) // step
    x = audio.samples[: count * step].reshape(count, step).astype(np.float64) / 32768.0
    power = np.maximum(np.mean(np.square(x), axis=1), 1e-12)
    return 10.0 * np.log10(power)


def speech_present(
    audio: Audio,
    *,
    floor_dbfs: float = -60.0,
    rise_db: float = 12.0,
    min_speech_ms: int = 90,
    frame_ms: int = 30,
) -> bool:
    """Cheap energy check: False for digital silence, near-silence and steady noise.

    A frame is *active* when its RMS level is above ``floor_dbfs`` and at least ``rise_db``
    above the file's background (the 10th percentile of frame levels). Speech rises 20-40 dB
    over its pauses; steady hiss, hum or dither stays within a few dB of itself. Returns True
    when active frames add up to at least ``min_speech_ms``. Meant to report ``no_speech``
    without running ASR over long silence (BC-07d); when unsure it says True.
    """
    levels = frame_levels(audio, frame_ms)
    if len(levels) == 0:
        return False
    background = np.percentile(levels, 10)
    active = (levels > floor_dbfs) & (levels >= background + rise_db)
    return int(np.count_nonzero(active)) * frame_ms >= min_speech_ms
