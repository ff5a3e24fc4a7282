"""Cases BC-28 (the network loop survives bad messages and raising callbacks), BC-29 (client
ids, takeovers, lost subscriptions, refused logins) and BC-31 (Home Assistant discovery after
its birth message), each against a throw-away Mosquitto (tests/mqtt_broker.py)."""

from __future__ import annotations

import json
import logging
import re
import subprocess
import threading
import time
from functools import partial

import pytest

from hub.devices import connection as session_mod
from hub.devices.discovery import ENTITIES
from hub.devices.mqtt import MqttBackend
from hub.settings import MqttSettings
from hub.store.db import Store

from mqtt_broker import WAIT_S, Broker, Recorder, broker, home, until  # noqa: F401 - fixtures


def make(broker, home, store=None, port=None, **kw) -> MqttBackend:
    s = MqttSettings(
        **{
            "host": "127.0.0.1",
            "port": port or broker.port,
            "probe_s": 0.5,
            "birth_delay_max_s": 0.5,
            "ack_wait_s": 30.0,  # ends at the PUBACK; 1 s (the default) is short at load 11
            **kw,
        }
    )
    return MqttBackend(s, home=home, store=store, notify=lambda e: None)


def turn_on(key: str) -> dict:
    """The act node's action that turns the Kitchen Light on, idempotency key ``key``."""
    return {
        "entity": "Kitchen Light",
        "domain": "light",
        "service": "turn_on",
        "data": {},
        "idempotency_key": key,
    }


def ready(b: MqttBackend) -> MqttBackend:
    assert b.link.subscribed.wait(WAIT_S), "backend did not connect and subscribe"
    return b


def connects(log: str, client_id: str) -> int:
    return len(re.findall(rf"New client connected from \S+ as {re.escape(client_id)} ", log))


# -- BC-28 --------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "payload, reason",
    [
        (b'{"state":"on', "invalid JSON"),
        (b"\xff\xfe\x00", "not UTF-8"),
        (b"x" * (2 * 1024 * 1024), "over 65536"),
        (b"[1,2,3]", "not an object"),
    ],
)
def test_bc28_bad_message_is_one_warning_then_a_good_one_works(
    broker, home, caplog, payload, reason
):
    b = ready(make(broker, home))
    rec = Recorder(broker.port, "x/none")
    topic = "hub/light/standing_light/state"
    home.set_state("Standing Light", "on")
    mark = len(broker.log())
    with caplog.at_level(logging.WARNING, logger="hub.devices"):
        rec.send(topic, payload)
        rec.send(topic, "OFF")
        assert until(lambda: home.state("Standing Light") == "off")
    # (e) handled by the same connection, at once: nothing was rebuilt or reconnected (which
    # is what would have held it up; the time itself varies with the machine's load)
    assert connects(broker.log()[mark:], b.client_id) == 0
    warnings = [
        r.getMessage()
        for r in caplog.records
        if r.levelno == logging.WARNING and "dropped" in r.getMessage()
    ]
    assert len(warnings) == 1 and topic in warnings[0] and reason in warnings[0]
    assert b.link.is_running()
    rec.close()
    b.close()


def test_bc28_raising_handlers_never_stop_the_loop(broker, home, monkeypatch, caplog):
    raised = {"message": 0, "disconnect": 0}
    real_disconnect = session_mod.Session._on_disconnect

    def bad_disconnect(self, *args):
        if not raised["disconnect"]:
            raised["disconnect"] += 1
            raise RuntimeError("disconnect handler broke")
        return real_disconnect(self, *args)

    monkeypatch.setattr(session_mod.Session, "_on_disconnect", bad_disconnect)
    b = ready(make(broker, home))
    real_message = b.on_message

    def bad_message(topic, payload):
        if not raised["message"]:
            raised["message"] += 1
            raise RuntimeError("message handler broke")
        return real_message(topic, payload)

    b.on_message = bad_message
    rec = Recorder(broker.port, "x/none")
    rec.send("hub/light/standing_light/state", "OFF")
    rec.close()
    assert until(lambda: raised["message"] == 1)
    broker.restart()
    assert until(lambda: raised["disconnect"] == 1)
    assert b.link.subscribed.wait(10), "no reconnect after the broker restart"
    probe = b.link.last_probe
    assert until(lambda: b.link.last_probe > probe), "the probe round trip stopped"
    assert b.link.is_running()
    assert b.publish(turn_on("bc28:0:0")) == "done"
    assert any("message handler broke" in r.getMessage() for r in caplog.records)
    b.close()


