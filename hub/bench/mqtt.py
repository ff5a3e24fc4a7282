"""``hub bench --suite mqtt``: device commands against a throw-away Mosquitto.

- rate: 1,000 commands published one after another, each waiting for its PUBACK;
- freeze: the broker SIGSTOPped for 10 s during a command turn, 20 times;
- flap: 1,000 command turns while the broker is stopped and started every 5 s.

A "device" (a paho client with a persistent session, so the broker keeps its messages while
it reconnects) counts what arrives, by idempotency key: *lost* is a key never received,
*repeats* a key received more than once (a device drops those by key).
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
import tempfile
import threading
import time
from pathlib import Path

from paho.mqtt.client import CallbackAPIVersion, Client, MQTTv5
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

from hub.bench.broker import Broker
from hub.core.hub import Hub
from hub.devices.mqtt import MqttBackend
from hub.home import Home
from hub.resilience.percentile import percentile
from hub.store.db import Store

COMMANDS = 1000
FREEZES, FREEZE_S = 20, 10.0
FLAP_TURNS, FLAP_S = 1000, 5.0
SETTLE_S = 120.0
SENTENCES = (
    "turn on the kitchen light",
    "turn off the office light",
    "turn on the bed light",
    "turn off the kitchen light",
    "turn on the office light",
    "turn off the bed light",
)


class Device:
    """Subscribes to every command topic with a persistent session; counts keys."""

    def __init__(self, port: int, prefix: str = "hub") -> None:
        self.keys: list[str] = []
        self._lock = threading.Lock()
        self.client = Client(CallbackAPIVersion.VERSION2, client_id="bench-device", protocol=MQTTv5)
        self.client.reconnect_delay_set(0.05, 0.5)
        self.client.on_message = self._got
        self.client.on_connect = lambda c, *a: c.subscribe(f"{prefix}/+/+/set", qos=1)
        props = Properties(PacketTypes.CONNECT)
        props.SessionExpiryInterval = 3600
        self.client.connect("127.0.0.1", port, clean_start=False, properties=props)
        self.client.loop_start()

    def _got(self, _c, _u, message) -> None:
        try:
            key = json.loads(message.payload)["idempotency_key"]
        except (ValueError, KeyError):
            return
        with self._lock:
            self.keys.append(key)

    def count(self) -> tuple[int, int]:
        """(distinct keys, messages)."""
        with self._lock:
            return len(set(self.keys)), len(self.keys)

    def close(self) -> None:
        self.client.loop_stop()
        self.client.disconnect()


def _wait(pred, timeout_s: float) -> bool:
    end = time.monotonic() + timeout_s
    while time.monotonic() < end and not pred():
        time.sleep(0.05)
    return pred()


def _hub(settings, broker: Broker, folder: Path):
    s = dataclasses.replace(
        settings,
        mqtt=dataclasses.replace(settings.mqtt, host="127.0.0.1", port=broker.port, discovery=()),
        llm=dataclasses.replace(settings.llm, intents_on=(), answers_on=()),
    )
    hub = Hub(s, entry="ask", store=Store(folder / "hub.db"), speak=False)
    hub.engines.warm(["rules", "devices"])
    backend = hub.engines.devices()
    backend.notify = lambda event: dropped.append(event)
    dropped: list = []
    backend.dropped = dropped
    assert backend.link.subscribed.wait(10), "the hub did not connect to the bench broker"
    return hub, backend


def _outbox(hub) -> dict[str, str]:
    return {r["idempotency_key"]: r["status"] for r in hub.store.db()["outbox"].rows}


def bench_rate(settings, folder: Path) -> dict:
    """1,000 commands through the backend, one after another."""
    broker = Broker(folder / "rate")
    device = Device(broker.port)
    home = Home.from_settings(settings.home)
    names = [e.name for e in home.entities if e.domain == "light"] or ["Kitchen Light"]
    backend = MqttBackend(
        dataclasses.replace(settings.mqtt, host="127.0.0.1", port=broker.port, discovery=()),
        home=home,
        store=Store(folder / "rate.db"),
        notify=lambda e: None,
    )
    backend.link.subscribed.wait(10)
    times, results = [], []
    start = time.monotonic()
    for n in range(COMMANDS):
        action = {
            "entity": names[n % len(names)],
            "domain": "light",
            "service": "turn_on",
            "data": {},
            "idempotency_key": f"rate-{n}",
        }
        t = time.monotonic()
        results.append(backend.publish(action))
        times.append((time.monotonic() - t) * 1000)
    elapsed = time.monotonic() - start
    _wait(lambda: device.count()[1] >= COMMANDS, 10)
    distinct, messages = device.count()
    backend.close()
    device.close()
    broker.close()
    return {
        "commands": COMMANDS,
        "per_s": COMMANDS / elapsed,
        "p50": percentile(times, 50),
        "p95": percentile(times, 95),
        "done": results.count("done"),
        "distinct": distinct,
        "messages": messages,
    }


def bench_freeze(settings, folder: Path) -> dict:
    """A command turn while the broker is frozen, 20 times; nothing may be reported failed."""
    broker = Broker(folder / "freeze")
    device = Device(broker.port)
    hub, backend = _hub(settings, broker, folder / "freeze")
    answers, sorry = [], 0
    for n in range(FREEZES):
        broker.freeze()
        trace = hub.turn_text(SENTENCES[n % len(SENTENCES)])
        answers.append(trace["response"])
        sorry += "Sorry" in trace["response"]
        time.sleep(FREEZE_S)
        broker.thaw()
        _wait(lambda: all(s == "done" for s in _outbox(hub).values()), 10)
    keys = _outbox(hub)
    _wait(lambda: device.count()[0] >= len(keys), 10)
    distinct, messages = device.count()
    out = {
        "tries": FREEZES,
        "sorry": sorry,
        "dropped": len(backend.dropped),
        "queued": sum("when it's reachable" in a for a in answers),
        "actions": len(keys),
        "done": list(keys.values()).count("done"),
        "distinct": distinct,
        "messages": messages,
    }
    backend.close()
    device.close()
    broker.close()
    return out


def bench_flap(settings, folder: Path) -> dict:
    """1,000 command turns while the broker stops and starts every 5 s."""
    broker = Broker(folder / "flap", persistence=True)
    device = Device(broker.port)
    hub, backend = _hub(settings, broker, folder / "flap")
    stop = threading.Event()

    def flap():
        while not stop.wait(FLAP_S):
            if broker.proc is None:
                broker.start()
            else:
                broker.stop()

    flapper = threading.Thread(target=flap, daemon=True)
    flapper.start()
    times, sorry, queued = [], 0, 0
    start = time.monotonic()
    for n in range(FLAP_TURNS):
        trace = hub.turn_text(SENTENCES[n % len(SENTENCES)])
        times.append(trace["timings_ms"]["total"])
        sorry += "Sorry" in trace["response"]
        queued += "when it's reachable" in trace["response"]
    elapsed = time.monotonic() - start
    stop.set()
    flapper.join()
    if broker.proc is None:
        broker.start()
    settled = _wait(lambda: all(s == "done" for s in _outbox(hub).values()), SETTLE_S)
    keys = _outbox(hub)
    _wait(lambda: device.count()[0] >= len(keys), 30)
    distinct, messages = device.count()
    lost = len(set(keys) - set(device.keys))
    out = {
        "turns": FLAP_TURNS,
        "seconds": elapsed,
        "sorry": sorry,
        "queued": queued,
        "p95": percentile(times, 95),
        "actions": len(keys),
        "settled": settled,
        "done": list(keys.values()).count("done"),
        "distinct": distinct,
        "messages": messages,
        "lost": lost,
        "dropped": len(backend.dropped),
    }
    backend.close()
    device.close()
    broker.close()
    return out


def bench_mqtt(args, settings, folders) -> str:
    """Run the three measurements; the report section (Markdown)."""
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="hub-bench-mqtt-") as tmp:
        folder = Path(tmp)
        for sub in ("rate", "freeze", "flap"):
            (folder / sub).mkdir()
        rate = bench_rate(settings, folder)
        freeze = bench_freeze(settings, folder)
        flap = bench_flap(settings, folder)

    command = ("hub " + " ".join(sys.argv[1:])).strip()
    return report(
        rate, freeze, flap, f"{os.cpu_count()} cores, load average {load:.1f} at start", command
    )


def report(rate: dict, freeze: dict, flap: dict, machine: str, command: str) -> str:
    """The BENCHMARKS.md section."""
    return f"""## MQTT

