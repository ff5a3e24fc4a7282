"""The daemon's parts without devices: echo check, watchdog, capture queue, reload rules."""

from __future__ import annotations

import dataclasses
import time

import numpy as np

from hub.errors import DeviceUnavailableError
from hub.service.capture import Capture
from hub.service.echo import EchoGate
from hub.service.reload import needs_restart, shareable
from hub.service.watchdog import Watchdog
from hub.settings import AudioSettings, HomeSettings, Settings, WakeSettings

from fakes import wait_for
from live_audio import synth

RATE = 16000


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def feed(gate: EchoGate, played: np.ndarray | None, heard: np.ndarray, clock: Clock):
    """Play and hear in 50 ms blocks, as the speaker and the listener do."""
    for i in range(0, len(heard), 800):
        if played is not None and i < len(played):
            gate.played(played[i : i + 800].tobytes(), RATE, 1)
        gate.heard(heard[i : i + 800])
        clock.now += 0.05


def delayed(samples: np.ndarray, delay_s: float, gain: float) -> np.ndarray:
    pad = np.zeros(round(delay_s * RATE), np.int16)
    return (np.concatenate([pad, samples])[: len(samples)] * gain).astype(np.int16)


def test_bc26_echo_of_the_answer_is_recognized_as_echo():
    clock = Clock()
    gate = EchoGate(0.7, 0.5, clock=clock)
    answer = synth("Okay Nabu, the Kitchen Light is on.")
    feed(gate, answer, delayed(answer, 0.06, 0.5), clock)  # cases.md digital echo path
    assert gate.speaking() and gate.is_echo() and gate.echoes == 1


