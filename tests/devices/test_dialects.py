"""The MQTT payload dialects as pure functions: one request across every backend (BC-44's
table), Zigbee2MQTT units and shapes (BC-43), Tasmota's topic grammar (BC-44), templates."""

from __future__ import annotations

import json

import pytest

from hub.devices.dialects import DialectError, build_devices
from hub.devices.dialects.common import availability
from hub.devices.dialects.ha_json import HaJsonDevice, ha_service_call
from hub.devices.dialects.tasmota import TasmotaDevice, full_topic
from hub.devices.dialects.template import TemplateDevice
from hub.devices.dialects.z2m import Z2mDevice, devices_from_bridge
from hub.errors import ConfigError
from hub.settings import MqttSettings


def light(service="turn_on", **data):
    return {
        "entity": "Kitchen Light",
        "domain": "light",
        "service": service,
        "data": data,
        "idempotency_key": "t:0",
    }


def test_bc44_one_request_converted_across_backends():
    half = light(brightness_pct=50)
    z2m = json.loads(Z2mDevice("Kitchen Light", "Kitchen Light").command(half).payload)
    tas = TasmotaDevice("Kitchen Light", "kitchen").command(half)
    ha_json = json.loads(HaJsonDevice("Kitchen Light", "k/set", "k/state").command(half).payload)
    ha = ha_service_call(half, "light.kitchen_light")
    assert z2m == {"state": "ON", "brightness": 127}
    assert (tas.topic, tas.payload) == ("cmnd/kitchen/Dimmer", b"50")
    assert ha["service_data"] == {"brightness_pct": 50} and ha["service"] == "turn_on"
    assert ha["target"] == {"entity_id": "light.kitchen_light"}
    assert abs(ha_json["brightness"] - 128) <= 1 and ha_json["state"] == "ON"


@pytest.mark.parametrize(
    "pct, expected",
    [
        (50, {"state": "ON", "brightness": 127}),
        (100, {"state": "ON", "brightness": 254}),
        (1, {"state": "ON", "brightness": 2}),
        (0, {"state": "OFF"}),
    ],
)
def test_bc43_z2m_brightness_scale(pct, expected):
    msg = Z2mDevice("Kitchen Light", "Kitchen Light").command(light(brightness_pct=pct))
    assert msg.topic == "zigbee2mqtt/Kitchen Light/set"
    assert json.loads(msg.payload) == expected


def test_bc43_z2m_lowest_level_is_settable():
    dev = Z2mDevice("Kitchen Light", "Kitchen Light", min_level=5)
    assert json.loads(dev.command(light(brightness_pct=1)).payload)["brightness"] == 5


def test_bc43_z2m_color_is_an_object_and_kelvin_becomes_clamped_mireds():
    dev = Z2mDevice("Living Room Lamp", "Living Room Lamp", mireds=(153, 454))
    red = json.loads(dev.command(light(color_name="red")).payload)
    assert red == {"state": "ON", "color": {"hex": "#FF0000"}}
    warm = dev.command(light(color_temp_kelvin=2700))
    assert json.loads(warm.payload)["color_temp"] == 370 and warm.note == ""
    clamped = dev.command(light(color_temp_kelvin=2000))
    assert json.loads(clamped.payload)["color_temp"] == 454 and "kelvin" in clamped.note
    assert json.loads(dev.command(light(color_name="warm white")).payload)["color_temp"] == 370
    with pytest.raises(DialectError):
        dev.command(light(color_name="ultraviolet-ish"))


def test_bc43_z2m_state_converts_back_and_tolerates_extra_keys():
    dev = Z2mDevice("Kitchen Light", "Kitchen Light")
    up = dev.decode(
        "zigbee2mqtt/Kitchen Light", b'{"state":"ON","brightness":127,"color_mode":"xy","weird":1}'
    )
    assert up.state == "on" and up.attributes["brightness_pct"] == 50
    assert dev.decode("zigbee2mqtt/Kitchen", b'{"state":"OFF"}') is None


def test_bc43_names_with_slash_are_their_own_topics():
    floor = Z2mDevice("Kitchen Floor Light", "kitchen/floor_light")
    kitchen = Z2mDevice("Kitchen", "kitchen")
    assert floor.command(light()).topic == "zigbee2mqtt/kitchen/floor_light/set"
    assert kitchen.decode("zigbee2mqtt/kitchen/floor_light", b'{"state":"ON"}') is None
    assert floor.decode("zigbee2mqtt/kitchen/floor_light", b'{"state":"ON"}').state == "on"
    utf = Z2mDevice("Lampa podłogowa", "Lampa podłogowa")
    assert utf.command(light()).topic == "zigbee2mqtt/Lampa podłogowa/set"


@pytest.mark.parametrize(
    "payload, up",
    [
        (b'{"state":"offline"}', False),
        (b"offline", False),
        (b'{"state":"online"}', True),
        (b"online", True),
        (b"Offline", False),
        (b"maybe", None),
    ],
)
def test_bc43_both_availability_forms(payload, up):
    assert availability(payload) is up


def test_bc43_bridge_offline_makes_devices_unreachable():
    dev = Z2mDevice("Kitchen Light", "Kitchen Light")
    assert dev.decode("zigbee2mqtt/bridge/state", b"offline").available is False
    assert dev.decode("zigbee2mqtt/bridge/state", b'{"state":"online"}').available is True
    assert dev.decode("zigbee2mqtt/Kitchen Light/availability", b"offline").available is False


