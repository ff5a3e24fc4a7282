"""MQTT device backend against the real Mosquitto broker on 127.0.0.1:1883 (scripts/test.sh
starts it); hung brokers are local TCP servers that never answer CONNACK (or PUBACK)."""

from __future__ import annotations

import contextlib
import json
import queue
import select
import socket
import threading
import uuid

import pytest
from pydantic import ValidationError

from hub.errors import (BadInputError, FatalError, TimeoutError_,
                        TransientError)
from hub.devices.mqtt import KEY_PROPERTY, MqttBackend, make_backend, new_client, slug
from hub.settings import MqttSettings
from hub.store.db import Store

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

    def __init__(self, prefix: str, client_id: str = ""):
        self.messages: queue.Queue = queue.Queue()
        subscribed = threading.Event()
        self.client = new_client(client_id)
        self.client.on_message = lambda c, u, m: self.messages.put(m)
        self.client.on_subscribe = lambda *a: subscribed.set()
        self.client.on_connect = lambda c, *a: c.subscribe(f"{prefix}/#", qos=1)
        self.client.connect(*BROKER)
        self.client.loop_start()
        assert subscribed.wait(WAIT_S), "test subscriber got no SUBACK"  # connected as well

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


class LocalServer:
    """A TCP server on a free local port; each connection is handled by ``handle`` in a thread."""

    def __init__(self):
        self.stop = threading.Event()
        self.server = socket.create_server(("127.0.0.1", 0))
        self.server.settimeout(0.05)
        self.port = self.server.getsockname()[1]
        self.threads = [threading.Thread(target=self._accept, daemon=True)]
        self.threads[0].start()

    def _accept(self):
        while not self.stop.is_set():
            try:
                conn, _ = self.server.accept()
            except socket.timeout:
                continue
            self.threads.append(threading.Thread(target=self._serve, args=(conn,), daemon=True))
            self.threads[-1].start()

    def _serve(self, conn):
        with conn:
            self.handle(conn)

    def recv(self, conn) -> bytes:
        """The next data; b"" once the peer closed or the server stops."""
        while not self.stop.is_set():
            if select.select([conn], [], [], 0.05)[0]:
                with contextlib.suppress(ConnectionResetError):
                    return conn.recv(65536)
                return b""
        return b""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop.set()
        for thread in self.threads:
            thread.join(WAIT_S)
        self.server.close()


class HungBroker(LocalServer):
    """Never answers (``connack``: answers CONNACK only); ``waiting``: the client sent what it
    waits an answer for (CONNECT, or PUBLISH); ``peer_closed``: the client closed its socket."""

    CONNACK_V5 = b"\x20\x03\x00\x00\x00"  # session present 0, reason 0, no properties

    def __init__(self, connack: bool = False):
        self.connack = connack
        self.waits_for = "PUBACK" if connack else "CONNACK"
        self.waiting = threading.Event()
        self.peer_closed = threading.Event()
        super().__init__()

    def handle(self, conn):
        for n, _ in enumerate(iter(lambda: self.recv(conn), b"")):
            if self.connack and n == 0:
                conn.sendall(self.CONNACK_V5)
            else:
                self.waiting.set()
        self.peer_closed.set()


class CuttingProxy(LocalServer):
    """A proxy to the test broker; ``cut_armed``: cut the connection when the client next sends."""

    def __init__(self):
        self.cut_armed = threading.Event()
        super().__init__()

    def handle(self, down):
        with socket.create_connection(BROKER) as up:
            while not self.stop.is_set():
                for sock in select.select([down, up], [], [], 0.05)[0]:
                    data = sock.recv(65536)
                    if not data or (sock is down and self.cut_armed.is_set()):
                        self.cut_armed.clear()
                        return
                    (up if sock is down else down).sendall(data)


@pytest.fixture(params=[False, True], ids=["no-CONNACK", "no-PUBACK"])
def hung_broker(request):
    with HungBroker(connack=request.param) as server:
        yield server


@pytest.fixture()
def proxy():
    with CuttingProxy() as cutter:
        yield cutter


class Factory(list):
    """The default client factory, remembering every client it made."""

    def __call__(self, client_id):
        self.append(new_client(client_id))
        return self[-1]


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


def test_make_backend_is_none_when_disabled_lazy_when_enabled_and_checks_qos():
    assert make_backend(MqttSettings(enabled=False)) is None
    backend = make_backend(MqttSettings(enabled=True, port=1))  # nothing listens: no connect yet
    assert isinstance(backend, MqttBackend)
    backend.close()
    with pytest.raises(ValidationError, match="qos"):  # refused by the settings themselves
        MqttSettings(enabled=True, qos=3)


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


@pytest.mark.parametrize("with_store", [True, False])
def test_same_key_twice_publishes_once(prefix, subscriber, store, with_store):
    backend = MqttBackend(settings(prefix), store=store if with_store else None)
    backend.publish(action("t:0:0"))
    backend.publish(action("t:0:0"))
    if with_store:  # the outbox also holds across a restart
        backend.close()
        backend = MqttBackend(settings(prefix), store=store)
        backend.publish(action("t:0:0"))
    backend.publish(action("sentinel", entity="Bed Light"))
    assert subscriber.keys_until("sentinel") == ["t:0:0", "sentinel"]
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


