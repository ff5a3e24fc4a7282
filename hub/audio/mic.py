"""Microphone capture through PortAudio (python-sounddevice), always 16 kHz mono int16 out.

The device is opened at whatever it accepts (BC-19: USB mics that refuse 16 kHz, ``hw:``
devices with no ALSA plug layer, 2-channel-only capture), then downmixed and resampled with
soxr. A missing device is waited for with back-off, re-initialising PortAudio so hot-plugged
devices are seen (BC-20a; PortAudio never refreshes its list by itself, python-sounddevice
#493). A read error mid-stream closes the stream and reopens the device by *name*, because
indices change across re-plugs and sessions (BC-20b; python-sounddevice #570, #627).

The reads are blocking: a read that hangs (an unplugged device that never errors) stops the
systemd watchdog pings sent by :func:`hub.service.listen.listen`, and systemd restarts the service.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np
import soxr

from hub.audio.format import RATE
from hub.errors import DeviceUnavailableError
from hub.resilience.backoff import backoff_delay
from hub.settings import AudioSettings

log = logging.getLogger(__name__)

BLOCK_S = 0.05
"""Length of one read from the device, seconds (50 ms: cheap when idle, quick to react)."""
STOP_SLICE_S = 0.1
"""Longest wait for a block before a stop is looked at again (:meth:`Mic.blocks`)."""
FALLBACK_RATES = (48000, 44100)
"""Rates tried after 16 kHz and the device's default rate."""
BACKOFF_FIRST_S = 0.5
"""First pause while waiting for a missing device; doubles up to :data:`BACKOFF_MAX_S`."""
BACKOFF_MAX_S = 5.0
"""Longest pause between two attempts to find or open the device."""


@dataclass(frozen=True)
class MicConfig:
    """What actually opened: PortAudio device name, native rate (Hz), native channels."""

    device: str
    rate: int
    channels: int


class _Converter:
    """Downmix (channel mean) and resample (soxr, streaming HQ) int16 frames to 16 kHz mono.

    A channel that is silent (speech on the left channel only) costs 6 dB, not the speech.
    """

    def __init__(self, rate: int, channels: int):
        self.passthrough = rate == RATE and channels == 1
        self.stream = (
            None
            if rate == RATE
            else soxr.ResampleStream(rate, RATE, 1, dtype="float32", quality="HQ")
        )

    def __call__(self, frames: np.ndarray) -> np.ndarray:
        """``frames``: int16 (n, channels) -> int16 (m,) at 16 kHz."""
        if self.passthrough:
            return np.ascontiguousarray(frames[:, 0], dtype=np.int16)
        mono = frames.mean(axis=1, dtype=np.float32) / 32768.0
        if self.stream is not None:
            mono = self.stream.resample_chunk(mono)
        return np.clip(np.rint(mono * 32768.0), -32768, 32767).astype(np.int16)


def label(name: str) -> str:
    """The device as named in messages: the configured name, or ``default``."""
    return repr(name) if name else "default"


def find_device(sd, name: str) -> dict | None:
    """The input device whose name contains ``name`` (case-insensitive; exact match first),
    or PortAudio's default input when ``name`` is empty; None when there is none now."""
    try:
        if not name:
            info = dict(sd.query_devices(kind="input"))
            return info if info.get("max_input_channels", 0) > 0 else None
        devices = [dict(d) for d in sd.query_devices()]
    except sd.PortAudioError as exc:
        log.debug("querying audio devices failed: %s", exc)
        return None
    inputs = [d for d in devices if d.get("max_input_channels", 0) > 0]
    exact = [d for d in inputs if d["name"].lower() == name.lower()]
    partial = [d for d in inputs if name.lower() in d["name"].lower()]
    found = exact or partial
    return found[0] if found else None


def candidates(info: dict) -> list[tuple[int, int]]:
    """(rate, channels) to try, in order: 16000/1, the device's default rate with its max
    input channels, then the remaining combinations of 16000, default, 48000, 44100 × 1, max."""
    default_rate = int(info.get("default_samplerate") or RATE)
    max_ch = max(1, int(info.get("max_input_channels") or 1))
    rates = list(dict.fromkeys([RATE, default_rate, *FALLBACK_RATES]))
    order = [(RATE, 1), (default_rate, max_ch)]
    order += [(r, c) for r in rates for c in (1, max_ch)]
    return list(dict.fromkeys(order))


