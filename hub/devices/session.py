"""One generation of a :class:`~hub.devices.link.Link`'s network thread.

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
import logging
import math
import os
import select
import socket
import ssl
import time

from hub.devices.link import (AUTH_RETRY_S, CONNACK_TIMEOUT_S, INFLIGHT_MAX, POLL_S, STABLE_S,
                              TAKEOVER_WAIT_S, _AUTH_CODES, _TAKEOVER, backoff_delay, safe)

log = logging.getLogger("hub.devices.link")


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
        self.attempt = 0
        self.wait_s = 0.0  # set by the callbacks: the least wait before the next attempt
        self.failures_logged = 0
        self.next_probe = 0.0
        self.connected_at = 0.0
        self.short_lived = 0  # connections in a row closed within STABLE_S
        self.takeover_logged = False
        self.last_error = ""

    # -- set-up ---------------------------------------------------------------------------------
    def _make_client(self):
        """A new paho client object for one connection (nothing held from an earlier one)."""
        s = self.settings
        client = self.link._factory(self.link.client_id)
        client.max_inflight_messages_set(0)  # the window is ours: paho must never hold one back
        client.will_set(self.link.status_topic, "offline", qos=1, retain=True)
        if s.username:
            client.username_pw_set(s.username, s.password or None)
        if s.tls:
            client.tls_set(ca_certs=s.ca_file or None, certfile=s.cert_file or None,
                           keyfile=s.key_file or None, cert_reqs=ssl.CERT_REQUIRED)
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
            self._refused(reason)
            return
        log.info("MQTT connected to %s as %s", self.link.where, self.link.client_id)
        self.failures_logged = 0
        self.connected_at = time.monotonic()
        self.link.down = False
        topics = [self.link.probe_topic] + list(self.link.handlers.subscriptions())
        self.link.subscribed.clear()
        client.subscribe([(t, 1) for t in dict.fromkeys(topics)])
        self.inflight[client.publish(self.link.status_topic, "online", qos=1, retain=True).mid] \
            = None
        self.window = max(1, min(INFLIGHT_MAX, getattr(props, "ReceiveMaximum", INFLIGHT_MAX)))
        self.resend.extend(self.link.handlers.resend())  # handed over by _drain, not here
        self.link.last_probe = time.monotonic()
        self.link.connected.set()
        self.link.handlers.on_connected()

    def _refused(self, reason) -> None:
        value = getattr(reason, "value", None)
        if value in _AUTH_CODES:
            log.error("MQTT broker %s refused the login as %s (%s): check [mqtt] username and "
                      "password; next try in %.0f s", self.link.where, self.link.client_id,
                      reason, AUTH_RETRY_S)
            self.wait_s = AUTH_RETRY_S
        else:
            log.warning("MQTT broker %s refused the connection: %s", self.link.where, reason)

    def _on_disconnect(self, _client, _userdata, _flags, reason, _props) -> None:
        if not self._mine():
            return
        was = self.link.connected.is_set()
        self.link.connected.clear()
        self.link.subscribed.clear()
        self.link.down = True
        if not was or self.link._stop.is_set():
            return
        self._count_lifetime()
        if getattr(reason, "value", None) == _TAKEOVER or self.short_lived >= 2:
            if not self.takeover_logged:
                self.takeover_logged = True
                log.warning("MQTT connection to %s as %s keeps being closed right after it "
                            "opens (another client with this id, or a broker that keeps "
                            "restarting? give each hub its own [mqtt] client_id); waiting at "
                            "least %.0f s between attempts",
                            self.link.where, self.link.client_id, TAKEOVER_WAIT_S)
            self.wait_s = max(self.wait_s, TAKEOVER_WAIT_S)
        else:
            log.warning("MQTT connection to %s lost: %s", self.link.where, reason)

    def _count_lifetime(self) -> None:
        """A connection that lasted :data:`STABLE_S` resets the backoff; shorter ones count."""
        if time.monotonic() - self.connected_at >= STABLE_S:
            self.attempt, self.short_lived, self.takeover_logged = 0, 0, False
        else:
            self.short_lived += 1

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
        while self.link._current(self.gen) and not self.aborted:
            if self._connect():
                self._serve()
            if not self.link._current(self.gen) or self.aborted:
                break
            self._back_off()
        if self.gen == self.link._generation and not self.aborted:
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
            self.last_error = " ".join((getattr(exc, "strerror", None) or str(exc)
                                        or type(exc).__name__).split())
            return False

    def _serve(self) -> None:
        """Run the network loop while connected (or waiting for CONNACK)."""
        connack_by = time.monotonic() + CONNACK_TIMEOUT_S
        while (self.link._current(self.gen) or self._flushing()) and not self.aborted:
            sock = self.client.socket()
            if sock is None:
                return
            if not self.link.connected.is_set() and time.monotonic() > connack_by:
                log.warning("MQTT broker %s sent no CONNACK within %.0f s", self.link.where,
                            CONNACK_TIMEOUT_S)
                self._close()
                return
            if not self._step(sock):
                return
            if self.link._stop.is_set() and not self._flushing():
                return
        if self.aborted:
            self._close()

    def _step(self, sock) -> bool:
        """One ``select`` and paho's read, write and housekeeping; False: the socket failed."""
        wlist = [sock] if self.client.want_write() else []
        try:
            readable, _, _ = select.select([sock, self.link._wake_r], wlist, [], POLL_S)
        except (OSError, ValueError):
            self._close()
            return False
        if self.link._wake_r in readable:
            try:
                os.read(self.link._wake_r, 4096)
            except OSError:
                pass
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
        while self.link.connected.is_set() and self._mine() and not self.aborted \
                and len(self.inflight) < self.window:
            with self.link.gate:
                if self.resend:
                    item = self.resend.popleft()
                else:
                    with self.link._lock:
                        if not self.link._queue:
                            return
                        item = self.link._queue.popleft()
                self._hand_over(*item)

    def _hand_over(self, topic, payload, qos, retain, key, expires_at) -> None:
        """``client.publish`` of one message (gate held); a command at most once per connection
        and only while ``handlers.remaining`` gives it time left."""
        from paho.mqtt.packettypes import PacketTypes
        from paho.mqtt.properties import Properties

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
                props.ContentType = "application/json"
            if left is not None:
                props.MessageExpiryInterval = max(1, math.ceil(left))
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
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        self.link._wake()
    def _probe(self) -> None:
        now = time.monotonic()
        if self.link.connected.is_set() and now >= self.next_probe:
            self.next_probe = now + self.settings.probe_s
            self.client.publish(self.link.probe_topic, b"probe", qos=0)

    def _flushing(self) -> bool:
        """While stopping: still sending what was queued, until the stop deadline."""
        deadline = getattr(self.link, "_stopping_deadline", 0.0)
        return self.link._stop.is_set() and self.link.connected.is_set() and \
            time.monotonic() < deadline and bool(self.inflight or self.link._queue)

    def _mine(self) -> bool:
        """True while this session is the link's current one (an old one changes nothing)."""
        return self.gen == self.link._generation

    def _close(self) -> None:
        sock = self.client.socket() if self.client is not None else None
        if sock is not None:
            try:
                sock.close()
            except OSError:
                pass
        if self._mine():
            self.link.connected.clear()
            self.link.down = True

    def _back_off(self) -> None:
        delay = max(backoff_delay(self.attempt, self.settings.backoff_max_s, self.link._rng),
                    self.wait_s)
        self.attempt += 1
        self.wait_s = 0.0
        if self.last_error:  # one line per attempt: why, and when the next one is
            level = logging.WARNING if self.failures_logged == 0 else logging.INFO
            self.failures_logged += 1
            log.log(level, "MQTT broker %s unreachable: %s; next try in %.1f s",
                    self.link.where, self.last_error, delay)
            self.last_error = ""
        else:
            log.debug("MQTT: next connection attempt to %s in %.1f s", self.link.where, delay)
        self.link._stop.wait(delay)

    def _say_offline(self) -> None:
        """Clean stop: ``offline`` (retained), then DISCONNECT (so no last will is sent)."""
        if not self.link.connected.is_set():
            return
        info = self.client.publish(self.link.status_topic, "offline", qos=1, retain=True)
        deadline = getattr(self.link, "_stopping_deadline", time.monotonic() + 1.0)
        while not info.is_published() and time.monotonic() < deadline \
                and self.client.socket() is not None:
            self._step(self.client.socket())
        self.client.disconnect()
        self.link.connected.clear()
