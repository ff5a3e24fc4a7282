"""A throw-away Mosquitto (Debian's ``mosquitto``) on its own 127.0.0.1 port for tests and
``hub bench --suite mqtt``: kill, freeze (SIGSTOP), restart it and read its log.

``log_type all`` goes to a file (flushed per line), ``user root`` keeps it from dropping
privileges (so files in a private temporary folder stay readable); ``persistence`` is off
unless asked for, so a restart loses retained messages and sessions, as the cases want.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from pathlib import Path

WAIT_S = 5.0
"""Longest wait for the broker to start or stop."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Broker:
    """``mosquitto -c conf -v`` on a free port; ``log`` is everything it printed."""

    def __init__(
        self, folder: Path, extra: str = "allow_anonymous true\n", persistence: bool = False
    ) -> None:
        self.port = free_port()
        self.folder = folder
        self.conf = folder / "mosquitto.conf"
        self.logfile = folder / "mosquitto.log"
        # user root: no privilege drop, so the log and a password file in a 0700 pytest folder
        # stay readable; log_dest file is flushed per line (stdout is block-buffered)
        keep = (
            f"persistence true\npersistence_location {folder}/\n"
            if persistence
            else "persistence false\n"
        )
        self.conf.write_text(
            f"listener {self.port} 127.0.0.1\n{keep}user root\n"
            f"log_type all\nlog_dest file {self.logfile}\n{extra}"
        )
        self.proc: subprocess.Popen | None = None
        self.start()

    def start(self) -> None:
        self.proc = subprocess.Popen(
            ["mosquitto", "-c", str(self.conf), "-v"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        end = time.monotonic() + WAIT_S
        while time.monotonic() < end:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError(f"mosquitto did not start on {self.port}: {self.log()[-500:]}")

    def kill(self) -> None:
        """SIGKILL: connections drop at once, retained messages are gone."""
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
            self.proc = None

    def stop(self) -> None:
        """SIGTERM: a clean stop (with ``persistence`` the broker saves its sessions)."""
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(WAIT_S)
            self.proc = None

    def restart(self, after_s: float = 0.0) -> None:
        self.kill()
        time.sleep(after_s)
        self.start()

    def freeze(self) -> None:
        os.kill(self.proc.pid, signal.SIGSTOP)

    def thaw(self) -> None:
        os.kill(self.proc.pid, signal.SIGCONT)

    def log(self) -> str:
        try:
            return self.logfile.read_text(errors="replace")
        except FileNotFoundError:
            return ""

    def close(self) -> None:
        if self.proc is not None:
            self.thaw()
            self.kill()