def _try_open(sd, info: dict) -> tuple[object | None, MicConfig | None, list[str]]:
    """Open and start an int16 input stream on the first candidate the device accepts.

    Returns ``(stream, config, errors)``; stream and config are None when nothing opened.
    """
    errors = []
    for rate, channels in candidates(info):
        stream = None
        try:
            stream = sd.InputStream(
                device=info["index"],
                samplerate=rate,
                channels=channels,
                dtype="int16",
                blocksize=int(rate * BLOCK_S),
            )
            stream.start()
            return stream, MicConfig(info["name"], rate, channels), errors
        except sd.PortAudioError as exc:
            errors.append(f"{rate} Hz/{channels} ch: {exc}")
            log.debug("cannot open %r at %d Hz, %d ch: %s", info["name"], rate, channels, exc)
            _close_quietly(sd, stream)
    return None, None, errors


def _close_quietly(sd, stream) -> None:
    """Stop and close ``stream`` (None is fine), ignoring PortAudio errors of a dead device."""
    if stream is None:
        return
    with contextlib.suppress(sd.PortAudioError):
        stream.stop()
    with contextlib.suppress(sd.PortAudioError):
        stream.close()


def _reinitialise(sd) -> None:
    """Re-initialise PortAudio so that its device list is read again (hot-plug)."""
    try:
        sd._terminate()
        sd._initialize()
    except sd.PortAudioError as exc:
        log.debug("re-initialising PortAudio failed: %s", exc)


def _unavailable(name: str, tried: list[int], errors: list[str], waited: float):
    """The DeviceUnavailableError for a device that never opened (one line)."""
    if not tried:  # never found: no rate was tried, so none is named
        return DeviceUnavailableError(
            f"no audio input device {label(name)} (not found after "
            f"{waited:g} s; `hub doctor` lists the devices)",
            node="mic",
        )
    rates = ", ".join(str(r) for r in dict.fromkeys(tried))
    why = f"last error: {errors[-1]}" if errors else f"not found after {waited:g} s"
    return DeviceUnavailableError(
        f"no audio input device {label(name)}: tried {rates} Hz ({why})", node="mic"
    )


def _open_waiting(sd, name: str, wait_s: float, sleep: Callable[[float], None]):
    """Find and open the device named ``name``, waiting up to ``wait_s`` seconds.

    Back-off: 0.5, 1, 2, 4, 5, 5 … s of ``sleep`` between attempts, PortAudio re-initialised
    before each retry. Returns ``(stream, MicConfig)``.

    Raises:
        DeviceUnavailableError: nothing opened within ``wait_s`` (``hub run`` exits with 4).
    """
    waited, attempt = 0.0, 0
    tried: list[int] = []
    errors: list[str] = []
    while True:
        info = find_device(sd, name)
        if info is not None:
            stream, config, errs = _try_open(sd, info)
            if stream is not None:
                return stream, config
            errors += errs
            tried += [rate for rate, _ in candidates(info)]
        if waited >= wait_s:
            raise _unavailable(name, tried, errors, waited)
        if waited == 0:
            log.warning("waiting for audio device %s (up to %g s)", label(name), wait_s)
        step = min(backoff_delay(attempt, BACKOFF_MAX_S, base_s=BACKOFF_FIRST_S), wait_s - waited)
        sleep(step)
        waited += step
        attempt += 1
        _reinitialise(sd)


