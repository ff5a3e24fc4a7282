"""MQTT device backend against a throw-away Mosquitto of this module (tests/mqtt_broker.py):
exactly once through broker loss, freezes and restarts; device state; topics and config."""

from __future__ import annotations

import json
import random
import threading
import time

import pytest

from hub.devices.mqtt import MqttBackend, make_backend
from hub.devices.queued import queued_text
from hub.devices.topics import StateError, entity_topics, parse_state, slug
from hub.errors import ConfigError, FatalError
from hub.resilience.backoff import backoff_delay
from hub.resilience.deadline import ManualClock
from hub.settings import MqttSettings, settings_from_dict
from hub.store.db import Store

from mqtt_broker import WAIT_S, Broker, Recorder, broker, home, until  # noqa: F401 - fixtures


@pytest.fixture()
def rec(broker):
    r = Recorder(broker.port, "#")
    yield r
    r.close()


def mqtt(broker, **kw) -> MqttSettings:
    return MqttSettings(**{"host": "127.0.0.1", "port": broker.port, "probe_s": 1.0, **kw})


def action(
    key: str, entity: str = "Kitchen Light", domain: str = "light", service: str = "turn_on", **data
) -> dict:
    return {
        "entity": entity,
        "domain": domain,
        "service": service,
        "data": data,
        "idempotency_key": key,
    }


class Events(list):
    def __call__(self, event):
        self.append(event)


def backend(broker, home, store=None, **kw) -> MqttBackend:
    b = MqttBackend(mqtt(broker, **kw), home=home, store=store, notify=Events())
    assert b.link.subscribed.wait(WAIT_S), "backend did not connect and subscribe"
    return b


# -- pure parts ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "name, expected",
    [
        ("Kitchen Light", "kitchen_light"),
        ("  Bed   Light ", "bed_light"),
        ("Living Room's TV", "living_room_s_tv"),
        ("Café Lamp", "cafe_lamp"),
        ("Lamp #2/Hall+", "lamp_2_hall"),
        ("Küche", "kuche"),
    ],
)
def test_slug_is_home_assistants(name, expected):
    assert slug(name) == expected


@pytest.mark.parametrize(
    "payload, expected",
    [
        (b"ON", ("on", {})),
        (b"off", ("off", {})),
        (b"locked", ("locked", {})),
        (b" 21.5 ", ("21.5", {})),
        (b'{"state": "OFF", "attributes": {"brightness": 3}}', ("off", {"brightness": 3})),
        (b'{"state": "unlocked"}', ("unlocked", {})),
    ],
)
def test_state_payloads(payload, expected):
    assert parse_state(payload) == expected


@pytest.mark.parametrize(
    "payload, reason",
    [
        (b'{"state":"on', "invalid JSON"),
        (b"\xff\xfe\x00", "not UTF-8"),
        (b"x" * (2 * 1024 * 1024), "over"),
        (b"[1,2,3]", "not an object"),
        (b'{"state": true}', "not an object"),
        (b"", "empty"),
        (b'{"state": "on", "attributes": [1]}', "attributes"),
    ],
)
def test_bad_state_payloads_say_why(payload, reason):
    with pytest.raises(StateError, match=reason):
        parse_state(payload)


def test_backoff_has_jitter_and_a_cap():
    rng = random.Random(1)
    delays = [backoff_delay(n, 60.0, rng) for n in range(12)]
    assert all(0.25 <= d <= 60.0 for d in delays)
    assert max(delays[8:]) <= 60.0 and min(delays[8:]) >= 30.0  # capped, never below half
    assert len({round(backoff_delay(3, 60.0, rng), 6) for _ in range(20)}) > 10  # jittered


def test_queued_sentences():
    assert queued_text([action("a")]) == "I'll turn on the Kitchen Light when it's reachable."
    assert (
        queued_text([action("a"), action("b", entity="Bed Light")])
        == "I'll turn on the Kitchen Light and the Bed Light when they're reachable."
    )
    assert (
        queued_text([action("c", entity="Front Door", domain="lock", service="unlock")])
        == "I'll unlock the Front Door when it's reachable."
    )


