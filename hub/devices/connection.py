"""The MQTT connection: one generation of a :class:`~hub.devices.link.Link`'s network thread,
and its timing constants (the paho helpers are in :mod:`hub.devices.client`, when to try
again in :mod:`hub.devices.reconnect`).

This module never imports :mod:`hub.devices.link`: a :class:`Session` reads only the link's
public hand-over state (``queue``, ``queue_lock``, ``gate``, ``wake_fd``, ``stopping``,
``generation``, ``is_current``, ``handlers``, ``factory``, ``rng``, ``stop_deadline``,
``handed``: each command key it gives paho is added there first).

connect (a new paho client object) ─► CONNACK ─► serve (select, read, hand over, write,
keep-alive, probes) ─► lost ─► back off with jitter ─► connect again with another new client
object … until the link stops or the watchdog starts a newer generation.

A client object lives for one connection only. paho keeps what it was given while disconnected
and its unacknowledged QoS 1 messages, and sends them on its next connection, perhaps after the
command was dropped and the user told. So instead: after each CONNACK the hub re-sends the rows
still live (``handlers.resend``); a message reaches paho only while it is connected, within the
in-flight window (so paho writes it at once and queues none of its own), and a command only
after ``handlers.remaining`` said it is live, under the link's gate.
"""

from __future__ import annotations

import collections
import contextlib
import logging
import math
import os
import select
import socket
import ssl
import time

from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

from hub.devices.client import safe, secure
from hub.devices.reconnect import Reconnect

log = logging.getLogger("hub.devices.link")

INFLIGHT_MAX = 20
"""Most QoS 1/2 messages handed to paho and not acknowledged yet (or the broker's smaller
Receive Maximum); the rest wait in the link's queue, where a drop still reaches them."""
CONNACK_TIMEOUT_S = 5.0
"""A broker that accepted TCP but sent no CONNACK within this is treated as down."""
POLL_S = 0.5
"""Longest ``select`` of the network thread (stop, probes and timers are checked as often)."""


