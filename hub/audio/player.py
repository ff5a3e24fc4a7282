"""Audio output through sounddevice (PortAudio), at the rate the voice was made for.

:class:`Player` opens the output stream at the chunks' own sample rate. When the device refuses
that rate (``check_output_settings`` or opening raises ``PortAudioError``), it resamples with
soxr to the device's default rate, or to 48000 or 44100 Hz, and logs the choice (BC-12:
KoljaB/RealtimeTTS #250, rhasspy/wyoming-satellite #11). No rate is assumed: the chunks say.
Synthesis of the next sentence overlaps playback of the current one (a prefetch thread).
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import soxr

from hub.errors import DeviceUnavailableError
from hub.settings import AudioSettings

if TYPE_CHECKING:
    from hub.audio.pcm import AudioChunk

log = logging.getLogger(__name__)

FALLBACK_RATES = (48000, 44100)
"""Rates tried after the chunks' rate and the device's default rate; nearly every DAC has one."""
BLOCK_S = 0.1
"""Seconds of audio per stream write; ``cancel`` is checked between blocks."""
PREFETCH = 4
"""Chunks synthesized ahead of playback."""
_DTYPE = "int16"


def resample_pcm(pcm: bytes, src_rate: int, dst_rate: int, channels: int = 1) -> bytes:
    """int16 PCM from ``src_rate`` to ``dst_rate`` Hz (soxr), copied to ``channels``."""
    samples = np.frombuffer(pcm, dtype=np.int16)
    if src_rate != dst_rate and samples.size:
        samples = soxr.resample(samples, src_rate, dst_rate)
    if channels > 1:
        samples = np.repeat(samples, channels)  # interleaved: every sample on every channel
    return samples.astype(np.int16).tobytes()


@dataclass(frozen=True)
class OutputChoice:
    """How the output stream was opened: device, rate (Hz) and channels."""

    device: int | None
    name: str
    rate: int
    channels: int


class Player:
    """Plays :class:`~hub.tts.piper.AudioChunk` streams on one output device.

    Args:
        settings: ``output_device`` is a substring of the PortAudio device name ("" = default).
        sd: the ``sounddevice`` module, or a fake with ``query_devices``,
            ``check_output_settings``, ``RawOutputStream`` and ``PortAudioError``.
    """

    def __init__(self, settings: AudioSettings, sd):
        self.settings = settings
        self.sd = sd
        self._on_write: Callable[[bytes, int, int], None] | None = None

    def play(
        self,
        chunks: Iterable[AudioChunk],
        cancel: threading.Event | None = None,
        on_write: Callable[[bytes, int, int], None] | None = None,
    ) -> float:
        """Play ``chunks`` as they arrive; return the seconds of audio played.

        ``on_write(pcm, rate, channels)`` is called after each block was handed to the device
        (int16 interleaved bytes at the device's rate; the echo check of ``hub run`` uses it).

        The device is opened only once the first chunk exists, so no chunks means no device
        (BC-08). Stops between blocks of :data:`BLOCK_S` when ``cancel`` is set, and returns
        what was played until then. Errors raised by the chunk source propagate.

        Raises:
            DeviceUnavailableError: no device, or none of the rates tried could be opened, or
                the device failed while playing; one line naming the device and rates.
        """
        it = _prefetch(chunks)
        try:
            first = next(it, None)
            if first is None:
                return 0.0
            choice, stream = self._open(first.rate)
            self._on_write = on_write
            return self._play_all(stream, choice, _chained(first, it), cancel)
        finally:
            it.close()

    def _play_all(
        self, stream, choice: OutputChoice, chunks: Iterator[AudioChunk], cancel
    ) -> float:
        """Write every chunk to the open ``stream``, then close it; return seconds played."""
        frames = 0
        try:
            stream.start()
            for chunk in chunks:
                frames += self._write(stream, chunk, choice, cancel)
                if cancel is not None and cancel.is_set():
                    break
        except self.sd.PortAudioError as exc:
            raise DeviceUnavailableError(
                f"output device {choice.name!r} failed while playing: {exc}", node="tts"
            ) from None
        finally:
            _close(stream, aborted=cancel is not None and cancel.is_set())
        return frames / choice.rate

    def _write(self, stream, chunk: AudioChunk, choice: OutputChoice, cancel) -> int:
        """Write one chunk in blocks; return frames written (per channel)."""
        pcm = (
            resample_pcm(chunk.pcm, chunk.rate, choice.rate, choice.channels)
            if (chunk.rate != choice.rate or choice.channels != 1)
            else chunk.pcm
        )
        frame_bytes = 2 * choice.channels
        block = max(1, int(choice.rate * BLOCK_S)) * frame_bytes
        written = 0
        for start in range(0, len(pcm), block):
            if cancel is not None and cancel.is_set():
                break
            data = pcm[start : start + block]
            stream.write(data)
            written += len(data) // frame_bytes
            if self._on_write is not None:
                self._on_write(data, choice.rate, choice.channels)
        return written

    def _device(self) -> tuple[int | None, dict]:
        """The configured output device's index (None: the default) and its PortAudio info."""
        sd, want = self.sd, self.settings.output_device
        label = want or "default output"
        try:
            if not want:
                return None, dict(sd.query_devices(kind="output"))
            for i, info in enumerate(sd.query_devices()):
                if want.lower() in info["name"].lower() and info.get("max_output_channels", 0) > 0:
                    return info.get("index", i), dict(info)
        except sd.PortAudioError as exc:
            raise DeviceUnavailableError(
                f"no audio output device ({label}): {exc}", node="tts"
            ) from None
        raise DeviceUnavailableError(f"no audio output device named {want!r}", node="tts")

    def _open(self, rate: int):
        """Open a stream at ``rate``, else at the device's default rate, 48000 or 44100 Hz.

        Returns ``(OutputChoice, stream)``; logs the choice and any resampling.
        """
        device, info = self._device()
        name = info.get("name", self.settings.output_device or "default output")
        default = int(info.get("default_samplerate") or 0)
        rates = list(dict.fromkeys(r for r in (rate, default, *FALLBACK_RATES) if r > 0))
        channels = [1, 2] if info.get("max_output_channels", 1) >= 2 else [1]
        last = None
        for r in rates:
            for ch in channels:
                try:
                    self.sd.check_output_settings(
                        device=device, channels=ch, dtype=_DTYPE, samplerate=r
                    )
                    stream = self.sd.RawOutputStream(
                        samplerate=r, device=device, channels=ch, dtype=_DTYPE
                    )
                except (self.sd.PortAudioError, ValueError) as exc:
                    last = exc
                    continue
                _log_choice(name, rate, r, ch)
                return OutputChoice(device, name, r, ch), stream
        tried = ", ".join(str(r) for r in rates)
        raise DeviceUnavailableError(
            f"output device {name!r} refused {tried} Hz: {last}", node="tts"
        )


def _log_choice(name: str, rate: int, opened: int, channels: int) -> None:
    """Log the output settings chosen, and the resampling when the device refused ``rate``."""
    if opened == rate:
        log.info("playback: %s at the voice's %d Hz, %d ch", name, rate, channels)
    else:
        log.info(
            "playback: %s refused %d Hz; resampling %d -> %d Hz with soxr, %d ch",
            name,
            rate,
            rate,
            opened,
            channels,
        )


def _close(stream, aborted: bool) -> None:
    """Stop (drain) or abort the stream, then close it; errors while closing are logged only."""
    try:
        stream.abort() if aborted else stream.stop()
        stream.close()
    except Exception as exc:  # closing a failed device must not hide the first error
        log.warning("playback: closing the output stream failed: %s", exc)


def _chained(first, rest: Iterator) -> Iterator:
    """``first``, then everything in ``rest``."""
    yield first
    yield from rest


_DONE = object()
_PUT_WAIT_S = 0.05
"""How often a blocked prefetch thread checks whether the consumer stopped."""


def _prefetch(chunks: Iterable[AudioChunk]) -> Iterator[AudioChunk]:
    """Iterate ``chunks`` in a helper thread, up to :data:`PREFETCH` ahead of the consumer.

    Synthesis (onnxruntime releases the GIL) then overlaps playback, so sentences follow each
    other without gaps. An exception in the source is re-raised in the consumer; when the
    consumer stops early, the thread stops after the chunk in hand and closes the source.
    """
    q: queue.Queue = queue.Queue(maxsize=PREFETCH)
    stop = threading.Event()
    source = iter(chunks)

    def put(item) -> bool:
        while not stop.is_set():
            try:
                q.put(item, timeout=_PUT_WAIT_S)
                return True
            except queue.Full:
                continue
        return False

    def produce() -> None:
        try:
            for chunk in source:
                if not put(chunk):
                    break
            else:
                put(_DONE)
        except BaseException as exc:  # handed to the consumer, which re-raises it
            put(exc)
        finally:
            getattr(source, "close", lambda: None)()

    producer = threading.Thread(target=produce, name="tts-prefetch", daemon=True)
    producer.start()
    try:
        while (item := q.get()) is not _DONE:
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        stop.set()
        # The producer may be inside a synthesis: onnxruntime aborts the process (exit 134)
        # when the interpreter ends under it, so it is waited for (one chunk, bounded).
        producer.join(_JOIN_S)


_JOIN_S = 10.0
"""Longest wait for the prefetch thread's synthesis in progress when playback ends."""


def make_player(settings: AudioSettings, *, sd=None) -> Player:
    """Build the player; ``sd`` replaces the ``sounddevice`` module (tests pass a fake).

    Raises:
        DeviceUnavailableError: PortAudio itself cannot be loaded.
    """
    if sd is None:
        try:
            # lazy: PortAudio (sounddevice) loads only when a device is opened
            import sounddevice as sd
        except OSError as exc:  # libportaudio missing
            raise DeviceUnavailableError(f"PortAudio unavailable: {exc}", node="tts") from None
    return Player(settings, sd)