Made by: `{command}` (a throw-away Mosquitto on 127.0.0.1; a device client with a
persistent session counts idempotency keys). Machine: {machine}; date {time.strftime("%Y-%m-%d")}.
The rate is the broker round trip (PUBACK) per command, so it falls with the machine's load.

| measurement | result |
|---|---|
{_table_rows(rate, freeze, flap)}
"""


def _table_rows(rate: dict, freeze: dict, flap: dict) -> str:
    """The three rows of the MQTT table (Markdown, one line each)."""
    rows = [
        (
            f"{rate['commands']} commands, one after another, each waiting for its PUBACK",
            f"{rate['per_s']:.0f} commands/s; publish p50 {rate['p50']:.2f} ms, "
            f"p95 {rate['p95']:.2f} ms; {rate['done']} done; device got {rate['distinct']} "
            f"distinct keys in {rate['messages']} messages",
        ),
        (
            f"broker SIGSTOPped {FREEZE_S:g} s during a command turn, {freeze['tries']} tries",
            f'{freeze["sorry"]} answers "Sorry", {freeze["dropped"]} reported dropped, '
            f'{freeze["queued"]} answered "when it\'s reachable"; '
            f"{freeze['done']}/{freeze['actions']} acknowledged after the thaw; device got "
            f"{freeze['distinct']} distinct keys in {freeze['messages']} messages",
        ),
        (
            f"{flap['turns']} command turns, broker stopped/started every {FLAP_S:g} s "
            f"({flap['seconds']:.0f} s)",
            f'{flap["sorry"]} answers "Sorry", {flap["queued"]} queued answers, '
            f"turn p95 {flap['p95']:.0f} ms; after it settled: {flap['done']}/{flap['actions']} "
            f"acknowledged, {flap['lost']} lost, device got {flap['distinct']} distinct keys in "
            f"{flap['messages']} messages ({flap['messages'] - flap['distinct']} repeats a device "
            f"drops by key), {flap['dropped']} reported dropped",
        ),
    ]
    return "\n".join(f"| {what} | {result} |" for what, result in rows)
