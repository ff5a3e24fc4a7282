"""A real Home Assistant core for the tests (``scripts/ha-core.sh`` makes its venv): a
throw-away config folder with the ``demo`` and ``shopping_list`` (``todo.shopping_list``)
integrations, the owner made through onboarding, and a long-lived token from its own auth API.
https://developers.home-assistant.io/docs/auth_api and homeassistant/components/onboarding"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import time
import urllib.request
from pathlib import Path

VENV = Path(os.environ.get("HUB_HA_CORE", "/tmp/hub-ha-core"))
CONFIG = """homeassistant:
  name: Test
  latitude: 52.0
  longitude: 4.0
  elevation: 0
  unit_system: metric
  time_zone: UTC
http:
  server_host: 127.0.0.1
  server_port: {port}
  ip_ban_enabled: true
  login_attempts_threshold: 5
onboarding:
auth:
config:
websocket_api:
demo:
shopping_list:
"""
CLIENT = "http://127.0.0.1/"


def _post(url: str, body: dict, form: bool = False) -> dict:
    from urllib.parse import urlencode

    data = urlencode(body).encode() if form else json.dumps(body).encode()
    kind = "application/x-www-form-urlencoded" if form else "application/json"
    req = urllib.request.Request(url, data=data, headers={"Content-Type": kind})
    with urllib.request.urlopen(req, timeout=30) as resp:
        return json.loads(resp.read())


class RealHa:
    """``hass -c <folder>`` on ``port``; :meth:`token` onboards and returns a long-lived one."""

    def __init__(self, folder: Path, port: int) -> None:
        assert (VENV / "bin" / "hass").exists(), f"no {VENV}: run scripts/ha-core.sh"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "configuration.yaml").write_text(CONFIG.format(port=port))
        self.folder, self.url = folder, f"http://127.0.0.1:{port}"
        self.log = open(folder / "hass.out", "w")  # noqa: SIM115 - kept for the server's life
        self.proc = subprocess.Popen(
            [str(VENV / "bin" / "hass"), "-c", str(folder)],
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )

    def wait_up(self, timeout_s: float = 300.0) -> None:
        end = time.monotonic() + timeout_s
        while time.monotonic() < end:
            assert self.proc.poll() is None, (self.folder / "hass.out").read_text()[-3000:]
            try:
                with urllib.request.urlopen(f"{self.url}/api/onboarding", timeout=5):
                    return
            except OSError:
                time.sleep(1)
        raise AssertionError("Home Assistant did not come up")

    def token(self) -> str:
        """Onboard the owner, log in, make a long-lived access token."""
        from hub.devices.ha.client import HaClient

        code = _post(
            f"{self.url}/api/onboarding/users",
            {
                "client_id": CLIENT,
                "name": "Test",
                "username": "test",
                "password": "test-pass",
                "language": "en",
            },
        )["auth_code"]
        access = _post(
            f"{self.url}/auth/token",
            {"grant_type": "authorization_code", "code": code, "client_id": CLIENT},
            form=True,
        )["access_token"]

        async def long_lived():
            async with HaClient(self.url, access, 30.0) as ha:
                return await ha.request(
                    "auth/long_lived_access_token", client_name="hub", lifespan=1
                )

        return asyncio.run(long_lived())

    def close(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.log.close()
