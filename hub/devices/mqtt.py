"""MQTT device backend: publish the act node's actions to a broker, once per idempotency key.

An action ``{"entity", "domain", "service", "data", "idempotency_key"}`` (:mod:`hub.act`) goes
to ``<prefix>/<domain>/<slug(entity)>/set`` as JSON ``{"service", "data", "idempotency_key"}``
(QoS 1), the key also as the MQTT v5 user property ``idempotency_key`` so devices can drop
repeats. Timer actions (domain ``timer``) stay in the hub. The key is claimed in the store's
outbox first: a ``done`` key is never sent again (also after a restart); a failed publish is
marked ``failed`` and the graph's retry sends it again under the same key.

paho-mqtt's network loop runs only inside :meth:`MqttBackend.publish`, in the caller's thread
(paho's "external event loop"): no background thread, no paho reconnect loop (the graph owns
retrying). The connection opens lazily, is kept for later turns and dropped after any failure;
the next publish opens a new one. Every wait (TCP connect, CONNACK, PUBACK) checks ``cancel``
every :data:`POLL_S` seconds and ends at the publish's deadline (``timeout_s``).
"""

from __future__ import annotations

import contextlib
import errno
import functools
import json
import logging
import os
import re
import select
import socket
import sqlite3
import threading
import time
import unicodedata
from collections import OrderedDict

from hub.errors import BadInputError, ConfigError, FatalError, TimeoutError_, TransientError
from hub.settings import MqttSettings

__all__ = ["MqttBackend", "make_backend", "slug", "action_topic", "action_payload",
           "LOCAL_DOMAINS", "KEY_PROPERTY", "POLL_S"]

log = logging.getLogger("hub.devices.mqtt")

POLL_S = 0.05
"""How often every wait checks ``cancel`` and the deadline, seconds."""
LOCAL_DOMAINS = frozenset({"timer"})
"""Action domains handled inside the hub and never published."""
KEY_PROPERTY = "idempotency_key"
"""Name of the MQTT v5 user property that carries the action's idempotency key."""
_REMEMBERED = 4096  # keys kept by the in-memory outbox when there is no store


class _Cancelled(Exception):
    """``cancel`` was set during a TCP connect (internal; becomes TimeoutError_)."""


# -- topics and payloads ------------------------------------------------------------------------
def slug(name: str) -> str:
    """An entity name as one MQTT topic level: ``"Kitchen Light"`` -> ``"kitchen_light"``.

    Accents dropped (``"Café"`` -> ``"cafe"``), lower case, each run of other characters
    (spaces, ``/ + #``, punctuation) one ``_``. Like Home Assistant's ``slugify``, never empty.

    Raises:
        BadInputError: the name has no letter or digit.
    """
    text = unicodedata.normalize("NFKD", name)
    text = "".join(c for c in text if not unicodedata.combining(c)).casefold()
    result = re.sub(r"[\W_]+", "_", text).strip("_")
    if not result:
        raise BadInputError(f"entity name {name!r} has no letter or digit for an MQTT topic",
                            node="act")
    return result


def action_topic(prefix: str, action: dict) -> str:
    """``<prefix>/<domain>/<slug(entity)>/set`` for an action."""
    return f"{prefix}/{action['domain']}/{slug(action['entity'])}/set"


def action_payload(action: dict) -> bytes:
    """The message body: UTF-8 JSON ``{"service", "data", "idempotency_key"}``."""
    body = {"service": action["service"], "data": action.get("data") or {},
            "idempotency_key": action["idempotency_key"]}
    return json.dumps(body, ensure_ascii=False, sort_keys=True).encode("utf-8")


# -- sockets and paho ---------------------------------------------------------------------------
def open_tcp(host: str, port: int, timeout_s: float,
             cancel: threading.Event | None = None) -> socket.socket:
    """A TCP connection that gives up after ``timeout_s`` or within :data:`POLL_S` of ``cancel``.

    Unlike ``socket.create_connection`` the handshake is polled (name lookup is not).

    Raises:
        OSError: refused, unreachable, or ``socket.timeout`` after ``timeout_s``.
        _Cancelled: ``cancel`` was set.
    """
    deadline = time.monotonic() + timeout_s
    last: OSError = OSError(f"no address for {host}")
    for family, kind, proto, _, addr in socket.getaddrinfo(host, port, type=socket.SOCK_STREAM):
        sock = socket.socket(family, kind, proto)
        try:
            _handshake(sock, addr, deadline, cancel)
            sock.setblocking(True)
            return sock
        except BaseException as exc:
            sock.close()
            if not isinstance(exc, OSError):
                raise
            last = exc
    raise last


