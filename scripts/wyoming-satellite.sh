#!/usr/bin/env bash
# A virtualenv with the registry's wyoming-satellite 1.0.0 (it pins wyoming 1.4.1, which
# conflicts with the hub's), for tests/satellites/test_satellites_live.py: real satellite
# processes that the hub serves. Safe to run again; skips what is present.
#   scripts/wyoming-satellite.sh          # into $HUB_WYOMING_SATELLITE (/tmp/hub-wyoming-satellite)
set -euo pipefail
venv="${HUB_WYOMING_SATELLITE:-/tmp/hub-wyoming-satellite}"
python="${PYTHON:-python3}"
if "$venv/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('wyoming-satellite') != '1.0.0')" 2>/dev/null; then
    exit 0
fi
echo "wyoming-satellite: creating $venv" >&2
"$python" -m venv "$venv"
"$venv/bin/pip" install -q "wyoming-satellite==1.0.0"
