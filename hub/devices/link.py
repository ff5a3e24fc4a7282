"""One long-lived MQTT connection with its own network thread (paho-mqtt public API only).

The thread runs paho's external-loop calls (``loop_read``, ``loop_write``, ``loop_misc``) around
its own ``select``, so every paho call happens in that one thread: other threads hand messages
over through :meth:`Link.publish` (a queue and a wake-up pipe).

Nothing is sent after its command was dropped (:mod:`hub.devices.session`):

- every connection is a **new paho client object**, so paho never re-sends (or sends late) what an
  earlier connection held; the hub itself re-sends its pending rows after each CONNACK;
- a message is handed to paho only once the connection is up (CONNACK), at most
  :data:`INFLIGHT_MAX` unacknowledged at a time (paho then writes it at once and queues nothing),
  and for a command only after ``handlers.remaining`` said its row is still live, both under
  :attr:`Link.gate`; a drop takes the same gate (:meth:`Link.revoke`), and aborts the connection
  when paho still holds unwritten bytes of the command.

- Reconnect: exponential backoff with jitter, capped at ``[mqtt] backoff_max_s`` (60 s); a
  takeover of the client id ("Session taken over", or two connections in a row closed within
  :data:`STABLE_S`) waits at least 10 s; a refused login waits
  :data:`AUTH_RETRY_S` (5 min) and is logged as one ERROR (case BC-29).
- Every paho callback is wrapped: an exception is logged and never reaches paho (BC-28).
- Watchdog: a message the hub publishes to itself every ``probe_s``; when the round trip is
  stale for two periods or the thread died, one ERROR and a new client and thread (BC-28).
- Availability: ``<prefix>/status`` is the last will (``offline``, retained), ``online``
  (retained) after each CONNACK, ``offline`` on a clean stop.
"""

from __future__ import annotations

import collections
import logging
import os
import random
import threading
import time
import uuid

log = logging.getLogger("hub.devices.link")

AUTH_RETRY_S = 300.0
"""A refused login (bad credentials, not authorised) is tried again this often at most."""
TAKEOVER_WAIT_S = 10.0
"""Least wait after another connection took the client id (at most 6 CONNECTs a minute)."""
INFLIGHT_MAX = 20
"""Most QoS 1/2 messages handed to paho and not acknowledged yet (or the broker's smaller
Receive Maximum); the rest wait in the link's queue, where a drop still reaches them."""
STABLE_S = 10.0
"""A connection that lasted this long resets the backoff; two shorter ones in a row (a
takeover of the client id: Mosquitto 2.0 just closes the old socket) make the wait at least
:data:`TAKEOVER_WAIT_S`."""
CONNACK_TIMEOUT_S = 5.0
"""A broker that accepted TCP but sent no CONNACK within this is treated as down."""
POLL_S = 0.5
"""Longest ``select`` of the network thread (stop, probes and timers are checked as often)."""
_AUTH_CODES = frozenset({134, 135})  # Bad user name or password, Not authorized (MQTT 5)
_TAKEOVER = 142  # Session taken over


def backoff_delay(attempt: int, cap_s: float, rng: random.Random, base_s: float = 0.5) -> float:
    """Seconds to wait before reconnect ``attempt`` (0 = first after a drop): "equal jitter",
    ``d/2 + U(0, d/2)`` with ``d = min(cap_s, base_s * 2**attempt)``.

    Source: Marc Brooker, "Exponential Backoff And Jitter", AWS Architecture Blog, 2015.
    """
    d = min(cap_s, base_s * (2 ** min(attempt, 30)))
    return d / 2 + rng.uniform(0, d / 2)


def safe(fn, what: str):
    """``fn`` wrapped so that no exception leaves it into paho: logged as one WARNING."""

    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except Exception as exc:  # noqa: BLE001 - the point: nothing may kill paho's loop
            log.warning("MQTT %s handler failed: %s: %s", what, type(exc).__name__, exc)
            return None

    wrapper.__name__ = getattr(fn, "__name__", what)
    return wrapper


def new_client(client_id: str):
    """The default client factory: a paho-mqtt 2.x MQTT v5 client (callback API 2)."""
    from paho.mqtt.client import CallbackAPIVersion, Client, MQTTv5

    return Client(CallbackAPIVersion.VERSION2, client_id=client_id, protocol=MQTTv5)