def _handshake(sock: socket.socket, addr, deadline: float,
               cancel: threading.Event | None) -> None:
    """Connect the non-blocking ``sock`` to ``addr``, polling ``cancel`` and the deadline."""
    sock.setblocking(False)
    code = sock.connect_ex(addr)
    while code in (errno.EINPROGRESS, errno.EALREADY, errno.EWOULDBLOCK):
        if cancel is not None and cancel.is_set():
            raise _Cancelled()
        left = deadline - time.monotonic()
        if left <= 0:
            raise socket.timeout("timed out")
        _, writable, _ = select.select([], [sock], [], min(POLL_S, left))
        if writable:
            code = sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
    if code:
        raise OSError(code, os.strerror(code))


@functools.cache
def _client_class():
    """paho's ``Client`` whose TCP connect is :func:`open_tcp` (honours ``client.cancel``)."""
    import paho.mqtt.client as mqtt

    class CancellableClient(mqtt.Client):
        """A paho Client that stops its TCP handshake when ``self.cancel`` is set."""

        cancel: threading.Event | None = None

        def _create_socket_connection(self) -> socket.socket:
            return open_tcp(self.host, self.port, self.connect_timeout, self.cancel)

    return CancellableClient


def new_client(client_id: str):
    """The default client factory: a paho-mqtt 2.x MQTT v5 client (callback API 2)."""
    from paho.mqtt.client import MQTTv5, CallbackAPIVersion

    return _client_class()(CallbackAPIVersion.VERSION2, client_id=client_id, protocol=MQTTv5)


def pump(client, timeout_s: float) -> int:
    """One turn of paho's network loop here: wait ``timeout_s``, read, write, keep-alive; rc."""
    from paho.mqtt.client import MQTT_ERR_CONN_LOST, MQTT_ERR_NO_CONN

    sock = client.socket()
    if sock is None:
        return MQTT_ERR_NO_CONN
    wlist = [sock] if client.want_write() else []
    try:
        readable, _, _ = select.select([sock], wlist, [], timeout_s)
    except (OSError, ValueError):
        return MQTT_ERR_CONN_LOST
    rc = client.loop_read() if readable else 0
    if rc == 0 and client.want_write():
        rc = client.loop_write()
    return rc or client.loop_misc()


def _discard(client, *, polite: bool) -> None:
    """Close a client's connection (``polite``: send DISCONNECT first when connected)."""
    if polite and client.is_connected():
        with contextlib.suppress(OSError):
            client.disconnect()  # writes DISCONNECT and closes the socket
    sock = client.socket()
    if sock is not None:
        sock.close()


# -- outbox -------------------------------------------------------------------------------------
class _Outbox:
    """Exactly-once bookkeeping: the store's outbox, else an in-memory set of done keys."""

    def __init__(self, store) -> None:
        self._store = store
        self._done: OrderedDict[str, None] = OrderedDict()

    def claim(self, key: str, action: dict) -> bool:
        """True: publish now (a new key, or an earlier try failed); TransientError: store locked."""
        if self._store is None:
            return key not in self._done
        try:
            if self._store.outbox_claim(key, action):
                return True
            return self._store.outbox_status(key) != "done"
        except sqlite3.Error as exc:
            raise TransientError(f"outbox unavailable, not publishing {key}: {exc}",
                                 node="act") from None

    def finish(self, key: str, status: str) -> None:
        """Mark ``key`` ``done`` or ``failed``; a store that cannot be written is logged."""
        if self._store is None:
            if status == "done":
                self._done[key] = None
                if len(self._done) > _REMEMBERED:
                    self._done.popitem(last=False)
            return
        try:
            self._store.outbox_done(key, status)
        except sqlite3.Error as exc:
            log.warning("outbox entry %s not marked %s: %s", key, status, exc)


