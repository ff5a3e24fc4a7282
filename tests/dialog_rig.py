"""The live dialog rig: one ``hub run`` on a PulseAudio server of its own, speech fed into its
FIFO microphone at real speed, its speaker (the null sink's monitor) recorded.

Built on :mod:`daemon_live` (server, :class:`~daemon_live.Feeder`,
:class:`~daemon_live.Recorder`, :class:`~daemon_live.Daemon`). Clips are the hub's own Piper
voice (:func:`live_audio.synth`). Times are monotonic seconds of this process; a clip's end of
speech is the end of its last frame louder than -40 dBFS (:func:`live_audio.speech_extent`).
Used by ``tests/service/test_dialog_live.py`` (one round of each dialog) and
``scripts/bench_dialog.py`` (N rounds, latencies).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from daemon_live import Daemon, Feeder, Recorder, write_config
from live_audio import silence, speech_extent, synth

START_S = 240.0
"""Longest start-up accepted (a fresh cache builds the grammar at start)."""
LOUD_RMS = 300.0
"""A recorded 20 ms block louder than this (int16 RMS) is answer audio."""
QUIET_S = 0.6
"""The speaker is done once it has been this long without a loud block."""
CONFIG = """
[llm]
intents_on = []
answers_on = []
[wake]
followup_s = 8.0
"""
"""The rig's settings: rules only (the rules path is what is measured), follow-up on."""


@dataclass
class Said:
    """A clip fed into the microphone: when its speech began and ended (monotonic s)."""

    text: str
    start: float
    speech_end: float
    speech_start: float = 0.0


