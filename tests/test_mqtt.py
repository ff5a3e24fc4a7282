"""MQTT device backend against the real Mosquitto broker on 127.0.0.1:1883.

scripts/test.sh starts the broker (``mosquitto -d -c /tmp/hub-test-mosquitto.conf`` with
``listener 1883 127.0.0.1`` and ``allow_anonymous true``). Hung brokers are local TCP servers
that accept and then never answer (or answer CONNACK and nothing else).
"""

from __future__ import annotations

import json
import queue
import socket
import threading
import uuid

import pytest

from hub.errors import (BadInputError, ConfigError, FatalError, TimeoutError_,
                        TransientError)
from hub.mqtt import KEY_PROPERTY, MqttBackend, make_backend, new_client, slug
from hub.settings import MqttSettings
from hub.store import Store

BROKER = ("127.0.0.1", 1883)
WAIT_S = 5.0  # every wait in these tests; reached only when something is broken


@pytest.fixture(scope="module", autouse=True)
def broker():
    """Fail (never skip) when the test broker is not running."""
    try:
        socket.create_connection(BROKER, timeout=1.0).close()
    except OSError as exc:
        pytest.fail(f"no MQTT broker on {BROKER[0]}:{BROKER[1]} ({exc}); scripts/test.sh starts "
                    f"it: mosquitto -d -c /tmp/hub-test-mosquitto.conf", pytrace=False)


@pytest.fixture()
def prefix():
    return f"hubtest-{uuid.uuid4().hex[:10]}"


def settings(prefix: str, **kw) -> MqttSettings:
    return MqttSettings(**{"enabled": True, "topic_prefix": prefix, "timeout_s": WAIT_S, **kw})


def action(key: str, entity: str = "Kitchen Light", domain: str = "light",
           service: str = "turn_on", **data) -> dict:
    return {"entity": entity, "domain": domain, "service": service, "data": data,
            "idempotency_key": key}


class Subscriber:
    """A test client (paho's own loop thread) that collects everything under a prefix."""

    def __init__(self, prefix: str):
        import paho.mqtt.client as mqtt

        self.messages: queue.Queue = queue.Queue()
        subscribed = threading.Event()
        self.client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5)
        self.client.on_message = lambda c, u, m: self.messages.put(m)
        self.client.on_subscribe = lambda *a: subscribed.set()
        self.client.on_connect = lambda c, *a: c.subscribe(f"{prefix}/#", qos=1)
        self.client.connect(*BROKER)
        self.client.loop_start()
        assert subscribed.wait(WAIT_S), "test subscriber got no SUBACK"

    def until(self, sentinel_key: str) -> list:
        """Messages received up to and including the one whose key is ``sentinel_key``."""
        got = []
        while not got or json.loads(got[-1].payload)["idempotency_key"] != sentinel_key:
            got.append(self.messages.get(timeout=WAIT_S))
        return got

    def keys_until(self, sentinel_key: str) -> list[str]:
        return [json.loads(m.payload)["idempotency_key"] for m in self.until(sentinel_key)]

    def close(self):
        self.client.disconnect()
        self.client.loop_stop()


@pytest.fixture()
def subscriber(prefix):
    sub = Subscriber(prefix)
    yield sub
    sub.close()


@pytest.fixture()
def store(tmp_path):
    return Store(tmp_path / "hub.db")


def outbox_status(store: Store, key: str) -> str:
    return store.db()["outbox"].get(key)["status"]


class HungBroker:
    """A TCP server that accepts and never answers; ``connack``: answers CONNACK, then nothing.

    ``waiting`` is set once the client has sent what it now waits an answer for (CONNECT, or
    with ``connack`` the PUBLISH); ``peer_closed`` once the client closed its socket.
    """

    CONNACK_V5 = b"\x20\x03\x00\x00\x00"  # session present 0, reason 0, no properties

    def __init__(self, connack: bool = False):
        self.connack = connack
        self.waiting = threading.Event()
        self.peer_closed = threading.Event()
        self.stop = threading.Event()
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        self.server.settimeout(0.05)
        while not self.stop.is_set():
            try:
                conn, _ = self.server.accept()
            except socket.timeout:
                continue
            with conn:
                self._talk(conn)
            return

    def _talk(self, conn):
        conn.settimeout(0.05)
        answered = False
        while not self.stop.is_set():
            try:
                data = conn.recv(4096)
            except socket.timeout:
                continue
            except ConnectionResetError:
                data = b""
            if not data:
                self.peer_closed.set()
                return
            if self.connack and not answered:
                conn.sendall(self.CONNACK_V5)
                answered = True
            else:
                self.waiting.set()

    def close(self):
        self.stop.set()
        self.thread.join(WAIT_S)
        self.server.close()


@pytest.fixture()
def hung():
    servers = []

    def make(connack: bool = False) -> HungBroker:
        servers.append(HungBroker(connack))
        return servers[-1]

    yield make
    for server in servers:
        server.close()


