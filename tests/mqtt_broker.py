"""A throw-away Mosquitto for one test module: its own 127.0.0.1 port, ``persistence false``,
``log_type all``, so tests can kill, freeze (SIGSTOP) and restart it and read its log."""

from __future__ import annotations

import json
import os
import queue
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path

WAIT_S = 5.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Broker:
    """``mosquitto -c conf -v`` on a free port; ``log`` is everything it printed."""

    def __init__(self, folder: Path, extra: str = "allow_anonymous true\n") -> None:
        self.port = free_port()
        self.folder = folder
        self.conf = folder / "mosquitto.conf"
        self.logfile = folder / "mosquitto.log"
        # user root: no privilege drop, so the log and a password file in a 0700 pytest folder
        # stay readable; log_dest file is flushed per line (stdout is block-buffered)
        self.conf.write_text(f"listener {self.port} 127.0.0.1\npersistence false\nuser root\n"
                             f"log_type all\nlog_dest file {self.logfile}\n{extra}")
        self.proc: subprocess.Popen | None = None
        self.start()

    def start(self) -> None:
        self.proc = subprocess.Popen(["mosquitto", "-c", str(self.conf), "-v"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        end = time.monotonic() + WAIT_S
        while time.monotonic() < end:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                time.sleep(0.05)
        raise AssertionError(f"mosquitto did not start on {self.port}: {self.log()[-500:]}")

    def kill(self) -> None:
        """SIGKILL: connections drop at once, retained messages are gone."""
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
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


class Recorder:
    """A paho client (its own loop thread) collecting messages on ``topics``."""

    def __init__(self, port: int, *topics: str) -> None:
        from paho.mqtt.client import CallbackAPIVersion, Client, MQTTv5

        self.messages: queue.Queue = queue.Queue()
        self.all: list = []
        self._ready = threading.Event()
        self.client = Client(CallbackAPIVersion.VERSION2, protocol=MQTTv5)
        self.client.on_message = self._got
        self.client.on_subscribe = lambda *a: self._ready.set()
        self.client.on_connect = lambda c, *a: c.subscribe([(t, 1) for t in topics])
        self.client.connect("127.0.0.1", port)
        self.client.loop_start()
        assert self._ready.wait(WAIT_S), "recorder got no SUBACK"

    def _got(self, _c, _u, message) -> None:
        item = (time.monotonic(), message.topic, bytes(message.payload), message.retain)
        self.all.append(item)
        self.messages.put(item)

    def keys(self, topic_part: str = "/set") -> list[str]:
        """Idempotency keys of the command messages received so far, in order."""
        return [json.loads(p)["idempotency_key"] for _, t, p, _ in list(self.all)
                if t.endswith(topic_part) and p]

    def wait_for(self, pred, timeout_s: float = WAIT_S) -> bool:
        end = time.monotonic() + timeout_s
        while time.monotonic() < end:
            if pred():
                return True
            time.sleep(0.02)
        return pred()

    def send(self, topic: str, payload: bytes | str, retain: bool = False) -> None:
        self.client.publish(topic, payload, qos=1, retain=retain).wait_for_publish(WAIT_S)

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()