@dataclass
class Rig:
    """One running ``hub run`` with its microphone feeder and speaker recorder."""

    daemon: Daemon
    feeder: Feeder
    recorder: Recorder
    traces: list = field(default_factory=list)
    lengths: dict = field(default_factory=dict)
    """A question's text -> its first to last loud block at the speaker (s), once measured."""

    @classmethod
    def start(cls, server: dict, folder: Path, extra: str = "", home: str | None = None) -> Rig:
        """Start ``hub run`` on ``server`` (a :func:`daemon_live.server` env) and wait until
        it listens (``home``: another home's TOML than the sample's); raises AssertionError
        with its last log lines when it does not."""
        config = write_config(folder / "hub.toml", CONFIG + extra, home=home)
        daemon = Daemon(config, server, folder / "hub.db")
        if not daemon.wait_log("state: listening", START_S):
            daemon.stop()
            raise AssertionError("\n".join(daemon.stderr[-30:]))
        recorder = Recorder(server)
        feeder = Feeder(server["HUB_TEST_MIC_FIFO"])
        time.sleep(1.0)
        return cls(daemon, feeder, recorder)

    def close(self) -> int:
        """Stop the daemon (SIGTERM), the feeder and the recorder; the daemon's exit code."""
        code = self.daemon.stop()
        self.feeder.close()
        self.recorder.close()
        return code

    # -- speaking ---------------------------------------------------------------------------
    def say(
        self, *texts: str, pause_s: float = 0.4, tail_s: float = 1.5, at: float | None = None
    ) -> Said:
        """Speak ``texts`` one after the other (``pause_s`` apart), then ``tail_s`` of silence;
        returns when the speech was written, with its start and end of speech. ``at``: the
        monotonic time the speech itself should begin (the clip's leading silence is cut and
        it is queued then, to the feeder's 20 ms block); None: now, with its lead-in."""
        parts = []
        for i, text in enumerate(texts):
            parts += [synth(text)] + ([silence(pause_s)] if i < len(texts) - 1 else [])
        audio = np.concatenate(parts)
        first, end = speech_extent(audio)
        if at is not None:
            lead = max(0, first - 160)  # one 10 ms frame of lead-in kept
            audio, first, end = audio[lead:], first - lead, end - lead
            while (left := at - time.monotonic() - first / 16000) > 0:
                time.sleep(min(left, 0.005))
        count = len(self.feeder.said_at)
        self.feeder.say(np.concatenate([audio, silence(tail_s)]))
        while len(self.feeder.said_at) == count:
            time.sleep(0.01)
        start = self.feeder.said_at[count][0]
        said = Said(" / ".join(texts), start, start + end / 16000, start + first / 16000)
        time.sleep(max(0.0, said.speech_end - time.monotonic()))
        return said

    def wake_and(self, *texts: str, **kwargs) -> Said:
        """``okay nabu``, then ``texts``."""
        return self.say("okay nabu", *texts, **kwargs)

    # -- hearing ----------------------------------------------------------------------------
    def trace(self, timeout_s: float = 30.0) -> dict | None:
        """The next trace line of the daemon (a turn or an event), or None."""
        trace = self.daemon.trace(timeout_s)
        if trace is not None:
            self.traces.append(trace)
        return trace

    def turn(self, timeout_s: float = 30.0) -> dict | None:
        """The next turn's trace (event lines such as ``timer_finished`` skipped), or None."""
        end = time.monotonic() + timeout_s
        while (left := end - time.monotonic()) > 0:
            trace = self.trace(left)
            if trace is None or "event" not in trace:
                return trace
        return None

    def event(self, name: str, timeout_s: float = 30.0) -> dict | None:
        """The next event line called ``name`` (turns and other events skipped), or None."""
        end = time.monotonic() + timeout_s
        while (left := end - time.monotonic()) > 0:
            trace = self.trace(left)
            if trace is None or trace.get("event") == name:
                return trace
        return None

    def first_audio(self, since: float, timeout_s: float = 15.0) -> float | None:
        """Arrival time of the first loud speaker block after ``since``, or None."""
        end = time.monotonic() + timeout_s
        while time.monotonic() < end:
            loud = self.recorder.loud_times(since, LOUD_RMS)
            if loud:
                return loud[0]
            time.sleep(0.02)
        return None

    def speaker_done(
        self, since: float, timeout_s: float = 30.0, quiet_s: float = QUIET_S, poll_s=0.05
    ) -> float | None:
        """Wait until the speaker, loud after ``since``, has been quiet for ``quiet_s``
        (looked at every ``poll_s``); the arrival time of its last loud block (when that 20 ms
        block was read: its end, or a little after), or None on timeout."""
        end = time.monotonic() + timeout_s
        while time.monotonic() < end:
            loud = self.recorder.loud_times(since, LOUD_RMS)
            if loud and time.monotonic() - loud[-1] > quiet_s:
                return loud[-1]
            time.sleep(poll_s)
        return None

    def loud_after(self, since: float) -> list[float]:
        """Arrival times of loud speaker blocks after ``since``."""
        return self.recorder.loud_times(since, LOUD_RMS)

    def log_time(self, text: str, mark: int, timeout_s: float = 15.0) -> float | None:
        """When (monotonic, polled every 10 ms) a log line from index ``mark`` on held
        ``text``; None on timeout."""
        end = time.monotonic() + timeout_s
        while time.monotonic() < end:
            if any(text in line for line in self.log_since(mark)):
                return time.monotonic()
            time.sleep(0.01)
        return None

    def log_since(self, mark: int) -> list[str]:
        """Daemon log lines from index ``mark`` on."""
        return list(self.daemon.stderr)[mark:]


# -- the dialogs: each returns a dict of what was measured; raises AssertionError on failure --
REPLY_QUIET_S = 0.12
"""A question has ended once the speaker was quiet this long (Piper leaves shorter gaps
between the words of a sentence without commas)."""


FOLLOW_UP = "follow-up: listening"
"""The daemon's log line once the question's last audio was handed to the sound server."""
LENGTH_SLACK_S = 0.15
"""A question's end is accepted this much before its known length (first to last loud block)."""