def run_in_thread(fn, *args):
    """Start ``fn(*args)`` in a thread; returns (thread, result dict with "error")."""
    result: dict = {"error": None}

    def body():
        try:
            fn(*args)
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            result["error"] = exc

    thread = threading.Thread(target=body, daemon=True)
    thread.start()
    return thread, result


# -- topics and factory -------------------------------------------------------------------------
@pytest.mark.parametrize("name, expected", [
    ("Kitchen Light", "kitchen_light"),
    ("  Bed   Light ", "bed_light"),
    ("EcoBee", "ecobee"),
    ("Living Room's TV", "living_room_s_tv"),
    ("Café Lamp", "cafe_lamp"),
    ("Lamp #2/Hall+", "lamp_2_hall"),
    ("Küche", "kuche"),
])
def test_slug(name, expected):
    assert slug(name) == expected


def test_slug_without_letters_is_bad_input():
    with pytest.raises(BadInputError):
        slug(" #/+ ")


def test_make_backend_is_none_when_disabled_and_lazy_when_enabled():
    assert make_backend(MqttSettings(enabled=False)) is None
    backend = make_backend(MqttSettings(enabled=True, port=1))  # nothing listens: no connect yet
    assert isinstance(backend, MqttBackend)
    backend.close()


def test_bad_qos_is_a_config_error():
    with pytest.raises(ConfigError, match=r"^mqtt\.qos"):
        MqttBackend(MqttSettings(enabled=True, qos=3))


# -- publishing ---------------------------------------------------------------------------------
def test_publish_arrives_on_topic_with_payload_and_key_property(prefix, subscriber, store):
    backend = MqttBackend(settings(prefix), store=store)
    threads = set(threading.enumerate())
    backend.publish(action("turn-1:0:0", brightness_pct=50))
    assert set(threading.enumerate()) == threads  # no network thread of its own
    [message] = subscriber.until("turn-1:0:0")
    assert message.topic == f"{prefix}/light/kitchen_light/set"
    assert json.loads(message.payload) == {"service": "turn_on", "data": {"brightness_pct": 50},
                                           "idempotency_key": "turn-1:0:0"}
    assert message.qos == 1 and not message.retain
    assert message.properties.UserProperty == [(KEY_PROPERTY, "turn-1:0:0")]
    assert outbox_status(store, "turn-1:0:0") == "done"
    backend.close()


def test_same_key_twice_publishes_once_also_after_restart(prefix, subscriber, store):
    backend = MqttBackend(settings(prefix), store=store)
    backend.publish(action("t:0:0"))
    backend.publish(action("t:0:0"))
    backend.close()
    restarted = MqttBackend(settings(prefix), store=store)
    restarted.publish(action("t:0:0"))
    restarted.publish(action("sentinel", entity="Bed Light"))
    assert subscriber.keys_until("sentinel") == ["t:0:0", "sentinel"]
    restarted.close()


def test_same_key_twice_publishes_once_without_store(prefix, subscriber):
    backend = MqttBackend(settings(prefix))
    backend.publish(action("m:0:0"))
    backend.publish(action("m:0:0"))
    backend.publish(action("sentinel"))
    assert subscriber.keys_until("sentinel") == ["m:0:0", "sentinel"]
    backend.close()


def test_a_failed_key_is_published_on_the_retry(prefix, subscriber, store):
    with pytest.raises(TransientError):
        MqttBackend(settings(prefix, port=1), store=store).publish(action("r:0:0"))
    assert outbox_status(store, "r:0:0") == "failed"
    backend = MqttBackend(settings(prefix), store=store)
    backend.publish(action("r:0:0"))
    assert subscriber.keys_until("r:0:0") == ["r:0:0"]
    assert outbox_status(store, "r:0:0") == "done"
    backend.close()


def test_timer_actions_are_never_published(prefix, subscriber, store):
    backend = MqttBackend(settings(prefix), store=store)
    backend.publish(action("tm:0:0", entity="timer 1", domain="timer", service="start"))
    backend.publish(action("sentinel"))
    assert subscriber.keys_until("sentinel") == ["sentinel"]
    assert "tm:0:0" not in {row["idempotency_key"] for row in store.db()["outbox"].rows}
    backend.close()


def test_an_action_without_idempotency_key_is_refused(prefix):
    with pytest.raises(FatalError, match="idempotency key"):
        MqttBackend(settings(prefix)).publish(action(""))


# -- failures -----------------------------------------------------------------------------------
def test_unreachable_broker_is_one_line_transient_error_without_waiting(prefix, store):
    backend = MqttBackend(settings(prefix, port=1, timeout_s=60.0), store=store)
    threads = set(threading.enumerate())
    worker, result = run_in_thread(backend.publish, action("u:0:0"))
    worker.join(WAIT_S)  # far below timeout_s: a refused connection does not wait for it
    assert not worker.is_alive()
    error = result["error"]
    assert isinstance(error, TransientError) and error.kind == "transient"
    assert error.message.startswith("MQTT broker 127.0.0.1:1 unreachable: ")
    assert "\n" not in error.message
    assert set(threading.enumerate()) == threads
    assert outbox_status(store, "u:0:0") == "failed"


