"""The life of one paho client object inside a :class:`~hub.devices.link.Link`'s thread.

connect ─► wait for CONNACK ─► serve (select, read, write, keep-alive, probes) ─► lost ─►
back off with jitter ─► reconnect (same client object, so paho re-sends its unacknowledged
QoS 1 messages) … until the link stops or the watchdog starts a newer generation.
"""

from __future__ import annotations

import logging
import os
import select
import ssl
import time

from hub.devices.link import (AUTH_RETRY_S, CONNACK_TIMEOUT_S, POLL_S, STABLE_S,
                              TAKEOVER_WAIT_S, _AUTH_CODES, _TAKEOVER, backoff_delay, safe)

log = logging.getLogger("hub.devices.link")


class Session:
    """Runs one client object for ``link`` while ``gen`` is the link's current generation."""

    def __init__(self, link, gen: int) -> None:
        self.link, self.gen, self.settings = link, gen, link.settings
        link.handlers.on_new_client()
        self.client = self._make_client()
        self.mids: dict[int, str] = {}  # paho message id -> idempotency key
        self.attempt = 0
        self.fresh = True  # the next CONNACK is this client object's first
        self.wait_s = 0.0  # set by the callbacks: the least wait before the next attempt
        self.failures_logged = 0
        self.next_probe = 0.0
        self.connected_at = 0.0
        self.short_lived = 0  # connections in a row closed within STABLE_S
        self.takeover_logged = False
        self.last_error = ""

    # -- set-up ---------------------------------------------------------------------------------
    def _make_client(self):
        s = self.settings
        client = self.link._factory(self.link.client_id)
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
    def _on_connect(self, client, _userdata, _flags, reason, _props) -> None:
        if not self._mine():
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
        client.publish(self.link.status_topic, "online", qos=1, retain=True)
        self.link.last_probe = time.monotonic()
        self.link.connected.set()
        fresh, self.fresh = self.fresh, False
        self.link.handlers.on_connected(fresh)

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

    def _on_publish(self, _client, _userdata, mid, reason, _props) -> None:
        key = self.mids.pop(mid, None)
        if key is not None:
            self.link.handlers.on_ack(key, not getattr(reason, "is_failure", False))

    # -- the loop -------------------------------------------------------------------------------
    def run(self) -> None:
        """Connect, serve and reconnect until superseded or stopped."""
        while self.link._current(self.gen):
            if self._connect():
                self._serve()
            if not self.link._current(self.gen):
                break
            self._back_off()
        if self.gen == self.link._generation:
            self._say_offline()
        else:  # superseded: whatever paho still holds must never be sent
            self._close()

    def _connect(self) -> bool:
        """Open TCP and send CONNECT; False (logged) when the broker cannot be reached."""
        s = self.settings
        try:
            if self.fresh and self.attempt == 0:
                self.client.connect(s.host, s.port, keepalive=s.keepalive_s, clean_start=True)
            else:
                self.client.reconnect()
            return True
        except (OSError, ValueError, ssl.SSLError) as exc:
            self.link.down = True
            self.last_error = " ".join((getattr(exc, "strerror", None) or str(exc)
                                        or type(exc).__name__).split())
            return False

    def _serve(self) -> None:
        """Run the network loop while connected (or waiting for CONNACK)."""
        connack_by = time.monotonic() + CONNACK_TIMEOUT_S
        while self.link._current(self.gen) or self._flushing():
            sock = self.client.socket()
            if sock is None:
                return
            if not self.link.connected.is_set() and time.monotonic() > connack_by:
                log.warning("MQTT broker %s sent no CONNACK within %.0f s", self.link.where,
                            CONNACK_TIMEOUT_S)
                self._close()
                return
            self._step(sock)
            if self.link._stop.is_set() and not self._flushing():
                return

    def _step(self, sock) -> None:
        wlist = [sock] if self.client.want_write() else []
        try:
            readable, _, _ = select.select([sock, self.link._wake_r], wlist, [], POLL_S)
        except (OSError, ValueError):
            self._close()
            return
        if self.link._wake_r in readable:
            try:
                os.read(self.link._wake_r, 4096)
            except OSError:
                pass
        self._drain()
        if sock in readable:
            self.client.loop_read()
        if self.client.socket() is not None and self.client.want_write():
            self.client.loop_write()
        if self.client.socket() is not None:
            self.client.loop_misc()
            self._probe()

    def _drain(self) -> None:
        """Hand every queued message to paho (kept by paho until acknowledged)."""
        from paho.mqtt.packettypes import PacketTypes
        from paho.mqtt.properties import Properties

        while True:
            with self.link._lock:
                if not self.link._queue or self.gen != self.link._generation:
                    return
                topic, payload, qos, retain, key, expiry_s = self.link._queue.popleft()
            props = None
            if key is not None or expiry_s is not None:
                props = Properties(PacketTypes.PUBLISH)
                if key is not None:
                    props.UserProperty = [("idempotency_key", key)]
                    props.ContentType = "application/json"
                if expiry_s is not None:
                    props.MessageExpiryInterval = max(1, int(expiry_s))
            info = self.client.publish(topic, payload, qos=qos, retain=retain, properties=props)
            if key is not None:
                self.mids[info.mid] = key

    def _probe(self) -> None:
        now = time.monotonic()
        if self.link.connected.is_set() and now >= self.next_probe:
            self.next_probe = now + self.settings.probe_s
            self.client.publish(self.link.probe_topic, b"probe", qos=0)

    def _flushing(self) -> bool:
        """While stopping: still sending what was queued, until the stop deadline."""
        deadline = getattr(self.link, "_stopping_deadline", 0.0)
        return self.link._stop.is_set() and self.link.connected.is_set() and \
            time.monotonic() < deadline and bool(self.mids or self.link._queue)

    def _mine(self) -> bool:
        """True while this session is the link's current one (an old one changes nothing)."""
        return self.gen == self.link._generation

    def _close(self) -> None:
        sock = self.client.socket()
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
