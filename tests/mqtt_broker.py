"""Test helpers for MQTT: the throw-away broker (:mod:`hub.bench.broker`) and a recorder."""

from __future__ import annotations

import json
import queue
import threading
import time
import uuid

import pytest

from hub.bench.broker import Broker, free_port  # noqa: F401 - used by the tests

WAIT_S = 30.0
"""Longest wait for something that must come (a SUBACK, a message, a connect): each wait ends
as soon as it is there, so only a loaded machine (load 11 on 2 cores) ever uses it up."""


def until(pred, timeout_s: float = WAIT_S) -> bool:
    """Poll ``pred`` every 20 ms until it is true or ``timeout_s`` passed; its last value."""
    end = time.monotonic() + timeout_s
    while time.monotonic() < end and not pred():
        time.sleep(0.02)
    return bool(pred())


MARKER_PREFIX = "hub-test/settle/"
"""Topics of :meth:`Recorder.settle`'s markers (no recorder keeps them)."""


class Recorder:
    """A paho client (its own loop thread) collecting messages on ``topics``.

    ``client_id`` with ``persistent``: a session the broker keeps for 10 minutes after a
    disconnect (with its persistence, across a clean restart too), so messages published while
    the recorder is away, or before it connected again, are delivered when it comes back.
    """

    def __init__(
        self, port: int, *topics: str, client_id: str = "", persistent: bool = False
    ) -> None:
        from paho.mqtt.client import CallbackAPIVersion, Client, MQTTv5
        from paho.mqtt.packettypes import PacketTypes
        from paho.mqtt.properties import Properties

        self.messages: queue.Queue = queue.Queue()
        self.all: list = []
        self._ready = threading.Event()
        self._marker = f"{MARKER_PREFIX}{uuid.uuid4().hex}"
        self._marked = threading.Event()
        self.client = Client(CallbackAPIVersion.VERSION2, client_id=client_id, protocol=MQTTv5)
        self.client.on_message = self._got
        self.client.on_subscribe = lambda *a: self._ready.set()
        self.client.on_connect = lambda c, *a: c.subscribe(
            [(t, 1) for t in (*topics, self._marker)]
        )
        props = None
        if persistent:
            props = Properties(PacketTypes.CONNECT)
            props.SessionExpiryInterval = 600
        self.client.connect("127.0.0.1", port, clean_start=not persistent, properties=props)
        self.client.loop_start()
        assert self._ready.wait(WAIT_S), "recorder got no SUBACK"

    def _got(self, _c, _u, message) -> None:
        if message.topic.startswith(MARKER_PREFIX):  # a recorder's settle(): never recorded
            if message.topic == self._marker:
                self._marked.set()
            return
        item = (time.monotonic(), message.topic, bytes(message.payload), message.retain)
        self.all.append(item)
        self.messages.put(item)

    def keys(self, topic_part: str = "/set") -> list[str]:
        """Idempotency keys of the command messages received so far, in order."""
        return [
            json.loads(p)["idempotency_key"]
            for _, t, p, _ in list(self.all)
            if t.endswith(topic_part) and p
        ]

    def wait_for(self, pred, timeout_s: float = WAIT_S) -> bool:
        return until(pred, timeout_s)

    def settle(self) -> None:
        """Wait until every message the broker had for this recorder has arrived: the retained
        ones of its subscriptions, and whatever other clients published before this call. A
        marker it publishes to its own topic comes after them (Mosquitto delivers a client's
        messages in the order it queued them), however slow the machine; no fixed sleep."""
        self._marked.clear()
        self.send(self._marker, b"")
        assert self._marked.wait(WAIT_S), "the recorder's marker never came back"

    def send(self, topic: str, payload: bytes | str, retain: bool = False) -> None:
        self.client.publish(topic, payload, qos=1, retain=retain).wait_for_publish(WAIT_S)

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    """A throw-away Mosquitto on 127.0.0.1 for one test module."""
    b = Broker(tmp_path_factory.mktemp("broker"))
    yield b
    b.close()


@pytest.fixture()
def home():
    """The sample home (``hub/data/home-en.toml``)."""
    from hub.home import Home
    from hub.paths import DATA_DIR
    from hub.settings import load_settings

    return Home.from_settings(load_settings(str(DATA_DIR / "home-en.toml")).home)
