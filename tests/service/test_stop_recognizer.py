"""Issue 18: the stop phrases' grammar on the recognizer's own decoder takes the stop words
(the hub's voice) and rejects other speech; the main grammar still works after it."""

from __future__ import annotations

import numpy as np
import pytest

from live_audio import silence, synth

pytestmark = pytest.mark.models


@pytest.fixture(scope="module")
def engine():
    from hub.core.hub import Hub
    from hub.settings import load_settings

    return Hub(load_settings(None), entry="run", speak=False).engines.asr()


def said(text: str) -> np.ndarray:
    return np.concatenate([silence(0.3), synth(text), silence(0.3)])


def test_stop_words_are_taken_and_other_speech_is_not(engine):
    from hub.service.stopword import StopRecognizer

    recognize = StopRecognizer(engine)
    assert [recognize(said(t)) for t in ("stop", "cancel", "that's enough", "never mind")] == [
        "stop",
        "cancel",
        "that's enough",
        "never mind",
    ]
    assert [recognize(said(t)) for t in ("yes", "what time is it", "turn on the TV")] == [
        None,
        None,
        None,
    ]
    assert engine.transcribe(said("turn on the TV")).text == "turn on the tv"


def test_issue18_replies_and_snooze_are_heard_only_when_listened_for(engine):
    """While a question waits (or something rings) the replies and the snooze phrases are
    read too; other speech, and the wake word above all, still is not; without ``replies``
    a "yes" is nothing."""
    from hub.service.overlap import heard_kind
    from hub.service.stopword import StopRecognizer

    recognize = StopRecognizer(engine)
    got = {t: recognize(said(t), replies=True) for t in ("yes", "no", "sure", "never mind")}
    got.update({t: recognize(said(t), replies=True) for t in ("snooze", "stop", "cancel")})
    assert all(got.values()), got
    assert {t: heard_kind(text) for t, text in got.items()} == {
        "yes": "reply",
        "no": "reply",  # read as "no" or "nope"
        "sure": "reply",
        "never mind": "stop",
        "snooze": "snooze",
        "stop": "stop",
        "cancel": "stop",
    }
    others = ("okay nabu", "what time is it", "turn on the TV", "kitchen", "thank you")
    assert [recognize(said(t), replies=True) for t in others] == [None] * len(others)
    assert recognize(said("yes")) is None  # no question: the stop phrases alone
    assert engine.transcribe(said("turn on the TV")).text == "turn on the tv"
