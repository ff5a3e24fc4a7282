"""MQTT device backend: commands exactly once per idempotency key, device state, discovery.

An action ``{"entity", "domain", "service", "data", "idempotency_key"}`` (:mod:`hub.act`) goes
to its entity's command topic (``<prefix>/<domain>/<object_id>/set``, :mod:`hub.devices.topics`)
as JSON ``{"service", "data", "idempotency_key", "expires_at"}``, QoS 1, never retained (a
retained command would be replayed to every device that subscribes later). The key is also
the MQTT v5 user property ``idempotency_key``; **a device must act once per key** and drop a
command after ``expires_at``: the same key may arrive again after a reconnect.

Exactly once, as far as the hub can make it:

1. the outbox row is written (``pending``) before the message is handed to the connection;
2. the broker's PUBACK marks it ``done``; until then it stays ``pending`` and is never reported
   failed: it is sent again on every new connection (after a reconnect, at start-up);
3. a row not acknowledged within ``[mqtt] action_ttl_s`` becomes ``expired``: the entity's
   state goes back to what the device last reported, and the user is told once. From then on
   the hub never sends it: the connection checks the row under the same gate just before it
   hands a command to paho, and gives paho nothing while disconnected
   (:mod:`hub.devices.link`). Only a command already handed to paho (perhaps written to a
   broker that had not acknowledged it) can still arrive. Never handed to paho, or in a
   dialect whose payload has an ``expires_at`` its device honours (``hub``,
   :data:`~hub.devices.routes.EXPIRING`), it cannot happen any more: "I couldn't reach the
   Kitchen Light." (``action_dropped``). Else (Zigbee2MQTT, Tasmota, ...: MQTT v5's expiry
   counts from when the broker reads it, so a stalled broker delivers it late; issue 20) it
   may still happen: "The Kitchen Light didn't confirm; it may still turn on."
   (``action_unconfirmed``), never sent again.

Until its device confirms a command, the entity is marked unconfirmed in the home, so a state
question does not answer the assumed state (:mod:`hub.devices.settle`).

:meth:`MqttBackend.publish` waits at most ``[mqtt] ack_wait_s`` for the PUBACK and returns
``"done"`` or ``"queued"`` (the answer then says it will happen when the device is reachable);
it never waits while the broker is known to be down or while the ``mqtt`` breaker is open.
"""

from __future__ import annotations

import atexit
import json
import logging
import os
import signal
import sys
import threading
import time

from hub.devices.acks import Acks
from hub.devices.discovery import Discovery
from hub.devices.echo import ECHOING, EchoWatch
from hub.devices.expiry import Expiry
from hub.devices.identity import client_id_for, is_second, release
from hub.devices.link import Link
from hub.devices.outbox import DONE, EXPIRED, Outbox
from hub.devices.pacing import Pacer
from hub.devices.routes import DialectError, Routes
from hub.devices.settle import Settle
from hub.devices.topics import slug
from hub.errors import ConfigError, FatalError

__all__ = ["MqttBackend", "make_backend", "slug", "LOCAL_DOMAINS", "KEY_PROPERTY"]

log = logging.getLogger("hub.devices.mqtt")

LOCAL_DOMAINS = frozenset({"timer"})
"""Action domains handled inside the hub and never published."""
KEY_PROPERTY = "idempotency_key"
"""Name of the MQTT v5 user property that carries the action's idempotency key."""
CRASH_ENV = "HUB_TEST_CRASH_AFTER_OUTBOX"
"""Tests only: when set to ``1`` the process kills itself (SIGKILL) right after the outbox write."""


def print_event(event: dict) -> None:
    """The default ``notify``: one JSON line on stdout (design.md, events that are not turns)."""
    sys.stdout.write(json.dumps(event, ensure_ascii=False) + "\n")
    sys.stdout.flush()


