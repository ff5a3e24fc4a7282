"""Issue 22 item 4: with the Home Assistant backend, the shopping list is HA's to-do list
(``todo.shopping_list`` of its ``shopping_list`` integration, in a real HA core from
``scripts/ha-core.sh``): the hub reads HA's items (``todo.get_items``), and what it adds,
removes or clears is changed in HA (``todo.add_item`` / ``todo.remove_item``)."""

from __future__ import annotations

import asyncio
import dataclasses

import pytest
from real_ha import RealHa
from test_ha_import import _until

from hub.devices.ha.client import HaClient
from hub.settings import HomeAssistantSettings

from mqtt_broker import free_port

pytestmark = pytest.mark.live
LIST = "todo.shopping_list"


def ha_items(url: str, token: str) -> list[str]:
    async def go():
        async with HaClient(url, token, 30.0) as ha:
            result = await ha.request(
                "call_service",
                domain="todo",
                service="get_items",
                target={"entity_id": LIST},
                return_response=True,
            )
            return [i["summary"] for i in result["response"][LIST]["items"]]

    return asyncio.run(go())


def ha_has_list(url: str, token: str) -> bool:
    async def go():
        async with HaClient(url, token, 30.0) as ha:
            return any(s["entity_id"] == LIST for s in await ha.request("get_states"))

    return asyncio.run(go())


def add_shopping_list(url: str, token: str) -> None:
    """Finish HA's shopping_list config flow (the REST API the frontend uses): the YAML
    import of HA 2024.3 stops at a form with no fields, waiting for its (empty) answer."""
    import json
    import urllib.request

    def call(path: str, body: dict | None = None):
        req = urllib.request.Request(
            url + path,
            data=None if body is None else json.dumps(body).encode(),
            headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(req, timeout=30) as resp:
            return json.loads(resp.read())

    async def progress():
        async with HaClient(url, token, 30.0) as ha:
            return await ha.request("config_entries/flow/progress")

    flows = [f for f in asyncio.run(progress()) if f["handler"] == "shopping_list"]
    if not flows:
        flows = [call("/api/config/config_entries/flow", {"handler": "shopping_list"})]
    call(f"/api/config/config_entries/flow/{flows[0]['flow_id']}", {})


def ha_add(url: str, token: str, item: str) -> None:
    async def go():
        async with HaClient(url, token, 30.0) as ha:
            await ha.request(
                "call_service",
                domain="todo",
                service="add_item",
                service_data={"item": item},
                target={"entity_id": LIST},
            )

    asyncio.run(go())


def test_the_shopping_list_is_home_assistants_todo_list(tmp_path, monkeypatch):
    from fakes import make_hub

    ha = RealHa(tmp_path / "ha", free_port())
    hub = None
    try:
        ha.wait_up()
        token = ha.token()
        if not _until(lambda: ha_has_list(ha.url, token), 10):  # the YAML import did not run
            add_shopping_list(ha.url, token)
        assert _until(lambda: ha_has_list(ha.url, token), 60)
        monkeypatch.setenv("HUB_HA_TOKEN", token)
        hub = make_hub(entry="ask")
        hub.settings = dataclasses.replace(
            hub.settings,
            homeassistant=HomeAssistantSettings(
                url=ha.url, entities={"Shopping List": {"entity_id": LIST}}, timeout_s=10.0
            ),
        )
        hub.engines.warm(["rules", "devices"])
        devices = hub.engines.devices()
        assert _until(lambda: devices.ha.status == "up", 60)
        ha_add(ha.url, token, "eggs")  # added in HA (its app, another speaker)
        said = hub.turn_text("what is on my shopping list")["response"]
        assert said == "The only item on your shopping list is eggs.", said
        hub.turn_text("add milk to my shopping list")
        assert _until(lambda: ha_items(ha.url, token) == ["eggs", "milk"], 30)
        said = hub.turn_text("what is on my shopping list")["response"]
        assert said == "These are the top 2 items on your shopping list: milk, eggs.", said
        hub.turn_text("remove eggs from my shopping list")
        assert _until(lambda: ha_items(ha.url, token) == ["milk"], 30)
        hub.turn_text("clear the shopping list")
        assert _until(lambda: ha_items(ha.url, token) == [], 30)
    finally:
        if hub is not None:
            hub.engines.devices().close()
        ha.close()
