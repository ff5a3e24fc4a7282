#!/usr/bin/env bash
# Set up (scripts/setup.sh), start the services the tests use (a Mosquitto broker on
# 127.0.0.1:1883 and a PulseAudio server with a FIFO microphone and a null speaker),
# then the linters (scripts/lint.sh) and the test suite. Extra arguments go to pytest.
#
#   scripts/test.sh            # lint, then the whole suite (what CI runs), 2 workers
#   scripts/test.sh --fast     # lint, then the fast tier: every part, no servers started
#   scripts/test.sh tests/act  # extra arguments go to pytest (-n 0: one process)
#
# The fast tier is `-m "not live and not models and not slow or fast"` (markers:
# pyproject.toml; the marks of the older test modules and the `fast` few: tests/conftest.py).
# HUB_TEST_WORKERS sets pytest-xdist's worker count (default 2; 0 runs in one process).
# A lint failure fails the run, after the tests ran. pytest prints the ten slowest tests.
set -euo pipefail
cd "$(dirname "$0")/.."
fast=0
args=()
for arg in "$@"; do
    if [ "$arg" = "--fast" ]; then fast=1; else args+=("$arg"); fi
done
scripts/setup.sh

# the fast tier has no live tests: it starts no broker, sound server, Home Assistant or satellite
if [ "$fast" = 0 ]; then
    if ! (exec 3<>/dev/tcp/127.0.0.1/1883) 2>/dev/null; then
        echo "test: starting mosquitto on 127.0.0.1:1883" >&2
        conf=/tmp/hub-test-mosquitto.conf
        printf 'listener 1883 127.0.0.1\nallow_anonymous true\n' > "$conf"
        mosquitto -d -c "$conf"
        for _ in $(seq 1 50); do (exec 3<>/dev/tcp/127.0.0.1/1883) 2>/dev/null && break; sleep 0.1; done
    fi
    # this checkout's own sound server: two checkouts' suites never share one FIFO microphone
    export HUB_TEST_AUDIO_DIR="${HUB_TEST_AUDIO_DIR:-/tmp/hub-test-audio-$(pwd | cksum | cut -d' ' -f1)}"
    audio_env="$(scripts/start-test-audio.sh)"  # an assignment, so a failure stops here
    eval "$audio_env"
    pactl list short sources >&2
    scripts/wyoming-clients.sh  # the wyoming package's client at HA's oldest and newest pins
    scripts/wyoming-satellite.sh  # wyoming-satellite 1.0.0 for the live satellite tests
    scripts/ha-core.sh          # a real Home Assistant core (tests/devices/test_ha_real.py)
fi

export HUB_SHARED="${HUB_SHARED:-$(cd .. && pwd)/shared}"
lint=0
scripts/lint.sh || lint=$?

select=()
[ "$fast" = 1 ] && select=(-m "not live and not models and not slow or fast")
workers="${HUB_TEST_WORKERS:-2}"
parallel=()
[ "$workers" != 0 ] && parallel=(-n "$workers" --dist loadfile)
rc=0
.venv/bin/python -m pytest -q --durations=10 "${parallel[@]}" "${select[@]}" "${args[@]}" || rc=$?
if [ "$rc" = 0 ] && [ "$lint" != 0 ]; then
    echo "test: the tests passed but scripts/lint.sh failed" >&2
    rc=1
fi
exit "$rc"
