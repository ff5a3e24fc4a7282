"""Ctrl-C from the first line of the hub's own code on (the CLI's heavy imports included)
ends with ``hub: interrupted`` and exit code 130, never a traceback (hub/__main__.py)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ENTRIES = {
    "python -m hub": ["-X", "importtime", "-m", "hub"],
    "console script": [
        "-X",
        "importtime",
        "-c",
        "import sys; from hub.__main__ import run; sys.exit(run())",
    ],
}


def _start(entry: str) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(ROOT), HUB_LOG_LEVEL="")
    return subprocess.Popen(
        [
            sys.executable,
            *ENTRIES[entry],
            "ask",
            "--no-llm",
            "--store",
            ":memory:",
            "what time is it",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        cwd=ROOT,
    )


def _wait_for_hub_code(proc: subprocess.Popen) -> list[bytes]:
    """Read ``-X importtime`` lines until a ``hub.`` submodule is imported: the hub's own
    code runs (the interpreter's start-up, before it, is not the hub's to handle)."""
    seen = []
    for line in proc.stderr:
        seen.append(line)
        if b"| hub." in line or b"|   hub." in line or b" hub." in line.split(b"|")[-1]:
            return seen
    raise AssertionError(b"".join(seen[-20:]).decode())


@pytest.mark.parametrize("entry", sorted(ENTRIES))
@pytest.mark.parametrize("delay_s", [0.0, 0.05, 0.2, 0.5])
def test_ctrl_c_during_start_up_says_interrupted_and_exits_130(entry, delay_s):
    proc = _start(entry)
    seen = _wait_for_hub_code(proc)
    time.sleep(delay_s)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    err = b"".join(seen).decode() + err.decode()
    assert proc.returncode == 130, err[-2000:]
    assert "Traceback" not in err and "KeyboardInterrupt" not in err
    assert err.rstrip().endswith("hub: interrupted")


def test_the_console_script_is_the_guarded_entry():
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["hub"] == "hub.__main__:run"