def test_bc28_a_stuck_loop_is_noticed_logged_once_and_rebuilt(broker, home, caplog):
    b = ready(make(broker, home))
    stuck, release = threading.Event(), threading.Event()
    real = b.on_message

    def hang(topic, payload):  # blocks the network thread, like a dead loop
        if not stuck.is_set():
            stuck.set()
            release.wait(30)
        return real(topic, payload)

    b.on_message = hang
    rec = Recorder(broker.port, "x/none")
    with caplog.at_level(logging.ERROR, logger="hub.devices"):
        rec.send("hub/light/standing_light/state", "OFF")
        assert stuck.wait(WAIT_S)
        assert until(lambda: any("rebuilding the client" in r.getMessage() for r in caplog.records))
        assert until(lambda: b.link.subscribed.is_set())
        assert b.publish(turn_on("bc28s:0:0")) == "done"
    errors = [r for r in caplog.records if "rebuilding the client" in r.getMessage()]
    release.set()
    assert len(errors) == 1
    rec.close()
    b.close()


# -- BC-29 --------------------------------------------------------------------------------------
def test_bc29_client_id_has_host_and_install_id_and_a_second_hub_gets_another(
    broker, home, tmp_path
):
    store = Store(tmp_path / "hub.db")
    first = make(broker, home, store)
    assert re.fullmatch(r"hub-[a-z0-9-]+-[0-9a-f]{8}", first.client_id)
    second = make(broker, home, store)  # same store, same host: the lock gives another id
    assert second.client_id.startswith(first.client_id + "-")
    first.close()
    third = make(broker, home, store)  # the first one's id is free again
    assert third.client_id == first.client_id
    second.close()
    third.close()


def test_bc29_takeover_backs_off_and_logs_once(broker, home, caplog):
    b = ready(make(broker, home))
    mark = len(broker.log())
    from paho.mqtt.client import CallbackAPIVersion, Client, MQTTv5

    with caplog.at_level(logging.WARNING, logger="hub.devices"):
        other = Client(CallbackAPIVersion.VERSION2, client_id=b.client_id, protocol=MQTTv5)
        other.connect("127.0.0.1", broker.port)
        other.loop_start()  # paho's own loop reconnects when the hub takes the id back

        def takeover() -> list:
            return [r for r in caplog.records if "keeps being closed" in r.getMessage()]

        assert until(takeover, 20)  # the waits themselves: test_reconnect.py, on a fake clock
        other.loop_stop()
        other.disconnect()
    log = broker.log()[mark:]
    assert "already connected, closing old connection" in log
    assert len(takeover()) == 1  # once, however often the two evict each other
    assert connects(log, b.client_id) <= 4  # never a loop: then at least 10 s between tries
    b.close()


def test_bc29_subscriptions_come_back_after_a_broker_restart(broker, home):
    b = ready(make(broker, home))
    mark = len(broker.log())
    broker.restart(after_s=3.0)
    assert b.link.subscribed.wait(15)
    log = broker.log()[mark:]
    assert f"Received SUBSCRIBE from {b.client_id}" in log
    assert "hub/light/standing_light/state" in log.split("Received SUBSCRIBE")[-1]
    time.sleep(1.0)
    home.set_state("Standing Light", "on")
    rec = Recorder(broker.port, "x/none")
    rec.send("hub/light/standing_light/state", "off")
    assert until(lambda: home.state("Standing Light") == "off")
    rec.close()
    b.close()


