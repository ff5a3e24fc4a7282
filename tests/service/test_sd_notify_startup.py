"""Issue 23: ``hub run`` under systemd, with a fake notify socket (cases.md): EXTEND_TIMEOUT_USEC
while models load, READY=1 exactly once, and STATUS= naming what is degraded (MQTT, a model),
sent again when that changes."""

from __future__ import annotations

import os
import socket
import tempfile
import threading
import types

import pytest

from hub.service import notify as sd
from hub.service.daemon import degraded_of, load_hub
from hub.service.supervisor import State, Supervisor


@pytest.fixture
def datagrams(monkeypatch):
    """Every datagram sent to ``$NOTIFY_SOCKET``: call the fixture's value to read them."""
    folder = tempfile.mkdtemp(prefix="hub-sd-")
    address = os.path.join(folder, "notify")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(address)
    monkeypatch.setenv("NOTIFY_SOCKET", address)
    monkeypatch.setattr(sd, "_ready_sent", threading.Event())  # a fresh process
    got: list[str] = []

    def read(wait_for: int = 0) -> list[str]:
        sock.settimeout(5.0 if wait_for else 0.05)
        while True:
            try:
                got.append(sock.recv(4096).decode())
            except (TimeoutError, BlockingIOError):
                return got
            if wait_for and len(got) >= wait_for:
                return got

    yield read
    sock.close()
    os.remove(address)
    os.rmdir(folder)


class Beats:
    """A stop event for :func:`sd.loading` whose waits time out ``n`` times, then end."""

    def __init__(self, n: int):
        self.n, self.flag = n, threading.Event()

    def wait(self, _timeout):
        self.n -= 1
        return self.n < 0 or self.flag.is_set()

    def set(self):
        self.flag.set()


EXTEND = "EXTEND_TIMEOUT_USEC=90000000\nSTATUS=loading models"
AGAIN = "EXTEND_TIMEOUT_USEC=90000000"


def test_a_long_load_sends_extend_timeout_until_it_ends(datagrams):
    with sd.loading("models", stop=Beats(2)):
        assert datagrams(wait_for=3) == [EXTEND, AGAIN, AGAIN]  # now and at each interval
    assert datagrams() == [EXTEND, AGAIN, AGAIN]  # nothing once the load is over


def test_until_ready_the_extensions_go_on_after_the_load_and_end_at_ready(datagrams):
    beats = Beats(10**6)
    gate = threading.Event()
    real_wait = beats.wait

    def slow_wait(timeout):  # one beat per gate.set(), as if every_s had passed
        gate.wait(5)
        gate.clear()
        return real_wait(timeout)

    beats.wait = slow_wait
    with sd.loading("models", stop=beats, until_ready=True):
        assert datagrams(wait_for=1) == [EXTEND]
    gate.set()  # the microphone is not open yet: systemd still hears from us
    assert datagrams(wait_for=2) == [EXTEND, AGAIN]
    sd.ready("listening")
    gate.set()
    assert datagrams(wait_for=3) == [EXTEND, AGAIN, "READY=1\nSTATUS=listening"]
    gate.set()
    assert datagrams() == [EXTEND, AGAIN, "READY=1\nSTATUS=listening"]  # no more after it


class FakeEngines:
    def __init__(self, built, devices):
        self.built, self._devices, self.warmed = set(built), devices, []

    def warm(self, names):
        self.warmed.append(list(names))

    def loaded(self, name):
        return name in self.built

    def devices(self):
        return self._devices


def fake_hub():
    link = types.SimpleNamespace(connected=threading.Event())  # the broker is down
    llm = types.SimpleNamespace(intents_on=["run"], answers_on=[])
    hub = types.SimpleNamespace(
        settings=types.SimpleNamespace(llm=llm),
        engines=FakeEngines({"asr", "rules", "tts", "devices"}, types.SimpleNamespace(link=link)),
    )  # no LLM
    return hub, link


def test_start_up_extends_then_is_ready_once_and_names_what_is_degraded(datagrams):
    hub, link = fake_hub()
    made = []

    def make_hub(args, entry, speak):
        made.append((entry, speak))
        datagrams(wait_for=1)  # the load takes a while: systemd heard from us first
        return hub

    hub_out, names = load_hub(types.SimpleNamespace(), make_hub)
    assert hub_out is hub and made == [("run", True)]
    assert hub.engines.warmed == [["asr", "rules", "tts", "devices", "llm"]]
    sup = Supervisor(hub, None, None, None, None, None)
    sup.status = sd.StatusLine(lambda: degraded_of(sup.hub, names))
    sup.on_open()
    sup.set_state(State.ANSWERING)
    sup.set_state(State.LISTENING)
    sup.on_open()  # a second call (a reopened device) is no second READY
    link.connected.set()  # the broker is back
    assert sup.status.update() and not sup.status.update()
    sent = datagrams()
    assert sent[0] == EXTEND
    first_ready = next(i for i, s in enumerate(sent) if "READY=1" in s)
    assert all("EXTEND" not in s for s in sent[first_ready:])
    assert sum("READY=1" in s for s in sent) == 1
    degraded = "; degraded: LLM unavailable, MQTT unavailable"
    assert sent[first_ready] == f"READY=1\nSTATUS=listening{degraded}"
    assert f"STATUS=answering{degraded}" in sent
    assert sent[-1] == "STATUS=listening; degraded: LLM unavailable"  # MQTT is back


def test_degraded_parts_name_engines_mqtt_and_a_devices_report():
    devices = types.SimpleNamespace(
        link=types.SimpleNamespace(connected=threading.Event()),
        degraded=lambda: ["Home Assistant unavailable"],
    )
    parts = sd.degraded_parts(lambda n: n != "asr", ["asr", "tts"], devices)
    assert parts == [
        "speech recognition unavailable",
        "MQTT unavailable",
        "Home Assistant unavailable",
    ]
    devices.link.connected.set()
    assert sd.degraded_parts(lambda n: True, ["asr"], None) == []
