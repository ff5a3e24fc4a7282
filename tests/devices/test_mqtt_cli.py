"""The whole hub (``python -m hub ask -``) against a throw-away Mosquitto: commands queued
while the broker is down arrive once when it is back, a hub killed between the outbox write
and the publish sends the command after its restart, and the service's last will says
``offline`` (a one-off ``hub ask`` never publishes the hub's status)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mqtt_broker import Broker, Recorder, until

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = Path(os.environ.get("HUB_SHARED", ROOT.parent / "shared")) / "fixtures" / "home-en.toml"
if not FIXTURE.exists():
    FIXTURE = ROOT.parent.parent / "shared" / "fixtures" / "home-en.toml"
if not FIXTURE.exists():
    FIXTURE = ROOT / "hub" / "data" / "home-en.toml"


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    b = Broker(tmp_path_factory.mktemp("broker"))
    yield b
    b.close()


def config(tmp_path: Path, broker: Broker, **mqtt) -> Path:
    table = {"host": "127.0.0.1", "port": broker.port, "keepalive_s": 5, **mqtt}
    lines = "\n".join(f"{k} = {json.dumps(v)}" for k, v in table.items())
    text = f'[mqtt]\n{lines}\n[store]\npath = "{tmp_path / "hub.db"}"\n\n' + FIXTURE.read_text(
        encoding="utf-8"
    )
    path = tmp_path / "hub.toml"
    path.write_text(text, encoding="utf-8")
    return path


def hub(conf: Path, *args: str, env=None, **kw) -> subprocess.Popen:
    environ = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    return subprocess.Popen(
        [sys.executable, "-m", "hub", "ask", "--config", str(conf), "--no-llm", *args],
        cwd=ROOT,
        env=environ,
        text=True,
        **kw,
    )


def received(log: str, topic: str) -> int:
    """PUBLISH packets for ``topic`` the broker received (its log, ``log_type all``)."""
    return sum(
        1 for line in log.splitlines() if "Received PUBLISH" in line and f"'{topic}'" in line
    )


class Ask:
    """One long-lived ``hub ask -``: ``say`` writes a line and returns its trace."""

    def __init__(self, conf: Path, env=None) -> None:
        self.proc = hub(
            conf,
            "-",
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )

    def say(self, text: str) -> dict:
        self.proc.stdin.write(text + "\n")
        self.proc.stdin.flush()
        while True:
            line = self.proc.stdout.readline()
            assert line, f"hub ended: {self.proc.stderr.read()[-2000:]}"
            data = json.loads(line)
            if "event" not in data:
                return data

    def close(self) -> tuple[int, str]:
        self.proc.stdin.close()
        code = self.proc.wait(30)
        return code, self.proc.stderr.read()


def test_broker_down_commands_queued_time_still_answered_then_each_arrives_once(broker, tmp_path):
    ask = Ask(config(tmp_path, broker))
    try:
        first = ask.say("turn on the kitchen light")
        assert first["intent"] == "HassTurnOn" and first["status"] == "ok"
        assert until(lambda: received(broker.log(), "hub/light/kitchen_light/set") == 1, 5)
        broker.kill()
        time.sleep(0.5)
        office = ask.say("turn on the office light")
        kitchen = ask.say("turn off the kitchen light")
        clock = ask.say("what time is it")
        for trace in (office, kitchen):
            assert trace["timings_ms"]["total"] < 8000
            assert "Sorry" not in trace["response"] and trace["status"] == "degraded"
        assert office["response"] == "I'll turn on the Office Light when it's reachable."
        assert kitchen["response"] == "I'll turn off the Kitchen Light when it's reachable."
        assert clock["intent"] == "HassGetCurrentTime" and clock["status"] == "ok"
        assert re.search(r"\d", clock["response"]) and "Sorry" not in clock["response"]
        mark = len(broker.log())
        broker.start()
        for topic in ("hub/light/office_light/set", "hub/light/kitchen_light/set"):
            assert until(lambda t=topic: received(broker.log()[mark:], t) >= 1, 30), topic
        time.sleep(1.0)
        log = broker.log()[mark:]
        assert received(log, "hub/light/office_light/set") == 1
        assert received(log, "hub/light/kitchen_light/set") == 1
    finally:
        code, err = ask.close()
    assert code == 0, err
    assert "Traceback" not in err


def test_kill_9_between_outbox_write_and_publish_sends_once_after_restart(broker, tmp_path):
    conf = config(tmp_path, broker)
    mark = len(broker.log())
    crashed = hub(
        conf,
        "turn on the bed light",
        env={"HUB_TEST_CRASH_AFTER_OUTBOX": "1"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert crashed.wait(60) == -signal.SIGKILL
    assert received(broker.log()[mark:], "hub/light/bed_light/set") == 0  # never published
    broker.restart()
    mark = len(broker.log())
    ask = Ask(conf)
    try:
        assert until(lambda: received(broker.log()[mark:], "hub/light/bed_light/set") == 1, 15)
        assert ask.say("what time is it")["status"] == "ok"
    finally:
        assert ask.close()[0] == 0
    again = Ask(conf)  # a later start has nothing left to send
    again.say("what time is it")
    again.close()
    assert received(broker.log()[mark:], "hub/light/bed_light/set") == 1


SERVICE = """
import sys, time
from hub.devices.mqtt import MqttBackend
from hub.settings import MqttSettings
b = MqttBackend(MqttSettings(host="127.0.0.1", port=int(sys.argv[1]), keepalive_s=5),
                notify=lambda e: None, service=True)