class Link:
    """A supervised MQTT connection; see the module doc.

    Args:
        settings: :class:`hub.settings.MqttSettings`.
        client_id: the MQTT client id.
        handlers: object with ``on_message(topic, payload: bytes)``, ``on_ack(key, ok: bool)``,
            ``on_connected()`` (after each CONNACK), ``subscriptions() -> list[str]``,
            ``remaining(key, expires_at) -> float | None`` (seconds a command may still be
            sent; None: its row was dropped or is done, never send it) and
            ``resend() -> [(topic, payload, qos, retain, key, expires_at)]`` (the pending commands,
            sent again on each new connection).
        factory: ``(client_id) -> paho Client``; default :func:`new_client`.
        rng: random source for the jitter.
    """

    def __init__(self, settings, client_id: str, handlers, *, factory=None, rng=None) -> None:
        self.settings, self.client_id, self.handlers = settings, client_id, handlers
        self.where = f"{settings.host}:{settings.port}"
        self.status_topic = f"{settings.topic_prefix}/status"
        self.probe_topic = f"{settings.topic_prefix}/hub/probe/{uuid.uuid4().hex[:8]}"
        self.connected = threading.Event()
        self.subscribed = threading.Event()  # the SUBACK after the latest CONNACK arrived
        self.down = False  # a connection attempt failed, or the connection was lost
        self._factory = factory or new_client
        self._rng = rng or random.Random()
        self._lock = threading.Lock()
        self.gate = threading.RLock()
        """Held while a command is checked and handed to paho, and while one is dropped."""
        self._session = None  # the current generation's Session
        self._queue: collections.deque = collections.deque()
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_r, False)
        self._stop = threading.Event()
        self._generation = 0
        self._thread: threading.Thread | None = None
        self._watchdog: threading.Thread | None = None
        self.last_probe = time.monotonic()
        self.alive = True  # False once a dead loop could not be rebuilt

    # -- public ---------------------------------------------------------------------------------
    def start(self) -> None:
        """Start the network thread and the watchdog (connecting happens in the thread)."""
        self._spawn()
        self._watchdog = threading.Thread(target=self._watch, name="hub-mqtt-watchdog",
                                          daemon=True)
        self._watchdog.start()

    def publish(self, topic: str, payload: bytes, *, qos: int = 1, retain: bool = False,
                key: str | None = None, expires_at: float | None = None) -> None:
        """Hand a message to the network thread. ``key``: a command, sent only while
        ``handlers.remaining(key, expires_at)`` allows it and reported to ``on_ack`` at PUBACK;
        ``expires_at``: wall-clock seconds, sent as the MQTT v5 message expiry interval."""
        with self._lock:
            self._queue.append((topic, payload, qos, retain, key, expires_at))
        self._wake()

    def revoke(self, key: str) -> None:
        """Call with :attr:`gate` held, right after ``key``'s row was dropped: nothing of it may
        be written any more. Queued copies are skipped by ``remaining``; when paho still holds
        unwritten bytes and the command is unacknowledged, the connection is aborted."""
        with self._lock:
            self._queue = collections.deque(item for item in self._queue if item[4] != key)
        session = self._session
        if session is not None and session.holds_unwritten(key):
            session.abort(f"command {key} was dropped while paho still held it", end=False)

    def stop(self, timeout_s: float = 1.0) -> None:
        """Publish ``offline`` (retained), disconnect cleanly, end the threads."""
        if self._stop.is_set():
            return
        self._stopping_deadline = time.monotonic() + timeout_s
        self._stop.set()
        self._wake()
        thread = self._thread
        if thread is not None:
            thread.join(timeout_s + 1.0)

    def is_running(self) -> bool:
        """True while the current network thread is alive."""
        thread = self._thread
        return thread is not None and thread.is_alive()

    # -- threads --------------------------------------------------------------------------------
    def _wake(self) -> None:
        try:
            os.write(self._wake_w, b"x")
        except OSError:
            pass

    def _spawn(self) -> None:
        """A new generation: the old session's socket is shut (it may be stuck inside paho and
        must never write again), a new session runs in a new thread."""
        from hub.devices.session import Session

        with self._lock:
            self._generation += 1
            gen = self._generation
        old, self._session = self._session, Session(self, gen)
        if old is not None:
            old.abort("superseded")
        self.connected.clear()
        self.last_probe = time.monotonic()
        self._thread = threading.Thread(target=self._run, args=(self._session,),
                                        name=f"hub-mqtt-{gen}", daemon=True)
        self._thread.start()

    def _current(self, gen: int) -> bool:
        return gen == self._generation and not self._stop.is_set()

    def _watch(self) -> None:
        """Rebuild the client when its thread died or its probe round trip went stale."""
        period = max(0.05, min(self.settings.probe_s, 5.0))
        while not self._stop.wait(period):
            stale = self.connected.is_set() and \
                time.monotonic() - self.last_probe > 2 * self.settings.probe_s
            if self.is_running() and not stale:
                continue
            why = "its probe went unanswered" if stale else "its network thread died"
            log.error("MQTT connection to %s is dead (%s); rebuilding the client", self.where, why)
            try:
                self._spawn()
            except Exception as exc:  # noqa: BLE001 - cannot even start a thread
                log.error("MQTT client not rebuilt: %s", exc)
                self.alive = False

    def _run(self, session) -> None:
        """One generation's life: connect, serve, back off, reconnect; until superseded."""
        try:
            session.run()
        except Exception as exc:  # noqa: BLE001 - the watchdog rebuilds
            log.error("MQTT network loop for %s crashed: %s: %s", self.where,
                      type(exc).__name__, exc)
