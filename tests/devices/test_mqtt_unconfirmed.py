"""Issue 20: the hub never says a command failed that may still happen, and never answers a
state it only assumed.

A command handed to paho may be at a broker already (written, not acknowledged). When its
dialect's payload has no ``expires_at`` the device honours (Zigbee2MQTT here), a frozen broker
may deliver it after the TTL: the hub says "didn't confirm; it may still ...", never "couldn't
reach", puts back the last reported state and lets the device's next state settle it. A
command never handed to paho, or one in the hub's own dialect, cannot happen after its TTL:
"I couldn't reach ..." stays true. While a command is not confirmed, a state question says
so instead of the assumed state.

No broker: a paho stand-in (fake_paho.py) whose "broker" is frozen until the test acknowledges,
or a port where nothing listens; the wall clock is a ManualClock.
"""

from __future__ import annotations

import json
import time

import pytest
from fake_paho import FakeFactory

from hub.bench.broker import free_port
from hub.devices.mqtt import MqttBackend
from hub.devices.queued import unconfirmed_text
from hub.home import Entity, Home
from hub.resilience.deadline import ManualClock
from hub.settings import MqttSettings

from fakes import wait_for

LAMP, LIGHT = "Living Room Lamp", "Kitchen Light"
LAMP_STATE, LAMP_SET = f"zigbee2mqtt/{LAMP}", f"zigbee2mqtt/{LAMP}/set"
LIGHT_SET = "hub/light/kitchen_light/set"
TTL_S = 60.0


class Events(list):
    def __call__(self, event):
        self.append(event)


def action(entity: str, key: str, service: str = "turn_on", **data) -> dict:
    return {
        "entity": entity,
        "domain": "light",
        "service": service,
        "data": data,
        "idempotency_key": key,
    }


@pytest.fixture()
def rig():
    """``make(factory=None) -> backend``: the Living Room Lamp on Zigbee2MQTT, the Kitchen
    Light in the hub's dialect, on a ManualClock (``backend.wall``); no factory: a port where
    nothing listens (the broker is absent). Every backend is closed after the test."""
    made = []

    def make(factory=None) -> MqttBackend:
        home = Home(
            [Entity(LAMP, "light", "Living Room"), Entity(LIGHT, "light", "Kitchen")],
            states={LIGHT: "off"},
        )
        settings = MqttSettings(
            host="127.0.0.1",
            port=free_port(),
            discovery=(),
            ack_wait_s=0.05,
            action_ttl_s=TTL_S,
            probe_s=600.0,
            backoff_max_s=1.0,
            devices={LAMP: {"dialect": "zigbee2mqtt"}},
        )
        wall = ManualClock(time.time())
        b = MqttBackend(
            settings,
            home=home,
            notify=Events(),
            client_factory=factory,
            clock=wall,
            service=False,
        )
        b.wall = wall
        made.append(b)
        if factory is not None:
            assert b.link.subscribed.wait(10), "the fake broker's SUBACK did not come"
        return b

    yield make
    for b in made:
        b.close()


def reported(b: MqttBackend, factory: FakeFactory | None, state: str) -> None:
    """The lamp reports ``state`` (ON/OFF) and the home has it."""
    payload = json.dumps({"state": state}).encode()
    if factory is None:
        b.on_message(LAMP_STATE, payload)  # what the network thread would call
    else:
        factory.client.deliver(LAMP_STATE, payload)
    assert wait_for(lambda: b.home.state(LAMP) == state.lower())


def expired(b: MqttBackend) -> list[dict]:
    """The events once the clock passed the TTL and the expiry ran (its thread or this)."""
    b.wall.advance(TTL_S + 1)
    assert wait_for(lambda: b.expire() == 0 and b.notify), "nothing was told at the TTL"
    return list(b.notify)


def test_unconfirmed_text_says_what_may_still_happen():
    assert unconfirmed_text(action(LAMP, "k")) == (
        "The Living Room Lamp didn't confirm; it may still turn on."
    )
    assert unconfirmed_text(action(LAMP, "k", brightness_pct=0)) == (
        "The Living Room Lamp didn't confirm; it may still turn off."
    )
    assert unconfirmed_text(action(LAMP, "k", "toggle")) == (
        "The Living Room Lamp didn't confirm; it may still happen."
    )


