"""Issue 18 (live follow-ups, found by the breaker in session 10): what a phrase heard over
the hub's playback does (:class:`hub.service.overlap.OverPlayback`), and the supervisor's
follow-up window around it.

- "no" / "stop" / "never mind" said over a sensitive question was only a stop word: the
  question stayed, and a later "yes" unlocked the door. Now it is the question's answer.
- A question cut short by a barge-in left the follow-up flag set, so the next answer (which
  asked nothing) opened an 8 s window without the wake word.
- A reply begun over the question's end lost its beginning (the window opened after it).
"""

from __future__ import annotations

import threading
from types import SimpleNamespace

import numpy as np
from test_supervisor_captures import BLOCK, Listener

from hub.core.conversation import Conversation
from hub.service.overlap import OverPlayback, heard_kind
from hub.service.supervisor import State

from fakes import wait_for


class Speaker:
    def __init__(self, playing: bool = True):
        self.playing, self.cancels, self.releases = playing, 0, 0

    def cancel(self) -> bool:
        self.cancels += 1
        was, self.playing = self.playing, False
        return was

    def release(self) -> None:
        self.releases += 1


class Events:
    def __init__(self, ringing: bool = False):
        self.stop_armed, self.stops = ringing, 0

    def stop_word(self, text):
        self.stops += 1
        return SimpleNamespace(timers=["timer-1"], alarms=[]) if self.stop_armed else None


def _over(question: bool, playing: bool = True, ringing: bool = False):
    conversation = Conversation()
    if question:
        conversation.ask_confirmation({"intent": "HassTurnOn", "name": "Garage Door"})
    hub = SimpleNamespace(conversation=lambda: conversation, events=Events(ringing))
    speaker, turns, lines, cuts = Speaker(playing), [], [], []
    over = OverPlayback(
        lambda: hub,
        speaker,
        lambda audio, capture: turns.append(capture),
        lines.append,
        lambda: cuts.append(1),
    )
    return over, speaker, turns, lines, hub


AUDIO = np.ones(4000, np.int16)


def test_heard_kind():
    assert [heard_kind(t) for t in ("yes", "nope", "never mind", "stop", "snooze it")] == [
        "reply",
        "reply",
        "stop",
        "stop",
        "snooze",
    ]


def test_breaker_a_no_or_stop_said_over_a_question_is_its_answer():
    for said in ("no", "nope", "stop", "never mind", "cancel", "yes"):
        over, speaker, turns, lines, _ = _over(question=True)
        assert over.replies()
        over.on_heard(said, AUDIO)
        assert speaker.cancels == 1 and turns == ["over_question"], said
        assert lines == []  # not a bare stop: the turn answers the question


def test_a_reply_over_the_question_s_very_end_goes_to_the_listener_s_thread():
    over, speaker, turns, _, _ = _over(question=True, playing=False)
    over.on_heard("no", AUDIO)
    assert turns == [] and speaker.releases == 1
    late = over.late_reply()
    assert late is not None and np.array_equal(late, AUDIO)
    assert over.late_reply() is None


def test_a_stop_word_with_no_question_stops_playback_and_the_ringing():
    over, speaker, turns, lines, hub = _over(question=False, ringing=True)
    over.on_heard("stop", AUDIO)
    assert speaker.cancels == 1 and turns == [] and hub.events.stops == 1
    assert lines == [
        {"event": "stopped", "said": "stop", "playback": True, "timer": True, "alarm": False}
    ]


def test_breaker_snooze_without_the_wake_word_while_an_alarm_rings_is_a_turn():
    over, speaker, turns, lines, _ = _over(question=False, ringing=True)
    over.on_heard("snooze", AUDIO)
    assert turns == ["over_ring"] and speaker.cancels == 1 and lines == []


def test_a_reply_with_nothing_asked_does_nothing():
    over, speaker, turns, lines, _ = _over(question=False, ringing=True)
    over.on_heard("yes", AUDIO)
    assert turns == [] and lines == [] and speaker.cancels == 0 and speaker.releases == 1
    quiet, *_ = _over(question=False)
    assert not quiet.replies()  # nothing asked, nothing rings: the stop phrases alone


class TurnSpeaker:
    """The speaker of the turn worker: each answer's playback is cut (``cut``) or not."""

    playing = False

    def __init__(self, cut: bool):
        self.cut, self.cancelled = cut, 0

    def start_turn(self):
        pass

    def finish(self, pcm, rate):
        pass

    def wait(self):  # the answer plays, and the wake word or a stop word may cut it
        self.cancelled += 1 if self.cut else 0
        return True


