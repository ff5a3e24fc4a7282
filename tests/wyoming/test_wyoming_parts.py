"""Pure parts of the Wyoming server: sentence cutting of streamed text, transcript choice,
audio conversion, conversation keys, handled/not-handled, the Piper lock, the frame parser."""

from __future__ import annotations

import threading
import time
from types import SimpleNamespace

import numpy as np
import pytest

from hub.errors import BadInputError
from hub.intents.utterance import MAX_TEXT_CHARS, text_problem
from hub.wyoming.asr import bias_words, choose_transcript
from hub.wyoming.audio_in import To16k
from hub.wyoming.framing import FrameError, parse_header
from hub.wyoming.handle import answer_event, conversation_id, handle_text, recognize_text
from hub.wyoming.tts import split_complete


@pytest.mark.parametrize(
    "text, done, rest",
    [
        ("Is the ba", [], "Is the ba"),
        ("Is the back door locked? Ye", ["Is the back door locked?"], "Ye"),
        ("Yes. The porch li", ["Yes."], "The porch li"),
        ("It is 3.5 degrees. Ok", ["It is 3.5 degrees."], "Ok"),
        ("Done.", [], "Done."),  # may still grow ("Done..."): cut only before a space
        ("Wow! Really?! Yes", ["Wow!", "Really?!"], "Yes"),
    ],
)
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
    out = b"".join(stereo.convert(frames[i : i + 4000]) for i in range(0, len(frames), 4000))
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
            trace={"response": "Turned on the light.", "status": "ok"}
        ),
    )
    event = handle_text(hub, "turn on the light", {"conversation_id": "c7"}, "conn-1")
    assert asked == ["c7"] and event.type == "handled"
    assert event.data["context"] == {"conversation_id": "c7"}
    handle_text(hub, "turn on the light", None, "conn-1")
    assert asked[-1] == "conn-1"


@pytest.mark.parametrize(
    "trace, kind",
    [
        ({"response": "Turned on the light.", "status": "ok"}, "handled"),
        ({"response": "Do you want me to unlock the Front Door?", "status": "ok"}, "handled"),
        ({"response": "Sorry, I couldn't understand that.", "status": "ok"}, "not-handled"),
        ({"response": "Sorry, I can't do that right now.", "status": "degraded"}, "not-handled"),
        ({"response": "", "status": "no_speech"}, "not-handled"),
    ],
)
def test_handled_or_not(trace, kind):
    event = answer_event(trace, "c")
    assert event.type == kind and event.data["text"]


def test_empty_transcript_is_not_handled_without_a_turn():
    hub = SimpleNamespace(answer_text=lambda *a, **k: pytest.fail("no turn expected"))
    assert handle_text(hub, "  ", None, "c").type == "not-handled"


@pytest.mark.parametrize(
    "text, why",
    [
        ("x" * (MAX_TEXT_CHARS + 1), "transcript is too long"),
        ("turn\x00on the \x1b[2Jlight", "transcript is not text"),
        ("bad \ufffd byte", "transcript is not text"),
    ],
)
def test_transcript_that_is_no_utterance_is_bad_input_without_a_turn(text, why):
    """The same guard as ``hub ask`` (one limit, the control-character check)."""
    hub = SimpleNamespace(answer_text=lambda *a, **k: pytest.fail("no turn expected"))
    assert text_problem(text) is not None
    with pytest.raises(BadInputError, match=why):
        handle_text(hub, text, None, "c")
    with pytest.raises(BadInputError, match=why.replace("transcript", "recognize")):
        recognize_text(hub, text)


