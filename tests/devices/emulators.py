"""Device emulators on the test broker that parse commands as the real projects document them.

:class:`Z2mEmulator` follows https://www.zigbee2mqtt.io/guide/usage/mqtt_topics_and_messages.html
(``<base>/<friendly_name>/set`` with ``state`` ON/OFF/TOGGLE, integer ``brightness`` 0-254,
``color_temp`` in mireds within the device's range, ``color`` as an object);
:class:`TasmotaEmulator` follows https://tasmota.github.io/docs/MQTT/ (``cmnd/<topic>/POWER[n]``,
``Dimmer`` 0-100,
replies on ``stat/``, telemetry on ``tele/``, LWT). Anything else they receive is counted in
``errors``; they subscribe with No Local, so every message they get came from someone else.
"""

from __future__ import annotations

import json
import re
import threading

from mqtt_broker import WAIT_S


def _client(port: int, topic: str, on_message):
    from paho.mqtt.client import CallbackAPIVersion, Client, MQTTv5
    from paho.mqtt.subscribeoptions import SubscribeOptions

    ready = threading.Event()
    client = Client(CallbackAPIVersion.VERSION2, protocol=MQTTv5)
    client.on_message = on_message
    client.on_subscribe = lambda *a: ready.set()
    client.on_connect = lambda c, *a: c.subscribe(
        topic, options=SubscribeOptions(qos=1, noLocal=True, retainAsPublished=True)
    )
    client.connect("127.0.0.1", port)
    client.loop_start()
    assert ready.wait(WAIT_S), "emulator got no SUBACK"
    return client


class _Emulator:
    def __init__(self) -> None:
        self.errors: list[str] = []
        self.commands: list[tuple[str, bytes]] = []
        self.lock = threading.Lock()

    def pub(self, topic: str, payload, retain: bool = False) -> None:
        """Publish (QoS 1); waits for the PUBACK unless called from paho's own thread."""
        if isinstance(payload, (dict, list)):
            payload = json.dumps(payload)
        info = self.client.publish(topic, payload, qos=1, retain=retain)
        if threading.current_thread() is not self.client._thread:
            info.wait_for_publish(WAIT_S)

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


class Z2mEmulator(_Emulator):
    """A Zigbee2MQTT bridge with ``devices``: friendly name -> ``{"color": bool,
    "mireds": (low, high)}``. It answers ``<name>/get`` (``{"state": ""}``) with the state,
    as Zigbee2MQTT does, and never publishes a state by itself before a command."""

    def __init__(self, port: int, devices: dict, base: str = "zigbee2mqtt") -> None:
        super().__init__()
        self.base, self.devices = base, devices
        self.state = {name: {"state": "OFF"} for name in devices}
        self.mute: set[str] = set()  # devices that take commands and reads, publish no state
        self.gets: list[str] = []  # friendly names read with /get, in order
        self.client = _client(port, f"{base}/#", self._got)
        self.pub(f"{base}/bridge/state", {"state": "online"}, retain=True)
        self.pub(f"{base}/bridge/devices", self.bridge_devices(), retain=True)
        for name in devices:
            self.pub(f"{base}/{name}/availability", {"state": "online"}, retain=True)

    def bridge_devices(self) -> list:
        out = [{"type": "Coordinator", "friendly_name": "Coordinator"}]
        for name, spec in self.devices.items():
            features = [{"name": "state"}, {"name": "brightness"}]
            if spec.get("mireds"):
                low, high = spec["mireds"]
                features.append({"name": "color_temp", "value_min": low, "value_max": high})
            if spec.get("color"):
                features.append({"name": "color_xy"})
            out.append(
                {
                    "type": "Router",
                    "friendly_name": name,
                    "definition": {"exposes": [{"type": "light", "features": features}]},
                }
            )
        return out

    def _got(self, _c, _u, msg) -> None:
        topic = msg.topic
        with self.lock:
            if msg.retain and not topic.endswith("/set"):
                return  # what an earlier bridge left retained (state, availability)
            if msg.retain:
                self.errors.append(f"retained message on {topic}")
            if topic.endswith("/get"):
                name = topic[len(self.base) + 1 : -len("/get")]
                problem = self._check_get(name, msg.payload)
                if problem:
                    self.errors.append(f"{topic}: {problem}")
                    return
                self.gets.append(name)
                if name not in self.mute:
                    self.pub(f"{self.base}/{name}", self.state[name])
                return
            if not topic.endswith("/set"):
                self.errors.append(f"message on {topic} (not a /set or /get topic)")
                return
            name = topic[len(self.base) + 1 : -len("/set")]
            self.commands.append((name, bytes(msg.payload)))
            problem = self._check(name, msg.payload)
            if problem:
                self.errors.append(f"{topic}: {problem}")
                return
            self._apply(name, json.loads(msg.payload))
        if name not in self.mute:
            self.pub(f"{self.base}/{name}", self.state[name])

    def _check_get(self, name: str, payload: bytes) -> str:
        """Zigbee2MQTT's documented read: ``{"state": ""}`` (keys of the state, empty)."""
        if name not in self.devices:
            return f"no device called {name!r}"
        try:
            body = json.loads(payload)
        except ValueError:
            return "not JSON"
        if not isinstance(body, dict) or not body or any(v != "" for v in body.values()):
            return f"a get must name attributes with empty values, got {body!r}"
        return ""

    def _check(self, name: str, payload: bytes) -> str:
        if name not in self.devices:
            return f"no device called {name!r}"
        try:
            body = json.loads(payload)
        except ValueError:
            return "not JSON"
        if not isinstance(body, dict) or set(body) - {"state", "brightness", "color_temp", "color"}:
            return f"unknown keys in {body!r}"
        if "state" in body and body["state"] not in ("ON", "OFF", "TOGGLE"):
            return f"bad state {body['state']!r}"
        b = body.get("brightness", 0)
        if type(b) is not int or not 0 <= b <= 254:
            return f"bad brightness {b!r}"
        if "color_temp" in body:
            low, high = self.devices[name].get("mireds") or (0, -1)
            if type(body["color_temp"]) is not int or not low <= body["color_temp"] <= high:
                return f"color_temp {body['color_temp']!r} outside {low}-{high}"
        if "color" in body:
            c = body["color"]
            if not isinstance(c, dict) or not self.devices[name].get("color"):
                return f"bad color {c!r}"
            if "hex" in c and not re.fullmatch(r"#[0-9A-Fa-f]{6}", str(c["hex"])):
                return f"bad hex {c['hex']!r}"
            if not (
                {"hex"} <= set(c)
                or {"x", "y"} <= set(c)
                or {"r", "g", "b"} <= set(c)
                or {"h", "s"} <= set(c)
            ):
                return f"color object without hex, x/y, r/g/b or h/s: {c!r}"
        return ""

    def _apply(self, name: str, body: dict) -> None:
        st = self.state[name]
        if body.get("state") == "TOGGLE":
            body["state"] = "OFF" if st["state"] == "ON" else "ON"
        st.update(body)
        if body.get("brightness") and "state" not in body:
            st["state"] = "ON"


