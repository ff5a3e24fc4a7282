"""BC-28 / BC-43: a state outside the domain's states, or an attribute of the wrong type, is
ignored with one WARNING per entity (rate-limited), whatever the dialect, and the stored state
stays as it was (hub/devices/guard.py, applied in hub/devices/routes.py)."""

from __future__ import annotations

import logging

import pytest

from hub.devices.routes import Routes
from hub.home import Entity, Home
from hub.settings import MqttSettings

DEVICES = {
    "Z Light": {"dialect": "zigbee2mqtt", "device": "Z Light"},
    "T Light": {"dialect": "tasmota", "device": "tlight"},
    "J Light": {"dialect": "ha_json", "command_topic": "j/set", "state_topic": "j/state"},
    "X Light": {"dialect": "template", "command_topic": "x/set", "state_topic": "x/state"},
}
STATE_TOPICS = {
    "H Light": "hub/light/h_light/state",
    "Z Light": "zigbee2mqtt/Z Light",
    "T Light": "stat/tlight/POWER",
    "J Light": "j/state",
    "X Light": "x/state",
}
BAD = {
    "H Light": [
        b'{"state":"BANANA"}',
        b"BANANA",
        b'{"state":"on","attributes":{"brightness":"abc"}}',
        b'{"state":"on","attributes":{"brightness_pct":NaN}}',
    ],
    "Z Light": [
        b'{"state":"BANANA"}',
        b'{"state":null}',
        b"[1,2]",
        b'{"brightness":"abc"}',
        b'{"state":"ON","brightness":Infinity}',
    ],
    "T Light": [b"BANANA", b"[1,2]"],
    "J Light": [b'{"state":"BANANA"}', b'{"state":null}', b"[1,2]", b'{"brightness":"abc"}'],
    "X Light": [b"BANANA"],
}


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def routes() -> tuple[Routes, Clock]:
    home = Home([Entity(n, "light") for n in STATE_TOPICS])
    r = Routes(MqttSettings(host="127.0.0.1", discovery=(), devices=DEVICES), home)
    for name in STATE_TOPICS:  # as if each device had reported "off"
        home.set_state(name, "off")
    clock = Clock()
    r.guard.clock = clock
    return r, clock


def warnings(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]


@pytest.mark.parametrize("name", sorted(BAD))
def test_bc28_bad_states_are_ignored_with_one_warning_per_entity(name, caplog):
    r, clock = routes()
    topic = STATE_TOPICS[name]
    for payload in BAD[name]:
        caplog.clear()
        clock.now += 61  # past the rate limit: each message gives its WARNING
        with caplog.at_level(logging.DEBUG, "hub.devices"):
            assert r.on_message(topic, payload)
        said = warnings(caplog)
        assert len(said) == 1 and name in said[0] and topic in said[0], (payload, said)
        assert r.home.state(name) == "off", payload
        assert r.home.attributes(name).get("brightness") is None
    # a valid message still applies
    good = b'{"state":"ON"}' if name in ("Z Light", "J Light") else b"ON"
    assert r.on_message(topic, good) and r.home.state(name) == "on"


def test_bc28_the_warning_is_rate_limited_per_entity(caplog):
    r, clock = routes()
    with caplog.at_level(logging.DEBUG, "hub.devices"):
        for _ in range(5):
            r.on_message(STATE_TOPICS["Z Light"], b'{"state":"BANANA"}')
        r.on_message(STATE_TOPICS["H Light"], b"BANANA")  # another entity: its own WARNING
        assert len(warnings(caplog)) == 2
        clock.now += 60
        r.on_message(STATE_TOPICS["Z Light"], b'{"state":"BANANA"}')
    assert len(warnings(caplog)) == 3
    assert r.home.state("Z Light") == "off"


def test_bc43_any_state_of_the_domain_is_kept():
    home = Home([Entity("Door", "lock"), Entity("Temp", "sensor")], states={"Door": "locked"})
    r = Routes(MqttSettings(host="127.0.0.1", discovery=()), home)
    assert r.on_message("hub/lock/door/state", b"jammed") and home.state("Door") == "jammed"
    assert r.on_message("hub/sensor/temp/state", b"21.5") and home.state("Temp") == "21.5"
    assert r.on_message("hub/lock/door/state", b"on") and home.state("Door") == "jammed"
