"""A paho-mqtt client stand-in for :class:`hub.devices.link.Link` tests without a broker.

It speaks only the external-loop calls :class:`hub.devices.connection.Session` makes. Its
"broker" is frozen after the CONNACK: whatever is published is recorded (as written to the
socket) and never acknowledged, until the test calls :meth:`FakeClient.ack`. Every callback
runs on the network thread, as paho's do: the test queues an event and wakes the loop (a byte
on a socket pair, so ``select`` sees the client's socket readable).
"""

from __future__ import annotations

import collections
import itertools
import socket
import threading
from types import SimpleNamespace

OK = SimpleNamespace(is_failure=False)
"""A reason code that is a success (CONNACK, PUBACK)."""


class FakeClient:
    """One connection's client; see the module doc. ``published``: ``(topic, payload, qos,
    properties)`` of every ``publish``, in order."""

    def __init__(self, client_id: str) -> None:
        self.client_id = client_id
        self.published: list[tuple] = []
        self.mids: dict[int, str] = {}  # mid -> topic
        self._mid = itertools.count(1)
        self._sock: socket.socket | None = None
        self._peer: socket.socket | None = None
        self._events: collections.deque = collections.deque()
        self._lock = threading.Lock()
        self.on_connect = self.on_disconnect = self.on_message = None
        self.on_publish = self.on_subscribe = None
        self.connect_timeout = 0.0

    # -- what Session calls -----------------------------------------------------------------
    def max_inflight_messages_set(self, n: int) -> None:
        """Ignored (the session keeps its own window)."""

    def will_set(self, *a, **kw) -> None:
        """Ignored."""

    def connect(self, host, port, keepalive=60, clean_start=True) -> None:
        """Opens the socket pair and queues the CONNACK."""
        self._sock, self._peer = socket.socketpair()
        self._push(("connack",))

    def socket(self):
        return self._sock

    def want_write(self) -> bool:
        return False

    def loop_read(self) -> None:
        """Runs the queued events (CONNACK, PUBACKs, messages) on the network thread."""
        if self._sock is None:
            return
        try:
            self._sock.recv(4096)
        except OSError:
            return
        while True:
            with self._lock:
                if not self._events:
                    return
                event = self._events.popleft()
            if event[0] == "connack":
                self.on_connect(self, None, {}, OK, SimpleNamespace())
            elif event[0] == "suback":
                self.on_subscribe(self, None, event[1], [OK], None)
            elif event[0] == "puback":
                self.on_publish(self, None, event[1], OK, None)
            elif event[0] == "message":
                message = SimpleNamespace(topic=event[1], payload=event[2])
                self.on_message(self, None, message)

    def loop_write(self) -> None:
        """Nothing to write: a publish is "written" at once."""

    def loop_misc(self) -> None:
        """No keep-alive to keep."""

    def subscribe(self, topics) -> tuple:
        """Queues the SUBACK."""
        mid = next(self._mid)
        self._push(("suback", mid))
        return (0, mid)

    def publish(self, topic, payload=None, qos=0, retain=False, properties=None):
        """Recorded as written; a QoS 1 message waits for :meth:`ack`."""
        mid = next(self._mid)
        with self._lock:
            self.published.append((topic, payload, qos, properties))
            self.mids[mid] = topic
        return SimpleNamespace(mid=mid, is_published=lambda: False)

    def disconnect(self) -> None:
        """Closes the socket pair."""
        for sock in (self._sock, self._peer):
            if sock is not None:
                sock.close()
        self._sock = self._peer = None

    # -- what the test calls ----------------------------------------------------------------
    def ack(self, topic: str) -> None:
        """The broker thaws: the PUBACK of every message published on ``topic``."""
        with self._lock:
            mids = [m for m, t in self.mids.items() if t == topic]
        for mid in mids:
            self._push(("puback", mid))

    def deliver(self, topic: str, payload: bytes) -> None:
        """A message from the broker (a device's state)."""
        self._push(("message", topic, payload))

    def commands(self, topic_part: str = "/set") -> list[tuple]:
        """``(topic, payload)`` of the published commands."""
        with self._lock:
            return [(t, p) for t, p, _q, _props in self.published if topic_part in t]

    def _push(self, event: tuple) -> None:
        with self._lock:
            self._events.append(event)
        if self._peer is not None:
            self._peer.send(b"x")


class FakeFactory:
    """``client_factory`` for :class:`hub.devices.mqtt.MqttBackend`: the clients it made."""

    def __init__(self) -> None:
        self.clients: list[FakeClient] = []

    def __call__(self, client_id: str) -> FakeClient:
        self.clients.append(FakeClient(client_id))
        return self.clients[-1]

    @property
    def client(self) -> FakeClient:
        """The latest client."""
        return self.clients[-1]