# -- the backend --------------------------------------------------------------------------------
class MqttBackend:
    """Publishes actions to an MQTT broker, once per idempotency key; see the module doc.

    Args:
        settings: broker address, topic prefix, QoS, timeout, client id, retain, keep-alive.
        store: the hub's :class:`~hub.store.db.Store` (its outbox makes "once" survive restarts);
            None: keys are remembered in memory only.
        client_factory: ``(client_id) -> paho Client``; default :func:`new_client`.
    Raises:
        ConfigError: ``mqtt.qos`` is not 0, 1 or 2, or ``mqtt.timeout_s`` is not positive.
    """

    def __init__(self, settings: MqttSettings, *, store=None, client_factory=None) -> None:
        if settings.qos not in (0, 1, 2):
            raise ConfigError(f"mqtt.qos: expected 0, 1 or 2, got {settings.qos!r}")
        if settings.timeout_s <= 0:
            raise ConfigError(f"mqtt.timeout_s: expected a positive number, "
                              f"got {settings.timeout_s!r}")
        self.settings = settings
        self.where = f"{settings.host}:{settings.port}"
        self._client_id = settings.client_id or f"hub-{socket.gethostname()}-{os.getpid()}"
        self._factory = new_client if client_factory is None else client_factory
        self._outbox = _Outbox(store)
        self._lock = threading.Lock()
        self._client = None

    def publish(self, action: dict, cancel: threading.Event | None = None) -> None:
        """Publish one action and wait for the broker's PUBACK (QoS 1), once per key; returns
        at once for a ``timer`` action or a key already ``done`` in the outbox.

        Raises:
            TransientError: broker unreachable, connection refused or lost, or no CONNACK or
                PUBACK within ``timeout_s``; one line naming ``host:port``.
            TimeoutError_: ``cancel`` was set (the call returns within about :data:`POLL_S`).
            FatalError: the action has no idempotency key.
            BadInputError: the entity name cannot be a topic level (see :func:`slug`).
        """
        if action.get("domain") in LOCAL_DOMAINS:
            log.debug("MQTT: %s action for %s stays local", action["domain"], action.get("entity"))
            return
        key = action.get("idempotency_key") or ""
        if not key:
            raise FatalError(f"action {action.get('service')} for {action.get('entity')} has no "
                             f"idempotency key; not published", node="act")
        topic, payload = action_topic(self.settings.topic_prefix, action), action_payload(action)
        deadline = time.monotonic() + self.settings.timeout_s
        self._acquire(deadline, cancel)
        try:
            self._publish_claimed(action, topic, payload, deadline, cancel)
        finally:
            self._lock.release()

    def close(self) -> None:
        """Disconnect from the broker (DISCONNECT sent); a later publish connects again."""
        with self._lock:
            self._drop(polite=True)

    # -- steps ----------------------------------------------------------------------------------
    def _publish_claimed(self, action: dict, topic: str, payload: bytes, deadline: float,
                         cancel: threading.Event | None) -> None:
        """Claim the key, publish, and record the outcome in the outbox."""
        key = action["idempotency_key"]
        if not self._outbox.claim(key, action):
            log.debug("MQTT: %s already published with key %s; not again", topic, key)
            return
        try:
            client = self._connection(deadline, cancel)
            self._send(client, topic, payload, key, deadline, cancel)
        except BaseException:
            self._outbox.finish(key, "failed")
            self._drop(polite=False)
            raise
        self._outbox.finish(key, "done")
        log.debug("MQTT: published %s (key %s)", topic, key)

    def _acquire(self, deadline: float, cancel: threading.Event | None) -> None:
        """Take the backend's lock (one publish at a time), watching cancel and the deadline."""
        while not self._lock.acquire(timeout=POLL_S):
            if time.monotonic() >= deadline:
                raise TransientError(f"MQTT backend for {self.where} busy: an earlier publish "
                                     f"still runs", node="act")
            self._check(deadline, cancel, "an earlier publish")

    def _connection(self, deadline: float, cancel: threading.Event | None):
        """The open connection, reopened when the broker dropped it while idle."""
        client = self._client
        if client is not None and (pump(client, 0) != 0 or not client.is_connected()):
            log.info("MQTT connection to %s was lost while idle; reconnecting", self.where)
            self._drop(polite=False)
        if self._client is None:
            self._client = self._connect(deadline, cancel)
        return self._client

    def _connect(self, deadline: float, cancel: threading.Event | None):
        """A new connection (TCP, CONNECT, CONNACK) with a new client, so paho never re-sends
        an earlier turn's message on its own."""
        client = self._factory(self._client_id)
        client.cancel = cancel
        userdata: dict = {}
        client.user_data_set(userdata)
        client.on_connect = lambda _c, data, _flags, reason, _props: data.update(reason=reason)
        client.connect_timeout = max(deadline - time.monotonic(), 0.001)
        try:
            rc = client.connect(self.settings.host, self.settings.port,
                                keepalive=self.settings.keepalive_s, clean_start=True)
        except _Cancelled:
            _discard(client, polite=False)
            raise TimeoutError_(f"MQTT connect to {self.where} cancelled", node="act") from None
        except OSError as exc:
            _discard(client, polite=False)
            reason = " ".join((exc.strerror or str(exc) or type(exc).__name__).split())
            raise TransientError(f"MQTT broker {self.where} unreachable: {reason}",
                                 node="act") from None
        self._client = client  # dropped by the caller if anything below fails
        if rc != 0:
            raise self._lost(rc, "sending CONNECT")
        self._wait(client, lambda: client.is_connected() or "reason" in userdata,
                   deadline, cancel, "CONNACK")
        if not client.is_connected():
            raise TransientError(f"MQTT broker {self.where} refused the connection: "
                                 f"{userdata['reason']}", node="act")
        log.info("MQTT connected to %s as %s", self.where, self._client_id)
        return client

    def _send(self, client, topic: str, payload: bytes, key: str, deadline: float,
              cancel: threading.Event | None) -> None:
        """PUBLISH with the key as a user property; wait until the broker acknowledged it."""
        from paho.mqtt.packettypes import PacketTypes
        from paho.mqtt.properties import Properties

        props = Properties(PacketTypes.PUBLISH)
        props.UserProperty = [(KEY_PROPERTY, key)]
        props.ContentType = "application/json"
        info = client.publish(topic, payload, qos=self.settings.qos,
                              retain=self.settings.retain, properties=props)
        if info.rc != 0:
            raise self._lost(info.rc, f"publishing {topic}")
        self._wait(client, info.is_published, deadline, cancel,
                   "PUBACK" if self.settings.qos else "send")

    def _wait(self, client, done, deadline: float, cancel: threading.Event | None,
              what: str) -> None:
        """Run the network loop until ``done()``; cancel and the deadline checked each POLL_S."""
        while not done():
            self._check(deadline, cancel, what)
            rc = pump(client, min(POLL_S, max(deadline - time.monotonic(), 0.0)))
            if rc != 0 and not done():
                raise self._lost(rc, f"waiting for {what}")

    def _check(self, deadline: float, cancel: threading.Event | None, what: str) -> None:
        """Raise when ``cancel`` is set (TimeoutError_) or the deadline passed (TransientError)."""
        if cancel is not None and cancel.is_set():
            raise TimeoutError_(f"MQTT publish to {self.where} cancelled while waiting for {what}",
                                node="act")
        if time.monotonic() >= deadline:
            raise TransientError(f"MQTT broker {self.where}: no {what} within "
                                 f"{self.settings.timeout_s:g} s", node="act")

    def _lost(self, rc: int, doing: str) -> TransientError:
        """The error for a connection that failed while ``doing`` something."""
        from paho.mqtt.client import error_string

        return TransientError(f"MQTT connection to {self.where} lost {doing}: "
                              f"{error_string(rc)}", node="act")

    def _drop(self, *, polite: bool) -> None:
        """Forget the connection (closing its socket); the next publish opens a new one."""
        client, self._client = self._client, None
        if client is not None:
            _discard(client, polite=polite)


def make_backend(settings: MqttSettings, store=None) -> MqttBackend | None:
    """The MQTT backend for ``settings`` (no connection yet), or None when MQTT is off."""
    if not settings.enabled:
        return None
    return MqttBackend(settings, store=store)