def test_bc29_refused_login_is_one_error_and_no_retry_loop(tmp_path, home, caplog):
    passwd = tmp_path / "passwd"
    subprocess.run(
        ["mosquitto_passwd", "-b", "-c", str(passwd), "hub", "right"],
        check=True,
        capture_output=True,
    )
    secure = Broker(tmp_path, extra=f"allow_anonymous false\npassword_file {passwd}\n")
    try:
        with caplog.at_level(logging.INFO, logger="hub.devices"):
            b = make(None, home, port=secure.port, username="hub", password="wrong")
            assert until(lambda: "refused the login" in caplog.text, 10)
            assert b.publish(turn_on("bc29d:0:0")) == "queued"
            b.close()
        errors = [r for r in caplog.records if r.levelno == logging.ERROR]
        assert len(errors) == 1 and "refused the login" in errors[0].getMessage()
        assert "next try in 300 s" in errors[0].getMessage()
        assert secure.log().count("(0, 135)") == 1  # one refused CONNECT, no retry loop
    finally:
        secure.close()


# -- BC-31 --------------------------------------------------------------------------------------
def _configs(rec: Recorder, since: float = 0.0, node: str = "") -> list[tuple[float, str, bytes]]:
    """Discovery configs received since ``since`` for hub ``node`` (the broker still holds
    other tests' retained configs)."""
    return [
        (t, topic, p)
        for t, topic, p, _ in list(rec.all)
        if topic.startswith("homeassistant/")
        and topic.endswith("/config")
        and t >= since
        and (not node or f"/{node}/" in topic)
    ]


def _batch_came(rec: Recorder, since: float, node: str) -> bool:
    return len(_configs(rec, since, node)) >= len(ENTITIES)


def test_bc31_discovery_at_start_and_once_per_birth_burst(broker, home, tmp_path):
    from hub.devices.topics import HUB_ENTITIES

    assert tuple(ENTITIES) == HUB_ENTITIES  # what the config check allows is what is announced
    store = Store(tmp_path / "hub.db")
    b = ready(make(broker, home, store))
    rec = Recorder(broker.port, "homeassistant/#", "hub/status")
    node = b.discovery.node_id
    assert rec.wait_for(lambda: len(_configs(rec, 0, node)) == len(ENTITIES))  # retained
    first = {topic: json.loads(p) for _, topic, p in _configs(rec, 0, node)}
    for topic, body in first.items():
        component, node, object_id = topic.split("/")[1:4]
        assert component == ENTITIES[object_id][0] and node == b.discovery.node_id
        assert body["name"] and body["unique_id"] == f"{node}_{object_id}"
        assert body["device"]["identifiers"] == [node]
        assert "state_topic" in body or "command_topic" in body
    assert rec.wait_for(
        lambda: (b"online", True) in [(p, r) for _, t, p, r in rec.all if t == "hub/status"]
    )
    for births in (1, 5):
        since = time.monotonic()
        for _ in range(births):
            rec.send("homeassistant/status", "online")
            time.sleep(0.3)
        # 2 s quiet + up to birth_delay_max_s (0.5 here) after the last birth, or later on a
        # loaded machine; then as long again, in which a second batch would have come
        assert rec.wait_for(partial(_batch_came, rec, since, node)), births
        time.sleep(3.0)
        batch = _configs(rec, since, node)
        assert len(batch) == len(ENTITIES), births  # one batch, however many births
        assert {t: json.loads(p)["unique_id"] for _, t, p in batch} == {
            t: v["unique_id"] for t, v in first.items()
        }  # same ids: no doubles
    since = time.monotonic()
    rec.send("homeassistant/status", "offline")
    time.sleep(1.0)
    assert not _configs(rec, since, node)
    rec.send("homeassistant/status", "online")
    assert rec.wait_for(lambda: len(_configs(rec, since, node)) == len(ENTITIES))
    rec.close()
    b.close()


