"""The ``final`` rule's check started early in a pause, on a thread of its own
(``check_silence_ms``): its answer ends the utterance from ``final_silence_ms`` on, the turn
gets exactly the audio it decoded, and speech again drops it. Frame counts are exact (a
scripted VAD); the check is released by the test, never timed."""

from __future__ import annotations

import threading

import numpy as np
from test_endpoint_final import ScriptedVad

from hub.audio.endpoint import Endpointer


class Gated:
    """A ``complete`` that answers ``answer`` only once :meth:`release` was called."""

    def __init__(self, answer: bool):
        self.answer, self.audio = answer, []
        self._gate = threading.Event()

    def release(self) -> None:
        self._gate.set()

    def __call__(self, audio):
        self.audio.append(audio.copy())
        self._gate.wait(30)
        return self.answer


def push_frames(ep: Endpointer, frames: int) -> int | None:
    """Push ``frames`` 10 ms frames; the count at which the utterance ended, or None."""
    for i in range(frames):
        if ep.push(np.zeros(160, np.int16)):
            return i + 1
    return None


def endpointer(vad, check, **kw) -> Endpointer:
    return Endpointer(
        500, 15.0, vad=vad, final_silence_ms=300, complete=check, check_silence_ms=150, **kw
    )


def test_the_check_starts_early_and_its_answer_ends_the_utterance_at_the_short_silence():
    check = Gated(True)
    ep = endpointer(ScriptedVad([True] * 50), check)
    assert push_frames(ep, 50 + 15) is None and ep.check is not None  # started at 150 ms
    assert push_frames(ep, 15) is None  # 300 ms reached, the answer is not there yet
    check.release()
    assert ep.check.wait(30) is True
    assert push_frames(ep, 1) == 1 and ep.reason == "final"
    [asked] = check.audio
    assert len(asked) == (50 + 15) * 160  # the speech and 150 ms of silence
    assert np.array_equal(asked, ep.audio())  # the turn's audio is what was decoded


def test_an_answer_ready_before_the_short_silence_waits_for_it():
    check = Gated(True)
    check.release()
    ep = endpointer(ScriptedVad([True] * 50), check)
    assert push_frames(ep, 50 + 15) is None
    assert ep.check.wait(30) is True
    assert push_frames(ep, 100) == 15 and ep.reason == "final"  # at 300 ms, not before


def test_speech_again_drops_the_pause_check_even_if_it_said_complete():
    first, vad = Gated(True), ScriptedVad([True] * 50 + [False] * 20 + [True] * 40)
    first.release()
    ep = endpointer(vad, first)
    assert push_frames(ep, 50 + 15) is None
    assert ep.check.wait(30) is True
    assert push_frames(ep, 5 + 40) is None and ep.check is None  # "turn off the ... light"
    first.answer = False
    assert push_frames(ep, 100) == 50 and ep.reason == "silence"
    assert len(ep.audio()) == (50 + 20 + 40 + 15) * 160


def test_a_check_still_running_at_the_long_silence_leaves_its_audio_to_the_turn():
    check = Gated(True)
    ep = endpointer(ScriptedVad([True] * 50), check)
    assert push_frames(ep, 200) == 50 + 50 and ep.reason == "silence"
    assert len(ep.audio()) == (50 + 15) * 160  # the audio the running decode will answer for
    check.release()


def test_too_little_speech_starts_no_check():
    check = Gated(True)
    ep = endpointer(ScriptedVad([True] * 5), check)
    assert push_frames(ep, 100) is None and ep.check is None and not check.audio
