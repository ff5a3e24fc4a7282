"""The service can reach the LAN (issue 20): the unit allows private ranges and denies the
internet, install-service.sh opens it for a configured host outside them, and ``hub doctor``
names a configured host the unit would block."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from hub.cli.doctor import _unit_policy
from hub.cli.netpolicy import allows, blocked, open_for, unit_policy
from hub.settings import settings_from_dict

UNIT = Path(__file__).resolve().parents[2] / "systemd" / "hub.service"
SCRIPT = UNIT.parents[1] / "scripts" / "install-service.sh"


def verify(path: Path) -> tuple[int, list[str]]:
    """``systemd-analyze verify``: exit code and the lines naming the unit."""
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


def conf(host: str, **llm) -> object:
    return settings_from_dict({"mqtt": {"host": host}, **({"llm": llm} if llm else {})})


@pytest.mark.parametrize(
    "address, ok",
    [
        ("192.168.1.10", True),
        ("10.1.2.3", True),
        ("172.20.0.5", True),
        ("127.0.0.1", True),
        ("::1", True),
        ("fd00::5", True),
        ("169.254.3.4", True),
        ("224.0.0.251", True),
        ("8.8.8.8", False),
        ("203.0.113.7", False),
        ("2001:db8::1", False),
        ("172.32.0.1", False),
    ],
)
def test_shipped_unit_allows_the_lan_and_denies_the_internet(address, ok):
    assert allows(UNIT.read_text(), address) is ok


def test_an_empty_assignment_resets_the_list():
    allow, deny = unit_policy("IPAddressAllow=10.0.0.0/8\nIPAddressAllow=\nIPAddressDeny=any\n")
    assert allow == [] and deny == ["any"]


def test_doctor_names_a_configured_host_the_unit_blocks(tmp_path):
    unit = tmp_path / "hub.service"
    unit.write_text("[Service]\nIPAddressDeny=any\nIPAddressAllow=localhost\n")
    line = _unit_policy(conf("192.168.1.10", url="http://203.0.113.7:8080"), unit)
    assert "BLOCKED: mqtt.host = 192.168.1.10" in line and "llm.url = 203.0.113.7" in line
    assert "IPAddressAllow=192.168.1.10" in line
    assert "lets every configured host through" in _unit_policy(conf("192.168.1.10"), UNIT)
    assert blocked(
        conf("broker.example"), UNIT.read_text(), resolver=lambda h: ["93.184.216.34"]
    ) == [("mqtt.host", "broker.example", ["93.184.216.34"])]


def test_open_for_adds_a_line_for_a_public_host_only(tmp_path):
    unit = tmp_path / "hub.service"
    unit.write_text(UNIT.read_text())
    assert open_for(conf("192.168.1.10"), unit) == []
    assert open_for(conf("203.0.113.7"), unit) == ["IPAddressAllow=203.0.113.7"]
    assert allows(unit.read_text(), "203.0.113.7") and not allows(unit.read_text(), "8.8.8.8")
    assert open_for(conf("203.0.113.7"), unit) == []  # run again: nothing more


@pytest.fixture(scope="module")
def installed_with(tmp_path_factory):
    """install-service.sh --root over a config that names a LAN broker and a public LLM."""
    root = tmp_path_factory.mktemp("root")
    (root / "etc" / "hub").mkdir(parents=True)
    (root / "etc" / "hub" / "hub.toml").write_text(
        '[mqtt]\nhost = "192.168.1.10"\n[llm]\nurl = "http://203.0.113.7:8080"\n'
    )
    done = subprocess.run(
        ["bash", str(SCRIPT), "--root", str(root), "--no-deps"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return root, done.stderr


def test_installed_unit_lets_the_configured_lan_broker_through(installed_with):
    root, log = installed_with
    unit = root / "etc" / "systemd" / "system" / "hub.service"
    text = unit.read_text()
    assert allows(text, "192.168.1.10") and allows(text, "203.0.113.7")
    assert not allows(text, "8.8.8.8")
    assert "IPAddressAllow=203.0.113.7" in log
    assert unit_policy(text)[1] == ["any"]
    checked = with_exec(Path(root / "checked.service"), text, shutil.which("true"))
    assert verify(checked) == (0, [])