def _question(rig: Rig, *texts: str) -> float:
    """Say ``texts`` after the wake word; the hub must ask back; returns the time its question
    ended at the speaker (its last loud block), as soon as that is known.

    On a loaded machine playback underruns leave gaps longer than :data:`REPLY_QUIET_S` inside
    the question; a reply said into one is said while the hub still speaks (that was the one
    yes round in 20 that gave no trace: the "yes" reached only the stop listener, "not a stop
    word", and the follow-up that opened after the question heard nothing, "no speech
    (timeout)", which writes no trace line). So a quiet gap is the end only once the speaker
    has been loud for the question's known length (first to last loud block, learnt from the
    first time it was asked, when the end is the last loud block before the daemon's
    :data:`FOLLOW_UP` line: it hands the whole question over first)."""
    mark = len(rig.daemon.stderr)
    said = rig.wake_and(*texts)
    trace = rig.turn()
    assert trace is not None and trace["response"].endswith("?"), trace
    return _question_end(rig, said, trace, mark)


def _question_end(rig: Rig, said: Said, trace: dict, mark: int) -> float:
    """The end of the question ``trace`` answered to ``said`` (see :func:`_question`);
    ``mark``: the daemon's log index before ``said``."""
    first = rig.first_audio(said.speech_end)
    assert first is not None, "no question heard at the speaker"
    length = rig.lengths.get(trace["response"])
    if length is None:
        assert rig.log_time(FOLLOW_UP, mark, timeout_s=30.0) is not None, "no follow-up window"
    since = first
    while True:
        end = rig.speaker_done(since, quiet_s=REPLY_QUIET_S, poll_s=0.01)
        assert end is not None, "the question did not end at the speaker"
        if length is None or end - first >= length - LENGTH_SLACK_S:
            break
        since = end + 0.001  # a gap inside the question: wait for the rest of it
        if rig.first_audio(since, timeout_s=1.0) is None:
            length = None  # it was the end: the length learnt was stretched by a gap
            break
    if length is None:
        rig.lengths[trace["response"]] = end - first
    return end


def dialog_yes(rig: Rig, reply_after_s: float = 0.2) -> dict:
    """ "open the garage door" -> question -> "yes" 0.2 s after it ended -> done."""
    end = _question(rig, "open the garage door")
    said = rig.say("yes", at=end + reply_after_s)
    trace = rig.turn()
    assert trace is not None and trace.get("confirmed") is not False, trace
    assert trace["transcript"] == "yes" and trace["response"].startswith("Open"), trace
    return {"reply_after_s": round(said.speech_start - end, 2)}


def dialog_no(rig: Rig, reply_after_s: float = 0.2) -> dict:
    """ "open the garage door" -> question -> "no" -> nothing done ("Okay.")."""
    end = _question(rig, "open the garage door")
    said = rig.say("no", at=end + reply_after_s)
    trace = rig.turn()
    assert trace is not None and trace["transcript"] == "no", trace
    assert not trace["response"].startswith("Open"), trace
    return {"reply_after_s": round(said.speech_start - end, 2)}


QUESTION = "Do you want me to open the Garage Door?"
"""The question of "open the garage door" (a sensitive entity of the sample home)."""


def _asked(rig: Rig, *texts: str) -> float:
    """Say ``texts`` after the wake word; the hub must ask back; returns when its question's
    first loud block reached the speaker."""
    said = rig.wake_and(*texts)
    trace = rig.turn()
    assert trace is not None and trace["response"].endswith("?"), trace
    first = rig.first_audio(said.speech_end)
    assert first is not None, "no question heard at the speaker"
    return first


