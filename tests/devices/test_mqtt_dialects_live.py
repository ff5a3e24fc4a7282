"""Zigbee2MQTT (BC-43) and Tasmota (BC-44) devices on a real Mosquitto: the hub's backend
against emulators that parse commands as each project documents them
(tests/devices/emulators.py)."""

from __future__ import annotations

import dataclasses
import json

import pytest
from emulators import TasmotaEmulator, Z2mEmulator

from hub.devices.dialects.z2m import devices_from_bridge
from hub.devices.mqtt import MqttBackend
from hub.home import Entity, Home
from hub.settings import MqttSettings

from mqtt_broker import WAIT_S, Recorder, broker, until  # noqa: F401 - fixture

pytestmark = pytest.mark.live

Z2M_DEVICES = {
    "Kitchen Light": {"color": True, "mireds": (153, 500)},
    "Living Room Lamp": {"mireds": (153, 454)},
    "kitchen/floor_light": {},
    "Lampa podłogowa": {},
}


def act(entity, service="turn_on", key="k", **data):
    return {
        "entity": entity,
        "domain": "light",
        "service": service,
        "data": data,
        "idempotency_key": key,
    }


@pytest.fixture()
def z2m(broker):
    emu = Z2mEmulator(broker.port, Z2M_DEVICES)
    yield emu
    emu.close()


def z2m_backend(broker, z2m):
    """The home imported from the emulator's retained bridge/devices."""
    rec = Recorder(broker.port, "zigbee2mqtt/bridge/devices")
    assert rec.wait_for(lambda: rec.all)
    imported = devices_from_bridge(rec.all[0][2])
    rec.close()
    names = {"kitchen/floor_light": "Kitchen Floor Light"}
    entities = [Entity(names.get(d["name"], d["name"]), d["domain"]) for d in imported]
    devices = {
        names.get(d["name"], d["name"]): {
            "dialect": "zigbee2mqtt",
            "device": d["friendly_name"],
            **({"mireds": list(d["mireds"])} if "mireds" in d else {}),
        }
        for d in imported
    }
    s = MqttSettings(host="127.0.0.1", port=broker.port, discovery=(), devices=devices)
    b = MqttBackend(s, home=Home(entities), notify=lambda e: None)
    assert b.link.subscribed.wait(WAIT_S)
    return b


def test_bc43_z2m_commands_states_and_availability(broker, z2m):
    b = z2m_backend(broker, z2m)
    home = b.home
    try:
        cases = [
            (act("Kitchen Light", brightness_pct=50), {"brightness": 127}),
            (act("Kitchen Light", brightness_pct=100), {"brightness": 254}),
            (act("Kitchen Light", brightness_pct=1), {"brightness": 2}),
            (act("Kitchen Light", brightness_pct=0), {"state": "OFF"}),
            (act("Kitchen Light", color_name="red"), {"color": {"hex": "#FF0000"}}),
            (act("Living Room Lamp", color_temp_kelvin=2700), {"color_temp": 370}),
            (act("Living Room Lamp", color_name="warm white"), {"color_temp": 370}),
            (act("Kitchen Floor Light"), {"state": "ON"}),
        ]
        for i, (action, want) in enumerate(cases):
            action["idempotency_key"] = f"z:{i}"
            assert b.publish(action) == "done"
            assert until(lambda n=i + 1: len(z2m.commands) == n), action
            name, payload = z2m.commands[-1]
            assert want.items() <= json.loads(payload).items(), (action, payload)
        assert z2m.commands[-1][0] == "kitchen/floor_light"
        assert not z2m.errors
        # the state echo converts back; the floor light's topic is its own
        assert until(lambda: home.state("Kitchen Floor Light") == "on")
        assert b.publish(act("Kitchen Light", key="z:50", brightness_pct=50)) == "done"
        assert until(lambda: home.attributes("Kitchen Light").get("brightness_pct") == 50)
        assert home.state("Kitchen Light") == "on"
        # availability, 2.x JSON then 1.x plain; the bridge in both forms
        for payload in (b'{"state":"offline"}', b"offline"):
            z2m.pub("zigbee2mqtt/Kitchen Light/availability", payload, retain=True)
            assert until(lambda: not b.routes.reachable("Kitchen Light"))
            assert b.publish(act("Kitchen Light", key=f"z:off:{payload!r}")) == "unreachable"
            z2m.pub("zigbee2mqtt/Kitchen Light/availability", b"online", retain=True)
            assert until(lambda: b.routes.reachable("Kitchen Light"))
        for payload in (b'{"state":"offline"}', b"offline"):
            z2m.pub("zigbee2mqtt/bridge/state", payload, retain=True)
            assert until(lambda: not b.routes.reachable("Lampa podłogowa"))
            z2m.pub("zigbee2mqtt/bridge/state", b'{"state":"online"}', retain=True)
            assert until(lambda: b.routes.reachable("Lampa podłogowa"))
        assert len(z2m.commands) == len(cases) + 1 and not z2m.errors
    finally:
        b.close()


