"""Writing int16 mono WAV files and streams: the one WAV writer of the hub.

A seekable file gets a normal WAV (written through a ``.part`` file and renamed when given a
path with ``atomic=True``); a pipe gets a header with unknown sizes and the PCM as it comes.
"""

from __future__ import annotations

import itertools
import os
import struct
import wave
from collections.abc import Iterable
from pathlib import Path
from typing import BinaryIO

from hub.audio.format import CHANNELS, WIDTH
from hub.audio.pcm import AudioChunk
from hub.audio.player import resample_pcm
from hub.errors import TransientError

_UNKNOWN_SIZE = 0xFFFFFFFF
"""RIFF and data sizes of a WAV streamed before its length is known."""


def wav_header(rate: int, data_bytes: int = _UNKNOWN_SIZE) -> bytes:
    """A 44-byte RIFF/WAVE header for int16 mono at ``rate``; unknown length: 0xFFFFFFFF sizes."""
    riff = _UNKNOWN_SIZE if data_bytes == _UNKNOWN_SIZE else 36 + data_bytes
    return (
        b"RIFF"
        + struct.pack("<I", riff)
        + b"WAVE"
        + b"fmt "
        + struct.pack(
            "<IHHIIHH", 16, 1, CHANNELS, rate, rate * WIDTH * CHANNELS, WIDTH * CHANNELS, WIDTH * 8
        )
        + b"data"
        + struct.pack("<I", data_bytes)
    )


def _pcm_at(chunk: AudioChunk, rate: int) -> bytes:
    """The chunk's PCM at ``rate`` (resampled with soxr when the rates differ)."""
    if chunk.rate == rate:
        return chunk.pcm

    return resample_pcm(chunk.pcm, chunk.rate, rate)


def _write_seekable(chunks: Iterable[AudioChunk], f: BinaryIO, rate: int) -> int:
    """A normal WAV through the ``wave`` module (it seeks back to fill in the sizes)."""
    frames = 0
    with wave.open(f, "wb") as w:
        w.setnchannels(CHANNELS)
        w.setsampwidth(WIDTH)
        w.setframerate(rate)
        for chunk in chunks:
            pcm = _pcm_at(chunk, rate)
            w.writeframes(pcm)
            frames += len(pcm) // WIDTH
    return frames


def _write_stream(chunks: Iterable[AudioChunk], f: BinaryIO, rate: int) -> int:
    """A WAV for a pipe: header with unknown sizes, then PCM as it comes; never seeks.

    With no chunks at all, an exact 0-frame header is written instead.
    """
    it = iter(chunks)
    first = next(it, None)
    if first is None:
        f.write(wav_header(rate, 0))
        f.flush()
        return 0
    f.write(wav_header(rate))
    frames = 0
    for chunk in itertools.chain([first], it):
        pcm = _pcm_at(chunk, rate)
        f.write(pcm)
        f.flush()
        frames += len(pcm) // WIDTH
    return frames


def _seekable(f) -> bool:
    """True when ``f`` can seek (regular file); pipes, sockets and ttys cannot."""
    try:
        return bool(f.seekable())
    except (AttributeError, ValueError, OSError):
        return False


def write_wav(chunks: Iterable[AudioChunk], dest: str | Path | BinaryIO, rate: int) -> int:
    """Write ``chunks`` as one int16 mono WAV at ``rate``; return the frames written.

    ``dest`` is a path or a binary file. A seekable file gets a normal WAV; a non-seekable
    sink (pipe, stdout) gets a header with unknown (0xFFFFFFFF) sizes and then the PCM as each
    chunk arrives, and is never seeked (BC-09b). Zero chunks give a valid 0-frame WAV. Chunks
    at another rate are resampled to ``rate``. A binary file passed in is not closed.

    Raises:
        TransientError: the reader of the pipe went away (broken pipe).
    """
    try:
        if isinstance(dest, (str, Path)):
            with open(dest, "wb") as f:
                return _write_seekable(chunks, f, rate)
        if _seekable(dest):
            return _write_seekable(chunks, dest, rate)
        return _write_stream(chunks, dest, rate)
    except BrokenPipeError:
        raise TransientError("audio output pipe closed by its reader", node="tts") from None


def write_wav_atomic(pcm: bytes, rate: int, path: str | Path) -> str:
    """Write int16 mono ``pcm`` at ``rate`` Hz to ``path`` through ``<path>.part`` (renamed
    when complete, so no half-written answer is ever seen); returns the path. Makes the
    folder.

    Raises:
        OSError: the folder or file cannot be written.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".part")
    write_wav([AudioChunk(pcm=pcm, rate=rate, text="")], tmp, rate)
    os.replace(tmp, path)
    return str(path)