# -- config -------------------------------------------------------------------------------------
def _home(*entities):
    return {
        "areas": [{"name": "Kitchen"}],
        "entities": [{"name": n, "domain": d} for n, d in entities],
    }


def test_a_host_enables_mqtt_unless_disabled():
    assert make_backend(MqttSettings()) is None  # no host
    assert make_backend(MqttSettings(host="127.0.0.1", enabled=False)) is None
    assert settings_from_dict({"mqtt": {"host": "broker"}}).mqtt.enabled


@pytest.mark.parametrize(
    "table, message",
    [
        ({"topic_prefix": "hub/+"}, "mqtt.topic_prefix: 'hub/+' has an MQTT wildcard"),
        ({"topic_prefix": "hub/#"}, "mqtt.topic_prefix: 'hub/#' has an MQTT wildcard"),
        ({"topic_prefix": "hub//x"}, "mqtt.topic_prefix: 'hub//x' has an empty topic level"),
        ({"topic_prefix": "/hub"}, "empty topic level"),
        ({"topic_prefix": ""}, "mqtt.topic_prefix: must not be empty"),
        ({"state_topics": {"Lamp": "z2m/+/lamp"}}, "mqtt.state_topics.Lamp: 'z2m/+/lamp' has"),
        ({"command_topics": {"Nope": "x/y"}}, "mqtt.command_topics.Nope: no entity named"),
        ({"discovery": ["status", "toaster"]}, "mqtt.discovery[1]: unknown hub entity"),
        ({"qos": 0}, "mqtt.qos: must be between 1 and 2"),
    ],
)
def test_bad_topic_parts_fail_at_start(table, message):
    with pytest.raises(ConfigError) as caught:
        settings_from_dict({"mqtt": table, "home": _home(("Lamp", "light"))})
    assert message in caught.value.message


def test_entity_topic_collisions_fail_at_start_with_both_names():
    with pytest.raises(ConfigError) as caught:
        settings_from_dict({"home": _home(("Lamp/#", "light"), ("Lamp", "light"))})
    assert "'Lamp/#' and 'Lamp' share the topic 'hub/light/lamp/" in caught.value.message
    with pytest.raises(ConfigError, match="'A' and 'B' share the topic 'z/a'"):
        settings_from_dict(
            {
                "home": _home(("A", "light"), ("B", "switch")),
                "mqtt": {"state_topics": {"A": "z/a", "B": "z/a"}},
            }
        )


def test_per_entity_topics():
    s = settings_from_dict(
        {
            "home": _home(("Desk", "light")),
            "mqtt": {
                "state_topics": {"Desk": "zigbee2mqtt/desk"},
                "command_topics": {"Desk": "zigbee2mqtt/desk/set"},
            },
        }
    )
    [t] = entity_topics(s.mqtt, [("Desk", "light")]).values()
    assert (t.command, t.state) == ("zigbee2mqtt/desk/set", "zigbee2mqtt/desk")