def test_issue20_written_to_a_frozen_broker_is_unconfirmed_at_its_ttl_not_failed(rig):
    """The tester's case: Zigbee2MQTT, the broker frozen with the command written to it."""
    factory = FakeFactory()
    b = rig(factory)
    reported(b, factory, "OFF")
    b.home.set_state(LAMP, "on")  # the handler's assumed state
    assert b.publish(action(LAMP, "f:0:0")) == "queued"
    assert wait_for(lambda: factory.client.commands(LAMP_SET)), "never handed to paho"
    assert b.link.may_have_written("f:0:0")
    assert b.home.unconfirmed(LAMP) == {"key": "f:0:0", "verb": "turn on"}
    assert expired(b) == [
        {
            "event": "action_unconfirmed",
            "entity": LAMP,
            "service": "turn_on",
            "idempotency_key": "f:0:0",
            "response": "The Living Room Lamp didn't confirm; it may still turn on.",
        }
    ]
    assert b.home.state(LAMP) == "off"  # the last reported state: the assumed one is no fact
    assert b.home.unconfirmed(LAMP) is not None  # ... and it may still turn on
    assert b.outbox.status("f:0:0") == "expired" and b.resend() == []  # never sent again
    # the broker thaws: the late PUBACK, then the device's echo settles the home's state
    factory.client.ack(LAMP_SET)
    assert wait_for(lambda: not b.link.may_have_written("f:0:0"))
    assert b.home.unconfirmed(LAMP) is not None  # a PUBACK is not the device
    reported(b, factory, "ON")
    assert b.home.unconfirmed(LAMP) is None
    assert len(factory.client.commands(LAMP_SET)) == 1 and len(b.notify) == 1


def test_issue20_never_handed_to_paho_is_couldnt_reach(rig):
    """Queued while the broker is absent: revoked at its TTL, it can never be sent."""
    b = rig()
    reported(b, None, "OFF")
    b.home.set_state(LAMP, "on")
    assert b.publish(action(LAMP, "a:0:0")) == "queued"
    assert b.home.unconfirmed(LAMP) is not None
    assert not b.link.may_have_written("a:0:0")
    events = expired(b)
    assert [(e["event"], e["response"]) for e in events] == [
        ("action_dropped", "I couldn't reach the Living Room Lamp.")
    ]
    assert b.home.state(LAMP) == "off" and b.home.unconfirmed(LAMP) is None
    assert b.resend() == []


def test_issue20_hub_dialect_written_to_a_frozen_broker_stays_couldnt_reach(rig):
    """The hub's payload carries ``expires_at``, which its devices honour: a late delivery is
    dropped by the device, so "couldn't reach" is true."""
    factory = FakeFactory()
    b = rig(factory)
    b.home.set_state(LIGHT, "on")
    assert b.publish(action(LIGHT, "h:0:0")) == "queued"
    assert wait_for(lambda: factory.client.commands(LIGHT_SET))
    assert b.link.may_have_written("h:0:0")
    assert [(e["event"], e["response"]) for e in expired(b)] == [
        ("action_dropped", "I couldn't reach the Kitchen Light.")
    ]
    assert b.home.state(LIGHT) == "off" and b.home.unconfirmed(LIGHT) is None


def test_issue20_confirmed_by_puback_in_the_hub_dialect_and_by_the_echo_otherwise(rig):
    factory = FakeFactory()
    b = rig(factory)
    assert b.publish(action(LIGHT, "p:0:0")) == "queued"
    assert b.home.unconfirmed(LIGHT) == {"key": "p:0:0", "verb": "turn on"}
    assert wait_for(lambda: factory.client.commands(LIGHT_SET))
    factory.client.ack(LIGHT_SET)
    assert wait_for(lambda: b.home.unconfirmed(LIGHT) is None)
    assert b.outbox.status("p:0:0") == "done"

    b.echo.wait_s = 60.0  # the echo below comes whenever this test gets to it
    reported(b, factory, "OFF")
    b.home.set_state(LAMP, "on", brightness_pct=40)
    assert b.publish(action(LAMP, "p:1:0", brightness_pct=40)) == "queued"
    assert b.home.unconfirmed(LAMP)["verb"] == "change its brightness"
    reported(b, factory, "OFF")  # a report from before the command reached the broker
    assert b.home.unconfirmed(LAMP) is not None
    factory.client.ack(LAMP_SET)
    assert wait_for(lambda: b.outbox.status("p:1:0") == "done")
    assert b.home.unconfirmed(LAMP) is not None  # the broker has it; the lamp has not said
    reported(b, factory, "ON")
    assert b.home.unconfirmed(LAMP) is None and not b.notify


def test_issue20_a_newer_command_keeps_its_own_mark(rig):
    factory = FakeFactory()
    b = rig(factory)
    assert b.publish(action(LIGHT, "n:0:0")) == "queued"
    assert b.publish(action(LIGHT, "n:1:0", "turn_off")) == "queued"
    assert wait_for(lambda: len(factory.client.commands(LIGHT_SET)) == 2)
    assert b.home.unconfirmed(LIGHT) == {"key": "n:1:0", "verb": "turn off"}
    assert not b.home.settle(LIGHT, "n:0:0")  # the older one's confirmation settles nothing
    assert b.home.unconfirmed(LIGHT)["key"] == "n:1:0"


