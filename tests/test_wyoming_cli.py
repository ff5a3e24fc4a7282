"""``hub wyoming`` as a command, and ten Home Assistant-like clients at once."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys
import time
import wave

import pytest
from wyoming.asr import Transcribe
from wyoming.audio import AudioChunk, AudioStart, AudioStop
from wyoming.client import AsyncTcpClient
from wyoming.info import Describe
from wyoming.tts import Synthesize
from wyoming.asr import Transcript

from wyoming_support import (ROOT, Server, free_port, hub_env, make_server_hub, read_until,
                             say)

WAIT_S = 60.0
"""Longest wait for one client's answers while nine others share two cores."""


@pytest.mark.parametrize("uri", ["http://x:1", "tcp://127.0.0.1", "unix://"])
def test_bad_uri_is_one_line_and_exit_2(uri):
    proc = subprocess.run([sys.executable, "-m", "hub", "wyoming", "--uri", uri,
                           "--no-zeroconf", "--store", ":memory:"], cwd=ROOT, env=hub_env(),
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        f"hub: config: wyoming.uri: {uri!r} is not tcp://HOST:PORT or unix://PATH"]


def test_serves_on_a_unix_socket_tells_systemd_and_stops_on_sigterm(tmp_path):
    import socket

    path = tmp_path / "hub.sock"
    notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    notify.bind(str(tmp_path / "notify"))
    env = {**hub_env(), "NOTIFY_SOCKET": str(tmp_path / "notify")}
    proc = subprocess.Popen([sys.executable, "-m", "hub", "wyoming", "--uri", f"unix://{path}",
                             "--store", ":memory:", "--no-llm"], cwd=ROOT, env=env,
                            stderr=subprocess.PIPE, text=True)
    try:
        info = asyncio.run(_describe_unix(path))
        notify.settimeout(5.0)
        said = notify.recv(256)
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
        notify.close()
    assert info.type == "info" and info.data["asr"] and info.data["tts"]
    assert said == b"READY=1"
    assert proc.returncode == 0
    assert "Traceback" not in err


async def _describe_unix(path):
    from wyoming.client import AsyncUnixClient

    deadline = time.monotonic() + 120
    while not path.exists():
        assert time.monotonic() < deadline, "the server never listened"
        await asyncio.sleep(0.2)
    async with AsyncUnixClient(str(path)) as client:
        await client.write_event(Describe().event())
        return (await read_until(client, "info", 5.0))[-1]


def test_port_in_use_is_a_config_error(tmp_path):
    import socket

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        proc = subprocess.run([sys.executable, "-m", "hub", "wyoming", "--uri",
                               f"tcp://127.0.0.1:{port}", "--no-zeroconf", "--store", ":memory:",
                               "--no-llm"], cwd=ROOT, env=hub_env(), capture_output=True,
                              text=True, timeout=120)
    assert proc.returncode == 2
    assert f"wyoming.uri: cannot listen on tcp://127.0.0.1:{port}" in proc.stderr
    assert "Traceback" not in proc.stderr


async def one_client(port: int, wav) -> tuple[str, str, int]:
    """What Home Assistant does for one spoken command: transcribe, handle, synthesize."""
    async with AsyncTcpClient("127.0.0.1", port) as client:
        await client.write_event(Transcribe(language="en").event())
        with wave.open(str(wav)) as w:
            await client.write_event(AudioStart(rate=16000, width=2, channels=1).event())
            while frames := w.readframes(1024):
                await client.write_event(AudioChunk(rate=16000, width=2, channels=1,
                                                    audio=frames).event())
        await client.write_event(AudioStop().event())
        text = (await read_until(client, "transcript", WAIT_S))[-1].data["text"]
    async with AsyncTcpClient("127.0.0.1", port) as client:
        await client.write_event(Transcript(text="turn on the standing light",
                                            context={"conversation_id": str(id(client))}).event())
        answer = (await read_until(client, "handled", WAIT_S))[-1].data["text"]
    async with AsyncTcpClient("127.0.0.1", port) as client:
        await client.write_event(Synthesize(text=answer).event())
        audio = await read_until(client, "audio-stop", WAIT_S)
    return text, answer, sum(len(e.payload or b"") for e in audio)


def test_ten_clients_at_once_are_all_answered(tmp_path):
    wav = say("turn on the TV", tmp_path / "tv.wav")
    srv = Server(make_server_hub(), free_port())

    async def go():
        return await asyncio.gather(*(one_client(srv.port, wav) for _ in range(10)))

    try:
        results = asyncio.run(go())
    finally:
        srv.stop()
    assert len(results) == 10
    for text, answer, audio_bytes in results:
        assert text == "turn on the tv" and answer and audio_bytes > 0
