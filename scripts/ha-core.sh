#!/usr/bin/env bash
# A virtualenv with a real Home Assistant core (the registry's `homeassistant` package, a
# version that runs on Python 3.11) for the optional real-HA tests; it pins its own
# dependencies, so it never shares the hub's venv. Safe to run again; skips what is present.
#   scripts/ha-core.sh            # into $HUB_HA_CORE (/tmp/hub-ha-core)
set -euo pipefail
venv="${HUB_HA_CORE:-/tmp/hub-ha-core}"
python="${PYTHON:-python3}"  # HA 2024.3 runs on 3.11 and 3.12
version="${HUB_HA_VERSION:-2024.3.3}"
check="import homeassistant.const as c, sys; sys.exit(c.__version__ != '$version')"
if "$venv/bin/python" -c "$check" 2>/dev/null; then
    exit 0
fi
echo "ha-core: creating $venv with homeassistant==$version" >&2
"$python" -m venv "$venv"
"$venv/bin/pip" install -q --upgrade pip
"$venv/bin/pip" install -q "homeassistant==$version" "josepy==1.14.0"  # acme needs josepy 1.x
