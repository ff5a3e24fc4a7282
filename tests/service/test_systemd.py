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

UNIT = Path(__file__).resolve().parents[2] / "systemd" / "hub.service"
MAX_EXPOSURE = 2.0
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
    assert seconds(one("RestartSec")) >= 10  # slowly: plus device_wait_s inside hub
    # exit code 4 (audio device unavailable) must be restarted, not given up on
    assert "4" not in " ".join(directives().get(("Service", "RestartPreventExitStatus"), []))
    # never ends in a failed unit: no start rate limit, or one that RestartSec cannot reach
    interval = seconds(one("StartLimitIntervalSec", "Unit"))
    burst = int(directives().get(("Unit", "StartLimitBurst"), ["5"])[0])
    assert interval == 0 or burst * seconds(one("RestartSec")) > interval


def test_bc20c_notes_the_user_audio_session_for_pulseaudio_and_pipewire():
    text = UNIT.read_text()
    assert "PipeWire" in text and "PulseAudio" in text and "systemctl --user" in text


def test_notify_type_with_watchdog_and_the_hardening_asked_for():
    assert one("Type") == "notify"
    assert seconds(one("WatchdogSec")) >= 10
    assert one("ExecStart") == "/opt/hub/bin/hub run"  # the venv of install-service.sh
    assert one("ExecReload") == "/bin/kill -HUP $MAINPID"
    expected = {
        "ProtectSystem": "strict",
        "PrivateTmp": "yes",
        "NoNewPrivileges": "yes",
        "ProtectHome": "read-only",
        "StateDirectory": "hub",
        "User": "hub",
        "SupplementaryGroups": "audio",
        "RestrictAddressFamilies": "AF_UNIX AF_INET AF_INET6",
    }
    assert {key: one(key) for key in expected} == expected
    assert one("MemoryMax").endswith(("M", "G"))


def verify(path: Path) -> tuple[int, list[str]]:
    """``systemd-analyze verify``: exit code and the lines naming the unit (it exits 0 on
    directives it ignores, so those lines are the real verdict)."""
    done = subprocess.run(
        ["systemd-analyze", "verify", str(path)], capture_output=True, text=True, timeout=60
    )
    return done.returncode, [
        line for line in (done.stdout + done.stderr).splitlines() if path.name in line
    ]


def with_exec(path: Path, text: str, hub_bin: str) -> Path:
    """The unit ``text`` with its ExecStart binary replaced by ``hub_bin``, written to ``path``."""
    path.write_text(text.replace("ExecStart=/opt/hub/bin/hub", f"ExecStart={hub_bin}"))
    return path


def test_systemd_analyze_verify_accepts_the_unit(tmp_path):
    # /opt/hub does not exist on this machine: point ExecStart at an executable that does
    unit = with_exec(tmp_path / "hub.service", UNIT.read_text(), shutil.which("true"))
    assert verify(unit) == (0, [])


@pytest.mark.parametrize(
    "old, new",
    [
        ("Type=notify", "Type=notifyy"),
        ("RestartSec=15", "RestartSec=soon"),
        ("ExecReload=/bin/kill", "ExecReload=/nonexistent/kill"),
    ],
)
def test_systemd_analyze_verify_catches_a_broken_unit(tmp_path, old, new):
    assert old in UNIT.read_text()
    broken = with_exec(
        tmp_path / "hub.service", UNIT.read_text().replace(old, new), shutil.which("true")
    )
    code, complaints = verify(broken)
    assert code != 0 or complaints != []


def test_systemd_analyze_security_exposure_is_low():
    done = subprocess.run(
        ["systemd-analyze", "security", "--offline=true", str(UNIT)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    match = re.search(r"Overall exposure level for hub\.service: (\d+\.\d+)", done.stdout)
    assert match, done.stdout[-500:] + done.stderr
    assert float(match.group(1)) <= MAX_EXPOSURE


# ---- scripts/install-service.sh into a container-like root ----


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """A root with /etc/passwd and /etc/group copied, after install-service.sh --root."""
    root = tmp_path_factory.mktemp("root")
    (root / "etc").mkdir()
    for name in ("passwd", "group", "shadow", "gshadow"):
        if Path("/etc", name).exists():
            shutil.copy(Path("/etc", name), root / "etc" / name)
    done = subprocess.run(
        [
            "bash",
            str(UNIT.parents[1] / "scripts" / "install-service.sh"),
            "--root",
            str(root),
            "--no-deps",
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return root


def test_install_service_makes_a_unit_whose_exec_start_exists(installed):
    unit = installed / "etc" / "systemd" / "system" / "hub.service"
    exec_start = directives(unit)[("Service", "ExecStart")][0].split()[0]
    assert exec_start == "/opt/hub/bin/hub"
    binary = installed / exec_start.lstrip("/")
    assert binary.is_file() and os.access(binary, os.X_OK)
    checked = with_exec(installed / "hub-host.service", unit.read_text(), str(binary))
    assert verify(checked) == (0, [])


def test_install_service_user_in_audio_and_the_install_readable_by_it(installed):
    passwd = (installed / "etc" / "passwd").read_text().splitlines()
    (hub_user,) = [line for line in passwd if line.startswith("hub:")]
    group = (installed / "etc" / "group").read_text().splitlines()
    (audio,) = [line for line in group if line.startswith("audio:")]
    assert "hub" in audio.split(":")[3].split(",")
    for path in (installed / "opt" / "hub").rglob("*"):
        if path.is_symlink():
            continue
        mode = path.stat().st_mode
        assert mode & 0o004, path  # readable by others, the service user among them
        if path.is_dir():
            assert mode & 0o001, path


def test_install_service_writes_a_config_hub_reads(installed):
    from hub.settings import load_settings

    config = installed / "etc" / "hub" / "hub.toml"
    assert "input_device" in config.read_text()
    settings = load_settings(str(config))
    assert settings.home.entities  # the sample home, ready to edit


def test_install_service_keeps_an_existing_config(installed):
    config = installed / "etc" / "hub" / "hub.toml"
    config.write_text(config.read_text() + "\n# mine\n")
    done = subprocess.run(
        [
            "bash",
            str(UNIT.parents[1] / "scripts" / "install-service.sh"),
            "--root",
            str(installed),
            "--no-deps",
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert config.read_text().endswith("# mine\n")


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


@pytest.mark.parametrize(
    "usec, pid, expected",
    [
        ("30000000", None, 30.0),
        ("30000000", "self", 30.0),
        ("30000000", "1", None),
        (None, None, None),
        ("soon", None, None),
    ],
)
def test_watchdog_interval_from_the_environment(monkeypatch, usec, pid, expected):
    for key, value in (("WATCHDOG_USEC", usec), ("WATCHDOG_PID", pid)):
        if value is None:
            monkeypatch.delenv(key, raising=False)
        else:
            monkeypatch.setenv(key, str(os.getpid()) if value == "self" else value)
    assert watchdog_interval_s() == expected
