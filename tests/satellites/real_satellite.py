"""Real ``wyoming-satellite`` 1.0.0 processes (``scripts/wyoming-satellite.sh``) for the live
tests and ``scripts/bench_satellites.py``.

Each satellite runs with ``--mic-command`` playing an utterance at real speed when its trigger
file changes (:mod:`paced_mic`), ``--snd-command`` appending what it is sent to a file
(:mod:`snd_append`), and ``--wake-uri`` a wake service that fires on the mic's tone
(:mod:`onset_wake`: it streams after a detection, ``run-pipeline`` from the ``asr`` stage).
With ``speech_end`` (bytes into the utterance), the mic appends the monotonic time of each
utterance's end of speech to ``mic{i}.marks``, the speaker is ``sh -c 'exec cat >> FILE'`` (as
quick to start as ``aplay``: the satellite starts it for each answer) and a thread notes when
each answer's first bytes reach the file (:meth:`RealSatellite.marks`).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).parent
VENV = Path(os.environ.get("HUB_WYOMING_SATELLITE", "/tmp/hub-wyoming-satellite"))
AREAS = ("Kitchen", "Office", "Bedroom")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait(predicate, timeout: float = 60.0, what: str = "") -> None:
    end = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > end:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


class RealSatellite:
    """One ``wyoming-satellite`` process with its mic, speaker and wake service."""

    def __init__(self, tmp: Path, i: int, utterance: Path, speech_end: int = 0):
        self.tmp, self.i, self.utterance, self.speech_end = tmp, i, utterance, speech_end
        self.mic_marks = tmp / f"mic{i}.marks"
        self._snd_times: list[float] = []
        self._watching = False
        self.port, self.wake_port = free_port(), free_port()
        self.trigger, self.snd = tmp / f"trigger{i}", tmp / f"snd{i}.raw"
        self.snd.write_bytes(b"")
        py = str(VENV / "bin" / "python")
        self.wake = subprocess.Popen(
            [py, str(HERE / "onset_wake.py"), f"tcp://127.0.0.1:{self.wake_port}"]
        )
        self.proc = None
        self.start()

    def start(self) -> None:
        py = str(VENV / "bin" / "python")
        mic = f"{sys.executable} {HERE / 'paced_mic.py'} {self.utterance} 22050 {self.trigger}"
        snd = f"{sys.executable} {HERE / 'snd_append.py'} {self.snd}"
        if self.speech_end:
            mic += f" {self.mic_marks} {self.speech_end}"
            snd = f"sh -c 'exec cat >> {self.snd}'"  # as quick to start as aplay
            if not self._watching:
                self._watching = True
                threading.Thread(target=self._watch, daemon=True).start()
        log = open(self.tmp / f"sat{self.i}.log", "ab")  # noqa: SIM115 - the satellite's stderr
        self.proc = subprocess.Popen(
            [
                py,
                "-m",
                "wyoming_satellite",
                "--uri",
                f"tcp://127.0.0.1:{self.port}",
                "--name",
                f"sat{self.i}",
                "--area",
                AREAS[self.i],
                "--no-zeroconf",
                "--mic-command",
                mic,
                "--mic-command-rate",
                "22050",
                "--snd-command",
                snd,
                "--snd-command-rate",
                "22050",
                "--wake-uri",
                f"tcp://127.0.0.1:{self.wake_port}",
                "--wake-word-name",
                "onset",
            ],
            stderr=log,
        )

    def marks(self, which: str) -> list[float]:
        """The monotonic times in ``mic`` or ``snd`` marks (see the module doc)."""
        if which == "snd":
            return list(self._snd_times)
        path = self.mic_marks
        try:
            return [float(x) for x in path.read_text().split()]
        except FileNotFoundError:
            return []

    def _watch(self) -> None:
        """The speaker's marks: the file's growth, polled every 5 ms."""
        size, last = 0, 0.0
        while self._watching:
            now, grown = time.monotonic(), self.snd.stat().st_size
            if grown > size:
                if now - last > 0.5:
                    self._snd_times.append(now)
                size, last = grown, now
            time.sleep(0.005)

    def fire(self) -> None:
        self.trigger.write_text(str(time.monotonic_ns()))

    def stop(self) -> None:
        self._watching = False
        for p in (self.proc, self.wake):
            if p is not None and p.poll() is None:
                p.kill()
                p.wait(10)
