#!/usr/bin/env bash
# Set up (scripts/setup.sh), start the services the tests use (a Mosquitto broker on
# 127.0.0.1:1883 and a PulseAudio server with a FIFO microphone and a null speaker),
# then run the test suite. Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh

if ! (exec 3<>/dev/tcp/127.0.0.1/1883) 2>/dev/null; then
    echo "test: starting mosquitto on 127.0.0.1:1883" >&2
    conf=/tmp/hub-test-mosquitto.conf
    printf 'listener 1883 127.0.0.1\nallow_anonymous true\n' > "$conf"
    mosquitto -d -c "$conf"
    for _ in $(seq 1 50); do (exec 3<>/dev/tcp/127.0.0.1/1883) 2>/dev/null && break; sleep 0.1; done
fi
audio_env="$(scripts/start-test-audio.sh)"  # an assignment, so a failure stops here
eval "$audio_env"
pactl list short sources >&2
scripts/wyoming-clients.sh  # the wyoming package's client at HA's oldest and newest pins

export HUB_SHARED="${HUB_SHARED:-$(cd .. && pwd)/shared}"
exec .venv/bin/python -m pytest -q "$@"
