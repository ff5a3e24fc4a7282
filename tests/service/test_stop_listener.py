"""Issue 18: the stop listener hears a stop word said without the wake word while the hub
plays, and only then calls back; echo and long speech are not taken."""

from __future__ import annotations

import numpy as np
import pytest

from hub.audio.endpoint import Endpointer
from hub.service.stopword import StopListener

from fakes import wait_for
from live_audio import blocks, silence, speech_extent, synth

pytestmark = pytest.mark.models  # Piper makes the audio


def listen(audio: np.ndarray, recognize, is_echo=lambda span_s: False) -> list[str]:
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
    assert listen(audio, lambda s, r: calls.append(s) or "stop", is_echo=lambda span_s: True) == []
    assert calls == []


def test_issue18_the_echo_check_judges_the_utterances_whole_span():
    """The echo check is asked about the utterance the listener cut, from its pre-roll to its
    end (not the last window heard): the span handed over is the decoded audio's length."""
    spans, decoded = [], []
    audio = np.concatenate([silence(1.0), synth("that is enough"), silence(0.6)])
    listen(
        audio,
        lambda s, r: decoded.append(len(s)) or None,
        is_echo=lambda span_s: spans.append(span_s) or False,
    )
    assert len(spans) == 1 and spans[0] > len(synth("that is enough")) / 16000 - 0.2
    assert decoded == [round(spans[0] * 16000)]


def test_issue18_an_utterance_going_on_after_playback_ended_is_judged_as_one_span():
    """Playback ended (the listener is disarmed) while an utterance was still being said: it
    is heard to its end (a reply over the question's end), and the echo check judges it whole,
    pre-roll to end, as one span of audio heard without a gap."""
    held: list[bool] = []
    spans: list[float] = []
    listener = StopListener(
        lambda ms, cap: Endpointer(ms, cap, 16000, preroll_s=0.3),
        lambda samples, replies: None,
        lambda text, audio: None,
        is_echo=lambda span_s: spans.append(span_s) or False,
        hold=lambda: held.append(True),  # called before any decode starts
    )
    speech = np.concatenate([silence(0.5), synth("stop the alarm")])
    speech = speech[: speech_extent(speech)[1]]  # heard up to its last loud frame
    for block in blocks(speech):
        listener.hear(block, armed=True)
    assert listener.in_speech
    for block in blocks(silence(1.0)):  # playback ended
        listener.hear(block, armed=False)
    assert held == [True] and len(spans) == 1
    assert spans[0] >= speech_extent(speech)[1] / 16000 - speech_extent(speech)[0] / 16000
    assert not listener.in_speech


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
