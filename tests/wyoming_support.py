"""Shared pieces of the Wyoming tests: an in-process server on 127.0.0.1, reference audio,
the clients at the pinned ``wyoming`` versions, raw frames.

Reference audio is the hub's own Piper voice (``hub say``), converted to 16 kHz mono with the
hub's loader, so the repository needs nothing from ``../shared``.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import wave
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CLIENT = ROOT / "tests" / "wyoming_client.py"
CLIENT_VERSIONS = ("1.7.2", "1.10.2")
"""Oldest and newest ``wyoming`` that Home Assistant 2025.7-2026.11 pins."""
READ_TIMEOUT_S = 1.0
"""Every read of an event the hub should send at once (the Wyoming project's own tests)."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def hub_env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def say(text: str, out: Path, rate16k: bool = True) -> Path:
    """``text`` spoken by the hub's Piper voice into ``out`` (16 kHz mono when ``rate16k``)."""
    raw = out.with_suffix(".voice.wav")
    subprocess.run(
        [sys.executable, "-m", "hub", "say", text, "--out", str(raw)],
        check=True,
        env=hub_env(),
        cwd=ROOT,
        capture_output=True,
        timeout=120,
    )
    if not rate16k:
        return raw
    from hub.audio import load_wav

    audio = load_wav(raw)
    with wave.open(str(out), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(audio.rate)
        w.writeframes(audio.samples.tobytes())
    return out


class Server:
    """A hub Wyoming server on 127.0.0.1 in this process (its own thread and loop)."""

    def __init__(self, hub, port: int):
        import dataclasses

        from hub.wyoming.server import start_wyoming

        self.hub, self.port = hub, port
        settings = dataclasses.replace(
            hub.settings,
            wyoming=dataclasses.replace(
                hub.settings.wyoming, uri=f"tcp://127.0.0.1:{port}", zeroconf=False
            ),
        )
        self.stop = start_wyoming(hub, settings)


def make_server_hub():
    """A Hub as ``hub wyoming`` builds it (speak=False, no LLM, no store), engines warmed."""
    import dataclasses

    from hub.core.hub import Hub
    from hub.settings import load_settings
    from hub.wyoming.server import warm

    settings = load_settings(None)
    settings = dataclasses.replace(
        settings, llm=dataclasses.replace(settings.llm, intents_on=(), answers_on=())
    )
    hub = Hub(settings, entry="run", speak=False)
    warm(hub)
    return hub


def client_python(version: str) -> str:
    """The interpreter with ``wyoming==version``; fails (never skips) when it is missing."""
    root = Path(os.environ.get("HUB_WYOMING_CLIENTS", "/tmp/hub-wyoming-clients"))
    python = root / f"wy-{version}" / "bin" / "python"
    if not python.exists():
        pytest.fail(
            f"no wyoming {version} client at {python}: run scripts/wyoming-clients.sh "
            "(CI runs it before the tests)"
        )
    return str(python)


def run_client(version: str, port: int, step: str, arg: str = "") -> dict:
    """Run one step of ``tests/wyoming_client.py`` with the client at ``version``."""
    proc = subprocess.run(
        [client_python(version), str(CLIENT), "127.0.0.1", str(port), step, arg],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["wyoming"] == version
    return result


async def raw_frame(event_type: str, data: dict | None = None, payload: bytes = b"") -> bytes:
    """The wire bytes of one event, written by hand (the "raw variant" of the cases)."""
    header: dict = {"type": event_type}
    body = json.dumps(data).encode() if data else b""
    if body:
        header["data_length"] = len(body)
    if payload:
        header["payload_length"] = len(payload)
    return json.dumps(header).encode() + b"\n" + body + payload


async def read_until(client, event_type: str, timeout: float = READ_TIMEOUT_S) -> list:
    """Events read with the package's client up to and including one of ``event_type``."""
    events = []
    while True:
        event = await asyncio.wait_for(client.read_event(), timeout)
        assert event is not None, f"connection closed before {event_type}: {events}"
        events.append(event)
        if event.type == event_type:
            return events
