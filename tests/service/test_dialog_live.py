"""Issue 18: the appliance in a real conversation, on the live dialog rig (one ``hub run`` on
a PulseAudio server of this module's own, the hub's own voice fed into the FIFO microphone at
real speed, the speaker recorded): each dialog once. ``scripts/bench_dialog.py`` runs N rounds
and measures."""

from __future__ import annotations

import pytest
from dialog_rig import DIALOGS, Rig

from daemon_live import server  # noqa: F401  (a fixture)

pytestmark = [pytest.mark.live, pytest.mark.models]


@pytest.fixture(scope="module")
def rig(server, tmp_path_factory):
    rig = Rig.start(server, tmp_path_factory.mktemp("rig"))
    yield rig
    assert rig.close() == 0


@pytest.mark.parametrize("name", list(DIALOGS))
def test_dialog(rig, name):
    mark = len(rig.daemon.stderr)
    try:
        DIALOGS[name](rig)
    except AssertionError as exc:
        raise AssertionError(f"{exc}\n" + "\n".join(rig.log_since(mark)[-40:])) from None


CLIPS = (
    "turn on the kitchen light",
    "set Kitchen brightness to 50 percent",
    "what time is it",
    "turn off the TV",
)
"""Commands said live and replayed from a file."""


def test_the_live_transcript_is_the_replayed_files(rig, tmp_path):
    import json
    import subprocess
    import sys
    import wave

    import numpy as np

    from daemon_live import REPO
    from live_audio import silence, synth

    live = {}
    for text in CLIPS:
        said = rig.wake_and(text)
        trace = rig.turn()
        assert trace is not None, text
        live[text] = trace["transcript"]
        rig.speaker_done(said.speech_end)
    paths = []
    for i, text in enumerate(CLIPS):
        paths.append(tmp_path / f"{i}.wav")
        with wave.open(str(paths[-1]), "wb") as w:
            w.setnchannels(1)
            w.setsampwidth(2)
            w.setframerate(16000)
            w.writeframes(np.concatenate([silence(0.5), synth(text), silence(0.5)]).tobytes())
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "hub",
            "replay",
            "--no-audio",
            "--no-llm",
            "--store",
            ":memory:",
            *map(str, paths),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    replayed = [json.loads(line)["transcript"] for line in done.stdout.splitlines()]
    assert replayed == [live[text] for text in CLIPS], (replayed, live)
    assert replayed[0] == "turn on the kitchen light"


def test_a_reply_said_0_2_s_after_the_question_ended_is_heard(rig):
    """Issue 18, done when: "a reply said 0.2 s after the hub's question ended is heard". The
    rig starts the speech of "yes" 0.2 s after the question's last loud block reached the
    speaker's monitor (its lead-in cut); it must confirm. A round the rig itself started
    late (a busy machine) is said again, up to three times: the check is of the hub."""
    for _ in range(3):
        mark = len(rig.daemon.stderr)
        try:
            measured = DIALOGS["yes"](rig, reply_after_s=0.2)
        except AssertionError as exc:
            raise AssertionError(f"{exc}\n" + "\n".join(rig.log_since(mark)[-40:])) from None
        if measured["reply_after_s"] <= 0.22:
            return
    raise AssertionError(f"the rig never said the reply on time: {measured}")