def test_bc43_devices_from_bridge_list():
    payload = json.dumps(
        [
            {"type": "Coordinator", "friendly_name": "Coordinator"},
            {
                "friendly_name": "Living Room Lamp",
                "definition": {
                    "exposes": [
                        {
                            "type": "light",
                            "features": [
                                {"name": "state"},
                                {"name": "color_temp", "value_min": 153, "value_max": 454},
                            ],
                        }
                    ]
                },
            },
            {
                "friendly_name": "kitchen/floor_light",
                "definition": {"exposes": [{"type": "switch", "features": [{"name": "state"}]}]},
            },
            {"friendly_name": "Sensor", "definition": {"exposes": [{"type": "numeric"}]}},
        ]
    ).encode()
    got = devices_from_bridge(payload)
    assert [(d["name"], d["domain"]) for d in got] == [
        ("Living Room Lamp", "light"),
        ("kitchen/floor_light", "switch"),
    ]
    assert got[0]["mireds"] == (153, 454)


@pytest.mark.parametrize(
    "pattern, topic",
    [
        ("%prefix%/%topic%/", "cmnd/board/POWER2"),
        ("%topic%/%prefix%/", "board/cmnd/POWER2"),
        ("home/%prefix%/%topic%/", "home/cmnd/board/POWER2"),
    ],
)
def test_bc44_full_topic_order(pattern, topic):
    dev = TasmotaDevice("Kitchen Light", "board", relay=2, full_topic=pattern)
    msg = dev.command(light())
    assert (msg.topic, msg.payload) == (topic, b"ON")
    assert full_topic(pattern, "stat", "board", "RESULT") in dev.subscriptions()


def test_bc44_power_spellings_and_forms():
    single = TasmotaDevice("Kitchen Light", "plug")
    assert single.command(light("turn_off")).topic == "cmnd/plug/POWER"
    assert single.decode("stat/plug/POWER", b"ON").state == "on"
    assert single.decode("stat/plug/POWER1", b"OFF").state == "off"
    assert single.decode("stat/plug/RESULT", b'{"POWER1":"ON"}').state == "on"
    assert single.decode("tele/plug/STATE", b'{"POWER":"OFF","Dimmer":20}').attributes == {
        "brightness_pct": 20
    }
    assert single.decode("tele/plug/LWT", b"Offline").available is False
    relay2 = TasmotaDevice("Kitchen Light", "board", relay=2)
    assert relay2.decode("stat/board/RESULT", b'{"POWER1":"ON"}') is None
    assert relay2.decode("stat/board/RESULT", b'{"POWER2":"ON"}').state == "on"
    assert [(q.topic, q.payload) for q in relay2.queries()] == [("cmnd/board/POWER2", b"")]


def test_template_dialect():
    dev = TemplateDevice(
        "Fan",
        {
            "command_topic": "shelly/{device}/relay/0/command",
            "device": "fan1",
            "payload_on": "on",
            "payload_off": "off",
            "state_topic": "shelly/fan1/relay/0",
            "state_on": "on",
            "state_off": "off",
        },
    )
    msg = dev.command({"service": "turn_on", "data": {}, "entity": "Fan"})
    assert (msg.topic, msg.payload) == ("shelly/fan1/relay/0/command", b"on")
    assert dev.decode("shelly/fan1/relay/0", b"off").state == "off"
    with pytest.raises(DialectError):
        dev.command({"service": "lock", "data": {}})


def test_build_devices_from_config_and_its_errors():
    s = MqttSettings(
        bridges={"zb": {"dialect": "zigbee2mqtt", "base_topic": "z2m"}},
        devices={
            "Kitchen Light": {"bridge": "zb", "device": "Kitchen Light"},
            "Fan": {"dialect": "tasmota", "relay": 2},
        },
    )
    devs = build_devices(s, ["Kitchen Light", "Fan", "Other"])
    assert set(devs) == {"Kitchen Light", "Fan"}
    assert devs["Kitchen Light"].command_topic == "z2m/Kitchen Light/set"
    assert devs["Fan"].command(light()).topic == "cmnd/fan/POWER2"
    for bad, where in [
        ({"Nope": {"dialect": "tasmota"}}, "mqtt.devices.Nope"),
        ({"Fan": {"dialect": "x10"}}, "mqtt.devices.Fan.dialect"),
        ({"Fan": {"dialect": "tasmota", "colour": 1}}, "mqtt.devices.Fan.colour"),
        ({"Fan": {"bridge": "none"}}, "mqtt.devices.Fan.bridge"),
    ]:
        with pytest.raises(ConfigError) as err:
            build_devices(MqttSettings(devices=bad), ["Fan"])
        assert err.value.message.startswith(where)


def test_config_check_refuses_a_bad_device_table_in_one_line():
    from hub.settings import settings_from_dict

    with pytest.raises(ConfigError) as err:
        settings_from_dict({"mqtt": {"devices": {"Lamp": {"dialect": "tasmota"}}}})
    assert err.value.message.startswith("mqtt.devices.Lamp: no entity named")


def test_bc43_a_clamped_value_is_said_after_the_answer():
    from hub.devices.queued import queued_update

    action = light(color_temp_kelvin=2000)
    action["note"] = Z2mDevice("Lamp", "Lamp").command(action).note
    out = queued_update({}, "Done.", [(action, "done")])
    assert out["response"].startswith("Done. The Lamp goes from 2203 to 6536 kelvin")
    assert queued_update({}, "Done.", [(light(), "done")]) == {}