def test_transcript_at_the_limit_is_a_turn():
    seen = []

    def answer_text(text, conversation):
        seen.append(text)
        return SimpleNamespace(trace={"response": "Done.", "status": "ok"})

    hub = SimpleNamespace(answer_text=answer_text, conversation=lambda cid: cid)
    text = "light " * (MAX_TEXT_CHARS // 6)
    assert handle_text(hub, f" {text}\t", None, "c").type == "handled"
    assert seen == [text.strip()]


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
    threads = [
        threading.Thread(target=lambda: list(tts.synthesize("One. Two. Three."))) for _ in range(4)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert voice.calls == 12 and voice.overlaps == 0


@pytest.mark.parametrize(
    "line, reason",
    [
        (b"[1, 2]\n", "not a JSON object"),
        (b'{"type": ""}\n', "no type"),
        (b"\xff\xfe\n", "not JSON"),
    ],
)
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


class Recording:
    """A recognizer stream that keeps what it was fed."""

    def __init__(self):
        self.segments, self.fed = [], bytearray()

    def accept(self, pcm):
        self.fed += pcm

    def finish(self):
        from hub.asr.base import Transcript

        return Transcript("", (), rejected=False)


def _tone(rate: int, width: int, channels: int, seconds: float = 1.0) -> bytes:
    """A 1 kHz tone at ``rate``/``width``/``channels`` (interleaved, little-endian)."""
    t = np.arange(int(rate * seconds)) / rate
    x = np.sin(2 * np.pi * 1000 * t) * 0.3
    ints = (x * 2 ** (8 * width - 1)).astype(f"<i{width}")
    return np.repeat(ints, channels).tobytes()


def _fed_by_asr_session(start: tuple, chunks: list[tuple]) -> np.ndarray:
    """What the Wyoming ASR session feeds its recognizer for ``audio-start`` ``start`` and
    ``chunks`` of ``(audio, rate, width, channels)`` (each sent in 4000-byte pieces)."""
    import asyncio

    from wyoming.audio import AudioChunk, AudioStart

    from hub.wyoming.asr import AsrSession

    from fakes import settings

    stream = Recording()
    engines = SimpleNamespace(
        asr=lambda: SimpleNamespace(stream=lambda: stream),
        rules=lambda: SimpleNamespace(recognize=lambda text, area=None: None),
    )
    hub = SimpleNamespace(settings=settings(), engines=engines, on_wake=lambda: None)

    async def run(fn, *args):
        return fn(*args)

    async def send(event):
        pass

    async def go():
        asr = AsrSession(hub, run, send)
        await asr.audio_start(AudioStart(rate=start[0], width=start[1], channels=start[2]))
        for audio, rate, width, channels in chunks:
            for i in range(0, len(audio), 4000):
                piece = audio[i : i + 4000]
                await asr.audio_chunk(AudioChunk(rate, width, channels, piece))
        await asr.audio_stop()

    asyncio.run(go())
    return np.frombuffer(bytes(stream.fed), "<i2")


def _peak_hz(x: np.ndarray) -> float:
    spectrum = np.abs(np.fft.rfft(x.astype(np.float64)))
    return float(np.argmax(spectrum)) * 16000 / len(x)


@pytest.mark.parametrize("fmt", [(48000, 2, 2), (22050, 2, 1), (16000, 4, 1), (16000, 2, 1)])
def test_bc45_wyoming_asr_converts_each_chunk_by_its_own_format(fmt):
    """``audio-start`` says 16000/2/1, the chunks say ``fmt``: the recognizer gets 1 s of
    16 kHz mono (the tone keeps its 1 kHz), not the bytes read as ``audio-start``'s format."""
    fed = _fed_by_asr_session((16000, 2, 1), [(_tone(*fmt), *fmt)])
    assert abs(len(fed) - 16000) <= 16, len(fed)  # within 1 ms
    assert abs(_peak_hz(fed) - 1000) <= 5
    assert 0.2 < np.abs(fed[1000:-1000]).max() / 32768 < 0.4  # level kept


def test_bc45_wyoming_asr_format_change_mid_stream_loses_nothing():
    """0.5 s at 16000/2/1, then 0.5 s at 48000/2/2 under one ``audio-start``: 1 s fed."""
    a, b = (16000, 2, 1), (48000, 2, 2)
    fed = _fed_by_asr_session(a, [(_tone(*a, seconds=0.5), *a), (_tone(*b, seconds=0.5), *b)])
    assert abs(len(fed) - 16000) <= 16, len(fed)
    assert abs(_peak_hz(fed[8000 + 400 :]) - 1000) <= 10  # the second half is still 1 kHz
