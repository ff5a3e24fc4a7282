"""One hub, one identity in MQTT: only the long-running service publishes the hub's
availability and discovery; a one-off ``hub ask`` beside it never marks it offline and leaves
no second device in Home Assistant's discovery (issue 20), on a real Mosquitto."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from hub.devices.mqtt import MqttBackend
from hub.home import Home
from hub.paths import DATA_DIR
from hub.settings import MqttSettings, load_settings
from hub.store.db import Store

from mqtt_broker import WAIT_S, Recorder, broker, home, until  # noqa: F401 - fixtures

pytestmark = pytest.mark.live
ROOT = Path(__file__).resolve().parents[2]


def test_one_off_ask_beside_the_service_leaves_it_online_and_one_device(broker, tmp_path):
    store_path = tmp_path / "hub.db"
    conf = tmp_path / "hub.toml"
    conf.write_text(
        f'[mqtt]\nhost = "127.0.0.1"\nport = {broker.port}\n'
        f'[store]\npath = "{store_path}"\n\n'
        + (DATA_DIR / "home-en.toml").read_text(encoding="utf-8"),
        encoding="utf-8",
    )
    settings = load_settings(str(conf))
    home = Home.from_settings(settings.home)
    service = MqttBackend(
        settings.mqtt, home=home, store=Store(store_path), notify=lambda e: None, service=True
    )
    rec = Recorder(broker.port, "hub/status", "homeassistant/#")
    try:
        assert service.link.subscribed.wait(WAIT_S)
        assert rec.wait_for(
            lambda: any(t == "hub/status" and p == b"online" for _, t, p, _ in rec.all)
        )
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "hub",
                "ask",
                "--config",
                str(conf),
                "--no-llm",
                "turn on the kitchen light",
            ],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr[-2000:]
        assert done.stdout.startswith("Turned on"), done.stdout[-2000:]
    finally:
        rec.close()
    late = Recorder(broker.port, "hub/status", "homeassistant/#")  # the retained picture
    try:
        late.settle()  # every retained config has arrived
        status = [p for _, t, p, _ in late.all if t == "hub/status"]
        devices = {
            json.dumps(json.loads(p)["device"]["identifiers"])
            for _, t, p, _ in late.all
            if t.endswith("/config") and p
        }
        assert status == [b"online"]
        assert len(devices) == 1, devices
        assert all(
            f"/{service.discovery.node_id}/" in t
            for _, t, p, _ in late.all
            if t.endswith("/config") and p
        )
    finally:
        late.close()
        service.close()


def test_one_off_backend_publishes_no_status_will_or_discovery(broker, home):
    rec = Recorder(broker.port, "#")
    once = MqttBackend(
        MqttSettings(host="127.0.0.1", port=broker.port, ack_wait_s=30.0),  # ends at the PUBACK
        home=home,
        notify=lambda e: None,
        service=False,
    )
    try:
        assert once.link.subscribed.wait(WAIT_S)
        assert "-once-" in once.client_id
        once.on_turn({"status": "ok", "transcript": "x", "intent": "HassTurnOn"})
        assert (
            once.publish(
                {
                    "entity": "Kitchen Light",
                    "domain": "light",
                    "service": "turn_on",
                    "data": {},
                    "idempotency_key": "once:1",
                }
            )
            == "done"
        )
    finally:
        once.close()
    assert rec.wait_for(lambda: any(t.endswith("/set") for _, t, _, _ in rec.all))
    topics = {
        t
        for _, t, _, retained in rec.all  # not what the service left retained,
        if not retained and "/hub/probe/" not in t
    }  # nor the one-off's own probe
    rec.close()
    assert topics == {"hub/light/kitchen_light/set"}, topics


def test_bc29_bc31_a_second_hub_on_the_same_store_leaves_the_first_ones_discovery(
    broker, home, tmp_path
):
    """Two ``hub wyoming`` with one --store: the second gets another client id and must not
    clear the first's retained configs, nor mark ``hub/status`` offline when it stops."""
    settings = MqttSettings(host="127.0.0.1", port=broker.port)
    store = Store(tmp_path / "hub.db")
    first = MqttBackend(settings, home=home, store=store, notify=lambda e: None, service=True)
    second = None
    try:
        assert first.link.subscribed.wait(WAIT_S)
        seen = Recorder(broker.port, "homeassistant/#")
        assert seen.wait_for(lambda: len(seen.all) >= 6)
        seen.close()
        rec = Recorder(broker.port, "hub/status", "homeassistant/#")
        second = MqttBackend(settings, home=home, store=store, notify=lambda e: None, service=True)
        assert second.client_id != first.client_id
        second_id = second.discovery.node_id
        assert second.link.subscribed.wait(WAIT_S)
        second.close()
        second = None
        rec.settle()  # anything the second hub sent has arrived
        live = [(t, p) for _, t, p, retained in rec.all if not retained]
        rec.close()
        assert live == [], live  # no empty config, no "offline", no second device
        late = Recorder(broker.port, "hub/status", "homeassistant/#")  # the retained picture
        late.settle()
        configs = [t for _, t, p, _ in late.all if t.endswith("/config") and p]
        status = [p for _, t, p, _ in late.all if t == "hub/status"]
        late.close()
        mine = [t for t in configs if f"/{first.discovery.node_id}/" in t]
        assert len(mine) == 6, configs  # (other tests of the module leave their own)
        assert not [t for t in configs if second_id in t]
        assert status == [b"online"]
    finally:
        if second is not None:
            second.close()
        first.close()
