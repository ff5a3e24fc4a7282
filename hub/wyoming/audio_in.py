"""Client audio (any rate, width, channels) to the 16 kHz mono int16 the engines take.

Wyoming audio chunks carry their own ``rate``, ``width`` and ``channels``. Chunks arrive
one by one, so resampling uses libsoxr's streaming resampler (``soxr.ResampleStream``, "HQ"),
which keeps its filter state across chunks; a partial frame at a chunk's end is kept for the
next one. 16 kHz mono 16-bit input (what Home Assistant sends) passes through untouched.

:class:`ChunkConverter` converts each chunk by its own declared format (BC-45): a client or
satellite may label chunks differently from its ``audio-start``, or switch format mid-stream.
It keeps one :class:`To16k` for the current format and replaces it (flushing the old one's
resampler tail) when a chunk declares another; a partial frame (odd byte count) is carried
into the next chunk of the same format, so nothing is dropped mid-stream. The Wyoming ASR
server and the satellite links both use it.
"""

from __future__ import annotations

import numpy as np
import soxr

from hub.audio.format import RATE
from hub.audio.pcm import to_int16
from hub.errors import BadInputError


class To16k:
    """A converter for one audio stream.

    Args:
        rate: Hz; width: bytes per sample (1 unsigned, 2/4 signed little-endian);
            channels: interleaved channel count.
    Raises:
        BadInputError: a rate, width or channel count the hub cannot take.
    """

    def __init__(self, rate: int, width: int, channels: int):
        if not (isinstance(rate, int) and 1000 <= rate <= 384000):
            raise BadInputError(f"audio rate {rate!r} Hz is not supported")
        if width not in (1, 2, 4) or not (isinstance(channels, int) and 1 <= channels <= 32):
            raise BadInputError(f"audio width {width!r} / channels {channels!r} not supported")
        self.rate, self.width, self.channels = rate, width, channels
        self._rest = b""
        self._stream = None
        if rate != RATE:
            self._stream = soxr.ResampleStream(rate, RATE, 1, dtype="float32", quality="HQ")

    @property
    def passthrough(self) -> bool:
        """True when the input already is 16 kHz mono int16."""
        return self.rate == RATE and self.width == 2 and self.channels == 1

    def convert(self, audio: bytes, last: bool = False) -> bytes:
        """int16 LE mono 16 kHz bytes for ``audio`` (``last``: flush the resampler)."""
        frame = self.width * self.channels
        data = self._rest + audio
        cut = len(data) - len(data) % frame
        data, self._rest = data[:cut], data[cut:]
        if self.passthrough:
            return data
        if self.width == 1:
            x = (np.frombuffer(data, np.uint8).astype(np.float32) - 128.0) / 128.0
        else:
            scale = 2.0 ** (8 * self.width - 1)
            x = np.frombuffer(data, f"<i{self.width}").astype(np.float32) / scale
        mono = x.reshape(-1, self.channels).mean(axis=1)
        if self._stream is not None:
            mono = self._stream.resample_chunk(np.ascontiguousarray(mono, np.float32), last=last)
        return to_int16(mono).tobytes()


class ChunkConverter:
    """Converts one stream's chunks to int16 LE mono 16 kHz bytes.

    Raises (from :meth:`convert`): :class:`hub.errors.BadInputError` for a format the hub
    cannot take (rate outside 1-384 kHz, width not 1/2/4, channels outside 1-32).
    """

    def __init__(self) -> None:
        self._fmt: tuple[int, int, int] | None = None
        self._conv: To16k | None = None

    def convert(self, audio: bytes, rate: int, width: int, channels: int) -> bytes:
        """The 16 kHz mono int16 bytes of one chunk declared as ``rate``/``width``/``channels``."""
        fmt = (rate, width, channels)
        out, conv = b"", self._conv
        if conv is None or fmt != self._fmt:
            new = To16k(rate, width, channels)  # raises before the old one is flushed
            if conv is not None:
                out = conv.convert(b"", last=True)
            conv, self._conv, self._fmt = new, new, fmt
        return out + conv.convert(audio)

    def flush(self) -> bytes:
        """What the resampler still holds (end of the stream)."""
        return self._conv.convert(b"", last=True) if self._conv is not None else b""

    def samples(self, audio: bytes, rate: int, width: int, channels: int) -> np.ndarray:
        """:meth:`convert` as an int16 numpy array."""
        return np.frombuffer(self.convert(audio, rate, width, channels), np.int16)
