"""A subscriber on the test broker (127.0.0.1:1883) that collects JSON messages."""

from __future__ import annotations

import json
import threading
import time
import uuid

BROKER = ("127.0.0.1", 1883)
WAIT_S = 30.0
"""Longest wait for a subscription or for expected messages (each wait ends as soon as they
are there: at load 11 on 2 cores a SUBACK has taken over a second)."""


class Subscriber:
    """Collects ``(topic, json payload)`` of messages on ``topic`` (non-JSON ones skipped).

    A context manager: subscribes on enter (waits for the SUBACK), disconnects on exit.
    Raises AssertionError on enter when no broker listens.
    """

    def __init__(self, topic: str):
        import paho.mqtt.client as mqtt

        self.topic, self.got = topic, []
        self._ready, self._lock = threading.Event(), threading.Lock()
        self._client = mqtt.Client(
            mqtt.CallbackAPIVersion.VERSION2, client_id=f"hub-test-{uuid.uuid4().hex[:8]}"
        )
        self._client.on_message = self._message
        self._client.on_subscribe = lambda *a: self._ready.set()

    def _message(self, client, userdata, msg) -> None:
        try:
            payload = json.loads(msg.payload)
        except ValueError:
            return
        with self._lock:
            self.got.append((msg.topic, payload))

    def __enter__(self) -> Subscriber:
        try:
            self._client.connect(*BROKER)
        except OSError as exc:
            raise AssertionError(
                f"no MQTT broker on 127.0.0.1:1883 ({exc}); scripts/test.sh starts one"
            ) from None
        self._client.subscribe(self.topic, qos=1)
        self._client.loop_start()
        assert self._ready.wait(WAIT_S), "no SUBACK from the broker"
        return self

    def __exit__(self, *exc) -> None:
        self._client.loop_stop()
        self._client.disconnect()

    def wait_for(self, n: int, timeout_s: float = WAIT_S) -> list:
        """The messages once ``n`` have arrived, or all that came within ``timeout_s`` (for
        "nothing more comes", give a short one)."""
        end = time.monotonic() + timeout_s
        while time.monotonic() < end:
            with self._lock:
                if len(self.got) >= n:
                    break
            time.sleep(0.02)
        with self._lock:
            return list(self.got)