def test_cli_config_error_is_one_line_exit_2(tmp_path):
    import subprocess
    import sys

    conf = tmp_path / "hub.toml"
    conf.write_text(
        '[mqtt]\nhost = "127.0.0.1"\n[home]\nentities = [{name = "Lamp/#", '
        'domain = "light"}, {name = "Lamp", domain = "light"}]\n'
    )
    import os
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    out = subprocess.run(
        [sys.executable, "-m", "hub", "ask", "--config", str(conf), "hi"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=root,
        env={**os.environ, "PYTHONPATH": str(root)},
    )
    assert out.returncode == 2
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "'Lamp/#' and 'Lamp' share the topic" in lines[0]


@pytest.mark.parametrize(
    "line, part",
    [
        ('topic_prefix = "hub/+"', "mqtt.topic_prefix: 'hub/+' has an MQTT wildcard"),
        (
            'state_topics = { Lamp = "z2m/#" }',
            "mqtt.state_topics.Lamp: 'z2m/#' has an MQTT wildcard",
        ),
    ],
)
def test_config_check_refuses_wildcard_topic_parts_in_one_line_exit_2(tmp_path, line, part):
    import os
    import subprocess
    import sys
    from pathlib import Path

    conf = tmp_path / "hub.toml"
    conf.write_text(
        f'[mqtt]\nhost = "127.0.0.1"\n{line}\n[home]\n'
        'entities = [{name = "Lamp", domain = "light"}]\n'
    )
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run(
        [sys.executable, "-m", "hub", "config", "check", "--config", str(conf)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=root,
        env={**os.environ, "PYTHONPATH": str(root)},
    )
    lines = (out.stdout + out.stderr).strip().splitlines()
    assert out.returncode == 2 and len(lines) == 1 and part in lines[0]


# -- against the broker -------------------------------------------------------------------------
def test_command_arrives_once_with_key_in_payload_never_retained(broker, rec, home, tmp_path):
    store = Store(tmp_path / "hub.db")
    b = backend(broker, home, store)
    assert b.publish(action("t1:0:0", brightness_pct=50)) == "done"
    assert b.publish(action("t1:0:0", brightness_pct=50)) == "done"  # same key: not again
    assert rec.wait_for(lambda: rec.keys() == ["t1:0:0"])
    [(_, topic, payload, retained)] = [
        m for m in rec.all if m[1].endswith("/set") and not m[1].startswith("hub/hub/")
    ]
    body = json.loads(payload)
    assert topic == "hub/light/kitchen_light/set" and not retained
    assert body["idempotency_key"] == "t1:0:0" and body["data"] == {"brightness_pct": 50}
    assert body["expires_at"] > time.time() + 200
    assert store.db()["outbox"].get("t1:0:0")["status"] == "done"
    b.close()
    time.sleep(0.3)
    assert rec.keys() == ["t1:0:0"]


def test_an_action_without_key_is_refused(broker, home):
    b = backend(broker, home)
    with pytest.raises(FatalError, match="idempotency key"):
        b.publish(action(""))
    b.close()


def test_timer_actions_stay_local(broker, rec, home):
    b = backend(broker, home)
    assert b.publish(action("tm:0:0", entity="timer 1", domain="timer", service="start")) == "local"
    b.close()
    time.sleep(0.3)
    sent = rec.keys("/set")
    assert "tm:0:0" not in sent


def test_device_state_follows_the_state_topic(broker, rec, home):
    b = backend(broker, home)
    assert home.state("Standing Light") != "off" or home.set_state("Standing Light", "on") is None
    rec.send("hub/light/standing_light/state", "OFF")
    assert rec.wait_for(lambda: home.state("Standing Light") == "off")
    rec.send("hub/light/standing_light/state", '{"state": "ON", "attributes": {"brightness": 9}}')
    assert rec.wait_for(lambda: home.state("Standing Light") == "on")
    assert home.attributes("Standing Light")["brightness"] == 9
    b.close()


def test_broker_down_queues_at_once_and_delivers_once_after_restart(broker, home, tmp_path):
    store = Store(tmp_path / "hub.db")
    b = backend(broker, home, store, ack_wait_s=60.0)
    broker.kill()
    assert until(lambda: not b.link.connected.is_set())
    started = time.monotonic()
    assert b.publish(action("q1:0:0")) == "queued"
    assert b.publish(action("q2:0:0", entity="Bed Light")) == "queued"
    # nothing waits while the broker is known down: waiting for the PUBACKs would take 120 s
    assert time.monotonic() - started < 60.0
    assert store.db()["outbox"].get("q1:0:0")["status"] == "pending"
    mark = len(broker.log())
    broker.start()
    assert b.wait_done("q1:0:0", 30) and b.wait_done("q2:0:0", 30)
    b.close()
    log = broker.log()[mark:]
    for topic in ("hub/light/kitchen_light/set", "hub/light/bed_light/set"):
        assert (
            log.count(f"Received PUBLISH from {b.client_id} ")
            and sum(1 for line in log.splitlines() if "Received PUBLISH" in line and topic in line)
            == 1
        ), topic
    assert not b.notify  # nothing was ever reported failed


def test_pending_rows_are_sent_at_start_up(broker, rec, home, tmp_path):
    store = Store(tmp_path / "hub.db")
    record = {
        "action": action("s1:0:0"),
        "topic": "hub/light/kitchen_light/set",
        "expires_at": time.time() + 300,
    }
    assert store.outbox_claim("s1:0:0", record)  # written by a hub that died before publishing
    b = backend(broker, home, store)
    assert rec.wait_for(lambda: rec.keys() == ["s1:0:0"])
    assert b.wait_done("s1:0:0", WAIT_S)
    b.close()
    b2 = backend(broker, home, store)  # done rows are never sent again
    b2.close()
    assert rec.keys() == ["s1:0:0"]


def test_frozen_broker_never_reports_failure_and_delivers_once(broker, rec, home, tmp_path):
    b = backend(broker, home, Store(tmp_path / "hub.db"), ack_wait_s=0.3)
    broker.freeze()
    try:
        assert b.publish(action("f1:0:0")) == "queued"
    finally:
        broker.thaw()
    assert b.wait_done("f1:0:0", 10)
    assert rec.wait_for(lambda: rec.keys() == ["f1:0:0"])
    assert not b.notify
    b.close()


def test_expired_command_is_dropped_told_once_and_state_undone(broker, home, tmp_path):
    store, wall = Store(tmp_path / "hub.db"), ManualClock(time.time())
    settings = mqtt(broker, action_ttl_s=60.0)
    b = MqttBackend(settings, home=home, store=store, notify=Events(), clock=wall)
    assert b.link.subscribed.wait(WAIT_S)
    before = home.state("Kitchen Light")
    broker.kill()
    assert until(lambda: not b.link.connected.is_set())
    home.set_state("Kitchen Light", "on" if before != "on" else "off")  # the handler's update
    assert b.publish(action("x1:0:0")) == "queued"
    wall.advance(59.0)
    assert b.expire() == 0 and not b.notify  # still within its action_ttl_s
    wall.advance(2.0)  # the expiry thread may drop it first: told once either way
    assert until(lambda: b.expire() == 0 and len(b.notify) == 1, 5)
    broker.start()
    assert until(lambda: b.link.connected.is_set(), 10)
    assert b.resend() == [] and b.expire() == 0  # never sent again, never told twice
    b.close()
    assert b.notify == [
        {
            "event": "action_dropped",
            "entity": "Kitchen Light",
            "service": "turn_on",
            "idempotency_key": "x1:0:0",
            "response": "I couldn't reach the Kitchen Light.",
        }
    ]
    assert home.state("Kitchen Light") == before
    assert store.db()["outbox"].get("x1:0:0")["status"] == "expired"


# -- through the turn graph ---------------------------------------------------------------------
def _graph_hub(broker, tmp_path, text):
    import dataclasses

    from fakes import make_hub

    hub = make_hub(text=text, store=Store(tmp_path / "hub.db"), entry="ask")
    hub.settings = dataclasses.replace(hub.settings, mqtt=mqtt(broker, discovery=()))
    hub.engines.warm(["rules", "devices"])
    assert hub.engines.devices().link.subscribed.wait(WAIT_S)
    hub.engines.devices().notify = Events()
    return hub


def test_frozen_broker_several_lights_answer_queued_within_the_act_timeout(broker, rec, tmp_path):
    hub = _graph_hub(broker, tmp_path, "turn off all the lights")
    broker.freeze()
    try:
        trace = hub.turn_text("turn off all the lights")
    finally:
        broker.thaw()
    assert trace["intent"] == "HassTurnOff"
    assert "Sorry" not in trace["response"]
    assert (
        trace["response"].startswith("I'll turn off the ")
        and "when they're reachable" in trace["response"]
    )
    assert trace["timings_ms"]["act"] < 1000 * hub.settings.resilience.timeouts_s["act"]
    backend = hub.engines.devices()
    keys = [r["idempotency_key"] for r in hub.store.db()["outbox"].rows]
    assert len(keys) >= 4 and all(backend.wait_done(k, 10) for k in keys)
    assert rec.wait_for(lambda: sorted(set(rec.keys())) == sorted(keys))
    assert not backend.notify
    backend.close()


def test_time_and_state_questions_never_touch_the_broker(broker, tmp_path):
    hub = _graph_hub(broker, tmp_path, "what time is it")
    broker.kill()
    try:
        for text in ("what time is it", "is the kitchen light on"):
            trace = hub.turn_text(text)
            assert trace["status"] == "ok" and "Sorry" not in trace["response"], text
            assert not trace["errors"]
    finally:
        broker.start()
        hub.engines.devices().close()


def test_turns_update_the_hubs_own_entities(broker, tmp_path):
    import dataclasses

    hub = _graph_hub(broker, tmp_path, "what time is it")
    hub.engines.devices().close()
    hub.settings = dataclasses.replace(hub.settings, mqtt=mqtt(broker))
    hub.entry = "run"  # the service publishes the hub's entities; a one-off `hub ask` never does
    hub.engines = type(hub.engines)(hub, hub.engines._factories, 60.0)  # rebuilt with discovery
    hub.engines.warm(["rules", "devices"])
    backend = hub.engines.devices()
    assert backend.link.subscribed.wait(WAIT_S)
    hub.turn_text("what time is it")
    late = Recorder(broker.port, "hub/hub/+/state")
    want = {
        "hub/hub/last_intent/state": b"HassGetCurrentTime",
        "hub/hub/last_transcript/state": b"what time is it",
        "hub/hub/status/state": b"ok",
        "hub/hub/fallback_level/state": b"0",
    }
    try:  # retained: a late subscriber (Home Assistant after a restart) sees the last turn
        assert late.wait_for(lambda: want.items() <= {t: p for _, t, p, _ in late.all}.items())
    finally:
        late.close()
        backend.close()


def test_close_flushes_what_is_queued_before_it_says_offline(broker, rec, home):
    """``close(timeout_s)`` writes what the link still holds, then says ``offline`` (the stop
    deadline was set on a misspelt attribute: the flush ended at once and whatever was
    queued was written after ``offline``, or never)."""
    b = backend(broker, home)
    session = b.link._session
    session.window = 0  # nothing is handed to paho until the stop began
    for i in range(5):
        b.link.publish(f"hub/test/flush/{i}", b"x", qos=1)
    # a roomy stop deadline (the flush ends when all is written): with 5 s, at load 11 the
    # deadline could pass before the five and the offline were written
    closing = threading.Thread(target=b.close, args=(60.0,))
    closing.start()
    assert until(b.link.stopping.is_set)
    assert session._flushing()  # stopping, and still sending what is queued (until 60 s)
    session.window = 20
    b.link.wake()
    closing.join(90.0)
    assert not closing.is_alive()

    def seen() -> list[str]:  # not the retained messages of this module's earlier tests: their
        # "offline" came at once and, on a loaded machine, before the five (CI failure)
        return [m[1] if m[2] != b"offline" else "offline" for m in list(rec.all) if not m[3]]

    assert rec.wait_for(lambda: "offline" in seen()), seen()
    flushed = [t for t in seen() if t.startswith("hub/test/flush/")]
    assert len(flushed) == 5 and seen()[-1] == "offline", seen()


def test_a_rebuild_once_stopping_starts_nothing(broker, home):
    """The watchdog rebuilt the client as the hub stopped, and ``stop`` found a thread not
    yet started ("cannot join thread before it is started", seen at load 18): a rebuild
    after the stop began makes no new session or thread."""
    b = backend(broker, home)
    b.close()
    gen, thread = b.link.generation, b.link._thread
    b.link._spawn()  # the watchdog's rebuild, a moment too late
    assert b.link.generation == gen and b.link._thread is thread
    assert not b.link.is_running()