def dialog_no_over_question(rig: Rig) -> dict:
    """ "open the garage door" -> "no" said while the question still plays (no wake word): the
    question stops, the no is its answer (nothing done), and no window stays open after it:
    a "yes" later is not taken."""
    first = _asked(rig, "open the garage door")
    rig.say("no", at=first + 0.5)
    trace = rig.turn()
    assert trace is not None and trace["capture"] == "over_question", trace
    assert trace["transcript"] == "no" and trace["acted"] is False, trace
    rig.speaker_done(time.monotonic() - 0.5, timeout_s=10)
    rig.say("yes")
    late = rig.turn(timeout_s=4.0)
    assert late is None, f"a yes with nothing asked was taken: {late}"
    return {}


def dialog_yes_over_the_end(rig: Rig) -> dict:
    """ "yes" begun 0.15 s before the question ends: heard whole, the door opens."""
    if QUESTION not in rig.lengths:  # learn the question's length first (see _question)
        end = _question(rig, "open the garage door")
        rig.say("no", at=end + 0.3)
        assert rig.turn() is not None
        rig.speaker_done(time.monotonic() - 0.5, timeout_s=10)
    first = _asked(rig, "open the garage door")
    said = rig.say("yes", at=first + rig.lengths[QUESTION] - 0.15)
    trace = rig.turn()
    assert trace is not None and trace["transcript"] == "yes", trace
    assert trace["response"].startswith("Open"), trace
    return {"reply_before_end_s": round(first + rig.lengths[QUESTION] - said.speech_start, 2)}


def dialog_no_window_after_a_barge_in(rig: Rig) -> dict:
    """A question cut short by the wake word and a command: the command is done, and its
    answer (which asks nothing) opens no window: "turn it off" without the wake word after it
    is not taken."""
    first = _asked(rig, "open the garage door")
    rig.wake_and("turn on the kitchen light", at=first + 0.4)
    trace = rig.turn()
    assert trace is not None and trace["intent"] == "HassTurnOn", trace
    rig.speaker_done(time.monotonic() - 0.5, timeout_s=10)
    time.sleep(0.5)
    rig.say("turn it off")
    late = rig.turn(timeout_s=5.0)
    assert late is None, f"taken without the wake word: {late}"
    rig.wake_and("turn off the kitchen light")  # leave the home as it was
    assert rig.turn() is not None
    rig.speaker_done(time.monotonic() - 0.5, timeout_s=10)
    return {}


def _ring(rig: Rig) -> float:
    """Set a 1 s timer; returns when its ring is heard at the speaker."""
    said = rig.wake_and("set a timer for 1 second")
    trace = rig.turn()
    assert trace is not None and trace["intent"] == "HassStartTimer", trace
    rig.speaker_done(said.speech_end)
    ring = rig.first_audio(time.monotonic())
    assert ring is not None, "the timer did not ring"
    return ring


def dialog_stop_ring(rig: Rig) -> dict:
    """A ring, "stop" without the wake word: the speaker is silent 0.5 s after the word."""
    ring = _ring(rig)
    time.sleep(max(0.0, ring + 1.0 - time.monotonic()))
    said = rig.say("stop", tail_s=0.5)
    time.sleep(3.0)
    loud = rig.loud_after(said.speech_end)
    last = loud[-1] - said.speech_end if loud else 0.0
    later = [t for t in loud if t > said.speech_end + 0.5]
    assert not later, f"the speaker played {last:.2f} s after the end of 'stop'"
    return {"silent_after_s": round(max(0.0, last), 2)}


RING_EVERY_S = 8.0
"""``[timers] ring_every_s`` (the default): a ringing timer plays again this long after."""


def dialog_stop_between_rings(rig: Rig) -> dict:
    """A ring plays and ends; "stop" without the wake word in the quiet before its repeat:
    the timer is stopped (the ``stopped`` event) and the repeat never plays."""
    ring = _ring(rig)
    ended = rig.speaker_done(ring, quiet_s=0.5)
    assert ended is not None, "the ring did not end"
    time.sleep(max(0.0, ended + 1.5 - time.monotonic()))
    said = rig.say("stop", tail_s=0.5)
    event = rig.event("stopped", timeout_s=5.0)
    assert event is not None, "no 'stopped' event"
    assert event["timer"] is True and event["playback"] is False, event
    time.sleep(max(0.0, ring + RING_EVERY_S + 1.5 - time.monotonic()))
    loud = rig.loud_after(said.speech_end)
    assert not loud, f"the ring played again {loud[0] - said.speech_end:.2f} s after 'stop'"
    return {"stop_after_ring_s": round(said.speech_start - ended, 2)}


