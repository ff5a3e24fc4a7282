"""The Home Assistant backend against the fake HA WebSocket server: a service call once per
key with its state read back from HA, states followed, and the link around restarts and
logins (BC-41), subscribing only to the linked entities (BC-42)."""

from __future__ import annotations

import logging
import random

import pytest
from fake_ha import TOKEN, FakeHa
from test_ha_import import _until, registries

from hub.devices.ha.backend import HaBackend, backoff_s
from hub.devices.queued import queued_update
from hub.home import Entity, Home
from hub.settings import HomeAssistantSettings

pytestmark = pytest.mark.live
LINKS = {
    "Kitchen Light": {"entity_id": "light.kitchen"},
    "Front Door": {"entity_id": "lock.front_door"},
}


@pytest.fixture()
def ha():
    data, states = registries()
    fake = FakeHa(data, states)
    yield fake
    fake.close()


def backend(fake, token=TOKEN, **kw):
    home = Home(
        [
            Entity("Kitchen Light", "light"),
            Entity("Front Door", "lock", sensitive=True),
            Entity("Standing Light", "light"),
        ]
    )
    s = HomeAssistantSettings(url=fake.url, entities=LINKS, timeout_s=5.0, **kw)
    return HaBackend(s, token, home, rng=random.Random(1))


def act(entity, service, key, domain="light"):
    return {
        "entity": entity,
        "domain": domain,
        "service": service,
        "data": {},
        "idempotency_key": key,
    }


def test_call_once_state_from_ha_and_states_followed(ha):
    b = backend(ha)
    try:
        assert _until(lambda: b.status == "up")
        assert b.home.state("Front Door") == "locked"  # the full state on subscribe
        assert b.publish(act("Kitchen Light", "turn_on", "h:1"), wait_s=5) == "done"
        assert _until(lambda: b.home.state("Kitchen Light") == "on")
        assert b.publish(act("Kitchen Light", "turn_on", "h:1"), wait_s=5) == "done"  # repeat
        assert len(ha.calls) == 1 and ha.calls[0]["target"] == {"entity_id": "light.kitchen"}
        ha.run(ha.change("light.kitchen", "off"))  # switched in HA
        assert _until(lambda: b.home.state("Kitchen Light") == "off")
        # BC-42: one subscription, only for the linked entities
        subs = [s for s in ha.subscriptions if s["type"] == "subscribe_entities"]
        assert len(subs) == 1 and sorted(subs[0]["entity_ids"]) == [
            "light.kitchen",
            "lock.front_door",
        ]
        assert b.publish(act("Kitchen Light", "turn_on", "h:2"), wait_s=5) == "done"
    finally:
        b.close()


def test_bc41_restart_mid_call_unknown_outcome_then_exactly_once(ha):
    b = backend(ha)
    try:
        assert _until(lambda: b.status == "up")
        ha.drop_calls = True
        result = b.publish(act("Kitchen Light", "turn_on", "r:1"), wait_s=20)
        assert result == "ha_queued"  # the socket closed: no wait for the 20 s
        spoken = queued_update(
            {}, "Turned on the light.", [(act("Kitchen Light", "turn_on", "r:1"), result)]
        )
        assert spoken["response"].startswith("I couldn't reach Home Assistant.")
        ha.drop_calls = False
        assert _until(lambda: b.outbox.status("r:1") == "done", 20)
        assert len(ha.calls) == 2  # the dropped one, and once after the reconnect
        assert b.home.state("Kitchen Light") == "on"
        ha.drop_all()  # another restart: nothing is sent again
        assert _until(lambda: b.connections >= 3 and b.status == "up", 20)
        assert len(ha.calls) == 2
        live = [s for s in ha.subscriptions if s["type"] == "subscribe_entities"]
        assert len(live) == 1 and ha.subscribed == b.connections  # one per connection
    finally:
        b.close()


def test_bc41_starting_ha_says_so_and_waits_for_started(ha):
    ha.core_state = "STARTING"
    b = backend(ha)
    try:
        assert _until(lambda: b.status == "starting")
        assert b.publish(act("Kitchen Light", "turn_on", "s:1")) == "ha_starting"
        assert not ha.calls
        assert _until(
            lambda: any(s.get("event_type") == "homeassistant_started" for s in ha.subscriptions)
        )
        ha.started()
        assert _until(lambda: b.status == "up")
    finally:
        b.close()