def test_bc43_spoken_answers_offline_and_a_state_question(broker, z2m, tmp_path):
    from fakes import make_hub

    hub = make_hub(text="turn on the kitchen light", entry="ask")
    s = MqttSettings(
        host="127.0.0.1",
        port=broker.port,
        discovery=(),
        devices={"Kitchen Light": {"dialect": "zigbee2mqtt"}},
    )
    hub.settings = dataclasses.replace(hub.settings, mqtt=s)
    hub.engines.warm(["rules", "devices"])
    b = hub.engines.devices()
    try:
        assert b.link.subscribed.wait(WAIT_S)
        hub.turn_text("set the kitchen light to 50 percent")
        assert until(lambda: z2m.commands)
        assert json.loads(z2m.commands[-1][1]) == {"state": "ON", "brightness": 127}
        assert until(lambda: hub.home.attributes("Kitchen Light").get("brightness") == 127)
        assert "yes" in hub.turn_text("is the kitchen light on")["response"].lower()
        z2m.pub("zigbee2mqtt/Kitchen Light/availability", b'{"state":"offline"}', retain=True)
        assert until(lambda: not b.routes.reachable("Kitchen Light"))
        trace = hub.turn_text("turn off the kitchen light")
        assert trace["response"] == "The Kitchen Light is not reachable."
        assert hub.home.state("Kitchen Light") == "on"  # the optimistic "off" was put back
        assert len(z2m.commands) == 1 and not z2m.errors
    finally:
        z2m.pub("zigbee2mqtt/Kitchen Light/availability", b'{"state":"online"}', retain=True)
        b.close()


def tasmota_backend(broker, device: dict, home=None):
    home = home or Home([Entity("Kitchen Light", "light")])
    s = MqttSettings(
        host="127.0.0.1",
        port=broker.port,
        discovery=(),
        devices={"Kitchen Light": {"dialect": "tasmota", **device}},
    )
    b = MqttBackend(s, home=home, notify=lambda e: None)
    assert b.link.subscribed.wait(WAIT_S)
    return b


@pytest.mark.parametrize("pattern", ["%prefix%/%topic%/", "%topic%/%prefix%/"])
def test_bc44_four_relay_board_exactly_one_power2(broker, pattern):
    emu = TasmotaEmulator(broker.port, "board", relays=4, full_topic=pattern)
    b = tasmota_backend(broker, {"device": "board", "relay": 2, "full_topic": pattern})
    try:
        assert until(lambda: emu.commands == [("POWER2", b"")])  # the start-up query
        assert b.publish(act("Kitchen Light", key="t:a")) == "done"
        assert until(lambda: len(emu.commands) == 2)
        assert emu.commands[1] == ("POWER2", b"ON") and emu.power == {
            1: "OFF",
            2: "ON",
            3: "OFF",
            4: "OFF",
        }
        assert until(lambda: b.home.state("Kitchen Light") == "on")
        assert not emu.errors
    finally:
        b.close()
        emu.close()