class Mic:
    """An open microphone; a context manager. Use :func:`open_mic` to make one.

    Attributes:
        config: the :class:`MicConfig` that is open now (changes after a reopen).
        overflows: input overflows seen so far (counted and logged, never fatal).
    """

    def __init__(
        self,
        sd,
        name: str,
        stream,
        config: MicConfig,
        wait_s: float,
        sleep: Callable[[float], None],
    ):
        self._sd, self._name, self._stream = sd, name, stream
        self._wait_s, self._sleep = wait_s, sleep
        self.overflows = 0
        self._failures, self._failing_s = 0, 0.0
        self._use(config)

    def _use(self, config: MicConfig) -> None:
        self.config = config
        self._frames = int(config.rate * BLOCK_S)
        self._convert = _Converter(config.rate, config.channels)
        converted = "" if self._convert.passthrough else f", downmixed/resampled to {RATE} Hz mono"
        log.info(
            "microphone %r open at %d Hz, %d ch%s",
            config.device,
            config.rate,
            config.channels,
            converted,
        )

    def blocks(self, stop: threading.Event | None = None) -> Iterator[np.ndarray]:
        """Yield int16 16 kHz mono blocks (about 50 ms each) until :meth:`close`, or until
        ``stop`` is set.

        With ``stop``, a block is read only once the device holds it all (PortAudio's
        ``read_available``), so a source that delivers nothing (a suspended or silent
        server, a stalled USB device) never blocks a stop: the wait is in slices of at most
        :data:`STOP_SLICE_S` (no block arrives meanwhile, so the watchdog still sees a hang).
        A read error closes the stream and reopens the device by name once it is back.

        Raises:
            DeviceUnavailableError: the device did not come back within ``device_wait_s``.
        """
        while self._stream is not None:
            if stop is not None and not self._wait_for_block(stop):
                return
            try:
                frames, overflowed = self._stream.read(self._frames)
            except self._sd.PortAudioError as exc:
                self._reopen(exc)
                continue
            self._failures, self._failing_s = 0, 0.0
            if overflowed:
                self.overflows += 1
                log.warning("input overflow on %r (%d so far)", self.config.device, self.overflows)
            block = self._convert(np.asarray(frames).reshape(-1, self.config.channels))
            if block.size:
                yield block

    def _wait_for_block(self, stop: threading.Event) -> bool:
        """Wait until a whole block can be read; False when ``stop`` was set first."""
        while not stop.is_set():
            try:
                missing = self._frames - self._stream.read_available
            except self._sd.PortAudioError:
                return True  # the read says what failed (and reopens the device)
            if missing <= 0:
                return True
            stop.wait(min(STOP_SLICE_S, missing / self.config.rate))
        return False

    def _reopen(self, exc: Exception) -> None:
        """Reopen after a read error, backing off while reads keep failing (no tight loop).

        Raises:
            DeviceUnavailableError: reads kept failing for ``device_wait_s``.
        """
        log.warning("audio read failed on %r: %s; reopening it", self.config.device, exc)
        _close_quietly(self._sd, self._stream)
        self._stream = None
        if self._failures:
            if self._failing_s >= self._wait_s:
                raise DeviceUnavailableError(
                    f"audio input {self.config.device!r} keeps failing: {exc} "
                    f"(for {self._failing_s:g} s)",
                    node="mic",
                )
            pause = backoff_delay(self._failures - 1, BACKOFF_MAX_S, base_s=BACKOFF_FIRST_S)
            self._sleep(pause)
            self._failing_s += pause
        self._failures += 1
        _reinitialise(self._sd)
        stream, config = _open_waiting(self._sd, self._name, self._wait_s, self._sleep)
        self._stream = stream
        self._use(config)

    def close(self) -> None:
        """Stop and close the stream; :meth:`blocks` then ends."""
        stream, self._stream = self._stream, None
        _close_quietly(self._sd, stream)

    def __enter__(self) -> Mic:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()


def import_sounddevice():
    """Import python-sounddevice (lazily: it loads the PortAudio library)."""
    try:
        # lazy: PortAudio (sounddevice) loads only when a device is opened
        import sounddevice
    except OSError as exc:  # libportaudio2 missing
        raise DeviceUnavailableError(f"PortAudio is not available: {exc}", node="mic") from None
    return sounddevice


def open_mic(
    settings: AudioSettings,
    *,
    sd=None,
    wait_s: float | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> Mic:
    """Open the input device ``settings.input_device`` (a name substring; empty: default).

    Args:
        settings: the ``[audio]`` settings.
        sd: the sounddevice module, or a fake with the same calls (tests).
        wait_s: how long to wait for a missing device; default ``settings.device_wait_s``.
        sleep: the pause function (tests pass one that records).

    Returns:
        An open :class:`Mic` yielding 16 kHz mono int16 blocks.

    Raises:
        DeviceUnavailableError: no device, or no rate/channel count it accepts, within
            ``wait_s``; the message names the device and the rates tried.
    """
    sd = sd if sd is not None else import_sounddevice()
    wait = settings.device_wait_s if wait_s is None else wait_s
    stream, config = _open_waiting(sd, settings.input_device, wait, sleep)
    return Mic(sd, settings.input_device, stream, config, wait, sleep)
