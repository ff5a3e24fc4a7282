"""``hub doctor``'s echo-cancellation line: which source is an echo canceller's, read from
``pactl list short sources``; a device not through the sound server, or no server, is unknown
(never an error)."""

from __future__ import annotations

from hub.audio.echo_cancel import echo_cancel_state, source_is_canceller

SOURCES = (
    "1\thub_mic\tmodule-pipe-source.c\ts16le 1ch 16000Hz\tRUNNING\n"
    "2\thub_speaker.monitor\tmodule-null-sink.c\ts16le 2ch 48000Hz\tIDLE\n"
    "5\tmic_aec\tmodule-echo-cancel.c\tfloat32le 1ch 16000Hz\tRUNNING\n"
    "7\thub_ec_mic\tPipeWire\tfloat32le 1ch 48000Hz\tSUSPENDED\n"
)


def test_aec_a_source_is_a_cancellers_by_its_driver_or_the_scripts_name():
    assert [source_is_canceller(SOURCES, n) for n in ("mic_aec", "hub_ec_mic")] == [True, True]
    assert [source_is_canceller(SOURCES, n) for n in ("hub_mic", "absent")] == [False, False]


def test_aec_an_input_device_not_through_the_sound_server_is_unknown():
    state = echo_cancel_state("hw:1,0")
    assert state.cancelled is None
    assert state.detail.startswith("unknown: input_device 'hw:1,0'")


def test_aec_no_sound_server_is_unknown_in_one_line(monkeypatch):
    monkeypatch.setenv("PULSE_SERVER", "unix:/nonexistent/native")
    monkeypatch.delenv("PULSE_SOURCE", raising=False)
    state = echo_cancel_state("pulse")
    assert state.cancelled is None
    assert state.detail.startswith("unknown: no sound server answers pactl")
    assert "\n" not in state.detail
