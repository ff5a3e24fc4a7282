"""Issue 18: the stop listener hears a stop word said without the wake word while the hub
plays, and only then calls back; echo and long speech are not taken."""

from __future__ import annotations

import numpy as np
import pytest

from hub.audio.endpoint import Endpointer
from hub.service.stopword import StopListener

from fakes import wait_for
from live_audio import silence, synth

pytestmark = pytest.mark.models  # Piper makes the audio


def listen(audio: np.ndarray, recognize, is_echo=lambda: False) -> list[str]:
    """The stop phrases called back for ``audio``, once every utterance taken is decided."""
    stopped: list[str] = []
    held, released = [], []
    listener = StopListener(
        lambda ms, cap: Endpointer(ms, cap, 16000, preroll_s=0.3),
        recognize,
        lambda text, audio: stopped.append(text),
        is_echo,
        hold=lambda: held.append(True),
        release=lambda: released.append(True),
    )
    for i in range(0, len(audio), 800):
        listener.push(audio[i : i + 800])
    # each utterance decoded holds playback, then stops it or releases it: however slow the
    # decode thread, it has ended then (one taken as echo holds nothing)
    assert wait_for(lambda: len(stopped) + len(released) == len(held), 60)
    return stopped


def test_a_stop_word_calls_back_with_what_was_said():
    heard = []

    def recognize(samples, replies):
        heard.append(len(samples))
        return "stop"

    audio = np.concatenate([silence(1.0), synth("stop"), silence(0.6)])
    assert listen(audio, recognize) == ["stop"]
    assert heard and heard[0] < len(audio)  # the utterance, not the whole stream


def test_speech_that_is_not_a_stop_word_calls_nothing():
    audio = np.concatenate([silence(1.0), synth("what time is it"), silence(0.6)])
    assert listen(audio, lambda samples, replies: None) == []


def test_the_hubs_own_voice_is_not_decoded():
    calls = []
    audio = np.concatenate([silence(1.0), synth("stop"), silence(0.6)])
    assert listen(audio, lambda s, r: calls.append(s) or "stop", is_echo=lambda: True) == []
    assert calls == []


def test_playback_is_held_while_deciding_and_released_when_it_was_not_a_stop_word():
    events: list[str] = []
    listener = StopListener(
        lambda ms, cap: Endpointer(ms, cap, 16000, preroll_s=0.3),
        lambda samples, replies: events.append("decode") or None,
        lambda text, audio: events.append("stop"),
        hold=lambda: events.append("hold"),
        release=lambda: events.append("release"),
    )
    audio = np.concatenate([silence(1.0), synth("what time is it"), silence(0.6)])
    for i in range(0, len(audio), 800):
        listener.push(audio[i : i + 800])
    assert wait_for(lambda: "release" in events, 60)
    assert events == ["hold", "decode", "release"]


def test_a_held_speaker_pauses_its_player_between_blocks_until_released():
    import threading

    from hub.audio.pcm import AudioChunk
    from hub.service.speaker import Speaker

    released = threading.Event()
    seen: list[bool] = []

    class Player:
        def play(self, chunks, cancel, on_write):
            for _ in chunks:
                for _ in range(3):
                    cancel.is_set()  # between blocks: waits while held
                    seen.append(released.is_set())

    speaker = Speaker(Player())
    speaker.hold()

    def release():
        released.set()
        speaker.release()

    threading.Timer(0.3, release).start()
    speaker.say(AudioChunk(pcm=b"\0\0" * 160, rate=16000, text=""))
    assert speaker.wait(60)  # returns when played
    assert seen == [True, True, True]  # no block went out before the release
