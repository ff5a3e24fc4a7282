"""A dropped command is never sent (issue 9): once the hub said "I couldn't reach the Kitchen
Light.", nothing of that command may leave the hub, whether it waited in the hub's queue while
the broker was absent or was in flight on a connection that then died. A command still within
its ``action_ttl_s`` arrives exactly once.

Each test has its own Mosquitto with persistence (tests/mqtt_broker.py) and a "device": a
persistent session subscribed to every command topic before the hub starts, so whatever the
hub publishes after the broker is back is delivered to it, however the reconnects are timed.
The broker's own log (``Received PUBLISH from <hub>``) is checked too.
"""

from __future__ import annotations

import re
import time

import pytest

from hub.devices.mqtt import MqttBackend
from hub.settings import MqttSettings
from hub.store.db import Store

from mqtt_broker import Broker, Recorder, home, until  # noqa: F401 - fixture

COMMANDS = "hub/+/+/set"
MARKER = "hub/test/marker/set"
"""Published by the hub after the test's commands: once it arrives, everything before it has."""
DROPPED = "I couldn't reach the Kitchen Light."


class Events(list):
    """The backend's ``notify``: ``(wall-clock seconds, event)`` of each call."""

    def __call__(self, event):
        self.append((time.time(), event))


def action(key: str) -> dict:
    return {
        "entity": "Kitchen Light",
        "domain": "light",
        "service": "turn_on",
        "data": {},
        "idempotency_key": key,
    }


def hub_publishes(broker: Broker, client_id: str) -> int:
    """Command PUBLISH packets the broker received from the hub (its log)."""
    return len(
        re.findall(
            rf"Received PUBLISH from {re.escape(client_id)} \([^)]*, "
            rf"'hub/(?!test/marker/)[^']+/set'",
            broker.log(),
        )
    )


def settled(b: MqttBackend, dev: Recorder) -> list[str]:
    """The command keys the device got, once all the hub sent before now has arrived: a marker
    the hub publishes now comes after it (MQTT keeps the order of one connection's messages,
    and the hub re-sends its pending rows first after each CONNACK)."""
    b.link.publish(MARKER, b'{"idempotency_key": "marker"}', qos=1)
    received = dev.keys  # the keys so far (a method, not a dict's keys)
    assert dev.wait_for(lambda: "marker" in received(), 10), "the marker did not arrive"
    return [key for key in received() if key != "marker"]


@pytest.fixture()
def setup(tmp_path, home):
    """``(broker, make_backend, events)``: a broker with the device's session saved in its
    persistence file, stopped (SIGTERM); everything is closed after the test."""
    broker = Broker(tmp_path, persistence=True)
    Recorder(broker.port, COMMANDS, client_id="device", persistent=True).close()
    broker.stop()
    events, made, devices = Events(), [], []

    def make(**kw) -> MqttBackend:
        s = MqttSettings(
            **{
                "host": "127.0.0.1",
                "port": broker.port,
                "backoff_max_s": 1.0,
                "ack_wait_s": 0.2,
                "discovery": (),
                **kw,
            }
        )
        made.append(MqttBackend(s, home=home, store=Store(tmp_path / "hub.db"), notify=events))
        return made[-1]

    def device() -> Recorder:
        devices.append(Recorder(broker.port, COMMANDS, client_id="device", persistent=True))
        return devices[-1]

    yield broker, make, device, events
    for d in devices:
        d.close()
    for b in made:
        b.close()
    broker.close()


def test_command_dropped_while_the_broker_was_absent_is_never_sent(setup):
    broker, make, device, events = setup
    b = make(action_ttl_s=2.0)
    given = time.time()
    assert b.publish(action("absent:0:0")) == "queued"
    assert until(lambda: events, 15), "the drop was never told"
    told, event = events[0]
    assert event["response"] == DROPPED and told >= given + 2.0
    broker.start()
    assert b.link.subscribed.wait(15), "the hub did not connect to the broker again"
    assert settled(b, device()) == []
    assert hub_publishes(broker, b.client_id) == 0
    assert b.outbox.status("absent:0:0") == "expired" and len(events) == 1


def test_command_given_while_the_broker_is_absent_arrives_once_within_its_ttl(setup):
    broker, make, device, events = setup
    b = make(action_ttl_s=60.0)
    assert b.publish(action("absent:1:0")) == "queued"
    assert until(lambda: b.link.down, 10)  # an attempt failed while the broker was absent
    broker.start()
    assert b.wait_done("absent:1:0", 20), "the command was not acknowledged"
    dev = device()
    assert dev.wait_for(lambda: dev.keys(), 10), "the device got nothing"
    assert settled(b, dev) == ["absent:1:0"]
    assert hub_publishes(broker, b.client_id) == 1
    assert events == []


@pytest.mark.parametrize("ttl_s, arrives", [(2.0, []), (60.0, ["flight:0:0"])])
def test_command_in_flight_when_the_broker_died(setup, ttl_s, arrives):
    """Written to a frozen broker (SIGSTOP), never acknowledged; the broker killed and started
    again: dropped meanwhile, it is not sent again; still live, it arrives once."""
    broker, make, device, events = setup
    broker.start()
    b = make(action_ttl_s=ttl_s, probe_s=60.0)
    assert b.link.subscribed.wait(15)
    broker.freeze()
    assert b.publish(action("flight:0:0")) == "queued"
    assert "flight:0:0" in b.link._session.sent, "the command was not handed to paho"
    if not arrives:
        assert until(lambda: events, 15), "the drop was never told"
        assert events[0][1]["response"] == DROPPED
    broker.kill()  # what the frozen broker had read dies with it
    broker.start()
    assert b.link.subscribed.wait(15), "the hub did not connect to the broker again"
    if arrives:
        assert b.wait_done("flight:0:0", 20), "the command was not sent again"
    assert settled(b, device()) == arrives
    assert hub_publishes(broker, b.client_id) == len(arrives)
    assert len(events) == (0 if arrives else 1)


def test_dropped_while_paho_still_holds_bytes_of_it_aborts_the_connection(setup, caplog):
    """When paho may still hold unwritten bytes of a dropped command (a full socket buffer:
    ``want_write`` is true, as seen from the thread that drops it), the connection is shut
    at once, so paho can write nothing more; the next connection is a new client."""
    import logging
    import threading

    broker, make, device, events = setup
    broker.start()
    b = make(action_ttl_s=2.0, probe_s=60.0)
    assert b.link.subscribed.wait(15)
    broker.freeze()
    assert b.publish(action("held:0:0")) == "queued"
    session = b.link._session
    client = session.client
    real = client.want_write
    client.want_write = lambda: threading.current_thread().name == "hub-mqtt-expiry" or real()
    with caplog.at_level(logging.INFO, logger="hub.devices"):
        assert until(lambda: events, 15), "the drop was never told"
        assert until(
            lambda: any(
                "aborted (command held:0:0 was dropped" in r.getMessage() for r in caplog.records
            ),
            5,
        )
    broker.kill()
    broker.start()
    assert b.link.subscribed.wait(15), "the hub did not connect to the broker again"
    assert session.client is not client and b.link._session is session
    assert settled(b, device()) == [] and hub_publishes(broker, b.client_id) == 0