@pytest.mark.parametrize("so26", [False, True])
def test_bc44_dimmer_restart_query_offline_and_button(broker, so26):
    emu = TasmotaEmulator(broker.port, f"dim{int(so26)}", dimmer=True, so26=so26)
    spec = {"device": f"dim{int(so26)}"}
    b = tasmota_backend(broker, spec)
    try:
        assert b.publish(act("Kitchen Light", key="d:b", brightness_pct=50)) == "done"
        assert until(lambda: ("Dimmer", b"50") in emu.commands)
        assert until(lambda: b.home.attributes("Kitchen Light").get("brightness_pct") == 50)
        assert emu.power[1] == "ON"
        b.close()
        # (c) restart while the relay is ON: the start-up query answers, no telemetry needed
        b = tasmota_backend(broker, spec)
        assert until(lambda: b.home.state("Kitchen Light") == "on")
        # (e) the button: stat only, then the periodic tele
        emu.button()
        assert until(lambda: b.home.state("Kitchen Light") == "off")
        emu.power[1] = "ON"
        emu.tele()
        assert until(lambda: b.home.state("Kitchen Light") == "on")
        # (d) LWT Offline: nothing sent, told so
        emu.lwt(False)
        assert until(lambda: not b.routes.reachable("Kitchen Light"))
        before = len(emu.commands)
        assert b.publish(act("Kitchen Light", "turn_off", key="d:d")) == "unreachable"
        assert b.outbox.status("d:d") is None and len(emu.commands) == before
        assert not emu.errors
    finally:
        emu.lwt(True)
        b.close()
        emu.close()


def test_bc43_hub_home_import_from_zigbee2mqtt_bridge_devices(broker, z2m, tmp_path):
    import subprocess
    import sys
    import tomllib
    from pathlib import Path

    from hub.settings import settings_from_dict

    root = Path(__file__).resolve().parents[2]
    conf = tmp_path / "hub.toml"
    conf.write_text(f'[mqtt]\nhost = "127.0.0.1"\nport = {broker.port}\n')
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "hub",
            "home",
            "import",
            "--from",
            "zigbee2mqtt",
            "--config",
            str(conf),
        ],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
        env={"PYTHONPATH": str(root)},
    )
    assert done.returncode == 0, done.stderr
    settings = settings_from_dict(tomllib.loads(done.stdout))
    names = [e["name"] for e in settings.home.entities]
    assert names == list(Z2M_DEVICES)  # exactly as Zigbee2MQTT has them
    assert settings.mqtt.devices["kitchen/floor_light"] == {
        "dialect": "zigbee2mqtt",
        "device": "kitchen/floor_light",
    }
    assert settings.mqtt.devices["Living Room Lamp"]["mireds"] == [153, 454]


def test_bc43_a_command_without_a_state_echo_is_reported_once(broker, z2m):
    b = z2m_backend(broker, z2m)
    events = []
    b.notify = events.append
    try:
        assert b.publish(act("Kitchen Light", key="e:1")) == "done"
        assert until(lambda: b.home.state("Kitchen Light") == "on")
        z2m.mute.add("Lampa podłogowa")
        assert b.publish(act("Lampa podłogowa", key="e:2")) == "done"
        assert until(lambda: events, 3 * 2.0)
        assert [(e["event"], e["entity"], e["response"]) for e in events] == [
            ("action_unconfirmed", "Lampa podłogowa", "The Lampa podłogowa didn't confirm.")
        ]
        assert not z2m.errors and len(z2m.commands) == 2  # nothing re-sent
    finally:
        b.close()


def test_bc43_z2m_devices_are_read_once_at_start_paced(broker, z2m):
    """Zigbee2MQTT state topics are not retained: without a ``/get`` at start the hub would
    not know a light is on until it reports by itself."""
    z2m.state["Kitchen Light"] = {"state": "ON", "brightness": 254}
    z2m.mute.add("Lampa podłogowa")  # a device that does not answer stays unknown
    b = z2m_backend(broker, z2m)
    try:
        assert until(lambda: len(z2m.gets) == len(Z2M_DEVICES))
        assert sorted(z2m.gets) == sorted(Z2M_DEVICES) and not z2m.errors
        assert until(lambda: b.home.state("Kitchen Light") == "on")  # no command, no report
        assert b.home.attributes("Kitchen Light")["brightness_pct"] == 100
        assert until(lambda: b.home.state("Kitchen Floor Light") == "off")
        assert b.home.state("Lampa podłogowa") == "unknown"
        assert not z2m.commands  # a read, never a command
        b.on_connected()  # a later CONNACK does not read them again
        b.pacer.thread.join(WAIT_S)
        assert b.publish(act("Kitchen Light", "turn_off", key="z:after")) == "done"
        assert until(lambda: z2m.commands)  # sent after anything the CONNACK would send
        assert len(z2m.gets) == len(Z2M_DEVICES) and not z2m.errors
    finally:
        b.close()