class MqttBackend:
    """The device backend; see the module doc. Starts its connection thread at once.

    Args:
        settings: :class:`hub.settings.MqttSettings`.
        home: the :class:`hub.home.Home` whose entities it commands and whose state follows the
            devices; None: no entities (commands still go to the default topics).
        store: the hub's store (outbox, install id, discovery topics); None: memory only.
        breaker: a :class:`hub.resilience.breaker.CircuitBreaker` for the broker, or None.
        notify: ``(event dict) -> None`` for ``action_dropped`` and ``action_unconfirmed``;
            default :func:`print_event`.
        client_factory: ``(client_id) -> paho Client`` (tests).
        service: True for the long-running service (``hub run`` / ``hub wyoming``), the one
            identity of the hub in MQTT: availability and discovery. False for one-off
            commands (``hub ask``, ``hub replay``): a client id of their own, no status, no
            discovery configs, no hub entity states (issue 20, "one hub, one identity").
    Raises:
        ConfigError: bad topics, colliding entity topics, or a bad QoS.
    """

    def __init__(
        self,
        settings,
        *,
        home=None,
        store=None,
        breaker=None,
        notify=None,
        client_factory=None,
        clock=time.time,
        service: bool = True,
    ) -> None:
        if settings.qos not in (1, 2):
            raise ConfigError(
                f"mqtt.qos: commands need an acknowledgement: 1 or 2, got {settings.qos!r}"
            )
        self.settings, self.home, self.breaker, self._clock = settings, home, breaker, clock
        self.routes = Routes(settings, home)
        self.echo = EchoWatch(self._unconfirmed)
        self.routes.on_update = self._reported_by
        self.topics = self.routes.topics
        self.settle = Settle(home, self.routes.reported)
        self.outbox = Outbox(store)
        self.notify = notify if notify is not None else print_event
        self.acks = Acks()
        self._ours: dict[str, str] = {}  # key -> entity of rows this run wrote (not finished)
        self.service = service
        self.client_id = client_id_for(settings, store, "" if service else "once")
        owner = service and not is_second(self.client_id)  # a second hub leaves HA's to it
        self.link = Link(settings, self.client_id, self, factory=client_factory, announce=owner)
        self.discovery = Discovery(self, store, enabled=owner)
        self._closed = threading.Event()
        self.pacer = Pacer(lambda q: self.link.publish(q.topic, q.payload, qos=1))
        self.link.start()
        self.expiry = Expiry(self.outbox, self._drop, clock, settings.action_ttl_s)
        self.expiry.start()

    # -- the act node's call ------------------------------------------------------------------
    def publish(
        self, action: dict, cancel: threading.Event | None = None, wait_s: float | None = None
    ) -> str:
        """Send one action; ``"local"`` (timer), ``"done"`` (PUBACK), ``"queued"`` (pending:
        sent when the broker is reachable), ``"repeat"`` (this key was dropped before) or
        ``"cancelled"`` (``cancel`` was set before the send: the row is dropped, nothing sent).

        Args:
            action: ``{"entity", "domain", "service", "data", "idempotency_key"}``.
            cancel: set when the caller gave up (the act node timed out).
            wait_s: longest wait for the PUBACK (capped by ``[mqtt] ack_wait_s``); keep it
                below the caller's own timeout, so "queued" is said, never "failed".
        Raises:
            FatalError: the action has no idempotency key.
        """
        if action.get("domain") in LOCAL_DOMAINS:
            return "local"
        key = action.get("idempotency_key") or ""
        if not key:
            raise FatalError(
                f"action {action.get('service')} for {action.get('entity')} has no "
                f"idempotency key; not published",
                node="act",
            )
        record = self._record(action)
        if isinstance(record, str):
            return record
        acked = self.acks.expect(key)
        before = self.outbox.add(key, record)
        if before is not None:
            if before != "pending":
                self.acks.take(key)
            return "done" if before == DONE else "repeat" if before == EXPIRED else "queued"
        self._ours[key] = action.get("entity", "")
        self.settle.mark(action)
        crash_point()
        if cancel is not None and cancel.is_set():  # the turn already said it failed
            with self.link.gate:  # a re-send after a CONNACK may have picked the row up
                self.outbox.mark(key, EXPIRED)
                self.link.revoke(key)
            self.settle.restore(action.get("entity", ""), key)
            return "cancelled"
        self._send(key, record)
        limit = (
            self.settings.ack_wait_s
            if wait_s is None
            else max(0.0, min(wait_s, self.settings.ack_wait_s))
        )
        wait = self.acks.wait(acked, limit, down=self._down, cancel=cancel, breaker=self.breaker)
        return "done" if wait else "queued"

    def _record(self, action: dict) -> dict | str:
        """The outbox row of ``action`` (``{action, topic, expires_at, payload}``), or what
        :meth:`publish` says instead: ``"unreachable"`` (the device is offline) or
        ``"unsupported"`` (its dialect cannot say it); nothing is sent then."""
        expires_at = self._clock() + self.settings.action_ttl_s
        refused = self._refuse(action)
        if refused:
            return refused
        try:
            message = self.routes.encode(action, expires_at)
        except DialectError as exc:
            log.warning(
                "MQTT: %s for %s not sent: %s", action.get("service"), action.get("entity"), exc
            )
            self.settle.restore(action.get("entity", ""))
            return "unsupported"
        if message.note:  # said after the answer (speech.queued_update), e.g. a clamped value
            action["note"] = message.note
        return {
            "action": action,
            "topic": message.topic,
            "expires_at": expires_at,
            "payload": message.payload.decode("utf-8"),
        }

    def _refuse(self, action: dict) -> str:
        """``"unreachable"`` (nothing sent, its state put back) when the device or its bridge
        said it is offline; else ""."""
        name = action.get("entity", "")
        if self.routes.reachable(name):
            return ""
        log.info("MQTT: %s not sent to the %s: it is offline", action.get("service"), name)
        self.settle.restore(name)
        return "unreachable"

    def _unconfirmed(self, event: dict) -> None:
        """No echo: the assumed state is not a fact, so the last reported one is put back."""
        self.settle.restore(event.get("entity", ""), event.get("idempotency_key"))
        self.notify(event)

    def _reported_by(self, name: str) -> None:
        """A dialect device reported its state: an echo, perhaps a confirmation."""
        self.echo.echoed(name)
        self.settle.reported_by(name, self.outbox.status)

    def _send(self, key: str, record: dict) -> None:
        topic, payload, qos = self._message(key, record)
        self.link.publish(topic, payload, qos=qos, key=key, expires_at=record["expires_at"])

    def _message(self, key: str, record: dict) -> tuple:
        """``(topic, payload, qos)`` of ``key``'s command."""
        payload = record.get("payload")
        if payload is None:  # a row written before dialects: the hub's JSON
            payload = self.routes.encode(record["action"], record["expires_at"]).payload
        elif not isinstance(payload, bytes):
            payload = str(payload).encode("utf-8")
        return record["topic"], payload, self.settings.qos

    def _down(self) -> bool:
        """True while the broker is known to be unreachable (nothing is waited for then)."""
        return self.link.down and not self.link.connected.is_set()

    def wait_done(self, key: str, timeout_s: float) -> bool:
        """Wait until ``key``'s row is ``done``; True when it is (tests, ``close``)."""
        end = time.monotonic() + timeout_s
        while time.monotonic() < end:
            if self.outbox.status(key) == DONE:
                return True
            time.sleep(0.02)
        return self.outbox.status(key) == DONE

    # -- Link handlers ------------------------------------------------------------------------
    def subscriptions(self) -> list[str]:
        """Topics to (re)subscribe after every CONNACK: device states, HA's birth, the mute."""
        return self.routes.subscriptions() + self.discovery.subscriptions()

    def on_connected(self) -> None:
        """After each CONNACK: discovery and the hub's states are published, and devices that
        can be asked are asked for their state (Tasmota each time, Zigbee2MQTT once, paced)."""
        self.discovery.on_connected()
        for query in self.routes.queries():
            self.link.publish(query.topic, query.payload, qos=1)
        self.pacer.start(self.routes.queries(once=True))  # the first CONNACK only

    def resend(self) -> list[tuple]:
        """``[(topic, payload, qos, retain, key, expires_at)]`` of every pending row not past its
        ``expires_at``, oldest first: what each new connection sends again."""
        now = self._clock()
        return [
            (*self._message(key, record), False, key, record["expires_at"])
            for key, record in self.outbox.pending()
            if record.get("expires_at", 0) > now and record.get("backend", "mqtt") == "mqtt"
        ]

    def remaining(self, key: str, expires_at: float | None) -> float | None:
        """Seconds ``key``'s command may still be sent, or None: its row is done or dropped (or
        never written), or ``expires_at`` passed. Called with the link's gate held."""
        if self.outbox.status(key) not in ("pending", "failed"):
            return None
        left = (expires_at or 0) - self._clock()
        return left if left > 0 else None

    def on_ack(self, key: str, ok: bool) -> None:
        """PUBACK for ``key``: the row is done (or dropped when the broker refused it); the
        entity's command is confirmed now, or, for a device that echoes, at its echo."""
        acked = self.acks.take(key)
        if not ok:
            log.warning("MQTT broker refused the command %s", key)
            self._drop(key, self.outbox_record(key), refused=True)
            return
        self.link.forget(key)
        name = self._ours.pop(key, "")
        if self.outbox.status(key) == EXPIRED:
            log.warning(
                "MQTT: command %s, written before it expired, reached the broker after; "
                "a hub-dialect device drops it (its expires_at has passed), others may act on "
                "it (their next state settles it)",
                key,
            )
            return
        record = self.outbox_record(key) if self.routes.devices else None
        if record is not None and self.routes.dialect(record["action"].get("entity")) in ECHOING:
            self.echo.sent(key, record["action"])
        elif name:
            self.settle.confirmed(name, key)
        self.outbox.mark(key, DONE)
        if acked is not None:
            acked.set()

    def outbox_record(self, key: str) -> dict | None:
        """The pending record of ``key``, or None."""
        return dict(self.outbox.pending()).get(key)

    def on_message(self, topic: str, payload: bytes) -> None:
        """A device state, HA's birth message or a hub switch command."""
        if self.discovery.on_message(topic, payload):
            return
        if not self.routes.on_message(topic, payload):
            log.warning("MQTT message on %s dropped: not a topic the hub reads", topic)

    # -- expiry ---------------------------------------------------------------------------------
    def expire(self) -> int:
        """Drop every pending row past its ``expires_at`` now; returns how many."""
        return self.expiry.expire()

    def _drop(self, key: str, record: dict | None, refused: bool = False) -> None:
        """Mark ``key`` expired (under the link's gate, so the connection never sends it after
        this), undo the optimistic state, tell the user once: "I couldn't reach ..." when it
        cannot happen any more (``refused`` by the broker, never handed to paho, or its device
        honours ``expires_at``), else "... didn't confirm; it may still ..." (module doc)."""
        if record is None:
            return
        action = record["action"]
        with self.link.gate:
            if self.outbox.status(key) not in ("pending", "failed"):
                return
            self.outbox.mark(key, EXPIRED)
            maybe = not refused and self._may_be_at_broker(key, action.get("entity", ""))
            self.link.revoke(key)
        self.acks.take(key)
        self.link.forget(key)
        self._ours.pop(key, None)
        self.notify(self.settle.expired(key, action, maybe, self.settings.action_ttl_s))

    def _may_be_at_broker(self, key: str, name: str) -> bool:
        """(Gate held.) True when ``key``'s command may still reach ``name``'s device: it may
        be at a broker (handed to paho in this run, or by an earlier run: not known) and its
        device does not drop it by its ``expires_at`` (the payload has none)."""
        if self.routes.expires_in_payload(name):
            return False
        return self.link.may_have_written(key) or key not in self._ours

    def healthy(self) -> bool:
        """False once the network loop died and could not be rebuilt (stop feeding the
        service watchdog); a broker that is merely down is still healthy."""
        return self.link.alive and (self.link.is_running() or self._closed.is_set())

    # -- the hub's own entities -----------------------------------------------------------------
    def on_turn(self, trace: dict) -> None:
        """Publish the hub's status, last transcript, intent and fallback level."""
        self.discovery.on_turn(trace)

    def close(self, timeout_s: float = 1.0) -> None:
        """Flush what is queued (up to ``timeout_s``), publish ``offline``, disconnect."""
        if self._closed.is_set():
            return
        self._closed.set()
        self.expiry.close()
        self.pacer.close()
        self.echo.close()
        self.link.stop(timeout_s)
        release(self.client_id)


def crash_point() -> None:
    """Tests only (``HUB_TEST_CRASH_AFTER_OUTBOX=1``): SIGKILL this process between the outbox
    write and the publish."""
    if os.environ.get(CRASH_ENV) == "1":
        os.kill(os.getpid(), signal.SIGKILL)


def make_backend(
    settings, store=None, *, home=None, breaker=None, notify=None, service: bool = True
) -> MqttBackend | None:
    """The MQTT backend, connecting in the background; None when ``[mqtt]`` has no host or
    ``enabled = false``. Closed cleanly at exit (the service publishes ``offline``).
    ``service``: see :class:`MqttBackend`."""
    if not settings.enabled or not settings.host:
        return None
    backend = MqttBackend(
        settings, home=home, store=store, breaker=breaker, notify=notify, service=service
    )
    atexit.register(backend.close)
    return backend