def _answered_a_question(cut: bool) -> bool:
    """One turn whose answer asks a question, through the supervisor's turn worker; whether
    its follow-up window is to open."""
    rig = Listener()
    conversation = Conversation()
    conversation.ask_confirmation({"intent": "HassTurnOn"})
    rig.sup.hub = SimpleNamespace(
        settings=rig.settings,
        on_wake=lambda: None,
        conversation=lambda: conversation,
        answer_audio=lambda samples, file=None: SimpleNamespace(trace={}, pcm=b"", rate=16000),
    )
    rig.sup.speaker = TurnSpeaker(cut)
    worker = threading.Thread(target=rig.sup._turns, daemon=True)
    worker.start()
    rig.sup._utterances.put((np.ones(8000, np.int16), "final", 0.0, "wake"))
    # the worker decides the window after the playback, then listens again
    assert wait_for(lambda: rig.sup.turns == 1 and rig.sup.state is State.LISTENING, 30)
    opened = rig.sup._followup.is_set()
    rig.sup._utterances.put(None)
    worker.join(30)
    return opened


def test_breaker_a_question_cut_by_a_barge_in_opens_no_window():
    """The question's playback is cut while it plays (the wake word, a stop word): its
    follow-up window never opens, so the next answer does not open one either."""
    assert _answered_a_question(cut=False)  # heard whole: the window opens
    assert not _answered_a_question(cut=True)


class Begun:
    """A stop listener holding a reply begun over the question's end."""

    def __init__(self, audio):
        self.audio, self.in_speech = audio, True

    def take(self):
        audio, self.audio, self.in_speech = self.audio, None, False
        return audio

    def hear(self, block, armed):
        pass

    def reset(self):
        pass


def test_breaker_a_reply_begun_over_the_question_s_end_is_heard_whole():
    """The follow-up window opens while the reply is said: it takes the stop listener's
    utterance over, so the turn has the whole reply (before: only its 0.07 s tail, which
    was "no speech")."""
    rig = Listener()
    begun = np.concatenate([np.zeros(3200, np.int16), np.full(4000, 1000, np.int16)])
    rig.sup.stopper = Begun(begun)
    rig.followup()
    rig.feed(0.1, speech=True)  # the rest of the reply, after the window opened
    rig.feed(1.5)
    (turn,) = rig.turns()
    audio, _reason, _at, capture = turn
    assert capture == "followup"
    assert np.count_nonzero(audio) == 4000 + round(0.1 * 16000 / BLOCK) * BLOCK


def test_a_late_reply_is_the_open_window_s_turn():
    """A reply decoded over the question's very end reaches the listener after the window
    opened: it is that window's turn (one turn, not two captures)."""
    rig = Listener()
    rig.followup()
    rig.feed(0.2)
    assert rig.endpointer is not None
    rig.sup.over._late.put(np.full(4000, 1000, np.int16))
    rig.feed(0.05)
    assert rig.endpointer is None
    (turn,) = rig.turns()
    assert turn[3] == "followup" and np.count_nonzero(turn[0]) == 4000
    rig.feed(1.0)
    assert rig.turns() == [] and rig.out.dropped() == []


def test_a_reply_begun_as_the_question_s_playback_closed_is_heard_whole():
    """A reply begun after the question's last audio but before the window opened (the
    playback's close, the turn worker waking): the stop listener's last audio starts the
    window's capture (found by the 20-round "yes" benchmark: 0.10 s of it was left, "too
    short to be speech")."""
    from hub.audio.endpoint import Endpointer
    from hub.service.stopword import RECENT_S, StopListener

    listener = StopListener(lambda ms, cap: Endpointer(ms, cap), lambda s, r: None, print)
    for _ in range(20):  # 1 s while nothing plays, the last 0.1 s of it speech
        listener.hear(np.zeros(800, np.int16), armed=False)
    listener.hear(np.full(800, 1000, np.int16), armed=False)
    listener.hear(np.full(800, 1000, np.int16), armed=False)
    begun = listener.take()
    assert begun is not None and len(begun) == round(RECENT_S * 16000)
    assert np.count_nonzero(begun) == 1600  # the reply's beginning is in it
    assert listener.take() is None  # handed over once