# -- the state question (hub ask) ---------------------------------------------------------------
@pytest.fixture()
def asked():
    """``(hub, backend, factory)``: the sample home through ``hub ask``, its MQTT backend on
    the frozen fake broker and a ManualClock."""
    from fakes import make_hub

    factory, wall, made = FakeFactory(), ManualClock(time.time()), []

    def devices(hub):
        settings = MqttSettings(
            host="127.0.0.1",
            port=free_port(),
            discovery=(),
            ack_wait_s=0.05,
            action_ttl_s=TTL_S,
            probe_s=600.0,
        )
        made.append(
            MqttBackend(
                settings,
                home=hub.home,
                notify=Events(),
                client_factory=factory,
                clock=wall,
                service=False,
            )
        )
        return made[-1]

    hub = make_hub(entry="ask", factories={"devices": devices})
    b = hub.engines.devices()
    b.wall = wall
    assert b.link.subscribed.wait(10)
    yield hub, b, factory
    b.close()


def test_issue20_state_question_while_a_command_is_queued_says_it_is_not_confirmed(asked):
    hub, b, factory = asked
    assert hub.turn_text("is the kitchen light on")["response"] == "No, off."
    said = hub.turn_text("turn on the kitchen light")["response"]
    assert said == "I'll turn on the Kitchen Light when it's reachable.", said
    assert hub.home.state("Kitchen Light") == "on"  # assumed
    said = hub.turn_text("is the kitchen light on")["response"]
    assert said == "I've asked the Kitchen Light to turn on; it hasn't confirmed yet.", said
    said = hub.turn_text("what is the brightness of the kitchen light")["response"]
    assert "hasn't confirmed yet" in said, said
    factory.client.ack(LIGHT_SET)  # the broker thaws: the hub dialect's confirmation
    assert wait_for(lambda: hub.home.unconfirmed("Kitchen Light") is None)
    assert hub.turn_text("is the kitchen light on")["response"] == "Yes."


def test_issue20_state_question_after_the_drop_is_a_fact_again(asked):
    hub, b, factory = asked
    hub.turn_text("turn on the kitchen light")
    said = hub.turn_text("is the kitchen light on")["response"]
    assert said == "I've asked the Kitchen Light to turn on; it hasn't confirmed yet.", said
    assert [e["response"] for e in expired(b)] == ["I couldn't reach the Kitchen Light."]
    assert hub.turn_text("is the kitchen light on")["response"] == "No, off."


def test_issue20_several_targets_only_a_found_yes_is_sure(asked):
    hub, b, factory = asked
    hub.turn_text("turn on the kitchen light")
    said = hub.turn_text("are any lights on")["response"]
    assert said == "Yes, Office Light.", said  # on, as the home knows: the Kitchen Light aside
    hub.turn_text("turn off the office light")
    said = hub.turn_text("are any lights on")["response"]
    assert said == (
        "I've sent the Kitchen Light and Office Light a command; they haven't confirmed yet."
    ), said


# -- a real Mosquitto, frozen (SIGSTOP) ---------------------------------------------------------
@pytest.mark.live
def test_issue20_live_frozen_broker_delivers_late_and_the_echo_settles(tmp_path):
    """The tester's run: Mosquitto frozen with the Zigbee2MQTT command written to it; at the
    TTL "didn't confirm; it may still turn on"; thawed, the command arrives once and the
    device's state settles the home."""
    from hub.bench.broker import Broker

    from mqtt_broker import WAIT_S, Recorder, until

    broker = Broker(tmp_path)
    device = Recorder(broker.port, LAMP_SET)
    home = Home([Entity(LAMP, "light", "Living Room")])
    settings = MqttSettings(
        host="127.0.0.1",
        port=broker.port,
        discovery=(),
        ack_wait_s=0.2,
        action_ttl_s=2.0,
        probe_s=60.0,
        devices={LAMP: {"dialect": "zigbee2mqtt"}},
    )
    b = MqttBackend(settings, home=home, notify=Events(), service=False)
    try:
        assert b.link.subscribed.wait(WAIT_S)
        device.send(LAMP_STATE, b'{"state":"OFF"}')
        assert until(lambda: home.state(LAMP) == "off")
        broker.freeze()
        try:
            home.set_state(LAMP, "on")
            assert b.publish(action(LAMP, "live:0:0")) == "queued"
            assert until(lambda: b.link.may_have_written("live:0:0")), "not handed to paho"
            assert until(lambda: b.notify, WAIT_S), "nothing was told at the TTL"
        finally:
            broker.thaw()
        assert [(e["event"], e["response"]) for e in b.notify] == [
            ("action_unconfirmed", "The Living Room Lamp didn't confirm; it may still turn on.")
        ]
        assert home.state(LAMP) == "off" and home.unconfirmed(LAMP) is not None
        assert until(lambda: [m for m in device.all if m[1] == LAMP_SET]), "never delivered"
        device.send(LAMP_STATE, b'{"state":"ON"}')  # the lamp turned on and says so
        assert until(lambda: home.state(LAMP) == "on" and home.unconfirmed(LAMP) is None)
        device.settle()
        assert len([m for m in device.all if m[1] == LAMP_SET]) == 1 and len(b.notify) == 1
    finally:
        b.close()
        device.close()
        broker.close()
