#!/usr/bin/env bash
# Put acoustic echo cancellation between the microphone and the hub: PulseAudio's
# module-echo-cancel (WebRTC's canceller), with the speaker's stream as its reference.
#
#   scripts/echo-cancel.sh [--mic SOURCE] [--speaker SINK] [--no-default]
#
# Loads module-echo-cancel (aec_method=webrtc) on the running PulseAudio server (or
# PipeWire's pipewire-pulse) with source_master=SOURCE (default: the server's default source)
# and sink_master=SINK (default: its default sink), as the source "hub_ec_mic" and the sink
# "hub_ec_speaker", and makes them the server's defaults, so the hub's devices "pulse" or
# "default" record the cancelled microphone and play through the canceller (which passes the
# sound on to SINK and keeps it as the echo's reference). `hub doctor` then says
# "input: echo-cancelled". Idempotent: when hub_ec_mic exists it is only made the default again.
# Not kept across a restart of the sound server: add the same line to /etc/pulse/default.pa
# (or ~/.config/pulse/default.pa) or run this from the hub's service (README, "Echo").
#
# Exit codes: 0 loaded (or already there), 2 bad usage, 4 no server or the module did not load
# (the server's reason on stderr).
set -euo pipefail

mic="" speaker="" make_default=1
while (($#)); do
    case "$1" in
    --mic) mic="${2:?--mic needs a source name}"; shift 2 ;;
    --speaker) speaker="${2:?--speaker needs a sink name}"; shift 2 ;;
    --no-default) make_default=0; shift ;;
    -h | --help) sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "echo-cancel: unknown argument: $1 (see --help)" >&2; exit 2 ;;
    esac
done

if ! info="$(pactl info 2>&1)"; then
    echo "echo-cancel: no PulseAudio server answers: $info" >&2
    exit 4
fi
if ! pactl list short sources | cut -f2 | grep -qx hub_ec_mic; then
    mic="${mic:-$(pactl get-default-source)}"
    speaker="${speaker:-$(pactl get-default-sink)}"
    # rate 16000, mono: the hub's own format (the canceller works at 32 kHz otherwise, more CPU).
    # No gain control: WebRTC's analog AGC turns the microphone's own volume down (measured on
    # the test server: to 61 % after one answer, the next command's words lost to the endpointer).
    # extended_filter=1: WebRTC's longer filter and milder suppressor keep more of a user's
    # "stop" said over the hub's voice (BENCHMARKS.md, "Stop listener and the hub's own voice").
    if ! out="$(pactl load-module module-echo-cancel aec_method=webrtc rate=16000 channels=1 \
        aec_args='"analog_gain_control=0 digital_gain_control=0 extended_filter=1"' \
        source_master="$mic" sink_master="$speaker" \
        source_name=hub_ec_mic sink_name=hub_ec_speaker 2>&1)"; then
        echo "echo-cancel: module-echo-cancel did not load (mic $mic, speaker $speaker): $out" >&2
        exit 4
    fi
    echo "echo-cancel: loaded module-echo-cancel (module $out): mic $mic, speaker $speaker" >&2
fi
if ((make_default)); then
    pactl set-default-source hub_ec_mic
    pactl set-default-sink hub_ec_speaker
fi
