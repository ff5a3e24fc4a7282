"""A real PulseAudio server of its own, a microphone fed in real time, the speaker recorded,
and ``hub run`` as a child process: the pieces of the daemon tests and benchmarks.

The server is started by ``scripts/start-test-audio.sh`` in a folder of its own, so killing
it (the device-loss test) touches nobody else's. The microphone is its ``module-pipe-source``
FIFO, which blocks readers when nobody writes: :class:`Feeder` writes 20 ms blocks paced by
the wall clock (silence, or audio queued with :meth:`Feeder.say`), optionally mixed with the
speaker's monitor (the echo path of cases.md: gain 0.5, 60 ms delay).
"""

from __future__ import annotations

import os
import queue
import shlex
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[1]
RATE = 16000
BLOCK = 320
"""Samples per FIFO write (20 ms)."""


def start_server(folder: Path) -> dict:
    """Start a PulseAudio server whose files live in ``folder``; returns its environment."""
    env = {**os.environ, "HUB_TEST_AUDIO_DIR": str(folder)}
    for key in ("PULSE_SERVER", "XDG_RUNTIME_DIR"):
        env.pop(key, None)
    done = subprocess.run(
        ["bash", str(REPO / "scripts" / "start-test-audio.sh")],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return dict(
        shlex.split(line.removeprefix("export "))[0].split("=", 1)
        for line in done.stdout.splitlines()
        if line.startswith("export ")
    )


def stop_server(env: dict) -> None:
    """Kill the server started by :func:`start_server` (``pulseaudio -k``)."""
    subprocess.run(
        ["pulseaudio", "-k"],
        env={**os.environ, **env},
        check=False,
        capture_output=True,
        timeout=10,
    )


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """A PulseAudio server of the test module's own (:func:`start_server`), its env and
    ``folder``; stopped when the module's tests end."""
    folder = tmp_path_factory.mktemp("pulse")
    env = start_server(folder)
    yield {**env, "folder": folder}
    stop_server(env)


class Recorder:
    """Records the speaker's monitor (16 kHz mono int16) with the arrival time of each read."""

    def __init__(self, env: dict):
        self.proc = subprocess.Popen(
            [
                "parec",
                "--device=hub_speaker.monitor",
                "--raw",
                "--rate=16000",
                "--channels=1",
                "--format=s16le",
                "--latency-msec=20",
            ],
            env={**os.environ, **env},
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self.chunks: list[tuple[float, np.ndarray]] = []
        self.live: queue.Queue = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        while True:
            data = self.proc.stdout.read(BLOCK * 2)
            if not data:
                return
            block = np.frombuffer(data, dtype="<i2").astype(np.int16)
            self.chunks.append((time.monotonic(), block))
            self.live.put(block)

    def loud_times(self, since: float, threshold: float = 300.0) -> list[float]:
        """Arrival times (monotonic) of the recorded blocks louder than ``threshold`` RMS."""
        out = []
        for t, block in list(self.chunks):
            if t >= since and block.size and np.sqrt(np.mean(block.astype(float) ** 2)) > threshold:
                out.append(t)
        return out

    def close(self) -> None:
        self.proc.terminate()
        self.proc.wait(5)


class Feeder:
    """Writes the FIFO microphone in real time: queued audio, else silence (or the echo)."""

    def __init__(
        self, fifo: str, echo: Recorder | None = None, gain: float = 0.5, delay_s: float = 0.06
    ):
        self._fifo, self._echo, self._gain = fifo, echo, gain
        self._queue: queue.Queue = queue.Queue()
        self._stop = threading.Event()
        self._delay = np.zeros(round(delay_s * RATE), np.int16)
        self.broken = False
        """True once the FIFO's reader went away."""
        self.said_at: list[tuple[float, float]] = []
        """(start, end) monotonic times of each piece of audio queued with :meth:`say`."""
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def say(self, samples: np.ndarray) -> None:
        """Queue ``samples`` (int16 16 kHz mono) to be "spoken" into the microphone."""
        self._queue.put(np.asarray(samples, np.int16))

    def _next_speech(self):
        try:
            return self._queue.get_nowait()
        except queue.Empty:
            return None

    def _echo_block(self) -> np.ndarray:
        if self._echo is None:
            return np.zeros(BLOCK, np.int16)
        pending = self._delay
        while len(pending) < BLOCK:
            try:
                pending = np.concatenate([pending, self._echo.live.get(timeout=0.1)])
            except queue.Empty:
                pending = np.concatenate([pending, np.zeros(BLOCK, np.int16)])
        self._delay = pending[BLOCK:]
        return (pending[:BLOCK] * self._gain).astype(np.int16)

    def _run(self) -> None:
        try:
            self._write()
        except (BrokenPipeError, OSError):  # the server went away (device-loss tests)
            self.broken = True

    def _write(self) -> None:
        with open(self._fifo, "wb", buffering=0) as fifo:
            speech, pos, start = None, 0, time.monotonic()
            written = 0
            while not self._stop.is_set():
                if speech is None:
                    speech, pos = self._next_speech(), 0
                    if speech is not None:
                        now = time.monotonic()
                        self.said_at.append((now, now + len(speech) / RATE))
                block = self._echo_block().astype(np.int32)
                if speech is not None:
                    piece = speech[pos : pos + BLOCK]
                    block[: len(piece)] += piece
                    pos += BLOCK
                    if pos >= len(speech):
                        speech = None
                fifo.write(np.clip(block, -32768, 32767).astype("<i2").tobytes())
                written += BLOCK
                if self._echo is None:  # pace by the clock (the echo path paces by parec)
                    delay = start + written / RATE - time.monotonic()
                    if delay > 0:
                        time.sleep(delay)

    def close(self) -> None:
        self._stop.set()
        self._thread.join(2)


def write_config(path: Path, extra: str = "", home: str | None = None) -> Path:
    """A config: the shipped sample home (or ``home``), devices on the test server, ``extra``."""
    base = home if home is not None else (REPO / "hub" / "data" / "home-en.toml").read_text()
    path.write_text(base + '\n[audio]\ninput_device = "pulse"\noutput_device = "pulse"\n' + extra)
    return path


class Daemon:
    """``hub run`` (or ``command``: ``serve``) as a child process with the test server's
    environment."""

    def __init__(
        self, config: Path, env: dict, store: Path, *args: str, extra_env=None, command="run"
    ):
        penv = {**os.environ, **env, "PYTHONPATH": str(REPO), **(extra_env or {})}
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "hub",
                command,
                "--config",
                str(config),
                "--store",
                str(store),
                "-v",
                *args,
            ],
            env=penv,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=str(REPO),
        )
        self.lines: queue.Queue = queue.Queue()
        self.stderr: list[str] = []
        threading.Thread(
            target=self._pump, args=(self.proc.stdout, self.lines.put), daemon=True
        ).start()
        threading.Thread(
            target=self._pump, args=(self.proc.stderr, self.stderr.append), daemon=True
        ).start()

    @staticmethod
    def _pump(stream, put) -> None:
        for line in stream:
            put(line.rstrip("\n"))

    def wait_log(self, text: str, timeout_s: float) -> bool:
        """Wait until a stderr line contains ``text``."""
        end = time.monotonic() + timeout_s
        while time.monotonic() < end:
            if any(text in line for line in list(self.stderr)):
                return True
            if self.proc.poll() is not None:
                time.sleep(0.2)
                return any(text in line for line in list(self.stderr))
            time.sleep(0.05)
        return False

    def trace(self, timeout_s: float) -> dict | None:
        """The next trace line from stdout, or None."""
        import json

        try:
            return json.loads(self.lines.get(timeout=timeout_s))
        except queue.Empty:
            return None

    def turn(self, timeout_s: float) -> dict | None:
        """The next turn's trace line (event lines, e.g. ``capture_dropped``, skipped), or
        None."""
        end = time.monotonic() + timeout_s
        while (left := end - time.monotonic()) > 0:
            trace = self.trace(left)
            if trace is None or "event" not in trace:
                return trace
        return None

    def stop(self, signum=signal.SIGTERM, timeout_s: float = 20.0) -> int:
        """Send ``signum`` and wait; the exit code (negative: killed by a signal)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signum)
        try:
            return self.proc.wait(timeout_s)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)
            return -9
