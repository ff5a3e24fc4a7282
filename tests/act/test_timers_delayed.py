"""Delayed commands (issue 7 item 2): "in 10 seconds turn on the kitchen light" runs the command
as a turn when its timer ends: rules, the confirmation of sensitive entities (asked when the
command is set), the action through the device backend, exactly once; the ``timer_finished``
line says what was done; a stored one runs after a restart or is reported missed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hub.store.db import Store

from fakes import Clock, make_hub
from mqtt_broker import Broker, Recorder, until

REPO = Path(__file__).resolve().parents[2]


def clocked_hub(store=None, **kw):
    """A fake-engine hub whose timers run on a hand-moved clock; its alerts in ``hub.alerts``."""
    clock = Clock(now=time.monotonic(), wall=time.time())  # restored timers stay right
    hub = make_hub(store=store, clock=clock, **kw)
    hub.clock_ = clock
    hub.alerts = []
    hub.events.on_timer_finished(hub.alerts.append)
    return hub


def test_a_delayed_command_runs_as_a_turn_when_its_timer_ends():
    hub = clocked_hub()
    trace = hub.turn_text("in 10 seconds turn on the kitchen light")
    assert trace["response"] == "Command will be executed in 10 seconds."
    assert hub.home.state("Kitchen Light") == "off"
    hub.clock_.advance(9)
    assert hub.events.tick() == [] and hub.home.state("Kitchen Light") == "off"
    hub.clock_.advance(1)
    [alert] = hub.events.tick()
    assert hub.home.state("Kitchen Light") == "on"
    line = alert.to_json(None)
    assert line["event"] == "timer_finished" and line["duration_s"] == 10
    assert line["command"] == {
        "text": "turn on the kitchen light",
        "done": True,
        "intent": "HassTurnOn",
        "response": "Turned on the light.",
        "status": "ok",
        "actions": ["light.turn_on Kitchen Light"],
    }
    hub.clock_.advance(60)
    assert hub.events.tick() == [] and hub.timers.status(ringing=True) == []  # never rings


def test_turn_off_the_lights_in_1_hour_runs_an_hour_later_in_the_area_it_was_said_in():
    hub = clocked_hub()
    hub.conversation().area = "Kitchen"  # the satellite that heard it
    hub.home.set_state("Kitchen Light", "on")
    trace = hub.turn_text("turn off the lights in 1 hour")
    assert trace["response"] == "Command will be executed in 1 hour."
    assert hub.timers.status()[0].command["area"] == "Kitchen"
    hub.clock_.advance(3599)
    assert hub.events.tick() == []
    hub.clock_.advance(1)
    [alert] = hub.events.tick()
    assert alert.command["done"] and alert.command["intent"] == "HassTurnOff"
    assert alert.command["actions"] == ["light.turn_off Kitchen Light"]
    assert hub.home.state("Kitchen Light") == "off"


def test_a_delayed_unlock_is_asked_back_when_set_and_a_no_starts_nothing():
    hub = clocked_hub()
    trace = hub.turn_text("in 10 seconds unlock the front door")
    assert trace["response"] == "Do you want me to unlock the Front Door in 10 seconds?"
    assert hub.timers.status() == []
    assert hub.turn_text("no")["response"] == "Okay, I won't."
    hub.clock_.advance(20)
    assert hub.events.tick() == [] and hub.home.state("Front Door") == "locked"


def test_a_delayed_unlock_confirmed_when_set_runs_without_asking_again():
    hub = clocked_hub()
    hub.turn_text("in 10 seconds unlock the front door")
    assert hub.turn_text("yes")["response"] == "Command will be executed in 10 seconds."
    [timer] = hub.timers.status()
    assert timer.command["confirmed"] == ["Front Door"]
    assert hub.home.state("Front Door") == "locked"
    hub.clock_.advance(10)
    [alert] = hub.events.tick()
    assert alert.command["done"] and alert.command["actions"] == ["lock.unlock Front Door"]
    assert hub.home.state("Front Door") == "unlocked"


def test_a_delayed_command_on_an_unconfirmed_sensitive_entity_is_not_carried_out():
    """A timer carrying an unlock nobody confirmed (a stored record, another path) asks when
    it runs; nobody can answer, so nothing is done and no question is left waiting."""
    hub = clocked_hub()
    hub.timers.start(5, command={"text": "unlock the front door", "area": "", "confirmed": []})
    hub.clock_.advance(5)
    [alert] = hub.events.tick()
    assert alert.command["done"] is False and alert.command["actions"] == []
    assert alert.command["response"] == "Do you want me to unlock the Front Door?"
    assert hub.home.state("Front Door") == "locked"
    assert not any(c.awaiting_confirmation for c in hub.conversations._by_id.values())
    assert hub.turn_text("yes")["response"] == "There's nothing to confirm."
    assert hub.home.state("Front Door") == "locked"


def test_a_delayed_command_never_answers_a_question_waiting_in_the_room():
    hub = clocked_hub()
    hub.timers.start(5, command={"text": "turn on the kitchen light", "area": ""})
    hub.turn_text("unlock the front door")  # asked in the default conversation
    hub.clock_.advance(5)
    hub.events.tick()
    assert hub.conversation().awaiting_confirmation  # still waiting for its yes
    hub.turn_text("yes")
    assert hub.home.state("Front Door") == "unlocked"


def test_bc27_a_stored_delayed_command_runs_after_a_restart(tmp_path):
    db = tmp_path / "hub.db"
    first = clocked_hub(store=Store(db))
    first.turn_text("in 30 seconds turn on the kitchen light")
    [record] = Store(db).stored_timers()
    assert record["command"]["text"] == "turn on the kitchen light"
    assert record["ends_at"] == pytest.approx(first.clock_.wall_now + 30)
    written = time.time()
    Store(db).stored_timers([{**record, "ends_at": written + 20}])  # off for 10 s
    again = clocked_hub(store=Store(db))  # restored (at its start, on the real clocks)
    [restored] = again.timers.status()
    since = time.time() - written  # the start itself took that long (seconds at load 18)
    assert restored.command == record["command"]
    assert 20 - since - 1 <= restored.total_seconds_left <= 20, (restored, since)
    again.clock_.advance(20)
    [alert] = again.events.tick()
    assert alert.command["done"] and again.home.state("Kitchen Light") == "on"
    assert Store(db).stored_timers() == []


def test_bc27_a_delayed_command_due_long_before_a_restart_is_reported_missed(tmp_path):
    db = tmp_path / "hub.db"
    first = clocked_hub(store=Store(db))
    first.turn_text("in 30 seconds turn on the kitchen light")
    [record] = Store(db).stored_timers()
    late = {**record, "ends_at": time.time() - 600}  # due ten minutes before this start
    Store(db).stored_timers([late])
    again = make_hub(store=Store(db))
    [alert] = again.events.tick()
    assert alert.event == "timer_missed" and alert.command["missed"] is True
    assert alert.text == ("I was off when it was time to turn on the kitchen light, so I didn't.")
    assert again.home.state("Kitchen Light") == "off"
    assert again.events.tick() == []


def test_a_delayed_command_due_within_late_command_s_of_a_restart_still_runs(tmp_path):
    db = tmp_path / "hub.db"
    clocked_hub(store=Store(db)).turn_text("in 30 seconds turn on the kitchen light")
    [record] = Store(db).stored_timers()
    Store(db).stored_timers([{**record, "ends_at": time.time() - 5}])  # a 5 s restart gap
    again = make_hub(store=Store(db))
    [alert] = again.events.tick()
    assert alert.event == "timer_finished" and alert.command["done"]
    assert again.home.state("Kitchen Light") == "on"


# -- the whole hub against a real Mosquitto -------------------------------------------------
@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    b = Broker(tmp_path_factory.mktemp("broker"))
    yield b
    b.close()


def test_ask_runs_a_delayed_command_once_on_mqtt_after_its_delay(tmp_path, broker):
    home = (REPO / "hub" / "data" / "home-en.toml").read_text(encoding="utf-8")
    conf = tmp_path / "hub.toml"
    conf.write_text(
        f'[mqtt]\nhost = "127.0.0.1"\nport = {broker.port}\n\n[store]\n'
        f'path = "{tmp_path / "hub.db"}"\n\n' + home,
        encoding="utf-8",
    )
    recorder = Recorder(broker.port, "#")
    env = {**os.environ, "PYTHONPATH": str(REPO), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "hub", "ask", "--config", str(conf), "--no-llm", "-"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    try:
        said_at = time.monotonic()  # the timer cannot start before this
        proc.stdin.write("in 2 seconds turn on the kitchen light\n")
        proc.stdin.flush()
        trace = json.loads(proc.stdout.readline())
        assert trace["response"] == "Command will be executed in 2 seconds.", trace
        # (nothing was sent at once: checked below as the send 2 s after said_at at least;
        # whether it was still unsent when this line came depends on the machine's speed)
        event = json.loads(proc.stdout.readline())
        assert event["event"] == "timer_finished" and event["command"]["done"], event
        assert until(lambda: len(recorder.keys()) >= 1)
        commands = [
            (t, topic, json.loads(p))
            for t, topic, p, _ in recorder.all
            if topic.endswith("/set") and p
        ]
        [(at, topic, payload)] = commands
        assert "kitchen" in topic.lower() and at - said_at >= 2.0
        proc.stdin.close()
        assert proc.wait(60) == 0
        time.sleep(0.5)
        assert len(recorder.keys()) == 1  # exactly once
    finally:
        recorder.close()
        if proc.poll() is None:
            proc.kill()


def test_hub_run_carries_out_a_delayed_command_and_prints_its_event(capsys):
    """The daemon's wiring (:func:`hub.service.daemon.ring_timers`): no ring is played for a
    delayed command, its command is done and its event line printed."""
    import threading

    from hub.service.daemon import ring_timers

    class Speaker:
        def __init__(self):
            self.said = []

        def say(self, chunk):
            self.said.append(chunk)

        def cancel(self):
            return True

    clock = Clock()
    hub = make_hub(entry="run", clock=clock)
    done = threading.Event()
    speaker = Speaker()
    ring_timers(hub, speaker)
    hub.events.on_timer_finished(lambda alert: done.set())  # after the daemon's own listener
    try:
        assert hub.turn_text("in 1 second turn on the kitchen light")["intent"] == "HassStartTimer"
        assert not done.is_set() and hub.home.state("Kitchen Light") == "off"
        clock.advance(1.0)
        hub.events.tick()  # the round the timer thread would do now (one round at a time)
        assert done.is_set(), "the delayed command's timer finished"
        assert hub.home.state("Kitchen Light") == "on" and speaker.said == []
        [line] = [json.loads(x) for x in capsys.readouterr().out.splitlines() if '"event"' in x]
        assert line["command"]["done"] and line["command"]["intent"] == "HassTurnOn"
    finally:
        hub.events.close()


def _rejected(hub, heard: str):
    """The hub's recognizer rejects the speech, having read ``heard`` in it."""
    from hub.asr.base import Transcript

    hub.fake_asr.transcribe = lambda samples, cancel=None: Transcript(
        "", (), rejected=True, engine="fake", rejected_text=heard
    )


def test_bc27_a_stop_word_below_the_rejection_threshold_stops_a_ringing_timer():
    from fakes import speech

    hub = clocked_hub()
    hub.turn_text("set a timer for 10 seconds")
    _rejected(hub, "stop")
    assert hub.turn_audio(speech())["response"] == "Sorry, I didn't catch that."  # nothing rings
    hub.clock_.advance(10)
    [alert] = hub.events.tick()
    assert hub.timers.status(ringing=True)
    trace = hub.turn_audio(speech())
    assert (trace["intent"], trace["response"]) == ("HassCancelTimer", "Timer cancelled.")
    assert not hub.timers.status(ringing=True)


def test_bc27_only_a_stop_word_is_taken_from_rejected_speech_while_a_timer_rings():
    from fakes import speech

    hub = clocked_hub()
    hub.turn_text("set a timer for 10 seconds")
    hub.clock_.advance(10)
    hub.events.tick()
    _rejected(hub, "unlock the front door")
    trace = hub.turn_audio(speech())
    assert trace["response"] == "Sorry, I didn't catch that." and trace["intent"] is None
    assert hub.home.state("Front Door") == "locked" and hub.timers.status(ringing=True)