class TasmotaEmulator(_Emulator):
    """A Tasmota device: ``relays`` relays (0: a single relay), optional dimmer, its Topic and
    FullTopic, and SetOption26 (replies name ``POWER1`` even for one relay)."""

    def __init__(
        self,
        port: int,
        topic: str,
        *,
        relays: int = 1,
        dimmer: bool = False,
        full_topic: str = "%prefix%/%topic%/",
        so26: bool = False,
    ) -> None:
        super().__init__()
        self.topic, self.relays, self.dimmer_on, self.so26 = topic, relays, dimmer, so26
        self.pattern = full_topic
        self.power = {i: "OFF" for i in range(1, relays + 1)}
        self.dimmer = 100
        self.client = _client(port, "#", self._got)
        self.pub(self.t("tele", "LWT"), "Online", retain=True)

    def t(self, prefix: str, command: str) -> str:
        base = self.pattern.replace("%prefix%", prefix).replace("%topic%", self.topic)
        return base.rstrip("/") + "/" + command

    def _name(self, i: int) -> str:
        return "POWER" if self.relays == 1 and not self.so26 else f"POWER{i}"

    def _got(self, _c, _u, msg) -> None:
        topic, payload = msg.topic, bytes(msg.payload).decode()
        if msg.retain and not topic.startswith(self.t("cmnd", "")):
            return  # retained LWTs of earlier devices
        if msg.retain:
            self.errors.append(f"retained message on {topic}")
        for prefix in ("stat", "tele"):
            if topic.startswith(self.t(prefix, "")):
                self.errors.append(f"someone published on {topic}")
        cmnd = self.t("cmnd", "")
        if not topic.startswith(cmnd):
            return
        command = topic[len(cmnd) :]
        self.commands.append((command, bytes(msg.payload)))
        m = re.fullmatch(r"(?i)power(\d?)", command)
        if m:
            return self._power(int(m.group(1) or 1), payload)
        if command.lower() == "dimmer" and self.dimmer_on:
            return self._dim(payload)
        self.errors.append(f"unknown command {command!r} = {payload!r}")

    def _power(self, i: int, payload: str) -> None:
        if i not in self.power:
            self.errors.append(f"no relay {i}")
            return
        word = payload.strip().upper()
        if word == "TOGGLE":
            word = "OFF" if self.power[i] == "ON" else "ON"
        if word in ("ON", "OFF", "1", "0"):
            self.power[i] = "ON" if word in ("ON", "1") else "OFF"
        elif word:
            self.errors.append(f"bad POWER payload {payload!r}")
            return
        self.reply(i)

    def _dim(self, payload: str) -> None:
        if not payload.isdigit() or not 0 <= int(payload) <= 100:
            self.errors.append(f"bad Dimmer {payload!r}")
            return
        self.dimmer, self.power[1] = int(payload), "ON" if int(payload) else "OFF"
        self.pub(self.t("stat", "RESULT"), {self._name(1): self.power[1], "Dimmer": self.dimmer})

    def reply(self, i: int) -> None:
        """What Tasmota publishes after a POWER command (or a button press)."""
        self.pub(self.t("stat", "RESULT"), {self._name(i): self.power[i]})
        self.pub(self.t("stat", self._name(i)), self.power[i])

    def button(self, i: int = 1) -> None:
        """The physical button toggles relay ``i``: only ``stat`` messages."""
        self.power[i] = "OFF" if self.power[i] == "ON" else "ON"
        self.reply(i)

    def tele(self) -> None:
        """One TelePeriod message."""
        body = {self._name(i): v for i, v in self.power.items()}
        if self.dimmer_on:
            body["Dimmer"] = self.dimmer
        self.pub(self.t("tele", "STATE"), body)

    def lwt(self, online: bool) -> None:
        self.pub(self.t("tele", "LWT"), "Online" if online else "Offline", retain=True)
