"""One long-lived MQTT connection with its own network thread (paho-mqtt public API only).

The thread runs paho's external-loop calls (``loop_read``, ``loop_write``, ``loop_misc``) around
its own ``select``, so every paho call happens in that one thread: other threads hand messages
over through :meth:`Link.publish` (a queue and a wake-up pipe).

Nothing is sent after its command was dropped (:mod:`hub.devices.connection` runs each connection):

- every connection is a **new paho client object**, so paho never re-sends (or sends late) what an
  earlier connection held; the hub itself re-sends its pending rows after each CONNACK;
- a message is handed to paho only once the connection is up (CONNACK), at most
  :data:`INFLIGHT_MAX` unacknowledged at a time (paho then writes it at once and queues nothing),
  and for a command only after ``handlers.remaining`` said its row is still live, both under
  :attr:`Link.gate`; a drop takes the same gate (:meth:`Link.revoke`), and aborts the connection
  when paho still holds unwritten bytes of the command.

- Reconnect: exponential backoff with jitter, capped at ``[mqtt] backoff_max_s`` (60 s); a
  takeover of the client id ("Session taken over", or two connections in a row closed within
  :data:`~hub.devices.reconnect.STABLE_S`) waits at least 10 s; a refused login waits
  :data:`~hub.devices.reconnect.AUTH_RETRY_S` (5 min) and is logged as one ERROR (case BC-29).
- Every paho callback is wrapped: an exception is logged and never reaches paho (BC-28).
- Watchdog: a message the hub publishes to itself every ``probe_s``; when the round trip is
  stale for two periods or the thread died, one ERROR and a new client and thread (BC-28).
- Availability (the long-running service only, ``announce``): ``<prefix>/status`` is the last
  will (``offline``, retained), ``online`` (retained) after each CONNACK, ``offline`` on a
  clean stop. A one-off command's connection publishes none of these.
"""

from __future__ import annotations

import collections
import contextlib
import logging
import os
import random
import threading
import time
import uuid

from hub.devices.client import new_client
from hub.devices.connection import Session