def dialog_command_during_ring(rig: Rig) -> dict:
    """A ring, then "okay nabu, turn on the TV": the command is done."""
    ring = _ring(rig)
    time.sleep(max(0.0, ring + 1.0 - time.monotonic()))
    said = rig.wake_and("turn on the kitchen light")
    trace = rig.turn()
    assert trace is not None and trace["intent"] == "HassTurnOn", trace
    assert trace["slots"].get("name") == "Kitchen Light", trace
    rig.speaker_done(said.speech_end)
    rig.wake_and("stop")  # the timer still rings (its repeats): stopped for the next dialog
    stopped = rig.turn()
    assert stopped is not None and stopped["intent"] == "HassCancelTimer", stopped
    rig.speaker_done(time.monotonic() - 0.5, timeout_s=10)
    return {}


def dialog_wake_after_miss(rig: Rig) -> dict:
    """A question, no answer in the follow-up window (a cough), then the wake word works."""
    end = _question(rig, "open the garage door")
    time.sleep(max(0.0, end + 0.5 - time.monotonic()))
    rig.say("banana purple monkey")
    missed = rig.turn()
    assert missed is not None, "the follow-up miss gave no turn"
    rig.speaker_done(time.monotonic() - 1.0, timeout_s=10)
    time.sleep(0.5)
    rig.wake_and("turn off the kitchen light")
    trace = rig.turn()
    assert trace is not None and trace["intent"] == "HassTurnOff", (missed, trace)
    return {"miss": missed["response"]}


def dialog_two_turns(rig: Rig) -> dict:
    """Two commands in a row, each after the wake word; both done."""
    for command, intent in (
        ("turn on the kitchen light", "HassTurnOn"),
        ("turn off the kitchen light", "HassTurnOff"),
    ):
        said = rig.wake_and(command)
        trace = rig.turn()
        assert trace is not None and trace["intent"] == intent, trace
        rig.speaker_done(said.speech_end)
    return {}


def dialog_area_answer(rig: Rig, reply_after_s: float = 0.2) -> dict:
    """ "turn on the lights" (no area known) -> "Which area do you mean?" -> spoken "kitchen"
    without the wake word -> the kitchen's lights on."""
    end = _question(rig, "turn on the lights")
    said = rig.say("kitchen", at=end + reply_after_s)
    trace = rig.turn()
    assert trace is not None and trace["transcript"] == "kitchen", trace
    assert trace["intent"] == "HassTurnOn" and trace["slots"].get("area") == "Kitchen", trace
    rig.speaker_done(said.speech_end)
    return {"reply_after_s": round(said.speech_start - end, 2)}


def dialog_it_off(rig: Rig) -> dict:
    """ "turn on the kitchen light", then "turn it off" (without the wake word when the
    follow-up window is open, else after it) -> the Kitchen Light off."""
    mark = len(rig.daemon.stderr)
    said = rig.wake_and("turn on the kitchen light")
    trace = rig.turn()
    assert trace is not None and trace["intent"] == "HassTurnOn", trace
    rig.speaker_done(said.speech_end)
    window = any("follow-up: listening" in line for line in rig.log_since(mark))
    asking = len(rig.daemon.stderr)
    said = rig.say("turn it off") if window else rig.wake_and("turn it off")
    trace = rig.turn()
    assert trace is not None and trace["transcript"] == "turn it off", trace
    assert trace["intent"] == "HassTurnOff", trace
    assert trace["slots"].get("name") == "Kitchen Light", trace
    asked = trace["response"] == "Do you want me to turn off the Kitchen Light?"
    second = trace.get("second_pass", {}).get("outcome")  # "agree": the doubt settled
    if asked:  # "on" fitted as well and the second pass did not settle it: a yes does it
        end = _question_end(rig, said, trace, asking)
        said = rig.say("yes", at=end + 0.2)
        trace = rig.turn()
        assert trace is not None and trace["transcript"] == "yes", trace
    assert trace["response"].startswith("Turned off"), trace
    rig.speaker_done(said.speech_end)
    return {"follow_up_window": window, "asked_back": asked, "second_pass": second}