def spoken_z2m_hub(broker, names):
    """A hub whose ``names`` are Zigbee2MQTT devices on the test broker, connected."""
    from fakes import make_hub

    hub = make_hub(entry="ask")
    s = MqttSettings(
        host="127.0.0.1",
        port=broker.port,
        discovery=(),
        devices={n: {"dialect": "zigbee2mqtt"} for n in names},
    )
    hub.settings = dataclasses.replace(hub.settings, mqtt=s)
    hub.engines.warm(["rules", "devices"])
    b = hub.engines.devices()
    assert b.link.subscribed.wait(WAIT_S)
    return hub, b


def test_bc43_a_z2m_device_that_never_reported_cannot_be_checked(broker, caplog):
    emu = Z2mEmulator(broker.port, {"Standing Light": {}})
    emu.mute.add("Standing Light")  # takes reads and commands, never publishes its state
    hub, b = spoken_z2m_hub(broker, ["Standing Light"])
    b.echo.wait_s = 0.3
    try:
        assert until(lambda: emu.gets == ["Standing Light"])
        assert hub.home.state("Standing Light") == "unknown"  # not the config's "off"
        said = hub.turn_text("is the standing light on")["response"]
        assert said == "Sorry, I can't check the Standing Light right now.", said
        hub.turn_text("turn on the standing light")
        assert until(lambda: emu.commands)
        # no echo: the assumed "on" is put back to what the device said (nothing)
        assert until(lambda: hub.home.state("Standing Light") == "unknown")
        said = hub.turn_text("is the standing light on")["response"]
        assert said == "Sorry, I can't check the Standing Light right now.", said
        assert len(emu.commands) == 1 and not emu.errors
    finally:
        b.close()
        emu.close()


def test_bc28_bc43_a_banana_state_is_ignored_with_a_warning(broker, z2m, caplog):
    hub, b = spoken_z2m_hub(broker, ["Kitchen Light"])
    try:
        assert until(lambda: hub.home.state("Kitchen Light") == "off")  # its /get answer
        for payload in (b'{"state":"BANANA"}', b'{"state":null}', b"[1,2]"):
            caplog.clear()
            z2m.pub("zigbee2mqtt/Kitchen Light", payload)
            assert until(lambda: any(r.levelname == "WARNING" for r in caplog.records))
            said = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
            assert "Kitchen Light" in said[0] and "ignored" in said[0], said
            b.routes.guard._warned.clear()  # the next bad message warns again
        assert hub.home.state("Kitchen Light") == "off"
        assert hub.turn_text("is the kitchen light on")["response"] == "No, off."
    finally:
        b.close()


@pytest.mark.parametrize("payload", [b"not json {", b'{"a": 1}'])
def test_breaker_import_of_a_bridge_topic_that_is_no_device_list_keeps_the_file(
    broker, tmp_path, payload
):
    """The breaker's finding: a retained ``zigbee2mqtt/bridge/devices`` that is no device list
    ("not json {", an object) was imported as an empty home, over a good ``--out`` file, exit
    0. Now: one line, exit 2, the file kept."""
    import subprocess
    import sys
    from pathlib import Path

    import paho.mqtt.publish as publish

    topic = "breaker-z2m/bridge/devices"
    publish.single(topic, payload, retain=True, hostname="127.0.0.1", port=broker.port)
    root = Path(__file__).resolve().parents[2]
    conf = tmp_path / "hub.toml"
    conf.write_text(f'[mqtt]\nhost = "127.0.0.1"\nport = {broker.port}\n')
    out = tmp_path / "home.toml"
    out.write_text("# the user's home\n")
    done = subprocess.run(
        [sys.executable, "-m", "hub", "home", "import", "--from", "zigbee2mqtt"]
        + ["--base-topic", "breaker-z2m", "--config", str(conf), "--out", str(out)],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
        env={"PYTHONPATH": str(root)},
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines()[-1] == (
        "hub: breaker-z2m/bridge/devices holds no Zigbee2MQTT device list (a JSON list); "
        "nothing imported"
    )
    assert out.read_text() == "# the user's home\n"
