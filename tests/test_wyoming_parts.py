"""Pure parts of the Wyoming server: sentence cutting of streamed text, transcript choice,
audio conversion, conversation keys, handled/not-handled, the Piper lock, the frame parser."""

from __future__ import annotations

import threading
import time
from types import SimpleNamespace

import numpy as np
import pytest

from hub.errors import BadInputError
from hub.wyoming.asr import bias_words, choose_transcript
from hub.wyoming.audio_in import To16k
from hub.wyoming.framing import FrameError, parse_header
from hub.wyoming.handle import answer_event, conversation_id, handle_text
from hub.wyoming.tts import split_complete


@pytest.mark.parametrize("text, done, rest", [
    ("Is the ba", [], "Is the ba"),
    ("Is the back door locked? Ye", ["Is the back door locked?"], "Ye"),
    ("Yes. The porch li", ["Yes."], "The porch li"),
    ("It is 3.5 degrees. Ok", ["It is 3.5 degrees."], "Ok"),
    ("Done.", [], "Done."),  # may still grow ("Done..."): cut only before a space
    ("Wow! Really?! Yes", ["Wow!", "Really?!"], "Yes"),
])
def test_split_complete(text, done, rest):
    assert split_complete(text) == (done, rest)


def test_transcript_choice_prefers_a_rules_match_then_bias_words():
    alts = ["turn on the tea", "turn on the tv", "turn on the tree"]
    assert choose_transcript(alts, lambda t: t.endswith("tv"), set()) == "turn on the tv"
    assert choose_transcript(alts, lambda t: False, {"tree"}) == "turn on the tree"
    assert choose_transcript(alts, lambda t: False, set()) == "turn on the tea"
    assert choose_transcript([], lambda t: True, set()) == ""


def test_bias_words_from_transcribe_names_and_terms():
    req = SimpleNamespace(transcript_names=["Standing Light"], transcript_terms=["TV", 3])
    assert bias_words(req) == {"standing", "light", "tv"}
    assert bias_words(SimpleNamespace()) == set()  # a 1.7 Transcribe has neither field


def test_audio_conversion_passthrough_and_resampling():
    same = To16k(16000, 2, 1)
    pcm = np.arange(-100, 100, dtype="<i2").tobytes()
    assert same.convert(pcm[:3]) + same.convert(pcm[3:]) == pcm  # half a frame is kept
    stereo = To16k(48000, 2, 2)
    tone = (np.sin(np.arange(48000) * 2 * np.pi * 440 / 48000) * 10000).astype("<i2")
    frames = np.repeat(tone, 2).tobytes()
    out = b"".join(stereo.convert(frames[i:i + 4000]) for i in range(0, len(frames), 4000))
    out += stereo.convert(b"", last=True)
    got = np.frombuffer(out, "<i2")
    assert abs(len(got) - 16000) <= 2
    assert 6000 < np.abs(got[1000:-1000]).max() < 11000  # level kept, channels averaged


@pytest.mark.parametrize("rate, width, channels", [(0, 2, 1), (16000, 3, 1), (16000, 2, 0)])
def test_unsupported_audio_format_is_bad_input(rate, width, channels):
    with pytest.raises(BadInputError):
        To16k(rate, width, channels)


def test_conversation_comes_from_the_clients_context():
    assert conversation_id({"conversation_id": "c1", "satellite_id": "s"}) == "c1"
    assert conversation_id({"satellite_id": "sat.kitchen"}) == "sat.kitchen"
    assert conversation_id({"conversation_id": 5}) is None
    assert conversation_id(None) is None

    asked = []
    hub = SimpleNamespace(
        conversation=lambda cid: asked.append(cid) or cid,
        answer_text=lambda text, conversation: SimpleNamespace(
            trace={"response": "Turned on the light.", "status": "ok"}))
    event = handle_text(hub, "turn on the light", {"conversation_id": "c7"}, "conn-1")
    assert asked == ["c7"] and event.type == "handled"
    assert event.data["context"] == {"conversation_id": "c7"}
    handle_text(hub, "turn on the light", None, "conn-1")
    assert asked[-1] == "conn-1"


@pytest.mark.parametrize("trace, kind", [
    ({"response": "Turned on the light.", "status": "ok"}, "handled"),
    ({"response": "Do you want me to unlock the Front Door?", "status": "ok"}, "handled"),
    ({"response": "Sorry, I couldn't understand that.", "status": "ok"}, "not-handled"),
    ({"response": "Sorry, I can't do that right now.", "status": "degraded"}, "not-handled"),
    ({"response": "", "status": "no_speech"}, "not-handled"),
])
def test_handled_or_not(trace, kind):
    event = answer_event(trace, "c")
    assert event.type == kind and event.data["text"]


def test_empty_or_huge_transcript_is_not_handled_without_a_turn():
    hub = SimpleNamespace(answer_text=lambda *a, **k: pytest.fail("no turn expected"))
    assert handle_text(hub, "  ", None, "c").type == "not-handled"
    assert handle_text(hub, "x" * 5000, None, "c").type == "not-handled"


class ReentryVoice:
    """A Piper voice that fails if two threads are inside it at once."""

    def __init__(self):
        self.config = SimpleNamespace(sample_rate=22050)
        self.inside, self.overlaps, self.calls = 0, 0, 0
        self.lock = threading.Lock()

    def synthesize(self, text):
        with self.lock:
            self.inside += 1
            self.overlaps += self.inside > 1
            self.calls += 1
        time.sleep(0.02)
        with self.lock:
            self.inside -= 1
        yield SimpleNamespace(audio_int16_bytes=b"\0\0" * 100)


def test_two_clients_never_enter_piper_at_once():
    from hub.settings import TtsSettings
    from hub.tts.piper import PiperTts

    voice = ReentryVoice()
    tts = PiperTts(voice, TtsSettings())
    threads = [threading.Thread(target=lambda: list(tts.synthesize("One. Two. Three.")))
               for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert voice.calls == 12 and voice.overlaps == 0


@pytest.mark.parametrize("line, reason", [
    (b"[1, 2]\n", "not a JSON object"),
    (b'{"type": ""}\n', "no type"),
    (b'{"type": "x", "data": [1]}\n', "data is not a JSON object"),
    (b"\xff\xfe\n", "not JSON"),
])
def test_bad_headers_are_named(line, reason):
    with pytest.raises(FrameError, match=reason):
        parse_header(line)


def test_wyoming_settings_section_and_its_checks():
    from hub.errors import ConfigError
    from hub.settings import settings_from_dict
    from hub.wyoming.server import check_uri, start_wyoming

    settings = settings_from_dict({"wyoming": {"uri": "tcp://0.0.0.0:10700", "zeroconf": False}})
    assert settings.wyoming.uri == "tcp://0.0.0.0:10700" and settings.wyoming.max_turns == 4
    with pytest.raises(ConfigError, match="wyoming.max_turns"):
        settings_from_dict({"wyoming": {"max_turns": 0}})
    with pytest.raises(ConfigError, match="wyoming.bogus: unknown key"):
        settings_from_dict({"wyoming": {"bogus": 1}})
    assert check_uri("unix:///run/hub.sock") == "unix:///run/hub.sock"
    with pytest.raises(ConfigError, match="wyoming.uri"):
        check_uri("tcp://host:notaport")
    assert start_wyoming(None, settings_from_dict({}))() is None  # no uri: nothing hosted