def test_bc41_rejected_token_is_one_error_and_one_login(ha, caplog):
    with caplog.at_level(logging.ERROR, logger="hub.devices.ha"):
        b = backend(ha, token="wrong")
        try:
            assert _until(lambda: b.status == "auth_failed")
            _until(lambda: ha.logins > 1, 2.5)  # a reconnect backoff would have retried
            assert ha.logins == 1
            assert b.publish(act("Kitchen Light", "turn_on", "a:1")) == "ha_queued"
        finally:
            b.close()
    errors = [r for r in caplog.records if "rejected the token" in r.getMessage()]
    assert len(errors) == 1


def test_bc41_backoff_from_1s_doubling_to_30s_with_jitter():
    rng = random.Random(7)
    waits = [backoff_s(i, rng) for i in range(8)]
    assert 0.5 <= waits[0] <= 1.0 and 1.0 <= waits[1] <= 2.0
    assert all(15.0 <= w <= 30.0 for w in waits[5:])
    assert len({round(backoff_s(9, random.Random(s)), 3) for s in range(5)}) > 1


def test_turns_through_the_graph_act_on_ha_and_ask_back_the_lock(ha, monkeypatch):
    import dataclasses

    from fakes import make_hub

    monkeypatch.setenv("HUB_HA_TOKEN", TOKEN)
    hub = make_hub(text="turn on the kitchen light", entry="ask")
    hub.settings = dataclasses.replace(
        hub.settings, homeassistant=HomeAssistantSettings(url=ha.url, entities=LINKS, timeout_s=5.0)
    )
    hub.engines.warm(["rules", "devices"])
    devices = hub.engines.devices()
    try:
        assert _until(lambda: devices.ha.status == "up")
        trace = hub.turn_text("turn on the kitchen light")
        assert trace["intent"] == "HassTurnOn" and "Sorry" not in trace["response"]
        assert [c["service"] for c in ha.calls] == ["turn_on"]
        assert _until(lambda: ha.states["light.kitchen"]["state"] == "on")
        ha.run(ha.change("light.kitchen", "off"))  # switched off in HA
        assert _until(lambda: hub.home.state("Kitchen Light") == "off")
        assert hub.turn_text("is the kitchen light on")["response"].startswith("No")
        question = hub.turn_text("unlock the front door")["response"]
        assert "?" in question and len(ha.calls) == 1  # asked back, nothing sent
        hub.turn_text("yes")
        assert _until(lambda: len(ha.calls) == 2)
        assert ha.calls[1]["service"] == "unlock" and ha.calls[1]["domain"] == "lock"
    finally:
        devices.close()


def test_bc41_a_changed_token_file_is_tried_again_and_doctor_says_rejected(ha, tmp_path):
    from hub.cli.doctor import _homeassistant
    from hub.devices.ha.client import read_token

    token = tmp_path / "token"
    token.write_text("wrong\n")
    s = HomeAssistantSettings(url=ha.url, token_file=str(token), entities=LINKS)
    assert "rejected the token" in _homeassistant(_Cfg(s))
    home = Home([Entity("Kitchen Light", "light"), Entity("Front Door", "lock")])
    b = HaBackend(s, read_token(s), home, rng=random.Random(1))
    try:
        assert _until(lambda: b.status == "auth_failed")
        logins = ha.logins
        import os

        token.write_text(TOKEN + "\n")
        os.utime(token, (1, 2_000_000_000))  # a new mtime, whatever the clock's resolution
        assert _until(lambda: b.status == "up")
        assert ha.logins == logins + 1
        assert "reachable at" in _homeassistant(_Cfg(s)) and "RUNNING" in _homeassistant(_Cfg(s))
    finally:
        b.close()


class _Cfg:
    def __init__(self, ha_settings):
        self.homeassistant = ha_settings


def test_bc41_at_most_two_failed_logins_an_hour():
    from hub.devices.ha.backend import may_retry_login

    assert not may_retry_login([0.0], 60.0, False)  # too soon, same token
    assert may_retry_login([0.0], 60.0, True)  # the token file changed
    assert may_retry_login([0.0], 600.0, False)  # 10 minutes later
    assert not may_retry_login([0.0, 600.0], 1300.0, True)  # two this hour already
    assert may_retry_login([0.0, 600.0], 3601.0, False)