def test_bc31_entities_come_back_after_broker_restart_and_removed_ones_are_cleared(
    broker, home, tmp_path
):
    store = Store(tmp_path / "hub.db")
    b = ready(make(broker, home, store))
    broker.restart()  # retained configs are gone (persistence false)
    assert b.link.subscribed.wait(15)
    rec = Recorder(broker.port, "homeassistant/#")
    rec.send("homeassistant/status", "online")
    node = b.discovery.node_id
    assert rec.wait_for(lambda: len({t for _, t, _ in _configs(rec, 0, node)}) == len(ENTITIES))
    b.close()
    names = tuple(n for n in ENTITIES if n != "mute")
    b2 = ready(make(broker, home, store, discovery=names))
    mute = b2.discovery.config_topic("mute")
    assert rec.wait_for(lambda: any(t == mute and p == b"" for _, t, p in _configs(rec)))
    assert b2.discovery.node_id == node
    b2.close()
    rec.close()
    late = Recorder(broker.port, "homeassistant/#")  # what a restarting HA would now see
    late.settle()  # every retained config has arrived
    assert mute not in {t for _, t, _ in _configs(late, 0, node)}
    assert len({t for _, t, _ in _configs(late, 0, node)}) == len(names)
    late.close()


# -- TLS and credentials ------------------------------------------------------------------------
def _certs(folder):
    """A CA and a server certificate for 127.0.0.1 (openssl)."""

    def run(*a):
        return subprocess.run(["openssl", *a], check=True, capture_output=True, cwd=folder)

    run(
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-days",
        "2",
        "-subj",
        "/CN=test-ca",
        "-keyout",
        "ca.key",
        "-out",
        "ca.crt",
    )
    run(
        "req",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-subj",
        "/CN=127.0.0.1",
        "-keyout",
        "server.key",
        "-out",
        "server.csr",
    )
    (folder / "ext.cnf").write_text("subjectAltName=IP:127.0.0.1\n")
    run(
        "x509",
        "-req",
        "-in",
        "server.csr",
        "-CA",
        "ca.crt",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-days",
        "2",
        "-extfile",
        "ext.cnf",
        "-out",
        "server.crt",
    )
    return folder / "ca.crt"


def test_tls_with_username_and_password(tmp_path, home):
    ca = _certs(tmp_path)
    passwd = tmp_path / "passwd"
    subprocess.run(
        ["mosquitto_passwd", "-b", "-c", str(passwd), "hub", "right"],
        check=True,
        capture_output=True,
    )
    secure = Broker(
        tmp_path,
        extra=f"cafile {ca}\ncertfile {tmp_path / 'server.crt'}\n"
        f"keyfile {tmp_path / 'server.key'}\nallow_anonymous false\n"
        f"password_file {passwd}\n",
    )
    try:
        b = ready(
            make(
                None,
                home,
                port=secure.port,
                tls=True,
                ca_file=str(ca),
                username="hub",
                password="right",
            )
        )
        assert b.publish(turn_on("tls:0:0")) == "done"
        b.close()
        plain = make(None, home, port=secure.port)  # no TLS against a TLS listener: never up
        time.sleep(1.5)
        assert not plain.link.connected.is_set()
        plain.close()
    finally:
        secure.close()


def test_bc29_broker_down_backoff_one_line_per_attempt_capped(broker, home, caplog):
    b = ready(make(broker, home, backoff_max_s=2.0))
    with caplog.at_level(logging.INFO, logger="hub.devices.link"):
        broker.kill()

        def mine() -> list:
            return [
                r
                for r in list(caplog.records)
                if "unreachable" in r.getMessage() and f":{broker.port} " in r.getMessage()
            ]

        assert until(lambda: len(mine()) >= 3, 20)  # it kept trying, one line each
        broker.start()
        assert b.link.subscribed.wait(10)
    # the waits (jittered, capped at backoff_max_s): test_reconnect.py, on a fake clock
    assert [r.levelno for r in mine()][:3] == [logging.WARNING, logging.INFO, logging.INFO]
    b.close()