def dialog_wake_in_reply_window_then_pause(rig: Rig) -> dict:
    """Found by a new user: "unlock the front door" -> question; in its reply window "okay
    nabu", a pause (1.2 s, then 2.0 s), "is the kitchen light on": the command is the turn
    (``capture`` ``wake``; the wake word's capture is a ``capture_dropped`` ``wake_word``
    line, its audio never the answer), and it replaces the question: a yes after it has
    nothing to confirm (the door stays locked)."""
    pauses = {}
    for pause in (1.2, 2.0):
        end = _question(rig, "unlock the front door")
        mark = len(rig.traces)
        said = rig.say("okay nabu", "is the kitchen light on", pause_s=pause, at=end + 1.5)
        trace = rig.turn()
        events = [t for t in rig.traces[mark:] if t.get("event") == "capture_dropped"]
        assert trace is not None and trace["transcript"] == "is the kitchen light on", trace
        assert trace["intent"] == "HassGetState" and trace["capture"] == "wake", trace
        assert [(e["reason"], e["capture"]) for e in events] == [("wake_word", "followup")], events
        rig.speaker_done(said.speech_end)
        pauses[pause] = trace["endpoint"]
    said = rig.wake_and("yes")
    trace = rig.turn()
    assert trace is not None and trace["response"] == "There's nothing to confirm.", trace
    rig.speaker_done(said.speech_end)
    return {"endpoints": pauses}


def command_latency(rig: Rig, command: str) -> dict:
    """End of a spoken rules-path command -> first answer audio at the speaker (s), and the
    endpoint's share: end of speech -> the daemon's "utterance of" log line (s)."""
    mark = len(rig.daemon.stderr)
    said = rig.wake_and(command)
    endpoint = rig.log_time("utterance of", mark)
    first = rig.first_audio(said.speech_end)
    trace = rig.turn()
    assert first is not None and trace is not None and trace["status"] == "ok", trace
    rig.speaker_done(said.speech_end)
    timings = trace.get("timings_ms", {})
    return {
        "latency_s": round(first - said.speech_end, 3),
        "endpoint": trace.get("endpoint"),
        "endpoint_s": round(endpoint - said.speech_end, 3) if endpoint else None,
        "response": trace["response"],
        "asr_ms": timings.get("asr"),
        "tts_ms": timings.get("tts"),
        "ttfa_ms": timings.get("ttfa"),
        "second_pass": (trace.get("second_pass") or {}).get("why"),
    }


DIALOGS = {
    "yes": dialog_yes,
    "no": dialog_no,
    "no_over_question": dialog_no_over_question,
    "yes_over_the_end": dialog_yes_over_the_end,
    "no_window_after_a_barge_in": dialog_no_window_after_a_barge_in,
    "stop_ring": dialog_stop_ring,
    "stop_between_rings": dialog_stop_between_rings,
    "command_during_ring": dialog_command_during_ring,
    "wake_after_miss": dialog_wake_after_miss,
    "two_turns": dialog_two_turns,
    "area_answer": dialog_area_answer,
    "it_off": dialog_it_off,
    "wake_in_reply_window_then_pause": dialog_wake_in_reply_window_then_pause,
}
"""The dialogs of issue 18 by name."""