def test_unreachable_broker_is_one_line_transient_error_without_waiting(prefix, store):
    backend = MqttBackend(settings(prefix, port=1, timeout_s=60.0), store=store)
    threads = set(threading.enumerate())
    worker, result = run_in_thread(backend.publish, action("u:0:0"))
    worker.join(WAIT_S)  # far below timeout_s: a refused connection does not wait for it
    assert not worker.is_alive()
    error = result["error"]
    assert isinstance(error, TransientError) and error.kind == "transient"
    assert error.message == "MQTT broker 127.0.0.1:1 unreachable: Connection refused"
    assert set(threading.enumerate()) == threads
    assert outbox_status(store, "u:0:0") == "failed"


def test_cancel_stops_a_hung_publish(prefix, store, hung_broker):
    server = hung_broker
    backend = MqttBackend(settings(prefix, port=server.port, timeout_s=60.0), store=store)
    threads = set(threading.enumerate())
    cancel = threading.Event()
    worker, result = run_in_thread(backend.publish, action("h:0:0"), cancel)
    assert server.waiting.wait(WAIT_S)
    cancel.set()
    worker.join(1.0)  # the backend checks cancel every 50 ms
    assert not worker.is_alive()
    assert isinstance(result["error"], TimeoutError_)
    assert f"cancelled while waiting for {server.waits_for}" in result["error"].message
    assert server.peer_closed.wait(WAIT_S)  # the socket was closed, not leaked
    assert set(threading.enumerate()) - set(server.threads) <= threads
    assert outbox_status(store, "h:0:0") == "failed"


def test_no_answer_within_timeout_is_transient(prefix, hung_broker):
    backend = MqttBackend(settings(prefix, port=hung_broker.port, timeout_s=0.3))
    with pytest.raises(TransientError) as caught:
        backend.publish(action("n:0:0"))
    assert caught.value.message == (f"MQTT broker 127.0.0.1:{hung_broker.port}: "
                                    f"no {hung_broker.waits_for} within 0.3 s")
    assert hung_broker.peer_closed.wait(WAIT_S)


def test_cancel_stops_a_hung_tcp_connect(prefix):
    with contextlib.ExitStack() as stack:
        server = stack.enter_context(socket.create_server(("127.0.0.1", 0), backlog=0))
        port = server.getsockname()[1]
        for _ in range(3):  # fill the accept queue: later SYNs are dropped, connect hangs
            filler = stack.enter_context(socket.socket())
            filler.setblocking(False)
            filler.connect_ex(("127.0.0.1", port))
        backend = MqttBackend(settings(prefix, port=port, timeout_s=60.0))
        cancel = threading.Event()
        worker, result = run_in_thread(backend.publish, action("s:0:0"), cancel)
        worker.join(0.3)
        cancel.set()
        worker.join(1.0)
        assert not worker.is_alive()
        assert isinstance(result["error"], TimeoutError_)
        assert result["error"].message == f"MQTT connect to 127.0.0.1:{port} cancelled"


def test_keeps_one_connection_for_later_publishes(prefix, subscriber):
    factory = Factory()
    backend = MqttBackend(settings(prefix), client_factory=factory)
    for n in range(3):
        backend.publish(action(f"c:{n}:0"))
    assert subscriber.keys_until("c:2:0") == ["c:0:0", "c:1:0", "c:2:0"]
    assert len(factory) == 1
    backend.close()
    assert factory[0].socket() is None  # DISCONNECT sent, socket closed


def test_reconnects_after_the_socket_was_killed(prefix, subscriber):
    factory = Factory()
    backend = MqttBackend(settings(prefix), client_factory=factory)
    backend.publish(action("k:0:0"))
    factory[-1].socket().shutdown(socket.SHUT_RDWR)
    backend.publish(action("k:1:0"))
    assert subscriber.keys_until("k:1:0") == ["k:0:0", "k:1:0"]
    assert len(factory) == 2
    backend.close()


def test_reconnects_after_the_broker_dropped_the_connection(prefix, subscriber):
    client_id = f"hubtest-{uuid.uuid4().hex[:10]}"
    factory = Factory()
    backend = MqttBackend(settings(prefix, client_id=client_id), client_factory=factory)
    backend.publish(action("d:0:0"))
    Subscriber(prefix, client_id).close()  # same client id: the broker drops the backend
    backend.publish(action("d:1:0"))
    assert subscriber.keys_until("d:1:0") == ["d:0:0", "d:1:0"]
    assert len(factory) == 2
    backend.close()


def test_a_drop_during_publish_fails_it_and_the_retry_reconnects(prefix, subscriber, store,
                                                                  proxy):
    backend = MqttBackend(settings(prefix, port=proxy.port), store=store)
    backend.publish(action("p:0:0"))
    proxy.cut_armed.set()  # the PUBLISH below never reaches the broker
    with pytest.raises(TransientError) as caught:
        backend.publish(action("p:1:0"))
    assert caught.value.message.startswith(
        f"MQTT connection to 127.0.0.1:{proxy.port} lost waiting for PUBACK: ")
    assert outbox_status(store, "p:1:0") == "failed"
    backend.publish(action("p:1:0"))
    assert subscriber.keys_until("p:1:0") == ["p:0:0", "p:1:0"]
    assert outbox_status(store, "p:1:0") == "done"
    backend.close()
