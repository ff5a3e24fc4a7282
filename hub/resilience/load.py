"""System load as seen by ``psutil``: CPU, temperature, throttling (design.md, "Dynamic timeouts").

:class:`LoadProbe` reads a :class:`LoadSample` at most once per ``cache_s`` (default 1 s), so it
is cheap to call before every node. :func:`load_factor` turns a sample into the factor by which
base timeouts stretch. Tests replace the probe by :class:`FixedProbe` (any object with a
``sample() -> LoadSample`` method works).
"""

from __future__ import annotations

import shutil
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from hub.resilience.cpu import ThrottleWatch

TEMPERATURE_SENSORS = ("cpu_thermal", "coretemp", "k10temp")
"""``psutil.sensors_temperatures()`` names tried in order: Raspberry Pi, Intel, AMD."""

THROTTLED_PATHS = (
    Path("/sys/devices/platform/soc/soc:firmware/get_throttled"),
    Path("/sys/devices/platform/scb/soc:firmware/get_throttled"),
)
"""Raspberry Pi firmware's throttling word (hex), written by the kernel's raspberrypi driver."""

THROTTLED_NOW_MASK = 0xF
"""Bits 0-3 of the Pi's throttling word: under-voltage, ARM frequency capped, throttled and
soft temperature limit, *now*; bits 16-19 only say they happened since boot
(raspberrypi.com/documentation, ``vcgencmd get_throttled``)."""

CPU_KNEE_PERCENT = 50.0
"""CPU use above which timeouts start to stretch."""
TEMP_KNEE_C = 70.0
"""Temperature above which timeouts start to stretch."""
TEMP_THROTTLE_C = 85.0
"""Temperature at which a Raspberry Pi throttles its clock: the temperature term reaches 2."""
THROTTLED_FACTOR = 1.5
"""Extra factor while the platform reports throttling."""


@dataclass(frozen=True)
class LoadSample:
    """One reading of the machine's load.

    Attributes:
        cpu_percent: system-wide CPU use since the previous reading, 0-100.
        temperature_c: CPU temperature in degrees Celsius, None where no sensor is readable.
        throttled: True while the platform throttles (Raspberry Pi only), else None.
    """

    cpu_percent: float
    temperature_c: float | None
    throttled: bool | None


class Probe(Protocol):
    """Anything that reads the load: :class:`LoadProbe`, :class:`FixedProbe`, a test fake."""

    def sample(self) -> LoadSample: ...


@dataclass
class FixedProbe:
    """A probe that always returns ``fixed`` (tests, benchmarks); assign ``fixed`` to change it."""

    fixed: LoadSample = LoadSample(0.0, None, None)

    def sample(self) -> LoadSample:
        """Return the fixed sample."""
        return self.fixed


def load_factor(sample: LoadSample, max_factor: float) -> float:
    """The factor by which base timeouts stretch under ``sample``'s load, in [1, max_factor].

    Formula (a product of three terms, each 1.0 on an idle, cool, unthrottled machine)::

        cpu  = 1 + max(0, cpu_percent - 50) / 50          # 1.0 up to 50 %, 2.0 at 100 %
        temp = 1 + max(0, temperature_c - 70) / 15        # 1.0 up to 70 °C, 2.0 at 85 °C
        thr  = 1.5 if throttled else 1.0
        factor = min(max_factor, cpu * temp * thr)

    Why: with the CPU fully used our work gets about half the cores' time, so it takes about
    twice as long; a Raspberry Pi starts capping its clock near 80 °C and throttles hard at
    85 °C (clock roughly halved), so heat is given the same weight as full CPU at 85 °C; when
    the firmware reports throttling (clock capped, under-voltage) the clock is already lowered.
    A missing temperature or throttling reading counts as cool and unthrottled.

    Raises:
        ValueError: ``max_factor`` < 1.
    """
    if max_factor < 1.0:
        raise ValueError(f"max_factor must be >= 1, got {max_factor!r}")
    cpu = 1.0 + max(0.0, sample.cpu_percent - CPU_KNEE_PERCENT) / (100.0 - CPU_KNEE_PERCENT)
    temp = 1.0
    if sample.temperature_c is not None:
        temp += max(0.0, sample.temperature_c - TEMP_KNEE_C) / (TEMP_THROTTLE_C - TEMP_KNEE_C)
    thr = THROTTLED_FACTOR if sample.throttled else 1.0
    return min(max_factor, cpu * temp * thr)


