#!/usr/bin/env bash
# Start (or reuse) a PulseAudio server for tests: a FIFO microphone and a null speaker.
#
#   eval "$(scripts/start-test-audio.sh)"
#
# Microphone: module-pipe-source "hub_mic" reading s16le 16000 Hz mono PCM from the FIFO
# $HUB_TEST_MIC_FIFO (tests write PCM into it). Speaker: module-null-sink "hub_speaker".
# Both are the server's defaults, so PortAudio's ALSA device "pulse" (Debian
# libasound2-plugins) records from the FIFO and plays into the null sink.
#
# Works as root in a container (no system bus, no user session). Idempotent: when a server
# already answers on the socket it is reused and only missing modules are loaded.
# Prints the environment to use as `export K=V` lines on stdout; messages go to stderr.
# Environment: HUB_TEST_AUDIO_DIR (default /tmp/hub-test-audio) holds socket, FIFO and log.
set -euo pipefail

dir="${HUB_TEST_AUDIO_DIR:-/tmp/hub-test-audio}"
runtime="$dir/runtime"
fifo="$dir/mic.fifo"
socket="$runtime/pulse/native"
mkdir -p "$runtime"
chmod 700 "$runtime"

export XDG_RUNTIME_DIR="$runtime"
export PULSE_SERVER="unix:$socket"
unset PULSE_COOKIE || true

if pactl info >/dev/null 2>&1; then
    echo "start-test-audio: reusing the server on $socket" >&2
else
    echo "start-test-audio: starting pulseaudio on $socket" >&2
    pulseaudio --daemonize=yes --exit-idle-time=-1 -n --use-pid-file=yes \
        --disallow-exit=yes --log-target="file:$dir/pulseaudio.log" \
        --load="module-native-protocol-unix auth-anonymous=1 socket=$socket" \
        --load="module-always-sink" >&2 2>/dev/null || true
    # The first start on a fresh machine (cookie, config folders) can take seconds.
    for _ in $(seq 1 300); do
        pactl info >/dev/null 2>&1 && break
        sleep 0.1
    done
    if ! pactl info >/dev/null 2>&1; then
        echo "start-test-audio: pulseaudio did not start; see $dir/pulseaudio.log" >&2
        exit 1
    fi
fi

modules="$(pactl list short modules)"
if ! grep -q "source_name=hub_mic" <<<"$modules"; then
    rm -f "$fifo"  # a FIFO left by a server that died: the module refuses an existing file
    pactl load-module module-pipe-source source_name=hub_mic file="$fifo" \
        format=s16le rate=16000 channels=1 >/dev/null
fi
if ! grep -q "sink_name=hub_speaker" <<<"$modules"; then
    pactl load-module module-null-sink sink_name=hub_speaker rate=48000 >/dev/null
fi
pactl set-default-source hub_mic
pactl set-default-sink hub_speaker

cat <<EOF
export XDG_RUNTIME_DIR=$runtime
export PULSE_SERVER=unix:$socket
export HUB_TEST_MIC_FIFO=$fifo
export HUB_TEST_MIC_RATE=16000
export HUB_TEST_AUDIO_DEVICE=pulse
EOF