@pytest.mark.parametrize("connack, waits_for", [(False, "CONNACK"), (True, "PUBACK")])
def test_cancel_stops_a_hung_publish(prefix, hung, store, connack, waits_for):
    server = hung(connack)
    backend = MqttBackend(settings(prefix, port=server.port, timeout_s=60.0), store=store)
    threads = set(threading.enumerate())
    cancel = threading.Event()
    worker, result = run_in_thread(backend.publish, action("h:0:0"), cancel)
    assert server.waiting.wait(WAIT_S)
    cancel.set()
    worker.join(1.0)  # the backend checks cancel every 50 ms
    assert not worker.is_alive()
    assert isinstance(result["error"], TimeoutError_)
    assert f"cancelled while waiting for {waits_for}" in result["error"].message
    assert server.peer_closed.wait(WAIT_S)  # the socket was closed, not leaked
    assert set(threading.enumerate()) <= threads
    assert outbox_status(store, "h:0:0") == "failed"


@pytest.mark.parametrize("connack, waits_for", [(False, "CONNACK"), (True, "PUBACK")])
def test_no_answer_within_timeout_is_transient(prefix, hung, connack, waits_for):
    server = hung(connack)
    backend = MqttBackend(settings(prefix, port=server.port, timeout_s=0.3))
    with pytest.raises(TransientError) as caught:
        backend.publish(action("n:0:0"))
    assert caught.value.message == (f"MQTT broker 127.0.0.1:{server.port}: "
                                    f"no {waits_for} within 0.3 s")
    assert server.peer_closed.wait(WAIT_S)


def test_cancel_stops_a_hung_tcp_connect(prefix):
    server = socket.create_server(("127.0.0.1", 0), backlog=0)
    port = server.getsockname()[1]
    fillers = [socket.socket() for _ in range(3)]  # fill the accept queue: later SYNs are dropped
    for filler in fillers:
        filler.setblocking(False)
        filler.connect_ex(("127.0.0.1", port))
    try:
        backend = MqttBackend(settings(prefix, port=port, timeout_s=60.0))
        cancel = threading.Event()
        worker, result = run_in_thread(backend.publish, action("s:0:0"), cancel)
        worker.join(0.3)
        cancel.set()
        worker.join(1.0)
        assert not worker.is_alive()
        assert isinstance(result["error"], TimeoutError_)
        assert result["error"].message == f"MQTT connect to 127.0.0.1:{port} cancelled"
    finally:
        for filler in fillers:
            filler.close()
        server.close()


# -- reconnection -------------------------------------------------------------------------------
class Factory:
    """The default client factory, remembering every client it made."""

    def __init__(self):
        self.clients = []

    def __call__(self, client_id):
        self.clients.append(new_client(client_id))
        return self.clients[-1]


def test_keeps_one_connection_for_later_publishes(prefix, subscriber):
    factory = Factory()
    backend = MqttBackend(settings(prefix), client_factory=factory)
    for n in range(3):
        backend.publish(action(f"c:{n}:0"))
    assert subscriber.keys_until("c:2:0") == ["c:0:0", "c:1:0", "c:2:0"]
    assert len(factory.clients) == 1
    backend.close()
    assert factory.clients[0].socket() is None  # DISCONNECT sent, socket closed


def test_reconnects_after_the_socket_was_killed(prefix, subscriber):
    factory = Factory()
    clients = factory.clients
    backend = MqttBackend(settings(prefix), client_factory=factory)
    backend.publish(action("k:0:0"))
    clients[-1].socket().shutdown(socket.SHUT_RDWR)
    backend.publish(action("k:1:0"))
    assert subscriber.keys_until("k:1:0") == ["k:0:0", "k:1:0"]
    assert len(clients) == 2
    backend.close()


def test_reconnects_after_the_broker_dropped_the_connection(prefix, subscriber):
    client_id = f"hubtest-{uuid.uuid4().hex[:10]}"
    factory = Factory()
    backend = MqttBackend(settings(prefix, client_id=client_id), client_factory=factory)
    backend.publish(action("d:0:0"))
    thief = new_client(client_id)  # same client id: the broker drops the backend's session
    subscribed = threading.Event()
    thief.on_subscribe = lambda *a: subscribed.set()
    thief.connect(*BROKER)
    thief.loop_start()
    thief.subscribe(f"{prefix}/none", qos=1)
    assert subscribed.wait(WAIT_S)  # a round trip after CONNACK: the take-over has happened
    thief.disconnect()
    thief.loop_stop()
    backend.publish(action("d:1:0"))
    assert subscriber.keys_until("d:1:0") == ["d:0:0", "d:1:0"]
    assert len(factory.clients) == 2
    backend.close()
