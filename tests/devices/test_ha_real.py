"""Against a real Home Assistant core (the registry's ``homeassistant``, 2024.3.3, in its own
venv from ``scripts/ha-core.sh``) with its ``demo`` lights and locks, the owner and a
long-lived token made through its own onboarding and auth API (issue 20)."""

from __future__ import annotations

import asyncio
import dataclasses

import pytest
from real_ha import RealHa
from test_ha_import import _until

from hub.config.home import domains
from hub.devices.ha.client import HaClient
from hub.devices.ha.importer import build_home, fetch
from hub.settings import HomeAssistantSettings

from mqtt_broker import free_port

pytestmark = pytest.mark.live
LINKS = {
    "Kitchen Light": {"entity_id": "light.kitchen_lights"},
    "Front Door": {"entity_id": "lock.front_door"},
}


def ha_state(url: str, token: str, entity_id: str) -> str:
    async def go():
        async with HaClient(url, token, 30.0) as ha:
            states = await ha.request("get_states")
            return next(s["state"] for s in states if s["entity_id"] == entity_id)

    return asyncio.run(go())


def ha_call(url: str, token: str, service: str, entity_id: str) -> None:
    async def go():
        async with HaClient(url, token, 30.0) as ha:
            await ha.request(
                "call_service",
                domain=entity_id.split(".")[0],
                service=service,
                target={"entity_id": entity_id},
            )

    asyncio.run(go())


def test_real_home_assistant_import_act_confirm_follow_and_restart(tmp_path, monkeypatch):
    from fakes import make_hub

    port = free_port()
    ha = RealHa(tmp_path / "ha", port)
    hub = None
    try:
        ha.wait_up()
        token = ha.token()

        async def read():
            async with HaClient(ha.url, token, 30.0) as client:
                return await fetch(client, 120)

        home, links, summary = build_home(asyncio.run(read()), set(domains()))
        names = {e["name"] for e in home["entities"]}
        assert {"Kitchen Lights", "Front Door", "Bed Light"} <= names
        assert links["Front Door"]["entity_id"] == "lock.front_door"
        assert summary["not_exposed"] > 0 and summary["exposure_read"]

        monkeypatch.setenv("HUB_HA_TOKEN", token)
        hub = make_hub(entry="ask")
        hub.settings = dataclasses.replace(
            hub.settings,
            homeassistant=HomeAssistantSettings(url=ha.url, entities=LINKS, timeout_s=10.0),
        )
        hub.engines.warm(["rules", "devices"])
        devices = hub.engines.devices()
        assert _until(lambda: devices.ha.status == "up", 60)
        ha_call(ha.url, token, "turn_off", "light.kitchen_lights")
        assert _until(lambda: hub.home.state("Kitchen Light") == "off", 30)
        trace = hub.turn_text("turn on the kitchen light")
        assert trace["intent"] == "HassTurnOn" and "Sorry" not in trace["response"]
        assert _until(lambda: ha_state(ha.url, token, "light.kitchen_lights") == "on", 30)
        assert _until(lambda: hub.home.state("Kitchen Light") == "on", 30)  # read back
        assert "?" in hub.turn_text("unlock the front door")["response"]
        assert ha_state(ha.url, token, "lock.front_door") == "locked"  # nothing before yes
        hub.turn_text("yes")
        assert _until(lambda: ha_state(ha.url, token, "lock.front_door") == "unlocked", 30)
        ha_call(ha.url, token, "turn_off", "light.kitchen_lights")  # changed in HA
        assert _until(lambda: hub.home.state("Kitchen Light") == "off", 30)
        assert hub.turn_text("is the kitchen light on")["response"].startswith("No")
        # HA stopped: the command is kept, said honestly, done once when HA is back
        hub.turn_text("turn on the kitchen light")
        assert _until(lambda: ha_state(ha.url, token, "light.kitchen_lights") == "on", 30)
        ha.close()
        assert _until(lambda: devices.ha.status != "up", 30)
        trace = hub.turn_text("turn off the kitchen light")
        assert "I couldn't reach Home Assistant" in trace["response"]
        ha = RealHa(tmp_path / "ha", port)  # the demo light starts "on" again
        ha.wait_up()
        assert _until(lambda: devices.ha.status == "up", 120)
        assert _until(lambda: ha_state(ha.url, token, "light.kitchen_lights") == "off", 60)
        key = [k for k, _ in devices.ha.outbox.pending()]
        assert key == []  # settled: done once, nothing left to send
    finally:
        if hub is not None:
            hub.engines.devices().close()
        ha.close()
