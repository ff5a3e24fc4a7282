"""Shared helpers for the audio tests: the two references, sox, hand-built RIFF chunks.

Inputs are derived in pytest's tmp_path from ``shared/audio`` (``$HUB_SHARED`` overrides), else
from the shipped ``samples/`` (see ``shared_data``).
"""

from __future__ import annotations

import struct
import subprocess
import wave
from pathlib import Path

import numpy as np
import pytest

from shared_data import recording

REFS = {
    "real": recording("real", "turn off all of the lights in the Office"),
    "gen": recording("generated", "set a timer for 1 hour"),
}


def sox(*args) -> None:
    """Run sox; fail the test with its stderr when it fails."""
    run = subprocess.run(["sox", "-R", *map(str, args)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr


def read_reference(path: Path) -> np.ndarray:
    """The reference's samples, read with Python's ``wave`` (plain 44-byte header files)."""
    with wave.open(str(path), "rb") as w:
        assert (w.getframerate(), w.getnchannels(), w.getsampwidth()) == (16000, 1, 2)
        return np.frombuffer(w.readframes(w.getnframes()), "<i2").copy()


def chunk(cid: bytes, payload: bytes) -> bytes:
    """One RIFF chunk: id, u32 length, payload, pad byte when the length is odd."""
    return cid + struct.pack("<I", len(payload)) + payload + b"\0" * (len(payload) % 2)


def riff(*chunks: bytes, riff_size: int | None = None) -> bytes:
    body = b"WAVE" + b"".join(chunks)
    return b"RIFF" + struct.pack("<I", len(body) if riff_size is None else riff_size) + body


def fmt_chunk(tag=1, channels=1, rate=16000, bits=16, align=None) -> bytes:
    align = channels * bits // 8 if align is None else align
    return chunk(b"fmt ", struct.pack("<HHIIHH", tag, channels, rate, rate * align, align, bits))


def fmt_extensible(sub_tag=1, channels=1, rate=16000, bits=16, valid=None, mask=4) -> bytes:
    align = channels * bits // 8
    guid = struct.pack("<IHH", sub_tag, 0, 0x10) + bytes.fromhex("800000aa00389b71")
    payload = (
        struct.pack(
            "<HHIIHHHHI", 0xFFFE, channels, rate, rate * align, align, bits, 22, valid or bits, mask
        )
        + guid
    )
    return chunk(b"fmt ", payload)


def write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def best_correlation(x: np.ndarray, ref: np.ndarray, max_lag: int = 400) -> float:
    """Largest normalised cross-correlation of x and ref over lags within +-max_lag samples."""
    x, ref = x.astype(np.float64), ref.astype(np.float64)
    n = len(x) + len(ref)
    spec = np.fft.rfft(x, n) * np.conj(np.fft.rfft(ref, n))
    xc = np.fft.irfft(spec, n)
    lags = np.r_[xc[: max_lag + 1], xc[-max_lag:]]
    return float(lags.max() / np.sqrt(np.dot(x, x) * np.dot(ref, ref)))


def rms(x: np.ndarray) -> float:
    return float(np.sqrt(np.mean(x.astype(np.float64) ** 2)))


@pytest.fixture(params=sorted(REFS), scope="module")
def ref(request):
    """(path, samples) of one reference recording."""
    return REFS[request.param], read_reference(REFS[request.param])


@pytest.fixture
def ref_gen():
    return REFS["gen"], read_reference(REFS["gen"])


def pcm16_bytes(samples: np.ndarray) -> bytes:
    return samples.astype("<i2").tobytes()