log = logging.getLogger("hub.devices.link")


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
        announce: True for the long-running service (``hub run`` / ``hub wyoming``): it owns
            ``<prefix>/status`` (last will ``offline``, ``online`` at CONNACK, ``offline`` at a
            clean stop); a one-off command (``hub ask``, ``hub replay``) never touches it.
    """

    def __init__(
        self, settings, client_id: str, handlers, *, factory=None, rng=None, announce: bool = True
    ) -> None:
        self.settings, self.client_id, self.handlers = settings, client_id, handlers
        self.announce = announce
        self.where = f"{settings.host}:{settings.port}"
        self.status_topic = f"{settings.topic_prefix}/status"
        self.probe_topic = f"{settings.topic_prefix}/hub/probe/{uuid.uuid4().hex[:8]}"
        self.connected = threading.Event()
        self.subscribed = threading.Event()  # the SUBACK after the latest CONNACK arrived
        self.down = False  # a connection attempt failed, or the connection was lost
        self.factory = factory or new_client
        self.rng = rng or random.Random()
        self.queue_lock = threading.Lock()
        self.gate = threading.RLock()
        """Held while a command is checked and handed to paho, and while one is dropped."""
        self._session = None  # the current generation's Session
        self.handed: set[str] = set()
        """Command keys handed to a paho client (any connection, any generation) and not
        acknowledged or dropped since: their bytes may have reached a broker (:meth:`revoke`
        cannot take them back)."""
        self.queue: collections.deque = collections.deque()
        self.wake_fd, self._wake_w = os.pipe()
        os.set_blocking(self.wake_fd, False)
        self.stopping = threading.Event()
        self.generation = 0
        self._thread: threading.Thread | None = None
        self._spawn_lock = threading.Lock()  # a rebuild and a stop never overlap
        self._watchdog: threading.Thread | None = None
        self.stop_deadline = 0.0
        """While stopping: the monotonic time by which queued messages must be out."""
        self.last_probe = time.monotonic()
        self.alive = True  # False once a dead loop could not be rebuilt

    # -- public ---------------------------------------------------------------------------------
    def start(self) -> None:
        """Start the network thread and the watchdog (connecting happens in the thread)."""
        self._spawn()
        self._watchdog = threading.Thread(target=self._watch, name="hub-mqtt-watchdog", daemon=True)
        self._watchdog.start()

    def publish(
        self,
        topic: str,
        payload: bytes,
        *,
        qos: int = 1,
        retain: bool = False,
        key: str | None = None,
        expires_at: float | None = None,
    ) -> None:
        """Hand a message to the network thread. ``key``: a command, sent only while
        ``handlers.remaining(key, expires_at)`` allows it and reported to ``on_ack`` at PUBACK;
        ``expires_at``: wall-clock seconds, sent as the MQTT v5 message expiry interval."""
        with self.queue_lock:
            self.queue.append((topic, payload, qos, retain, key, expires_at))
        self.wake()

    def revoke(self, key: str) -> None:
        """Call with :attr:`gate` held, right after ``key``'s row was dropped: nothing of it may
        be written any more. Queued copies are skipped by ``remaining``; when paho still holds
        unwritten bytes and the command is unacknowledged, the connection is aborted."""
        with self.queue_lock:
            self.queue = collections.deque(item for item in self.queue if item[4] != key)
        session = self._session
        if session is not None and session.holds_unwritten(key):
            session.abort(f"command {key} was dropped while paho still held it", end=False)

    def may_have_written(self, key: str) -> bool:
        """True when ``key``'s command was handed to a paho client and not acknowledged: it
        may be at a broker already, which delivers it whenever it gets to it (call with
        :attr:`gate` held to know it will not be handed over after)."""
        return key in self.handed

    def forget(self, key: str) -> None:
        """``key``'s command is acknowledged or dropped: :meth:`may_have_written` no longer
        needs it."""
        self.handed.discard(key)

    def stop(self, timeout_s: float = 1.0) -> None:
        """Publish ``offline`` (retained), disconnect cleanly, end the threads."""
        if self.stopping.is_set():
            return
        self.stop_deadline = time.monotonic() + timeout_s
        self.stopping.set()
        self.wake()
        with self._spawn_lock:  # a rebuild under way has started its thread; none follows
            thread = self._thread
        if thread is not None:
            thread.join(timeout_s + 1.0)

    def is_running(self) -> bool:
        """True while the current network thread is alive."""
        thread = self._thread
        return thread is not None and thread.is_alive()

    # -- threads --------------------------------------------------------------------------------
    def wake(self) -> None:
        with contextlib.suppress(OSError):
            os.write(self._wake_w, b"x")

    def _spawn(self) -> None:
        """A new generation: the old session's socket is shut (it may be stuck inside paho and
        must never write again), a new session runs in a new thread. Nothing once stopping:
        :meth:`stop` joins the thread this made (it once found one not yet started, when the
        watchdog rebuilt the client as the hub stopped: "cannot join thread before it is
        started")."""
        with self._spawn_lock:
            if self.stopping.is_set():
                return
            with self.queue_lock:
                self.generation += 1
                gen = self.generation
            old, self._session = self._session, Session(self, gen)
            if old is not None:
                old.abort("superseded")
            self.connected.clear()
            self.last_probe = time.monotonic()
            thread = threading.Thread(
                target=self._run, args=(self._session,), name=f"hub-mqtt-{gen}", daemon=True
            )
            thread.start()
            self._thread = thread

    def is_current(self, gen: int) -> bool:
        return gen == self.generation and not self.stopping.is_set()

    def _watch(self) -> None:
        """Rebuild the client when its thread died or its probe round trip went stale."""
        period = max(0.05, min(self.settings.probe_s, 5.0))
        while not self.stopping.wait(period):
            stale = (
                self.connected.is_set()
                and time.monotonic() - self.last_probe > 2 * self.settings.probe_s
            )
            if self.is_running() and not stale:
                continue
            why = "its probe went unanswered" if stale else "its network thread died"
            log.error("MQTT connection to %s is dead (%s); rebuilding the client", self.where, why)
            try:
                self._spawn()
            except Exception as exc:
                log.error("MQTT client not rebuilt: %s", exc)
                self.alive = False

    def _run(self, session) -> None:
        """One generation's life: connect, serve, back off, reconnect; until superseded."""
        try:
            session.run()
        except Exception as exc:
            log.error(
                "MQTT network loop for %s crashed: %s: %s", self.where, type(exc).__name__, exc
            )
