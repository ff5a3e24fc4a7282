"""BC-42: a state Home Assistant cannot vouch for (the entity unavailable, or the hub's link to
HA down until a full refresh) is never answered from, and an action on such an entity never
claims success (against the fake HA WebSocket server, through the whole hub)."""

from __future__ import annotations

import dataclasses

import pytest
from fake_ha import TOKEN, FakeHa
from test_ha_import import _until, registries

from hub.settings import HomeAssistantSettings

from fakes import make_hub

pytestmark = pytest.mark.live
LINKS = {"Kitchen Light": {"entity_id": "light.kitchen"}}
CANT = "Sorry, I can't check the Kitchen Light right now"


@pytest.fixture()
def ha():
    data, states = registries()
    fake = FakeHa(data, states)
    yield fake
    fake.close()


@pytest.fixture()
def hub(ha, monkeypatch):
    monkeypatch.setenv("HUB_HA_TOKEN", TOKEN)
    hub = make_hub(entry="ask")
    hub.settings = dataclasses.replace(
        hub.settings,
        homeassistant=HomeAssistantSettings(url=ha.url, entities=LINKS, timeout_s=2.0),
    )
    hub.engines.warm(["rules", "devices"])
    assert _until(lambda: hub.engines.devices().ha.status == "up")
    yield hub
    hub.engines.devices().close()


def test_bc42_an_unavailable_entity_is_not_answered_from_nor_said_done(ha, hub):
    ha.run(ha.change("light.kitchen", "unavailable"))
    assert _until(lambda: hub.home.state("Kitchen Light") == "unavailable")
    asked = hub.turn_text("is the kitchen light on")
    assert asked["response"].startswith(CANT), asked["response"]
    calls = len(ha.calls)
    done = hub.turn_text("turn on the kitchen light")
    assert "The Kitchen Light is not reachable." in done["response"], done["response"]
    assert "Turned" not in done["response"]
    assert len(ha.calls) == calls  # HA would skip it and still answer success
    assert hub.home.state("Kitchen Light") == "unavailable"  # not the "on" the actor expected
    ha.run(ha.change("light.kitchen", "off"))  # back
    assert _until(lambda: hub.home.state("Kitchen Light") == "off")
    assert hub.turn_text("is the kitchen light on")["response"].startswith("No")


def test_bc42_link_down_means_cant_check_until_a_full_refresh(ha, hub):
    ha.run(ha.change("light.kitchen", "on"))
    assert _until(lambda: hub.home.state("Kitchen Light") == "on")
    ha.silent = True  # HA cut the hub off; the reconnects hang in the handshake
    ha.drop_all()
    devices = hub.engines.devices()
    assert _until(lambda: devices.ha.status != "up")
    assert hub.turn_text("is the kitchen light on")["response"].startswith(CANT)
    off = hub.turn_text("turn off the kitchen light")
    assert "I couldn't reach Home Assistant" in off["response"] and "Turned" not in off["response"]
    # the command may still happen: the state is not the one the actor expected either
    assert hub.turn_text("is the kitchen light on")["response"].startswith(CANT)
    ha.silent = False
    assert _until(lambda: devices.ha.status == "up", 30)
    assert _until(lambda: hub.home.state("Kitchen Light") == "off", 20)  # sent once, after
    assert hub.turn_text("is the kitchen light on")["response"].startswith("No")
