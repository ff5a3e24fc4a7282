"""The shipped systemd unit (BC-20 c) and sd_notify (hub/notify.py)."""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

import pytest

from hub.service.notify import notify, watchdog_interval_s

UNIT = Path(__file__).resolve().parents[1] / "systemd" / "hub.service"
MAX_EXPOSURE = 3.0
"""systemd-analyze security score (0 safe .. 10 exposed) the unit must stay at or under."""


def directives(path: Path = UNIT) -> dict[tuple[str, str], list[str]]:
    """``{(section, key): [values]}`` of a unit file (keys may repeat)."""
    out: dict[tuple[str, str], list[str]] = {}
    section = ""
    for raw in path.read_text().splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("["):
            section = line.strip("[]")
            continue
        key, _, value = line.partition("=")
        out.setdefault((section, key.strip()), []).append(value.strip())
    return out


def one(key: str, section: str = "Service") -> str:
    values = directives()[(section, key)]
    assert len(values) == 1, key
    return values[0]


def seconds(value: str) -> float:
    """A systemd time span without units or with s/min (all this unit uses)."""
    number, unit = re.fullmatch(r"(\d+(?:\.\d+)?)\s*(s|min)?", value).groups()
    return float(number) * (60 if unit == "min" else 1)


def test_bc20c_starts_after_sound_and_restarts_on_failure_without_a_tight_loop():
    assert "sound.target" in one("After", "Unit").split()
    assert one("Restart") == "on-failure"
    assert seconds(one("RestartSec")) >= 1
    # exit code 4 (audio device unavailable) must be restarted, not given up on
    assert "4" not in " ".join(directives().get(("Service", "RestartPreventExitStatus"), []))
    burst, interval = int(one("StartLimitBurst", "Unit")), one("StartLimitIntervalSec", "Unit")
    assert burst * seconds(one("RestartSec")) <= seconds(interval)


def test_bc20c_notes_the_user_audio_session_for_pulseaudio_and_pipewire():
    text = UNIT.read_text()
    assert "PipeWire" in text and "PulseAudio" in text and "systemctl --user" in text


def test_notify_type_with_watchdog_and_the_hardening_asked_for():
    assert one("Type") == "notify"
    assert seconds(one("WatchdogSec")) >= 10
    assert one("ExecStart").endswith("hub run")
    expected = {"ProtectSystem": "strict", "PrivateTmp": "yes", "NoNewPrivileges": "yes",
                "ProtectHome": "read-only", "StateDirectory": "hub", "DynamicUser": "yes",
                "SupplementaryGroups": "audio",
                "RestrictAddressFamilies": "AF_UNIX AF_INET AF_INET6"}
    assert {key: one(key) for key in expected} == expected
    assert one("MemoryMax").endswith(("M", "G"))


def verify(path: Path) -> tuple[int, list[str]]:
    """``systemd-analyze verify``: exit code and the lines naming the unit (it exits 0 on
    directives it ignores, so those lines are the real verdict)."""
    done = subprocess.run(["systemd-analyze", "verify", str(path)], capture_output=True,
                          text=True, timeout=60)
    return done.returncode, [line for line in (done.stdout + done.stderr).splitlines()
                             if path.name in line]


def test_systemd_analyze_verify_accepts_the_unit():
    assert verify(UNIT) == (0, [])


@pytest.mark.parametrize("old, new", [("Type=notify", "Type=notifyy"),
                                      ("RestartSec=5", "RestartSec=soon"),
                                      ("ExecStart=/usr/bin/env", "ExecStart=/nonexistent/env")])
def test_systemd_analyze_verify_catches_a_broken_unit(tmp_path, old, new):
    broken = tmp_path / "hub.service"
    broken.write_text(UNIT.read_text().replace(old, new))
    code, complaints = verify(broken)
    assert code != 0 or complaints != []


def test_systemd_analyze_security_exposure_is_low():
    done = subprocess.run(["systemd-analyze", "security", "--offline=true", str(UNIT)],
                          capture_output=True, text=True, timeout=60)
    match = re.search(r"Overall exposure level for hub\.service: (\d+\.\d+)", done.stdout)
    assert match, done.stdout[-500:] + done.stderr
    assert float(match.group(1)) <= MAX_EXPOSURE


# ---- sd_notify ----

@pytest.fixture
def notify_socket(monkeypatch):
    """A bound AF_UNIX datagram socket standing in for systemd; NOTIFY_SOCKET points at it."""
    folder = tempfile.mkdtemp(prefix="hub-notify-")  # short: AF_UNIX paths are ≤ 107 bytes
    address = os.path.join(folder, "notify")
    server = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    server.bind(address)
    server.settimeout(1.0)
    monkeypatch.setenv("NOTIFY_SOCKET", address)
    yield server
    server.close()
    shutil.rmtree(folder)


def test_notify_sends_one_datagram_per_state(notify_socket):
    assert notify("READY=1") is True
    assert notify("WATCHDOG=1\nSTATUS=listening") is True
    assert notify_socket.recv(256) == b"READY=1"
    assert notify_socket.recv(256) == b"WATCHDOG=1\nSTATUS=listening"


def test_notify_reaches_an_abstract_socket(monkeypatch):
    name = f"hub-test-notify-{os.getpid()}"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as server:
        server.bind("\0" + name)
        server.settimeout(1.0)
        monkeypatch.setenv("NOTIFY_SOCKET", "@" + name)
        assert notify("READY=1") is True
        assert server.recv(64) == b"READY=1"


def test_notify_without_systemd_is_a_no_op(monkeypatch):
    monkeypatch.delenv("NOTIFY_SOCKET", raising=False)
    assert notify("READY=1") is False


def test_notify_to_a_vanished_socket_returns_false_without_raising(monkeypatch, tmp_path):
    monkeypatch.setenv("NOTIFY_SOCKET", str(tmp_path / "gone"))
    assert notify("WATCHDOG=1") is False


@pytest.mark.parametrize("usec, pid, expected", [
    ("30000000", None, 30.0), ("30000000", "self", 30.0), ("30000000", "1", None),
    (None, None, None), ("soon", None, None)])
def test_watchdog_interval_from_the_environment(monkeypatch, usec, pid, expected):
    for key, value in (("WATCHDOG_USEC", usec), ("WATCHDOG_PID", pid)):
        if value is None:
            monkeypatch.delenv(key, raising=False)
        else:
            monkeypatch.setenv(key, str(os.getpid()) if value == "self" else value)
    assert watchdog_interval_s() == expected