def pick_temperature(sensors: dict) -> float | None:
    """The CPU temperature (°C) from a ``psutil.sensors_temperatures()`` mapping, or None.

    The first of :data:`TEMPERATURE_SENSORS` present wins; of its readings (package and cores)
    the hottest is taken, since the hottest part is what throttles.
    """
    for name in TEMPERATURE_SENSORS:
        readings = [r.current for r in sensors.get(name, ()) if r.current is not None]
        if readings:
            return float(max(readings))
    return None


def parse_throttled_word(text: str) -> int | None:
    """The Pi's throttling word from ``"50005"`` or ``"throttled=0x50005"``; None when
    ``text`` is not a hexadecimal number."""
    value = text.strip().rpartition("=")[2].strip()
    try:
        return int(value, 16)
    except ValueError:
        return None


def parse_throttled(text: str) -> bool | None:
    """True/False from the Pi's throttling word (``"50005"`` or ``"throttled=0x50005"``).

    Returns None when ``text`` is not a hexadecimal number.
    """
    word = parse_throttled_word(text)
    return None if word is None else bool(word & THROTTLED_NOW_MASK)


def read_throttled_word(paths=THROTTLED_PATHS, vcgencmd: str | None = None) -> int | None:
    """The Pi's throttling word from sysfs or ``vcgencmd get_throttled``; None elsewhere."""
    for path in paths:
        try:
            return parse_throttled_word(Path(path).read_text())
        except OSError:
            continue
    if vcgencmd:
        try:
            out = subprocess.run(
                [vcgencmd, "get_throttled"],
                capture_output=True,
                text=True,
                timeout=1.0,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired):
            return None
        return parse_throttled_word(out.stdout) if out.returncode == 0 else None
    return None


def read_throttled(paths=THROTTLED_PATHS, vcgencmd: str | None = None) -> bool | None:
    """Whether a Raspberry Pi throttles now, from sysfs or ``vcgencmd``; None elsewhere."""
    word = read_throttled_word(paths, vcgencmd)
    return None if word is None else bool(word & THROTTLED_NOW_MASK)


def read_load(vcgencmd: str | None = None) -> LoadSample:
    """Read the load now: ``psutil.cpu_percent(interval=None)``, temperatures, throttling.

    ``cpu_percent`` covers the time since the previous call in this process (0.0 on the
    first call, which :class:`LoadProbe` makes at construction to prime it).
    """
    import psutil  # lazy: psutil (about 75 ms) is not for hub --help, which imports resilience/

    sensors = psutil.sensors_temperatures() if hasattr(psutil, "sensors_temperatures") else {}
    return LoadSample(
        cpu_percent=float(psutil.cpu_percent(interval=None)),
        temperature_c=pick_temperature(sensors or {}),
        throttled=read_throttled(vcgencmd=vcgencmd),
    )


class LoadProbe:
    """Reads the load at most once per ``cache_s`` seconds; thread-safe.

    Args:
        cache_s: how long a reading is reused, seconds.
        clock: monotonic clock (tests pass a fake one).
        reader: returns a fresh :class:`LoadSample`; default :func:`read_load` (psutil, sysfs,
            ``vcgencmd get_throttled`` if it is on ``PATH``).
        throttle: a :class:`hub.resilience.cpu.ThrottleWatch` polled with each fresh reading
            (logs throttling changes); default: one on the real word when ``reader`` is the
            default, else none.

    The probe reads once at construction to prime ``psutil.cpu_percent(interval=None)``; that
    first reading shows 0 % CPU and is served for the first ``cache_s``.
    """

    def __init__(
        self,
        cache_s: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
        reader: Callable[[], LoadSample] | None = None,
        throttle=None,
    ):
        if reader is None:
            vcgencmd = shutil.which("vcgencmd")
            reader = lambda: read_load(vcgencmd)  # noqa: E731
            if throttle is None:
                throttle = ThrottleWatch(lambda: read_throttled_word(vcgencmd=vcgencmd), clock)
        self._throttle = throttle
        self._reader = reader
        self._cache_s = cache_s
        self._clock = clock
        self._lock = threading.Lock()
        self._last = reader()  # also primes psutil.cpu_percent(interval=None)
        self._read_at = clock()

    def sample(self) -> LoadSample:
        """The latest reading, refreshed when older than ``cache_s``."""
        with self._lock:
            now = self._clock()
            if now - self._read_at >= self._cache_s:
                self._last = self._reader()
                self._read_at = now
                if self._throttle is not None:  # each change of throttling logged once
                    self._throttle.poll()
            return self._last