def test_bc26_the_user_speaking_while_the_hub_answers_is_not_echo():
    clock = Clock()
    gate = EchoGate(0.7, 0.5, clock=clock)
    answer = synth("Here is the weather for the week. Monday is sunny.")
    user = np.concatenate([np.zeros(RATE // 2, np.int16), synth("okay nabu")])
    feed(gate, answer, user, clock)  # nothing of the answer reaches the microphone
    assert gate.speaking() and not gate.is_echo()


def test_bc26_echo_is_recognized_when_the_speaker_and_the_listener_run_late_under_load():
    """The device plays 100 ms blocks back to back from its buffer while the speaker thread
    hands them over in late bursts, the capture thread reads four blocks at a time, and the
    listener judges each mic block 1.0 s after it was read (a backlog, the microphone running
    since before the answer): the echo is still
    found, and the tail guard counts from when the block was read, not when it is judged."""
    clock = Clock()
    gate = EchoGate(0.7, 0.5, clock=clock)
    answer = synth("Okay Nabu, the Kitchen Light is on.")
    heard = np.concatenate([np.zeros(RATE, np.int16), delayed(answer, 0.06, 0.5)])
    start = clock.now + 1.0  # the answer starts after 1 s of the microphone's silence
    blocks = [answer[i : i + 1600] for i in range(0, len(answer), 1600)]
    read = []
    for k in range(len(heard) // 800 + 24):
        clock.now = start - 1.0 + 0.05 * (k + 1)
        played_k = k - 20
        if played_k >= 0 and played_k % 6 == 0:  # three 100 ms blocks at once, every 300 ms
            for block in blocks[played_k // 2 : played_k // 2 + 3]:
                gate.played(block.tobytes(), RATE, 1)
        if k < len(heard) // 800:  # read four blocks at a time, when the fourth is recorded
            read.append((start - 1.0 + 0.05 * (k // 4 * 4 + 4), heard[k * 800 : (k + 1) * 800]))
        while read and read[0][0] <= clock.now - 1.0:
            read_at, block = read.pop(0)
            gate.heard(block, at=read_at)
    assert not read and clock.now > start + len(answer) / RATE + 0.5  # past the wall-clock tail
    assert gate.speaking() and gate.is_echo()


def test_nothing_played_means_no_echo_and_the_tail_guard_ends():
    clock = Clock()
    gate = EchoGate(0.7, 0.5, clock=clock)
    speech = synth("okay nabu")
    feed(gate, None, speech, clock)
    assert not gate.speaking() and not gate.is_echo()
    feed(gate, speech[:1600], delayed(speech[:1600], 0.0, 1.0), clock)
    assert gate.speaking()
    clock.now += 0.6
    feed(gate, None, np.zeros(800, np.int16), clock)
    assert not gate.speaking()


def test_watchdog_pings_only_while_every_loop_beats():
    clock = Clock()
    beats = {"capture": clock.now, "listener": clock.now}
    sent = []
    dog = Watchdog(lambda: list(beats.values()), interval_s=4.0, clock=clock, send=sent.append)
    assert dog.tick() and sent == ["WATCHDOG=1"]
    clock.now += 2.9  # held up for 2.9 s (a device reopened): still alive
    assert dog.tick()
    clock.now += 0.2  # the capture has not beaten for 3.1 s: over three quarters of 4 s
    beats["listener"] = clock.now
    assert not dog.tick() and len(sent) == 2
    beats["capture"] = clock.now
    assert dog.tick() and len(sent) == 3


class BlockMic:
    def __init__(self, n):
        self.n, self.closed = n, False

    def blocks(self, stop=None):
        for i in range(self.n):
            yield np.full(800, i, np.int16)

    def close(self):
        self.closed = True


def test_bc35_capture_queue_is_bounded_and_drops_the_oldest_audio():
    mic = BlockMic(100)
    capture = Capture(lambda sleep: mic)
    capture.start()
    capture._thread.join(60)  # nobody reads: the 100 blocks overflow the 2 s queue
    assert not capture._thread.is_alive()
    got = []
    while (item := capture.blocks.get(timeout=1)) is not None:
        read_at, block = item
        assert read_at <= time.monotonic()
        got.append(int(block[0]))
    assert mic.closed  # the capture thread closed the stream it owned
    assert capture.dropped > 0 and len(got) + capture.dropped == 100
    assert got == list(range(100 - len(got), 100))  # the newest audio kept, in order


def test_bc20_stop_while_waiting_for_a_device_ends_at_once_and_beats_meanwhile():
    waiting, waits = [], []

    def never_opens(sleep):
        while True:
            waits.append(True)
            sleep(3600.0)  # one wait far longer than the test

    capture = Capture(never_opens, on_waiting=waiting.append)
    capture.start()
    beats = {capture.beat}
    # the heartbeat moves on in the slices of that one wait: the watchdog is fed meanwhile
    assert wait_for(lambda: beats.add(capture.beat) or len(beats) >= 3, 60), beats
    assert waiting == [True] and len(waits) == 1
    assert capture.stop(60)  # at the next slice, not after the hour
    assert capture.error is None and len(waits) == 1


def test_bc20_device_gone_for_good_is_reported_not_raised_in_the_thread():
    def fails(sleep):
        raise DeviceUnavailableError("no audio input device 'USB'", node="mic")

    capture = Capture(fails)
    capture.start()
    assert capture.blocks.get(timeout=60) is None
    assert capture.error is not None and "USB" in capture.error.message


def test_reload_keeps_the_voice_and_rebuilds_what_the_home_feeds():
    old = Settings()
    new = dataclasses.replace(
        old, home=HomeSettings(entities=({"name": "Garage Light", "domain": "light"},))
    )
    kept = shareable(old, new)
    assert "tts" in kept and "devices" in kept
    assert not {"rules", "asr", "llm", "actor"} & set(kept)
    assert needs_restart(old, new) == []
    moved = dataclasses.replace(
        old,
        audio=AudioSettings(input_device="USB"),
        wake=WakeSettings(model="hey_jarvis", followup_s=3.0),
    )
    assert needs_restart(old, moved) == ["audio", "wake.model"]
    assert set(shareable(old, moved)) >= {"tts", "rules", "asr", "llm"}
