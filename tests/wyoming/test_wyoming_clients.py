"""Issue 10, "Done when": the package's own client at the oldest (1.7.2) and newest (1.10.2)
``wyoming`` Home Assistant pins, against the hub's Wyoming server on 127.0.0.1.

The clients live in their own virtualenvs (``scripts/wyoming-clients.sh``); a missing one is
a failure with that message, never a skip.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from wyoming_support import CLIENT_VERSIONS, Server, free_port, make_server_hub, run_client, say

SHARED_TV = (
    Path(os.environ.get("HUB_SHARED", Path(__file__).parents[3] / "shared"))
    / "audio"
    / "generated"
    / "turn on the TV.wav"
)


@pytest.fixture(scope="module")
def server():
    srv = Server(make_server_hub(), free_port())
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def audio(tmp_path_factory):
    d = tmp_path_factory.mktemp("wy")
    return {
        "tv": say("turn on the TV", d / "tv.wav"),
        "tv22": say("turn on the TV", d / "tv22.wav", rate16k=False),
        "nabu": say("okay nabu", d / "nabu.wav"),
        # the shared recording when ../shared is there (the repo must not need it)
        "recorded": SHARED_TV if SHARED_TV.exists() else d / "tv.wav",
    }


@pytest.fixture(params=CLIENT_VERSIONS)
def version(request):
    return request.param


def test_info_lists_installed_asr_tts_wake_and_handle(server, version):
    info = run_client(version, server.port, "info")
    assert info["type"] == "info"
    assert info["asr"] == ["hub-asr"] and info["asr_languages"] == [["en"]]
    assert info["tts"] == ["hub-tts"] and info["voices"] == ["en_US-joe-medium"]
    assert info["streaming"] == [True]
    assert "okay_nabu" in info["wake"]
    assert info["handle"] == ["hub"] and info["home_control"] is True
    assert info.get("error") is None  # the client waited 1 s at most for the info


@pytest.mark.parametrize("which", ["tv", "tv22", "recorded"])
def test_turn_on_the_tv_in_1024_sample_chunks_gives_its_transcript(server, version, audio, which):
    result = run_client(version, server.port, "asr", str(audio[which]))
    assert result["text"] == "turn on the tv"
    assert result["events"][0] == "transcript-start" and result["events"][-1] == "transcript"


def test_synthesize_returns_at_least_half_a_second(server, version):
    result = run_client(version, server.port, "tts", "The porch light is on.")
    assert result["starts"] == 1 and result["stops"] == 1
    assert result["seconds"] >= 0.5
    assert result["formats"] == [[22050, 2, 1]]


def test_streaming_sequence_returns_audio_and_synthesize_stopped(server, version):
    result = run_client(version, server.port, "stream")
    assert result.get("error") is None, result
    assert result["audio_before_stop"] and result["chunks"] > 0
    assert result["starts"] == 1 and result["stops"] == 1
    assert result["last"] == "synthesize-stopped"


def test_transcript_turn_on_the_standing_light_is_handled(server, version):
    result = run_client(version, server.port, "handle", "turn on the standing light")
    assert result["handled"], result
    assert result["text"]


def test_unknown_event_keeps_the_connection(server, version):
    result = run_client(version, server.port, "unknown")
    assert result["pong"] and result["text"] == "still there"


def test_okay_nabu_gives_a_detection(server, version, audio):
    result = run_client(version, server.port, "wake", str(audio["nabu"]))
    assert result["type"] == "detection" and result["name"] == "okay_nabu"
    assert isinstance(result["timestamp"], int)


def test_a_command_is_not_a_wake_word(server, version, audio):
    result = run_client(version, server.port, "wake", str(audio["tv"]))
    assert result["type"] == "not-detected"


@pytest.mark.live
@pytest.mark.models
def test_the_final_transcript_comes_after_the_end_of_speech_without_audio_stop(
    server, version, audio
):
    """Issue 18: a client streaming a microphone (real time, then silence) gets the final
    transcript from the hub's own endpoint, before it sends ``audio-stop``."""
    result = run_client(version, server.port, "asr_live", str(audio["tv"]))
    assert result.get("error") is None, result
    assert result["text"] == "turn on the tv" and result["before_audio_stop"], result
    assert result["events"][-1] == "transcript"