class Session:
    """Runs ``link``'s connections, one new client object each, while ``gen`` is the link's
    current generation."""

    def __init__(self, link, gen: int) -> None:
        self.link, self.gen, self.settings = link, gen, link.settings
        self.client = None
        self.inflight: dict[int, str | None] = {}  # paho mid -> command key (None: not one)
        self.sent: set[str] = set()  # command keys handed to this connection's client
        self.resend: collections.deque = collections.deque()  # this connection's re-sends
        self.window = INFLIGHT_MAX
        self.aborted = ""  # why this generation must not write any more (see abort)
        self.retry = Reconnect(link.where, link.client_id, self.settings.backoff_max_s, link.rng)
        self.next_probe = 0.0

    # -- set-up ---------------------------------------------------------------------------------
    def _make_client(self):
        """A new paho client object for one connection (nothing held from an earlier one)."""
        s = self.settings
        client = self.link.factory(self.link.client_id)
        client.max_inflight_messages_set(0)  # the window is ours: paho must never hold one back
        if self.link.announce:  # only the long-running service speaks for the hub's status
            client.will_set(self.link.status_topic, "offline", qos=1, retain=True)
        secure(client, s)
        client.on_connect = safe(self._on_connect, "connect")
        client.on_disconnect = safe(self._on_disconnect, "disconnect")
        client.on_message = safe(self._on_message, "message")
        client.on_publish = safe(self._on_publish, "publish")
        client.on_subscribe = safe(lambda *_a: self.link.subscribed.set(), "subscribe")
        client.connect_timeout = s.timeout_s
        return client

    # -- callbacks (all wrapped by ``safe``) ----------------------------------------------------
    def _on_connect(self, client, _userdata, _flags, reason, props) -> None:
        if not self._mine() or client is not self.client:
            client.disconnect()
            return
        if reason.is_failure:
            self.retry.refused(reason)
            return
        log.info("MQTT connected to %s as %s", self.link.where, self.link.client_id)
        self.retry.connected()
        self.link.down = False
        topics = [self.link.probe_topic] + list(self.link.handlers.subscriptions())
        self.link.subscribed.clear()
        client.subscribe([(t, 1) for t in dict.fromkeys(topics)])
        if self.link.announce:
            self.inflight[
                client.publish(self.link.status_topic, "online", qos=1, retain=True).mid
            ] = None
        self.window = max(1, min(INFLIGHT_MAX, getattr(props, "ReceiveMaximum", INFLIGHT_MAX)))
        self.resend.extend(self.link.handlers.resend())  # handed over by _drain, not here
        self.link.last_probe = time.monotonic()
        self.link.connected.set()
        self.link.handlers.on_connected()

    def _on_disconnect(self, _client, _userdata, _flags, reason, _props) -> None:
        if not self._mine():
            return
        was = self.link.connected.is_set()
        self.link.connected.clear()
        self.link.subscribed.clear()
        self.link.down = True
        if not was or self.link.stopping.is_set():
            return
        self.retry.lost(reason)

    def _on_message(self, _client, _userdata, message) -> None:
        if message.topic == self.link.probe_topic:
            self.link.last_probe = time.monotonic()
            return
        self.link.handlers.on_message(message.topic, bytes(message.payload))

    def _on_publish(self, client, _userdata, mid, reason, _props) -> None:
        if client is not self.client:
            return
        key = self.inflight.pop(mid, None)
        if key is not None:
            self.link.handlers.on_ack(key, not getattr(reason, "is_failure", False))

    # -- the loop -------------------------------------------------------------------------------
    def run(self) -> None:
        """Connect, serve and reconnect until superseded or stopped."""
        while self.link.is_current(self.gen) and not self.aborted:
            if self._connect():
                self._serve()
            if not self.link.is_current(self.gen) or self.aborted:
                break
            self._back_off()
        if self.gen == self.link.generation and not self.aborted:
            self._say_offline()
        else:  # superseded: whatever paho still holds must never be sent
            self._close()

    def _connect(self) -> bool:
        """A new client object: open TCP and send CONNECT; False (logged) when the broker cannot
        be reached."""
        s = self.settings
        self.client = self._make_client()
        self.inflight, self.sent = {}, set()
        self.resend.clear()
        try:
            self.client.connect(s.host, s.port, keepalive=s.keepalive_s, clean_start=True)
            return True
        except (OSError, ValueError, ssl.SSLError) as exc:
            self.link.down = True
            self.retry.failed(exc)
            return False

    def _serve(self) -> None:
        """Run the network loop while connected (or waiting for CONNACK)."""
        connack_by = time.monotonic() + CONNACK_TIMEOUT_S
        while (self.link.is_current(self.gen) or self._flushing()) and not self.aborted:
            sock = self.client.socket()
            if sock is None:
                return
            if not self.link.connected.is_set() and time.monotonic() > connack_by:
                log.warning(
                    "MQTT broker %s sent no CONNACK within %.0f s",
                    self.link.where,
                    CONNACK_TIMEOUT_S,
                )
                self._close()
                return
            if not self._step(sock):
                return
            if self.link.stopping.is_set() and not self._flushing():
                return
        if self.aborted:
            self._close()

    def _step(self, sock) -> bool:
        """One ``select`` and paho's read, write and housekeeping; False: the socket failed."""
        wlist = [sock] if self.client.want_write() else []
        try:
            readable, _, _ = select.select([sock, self.link.wake_fd], wlist, [], POLL_S)
        except (OSError, ValueError):
            self._close()
            return False
        if self.link.wake_fd in readable:
            with contextlib.suppress(OSError):
                os.read(self.link.wake_fd, 4096)
        if sock in readable:
            self.client.loop_read()
        self._drain()
        if self.client.socket() is not None and self.client.want_write():
            self.client.loop_write()
        if self.client.socket() is not None:
            self.client.loop_misc()
            self._probe()
        return True

    def _drain(self) -> None:
        """Hand queued messages to paho while connected and within the in-flight window:
        first this connection's re-sends, then the link's queue. A command goes only while
        its row is live, checked under the gate a drop takes too."""
        while (
            self.link.connected.is_set()
            and self._mine()
            and not self.aborted
            and len(self.inflight) < self.window
        ):
            with self.link.gate:
                if self.resend:
                    item = self.resend.popleft()
                else:
                    with self.link.queue_lock:
                        if not self.link.queue:
                            return
                        item = self.link.queue.popleft()
                self._hand_over(*item)

    def _hand_over(self, topic, payload, qos, retain, key, expires_at) -> None:
        """``client.publish`` of one message (gate held); a command at most once per connection
        and only while ``handlers.remaining`` gives it time left."""
        left = None
        if key is not None:
            if key in self.sent:
                return
            left = self.link.handlers.remaining(key, expires_at)
            if left is None:
                log.debug("MQTT: command %s not sent: dropped or done", key)
                return
        props = None
        if key is not None or expires_at is not None:
            props = Properties(PacketTypes.PUBLISH)
            if key is not None:
                props.UserProperty = [("idempotency_key", key)]
                if payload[:1] == b"{":
                    props.ContentType = "application/json"
            if left is not None:
                props.MessageExpiryInterval = max(1, math.ceil(left))
        if key is not None:  # from here on it may reach the broker, whatever happens next
            self.link.handed.add(key)
        info = self.client.publish(topic, payload, qos=qos, retain=retain, properties=props)
        if qos > 0:
            self.inflight[info.mid] = key
        if key is not None:
            self.sent.add(key)

    def holds_unwritten(self, key: str) -> bool:
        """(Any thread, gate held.) True when ``key`` was handed to the current client, is not
        acknowledged, and paho has bytes it has not written yet (they may be the command's)."""
        client = self.client
        if client is None or client.socket() is None:
            return False
        try:
            mine = key in set(self.inflight.values())
        except RuntimeError:  # changed while read by the network thread: assume it is there
            mine = True
        return mine and client.want_write()

    def abort(self, why: str, *, end: bool = True) -> None:
        """(Any thread.) The current connection never writes again: its socket is shut down now
        (paho's next read or write fails; the next connection is a new client object).
        ``end``: this whole generation stops too (superseded by a newer one)."""
        if end:
            self.aborted = why
        client = self.client
        sock = client.socket() if client is not None else None
        if sock is not None:
            log.info("MQTT: connection to %s aborted (%s)", self.link.where, why)
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        self.link.wake()

    def _probe(self) -> None:
        now = time.monotonic()
        if self.link.connected.is_set() and now >= self.next_probe:
            self.next_probe = now + self.settings.probe_s
            self.client.publish(self.link.probe_topic, b"probe", qos=0)

    def _flushing(self) -> bool:
        """While stopping: still sending what was queued, until the stop deadline."""
        deadline = self.link.stop_deadline
        return (
            self.link.stopping.is_set()
            and self.link.connected.is_set()
            and time.monotonic() < deadline
            and bool(self.inflight or self.link.queue)
        )

    def _mine(self) -> bool:
        """True while this session is the link's current one (an old one changes nothing)."""
        return self.gen == self.link.generation

    def _close(self) -> None:
        sock = self.client.socket() if self.client is not None else None
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.close()
        if self._mine():
            self.link.connected.clear()
            self.link.down = True

    def _back_off(self) -> None:
        self.link.stopping.wait(self.retry.delay())

    def _say_offline(self) -> None:
        """Clean stop: ``offline`` (retained), then DISCONNECT (so no last will is sent)."""
        if not self.link.connected.is_set():
            return
        if not self.link.announce:
            self.client.disconnect()
            self.link.connected.clear()
            return
        info = self.client.publish(self.link.status_topic, "offline", qos=1, retain=True)
        deadline = self.link.stop_deadline or time.monotonic() + 1.0
        while (
            not info.is_published()
            and time.monotonic() < deadline
            and self.client.socket() is not None
        ):
            self._step(self.client.socket())
        self.client.disconnect()
        self.link.connected.clear()
