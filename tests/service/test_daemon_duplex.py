"""Full duplex on a real PulseAudio server: barge-in, no wake from the hub's own voice (BC-26),
follow-up listening only after playback ends.

The supervisor runs in this process with the real microphone (the server's FIFO source), the
real player (its null sink), the real wake word model and VAD; only the hub's turn is a stub
(it "answers" with Piper speech of a chosen text), so each case is exact and quick.
"""

from __future__ import annotations

import time

import numpy as np
import pytest

from hub.audio.mic import open_mic
from hub.audio.pcm import AudioChunk
from hub.audio.player import make_player
from hub.core.conversation import Conversation
from hub.core.hub import TurnResult
from hub.service.daemon import build_supervisor
from hub.settings import AudioSettings, Settings, WakeSettings

from daemon_live import Feeder, Recorder, start_server, stop_server
from fakes import wait_for
from live_audio import generated_commands, read_wav, silence, synth

LONG_ANSWER = (
    "Here is the weather for the week. Monday is sunny and warm, Tuesday brings "
    "rain in the afternoon, and Wednesday stays cloudy."
)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """A PulseAudio server of this module's own; sounddevice re-initialised to see it."""
    env = start_server(tmp_path_factory.mktemp("pulse"))
    with pytest.MonkeyPatch.context() as patch:
        for key, value in env.items():
            patch.setenv(key, value)
        import sounddevice

        sounddevice._terminate()
        sounddevice._initialize()
        yield env
    stop_server(env)
    sounddevice._terminate()  # back to the environment the other tests run in
    sounddevice._initialize()


class NoEngines:
    """No engine is loaded: the listener uses no recognizer of its own (no final-state check)."""

    def loaded(self, name: str) -> bool:
        return False

    def asr(self) -> None:
        return None


class StubHub:
    """A hub whose turn answers with ``answer`` spoken by Piper, streamed into the player."""

    engines = NoEngines()

    def __init__(self, answers, settings: Settings, ask_back: bool = False):
        self.settings, self.answers, self.ask_back = settings, list(answers), ask_back
        self.store = None
        self.turns: list[tuple[float, np.ndarray]] = []
        self._conversation = Conversation()

    def conversation(self, *_args, **_kwargs) -> Conversation:
        return self._conversation

    def on_wake(self) -> None:
        pass

    def answer_audio(self, samples, file=None) -> TurnResult:
        self.turns.append((time.monotonic(), samples))
        text = self.answers[min(len(self.turns), len(self.answers)) - 1]
        pcm = synth(text).tobytes()
        self._conversation.play(AudioChunk(pcm=pcm, rate=16000, text=text))
        if self.ask_back and text.endswith("?"):
            self._conversation.ask_confirmation({"intent": "HassTurnOn"})
        return TurnResult({"response": text, "status": "ok"}, pcm, 16000)


def supervisor_for(hub, server, out):
    audio = AudioSettings(input_device="pulse", output_device="pulse", device_wait_s=10)
    sup = build_supervisor(
        hub, open_mic=lambda sleep: open_mic(audio, sleep=sleep), player=make_player(audio)
    )
    sup.lines.out = out
    return sup


def wake_and(command: np.ndarray) -> np.ndarray:
    return np.concatenate([synth("okay nabu"), silence(0.4), command, silence(1.5)])


class Lines:
    def __init__(self):
        self.lines = []

    def write(self, text):
        self.lines.append(text)

    def flush(self):
        pass


def test_wake_word_during_a_long_answer_stops_it_and_the_next_command_is_taken(server):
    hub = StubHub([LONG_ANSWER, "Turned on the light."], Settings())
    recorder = Recorder(server)
    feeder = Feeder(server["HUB_TEST_MIC_FIFO"])
    sup = supervisor_for(hub, server, Lines())
    sup.start()
    try:
        command = read_wav(generated_commands()[0])
        feeder.say(wake_and(command))
        assert wait_for(lambda: len(hub.turns) == 1, 30)
        assert wait_for(lambda: recorder.loud_times(hub.turns[0][0]), 10)
        started = recorder.loud_times(hub.turns[0][0])[0]
        time.sleep(0.3)
        feeder.say(wake_and(command))  # the user talks over the answer
        assert wait_for(lambda: len(hub.turns) == 2, 30)
        cut = (sup.barge_ins, sup.speaker.cancelled)
    finally:
        assert sup.stop()
        feeder.close()
        recorder.close()
    answer_s = len(synth(LONG_ANSWER)) / 16000
    wake_end = feeder.said_at[1][0] + len(synth("okay nabu")) / 16000
    first_answer = [t for t in recorder.loud_times(started) if t < hub.turns[1][0]]
    assert first_answer[-1] - started < answer_s - 2.0  # cut off, not played to the end
    assert first_answer[-1] < wake_end + 1.0
    assert cut == (1, 1)


def test_bc26_own_answers_through_the_echo_path_never_wake_it(server):
    answers = [
        "It is 7:51 AM.",
        "Okay Nabu, the Kitchen Light is on.",
        "Hey Jarvis here. Would you like me to turn on the Kitchen Light?",
    ]
    hub = StubHub(["Turned on the light."], Settings())
    recorder = Recorder(server)
    feeder = Feeder(server["HUB_TEST_MIC_FIFO"], echo=recorder)  # the speaker into the mic
    sup = supervisor_for(hub, server, Lines())
    sup.start()
    try:
        for text in answers:
            sup.speaker.say(AudioChunk(pcm=synth(text).tobytes(), rate=16000, text=text))
            sup.speaker.wait(20)
            time.sleep(1.0)
        assert hub.turns == []
        echoes = sup.echoes_ignored
        feeder.say(wake_and(read_wav(generated_commands()[0])))  # the user, not an echo
        assert wait_for(lambda: len(hub.turns) == 1, 30)
    finally:
        assert sup.stop()
        feeder.close()
        recorder.close()
    assert echoes >= 1  # "Okay Nabu, ..." fired the detector on the echo, and was ignored
    assert sup.barge_ins == 0


def test_bc26_follow_up_opens_only_after_the_question_was_played_and_closes_unused(server):
    settings = Settings(wake=WakeSettings(followup_s=2.0))
    question = "Hey Jarvis here. Would you like me to turn on the Kitchen Light?"
    hub = StubHub([question, "The Kitchen Light is on."], settings, ask_back=True)
    recorder = Recorder(server)
    feeder = Feeder(server["HUB_TEST_MIC_FIFO"])
    sup = supervisor_for(hub, server, Lines())
    states: list[tuple[float, str]] = []
    original = sup.set_state

    def record(state):
        states.append((time.monotonic(), state.value))
        original(state)

    sup.set_state = record
    sup.start()
    try:
        feeder.say(wake_and(read_wav(generated_commands()[0])))
        assert wait_for(lambda: len(hub.turns) == 1, 30)
        assert wait_for(lambda: sup.speaker.last_output_at and not sup.speaker.playing, 20)
        played_until = sup.speaker.last_output_at
        time.sleep(1.0)
        feeder.say(read_wav(generated_commands()[1]))  # the answer, without the wake word
        assert wait_for(lambda: len(hub.turns) == 2, 30)
        time.sleep(4.5)  # the second answer asks nothing: no follow-up opens after it
        feeder.say(read_wav(generated_commands()[2]))
        time.sleep(5.0)
    finally:
        assert sup.stop()
        feeder.close()
        recorder.close()
    assert len(hub.turns) == 2
    opened = [t for t, s in states if s == "capturing" and t > hub.turns[0][0]]
    assert opened and opened[0] >= played_until
