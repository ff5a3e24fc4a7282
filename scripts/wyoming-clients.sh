#!/usr/bin/env bash
# Virtualenvs with the oldest and newest `wyoming` that Home Assistant pins (1.7.2 and
# 1.10.2), for tests/test_wyoming_clients.py: the hub's Wyoming server is driven by the
# package's own client at both versions. Safe to run again; skips what is present.
#   scripts/wyoming-clients.sh            # into $HUB_WYOMING_CLIENTS (/tmp/hub-wyoming-clients)
set -euo pipefail
root="${HUB_WYOMING_CLIENTS:-/tmp/hub-wyoming-clients}"
python="${PYTHON:-python3}"
for version in 1.7.2 1.10.2; do
    venv="$root/wy-$version"
    if "$venv/bin/python" -c "import wyoming, sys; sys.exit(wyoming.__version__ != '$version')" 2>/dev/null; then
        continue
    fi
    echo "wyoming-clients: creating $venv" >&2
    "$python" -m venv "$venv"
    "$venv/bin/pip" install -q "wyoming==$version"
done
