"""call_with_timeout: returns, times out, stops the work, bounds threads, classifies
(design.md, "Timeouts that stop the work")."""

import errno
import json
import threading

import pytest

from hub.errors import (
    BadInputError,
    FatalError,
    HubError,
    InvalidOutputError,
    TimeoutError_,
    TransientError,
)
from hub.resilience import WorkerSlots, call_with_timeout, classify

WAIT = 5.0  # generous bound on any wait in these tests, so a bug fails instead of hanging


def test_returns_the_result():
    slots = WorkerSlots(2)
    assert call_with_timeout(lambda cancel: 42, 1.0, node="rules", slots=slots) == 42
    assert slots.busy == 0


def test_cooperative_work_stops_within_200_ms_of_the_timeout():
    started = threading.Event()
    workers = []

    def work(cancel):
        workers.append(threading.current_thread())
        started.set()
        while not cancel.is_set():  # like llama.cpp's stopping criteria, checked per token
            cancel.wait(0.01)
        return "stopped"

    with pytest.raises(TimeoutError_) as info:
        call_with_timeout(work, 0.05, node="llm_intent", slots=WorkerSlots(2))
    assert started.is_set()
    workers[0].join(0.2)
    assert not workers[0].is_alive()
    assert info.value.node == "llm_intent"
    assert info.value.message == "llm_intent: timed out after 0.05 s"


def test_hung_non_cooperative_work_does_not_block_the_caller_and_holds_its_slot():
    release = threading.Event()
    slots = WorkerSlots(2)
    try:
        with pytest.raises(TimeoutError_):
            call_with_timeout(lambda cancel: release.wait(WAIT), 0.02, node="tts", slots=slots)
        assert slots.busy == 1
    finally:
        release.set()
    threads = [t for t in threading.enumerate() if t.name == "hub-tts"]
    for thread in threads:
        thread.join(WAIT)
    assert slots.busy == 0


def test_threads_are_bounded_when_workers_hang():
    release = threading.Event()
    slots = WorkerSlots(2)
    try:
        for _ in range(2):
            with pytest.raises(TimeoutError_):
                call_with_timeout(lambda c: release.wait(WAIT), 0.01, node="asr", slots=slots)
        calls = []
        with pytest.raises(TransientError, match="all 2 worker threads are busy"):
            call_with_timeout(lambda c: calls.append(1), 1.0, node="asr", slots=slots)
        assert calls == []  # refused before any thread started
        assert slots.busy == 2
    finally:
        release.set()
    for thread in [t for t in threading.enumerate() if t.name == "hub-asr"]:
        thread.join(WAIT)
    assert slots.busy == 0


def test_no_time_left_fails_without_starting_work():
    calls = []
    with pytest.raises(TimeoutError_, match="no time left"):
        call_with_timeout(lambda c: calls.append(1), 0.0, node="asr", slots=WorkerSlots(1))
    assert calls == []


def test_exceptions_are_classified_and_chained():
    def work(cancel):
        return json.loads("not json")

    with pytest.raises(InvalidOutputError) as info:
        call_with_timeout(work, WAIT, node="llm_intent", slots=WorkerSlots(1))
    assert isinstance(info.value.__cause__, json.JSONDecodeError)
    assert info.value.message.startswith("llm_intent: JSONDecodeError: Expecting value")


def test_hub_errors_pass_through_unchanged():
    error = BadInputError("not a WAV", file="x.wav")

    def work(cancel):
        raise error

    with pytest.raises(BadInputError) as info:
        call_with_timeout(work, WAIT, node="asr", slots=WorkerSlots(1))
    assert info.value is error
    assert (info.value.node, info.value.file) == ("asr", "x.wav")


def port_audio_error():
    import sounddevice

    return sounddevice.PortAudioError("Device unavailable", -9985)


@pytest.mark.parametrize(
    ("exc", "kind"),
    [
        (TimeoutError("read timed out"), "timeout"),
        (TimeoutError("timed out"), "timeout"),
        (ConnectionRefusedError(111, "Connection refused"), "transient"),
        (BrokenPipeError(32, "Broken pipe"), "transient"),
        (OSError(errno.EAGAIN, "Resource temporarily unavailable"), "transient"),
        (OSError(errno.EBUSY, "Device or resource busy"), "transient"),
        (port_audio_error(), "transient"),
        (json.JSONDecodeError("Expecting value", "x", 0), "invalid_output"),
        (ValueError("confidence is not a number"), "invalid_output"),
        (FileNotFoundError(2, "No such file", "/models/x.gguf"), "fatal"),
        (MemoryError(), "fatal"),
        (ImportError("no module named llama_cpp"), "fatal"),
        (OSError(errno.EIO, "I/O error"), "fatal"),
        (RuntimeError("boom"), "fatal"),
        (KeyError("intent"), "fatal"),
    ],
)
def test_classify_table(exc, kind):
    error = classify(exc, "asr")
    assert isinstance(error, HubError)
    assert (error.kind, error.node) == (kind, "asr")
    assert error.message.startswith(f"asr: {type(exc).__name__}")


def test_classify_keeps_messages_to_one_short_line():
    error = classify(RuntimeError("line one\nline two " + "x" * 500), "tts")
    assert "\n" not in error.message
    assert len(error.message) <= 200


def test_classify_passes_hub_errors_through_and_fills_the_node():
    error = TransientError("busy")
    assert classify(error, "act") is error
    assert error.node == "act"
    other = FatalError("broken", node="tts")
    assert classify(other, "act").node == "tts"