print("up", flush=True)
sys.stdin.read()
b.close()
"""


def service(broker) -> subprocess.Popen:
    """A long-running backend (what ``hub run`` / ``hub wyoming`` build) in its own process."""
    return subprocess.Popen(
        [sys.executable, "-c", SERVICE, str(broker.port)],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        text=True,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )


def test_availability_online_then_offline_by_last_will_after_kill_9(broker, tmp_path):
    rec = Recorder(broker.port, "hub/status")
    proc = service(broker)
    try:
        assert proc.stdout.readline().strip() == "up"
        assert rec.wait_for(lambda: [p for _, _, p, _ in rec.all][-1:] == [b"online"], 10)
        proc.kill()  # SIGKILL: no clean stop, the broker sends the will
        proc.wait(10)
        assert rec.wait_for(lambda: [p for _, _, p, _ in rec.all][-1:] == [b"offline"], 10)
    finally:
        rec.close()
    late = Recorder(broker.port, "hub/status")  # retained for whoever comes later
    assert late.wait_for(lambda: [(p, r) for _, _, p, r in late.all] == [(b"offline", True)], 3)
    late.close()


def test_clean_stop_says_offline(broker, tmp_path):
    rec = Recorder(broker.port, "hub/status")
    proc = service(broker)
    assert proc.stdout.readline().strip() == "up"
    assert rec.wait_for(lambda: [p for _, _, p, _ in rec.all][-1:] == [b"online"], 10)
    proc.stdin.close()
    assert proc.wait(30) == 0
    assert rec.wait_for(lambda: [p for _, _, p, _ in rec.all][-1:] == [b"offline"], 5)
    rec.close()


def test_device_state_topic_answers_the_state_question(broker, tmp_path):
    ask = Ask(config(tmp_path, broker))
    rec = Recorder(broker.port, "x/none")
    try:
        ask.say("what time is it")
        for payload, answer in (
            ("ON", "Yes"),
            ("OFF", "No"),
            ('{"state": "on", "attributes": {}}', "Yes"),
        ):
            rec.send("hub/light/standing_light/state", payload, retain=True)  # reaches a
            # hub that subscribes later too; a one-off publishes no "online" to wait for
            for _ in range(50):
                trace = ask.say("is the standing light on")
                if trace["response"].startswith(answer):
                    break
                time.sleep(0.1)
            assert trace["intent"] == "HassGetState"
            assert trace["response"].startswith(answer), (payload, trace["response"])
    finally:
        rec.send("hub/light/standing_light/state", "", retain=True)
        rec.close()
        assert ask.close()[0] == 0
