"""How soon `hub wyoming` accepts a connection and answers `describe`, on a cold cache.

Starts `python -m hub wyoming` with a fresh, empty XDG_CACHE_HOME and an in-memory store,
connects every 50 ms, and prints seconds from the process start to the first accepted
connection, to the first `info`, and to the first `info` that lists speech-to-text.
    python scripts/bench_wyoming_start.py [--runs N] [--until-ready]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from wyoming.client import AsyncTcpClient
from wyoming.info import Describe, Info

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def describe(port: int) -> Info | None:
    client = AsyncTcpClient("127.0.0.1", port)
    await asyncio.wait_for(client.connect(), 1.0)
    try:
        await client.write_event(Describe().event())
        while (event := await asyncio.wait_for(client.read_event(), 60)) is not None:
            if Info.is_type(event.type):
                return Info.from_event(event)
        return None
    finally:
        await client.disconnect()


async def one_run(until_ready: bool) -> dict:
    port = free_port()
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "XDG_CACHE_HOME": cache, "PYTHONPATH": str(ROOT)}
        start = time.monotonic()
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "hub",
                "wyoming",
                "--uri",
                f"tcp://127.0.0.1:{port}",
                "--no-zeroconf",
                "--no-llm",
                "--store",
                ":memory:",
            ],
            env=env,
            cwd=ROOT,
            stderr=subprocess.DEVNULL,
        )
        out: dict = {}
        try:
            while time.monotonic() - start < 300:
                try:
                    info = await describe(port)
                except (TimeoutError, OSError):
                    await asyncio.sleep(0.05)
                    continue
                if "info_s" not in out:
                    out["info_s"] = time.monotonic() - start
                    print(f"  info after {out['info_s']:.2f} s", flush=True)
                if not until_ready or (info is not None and info.asr):
                    out["asr_listed_s"] = time.monotonic() - start
                    break
                await asyncio.sleep(0.25)
        finally:
            proc.terminate()
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                print("  did not stop within 30 s of SIGTERM; killed", flush=True)
                proc.kill()
                proc.wait()
        return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument(
        "--until-ready",
        action="store_true",
        help="also wait until describe lists speech-to-text (a minute or more)",
    )
    args = parser.parse_args()
    for i in range(args.runs):
        out = asyncio.run(one_run(args.until_ready))
        ready = (
            f", speech-to-text listed after {out.get('asr_listed_s', float('nan')):.2f} s"
            if args.until_ready
            else ""
        )
        print(
            f"run {i + 1}: info after {out.get('info_s', float('nan')):.2f} s{ready}; "
            f"load {os.getloadavg()[0]:.1f}"
        )


if __name__ == "__main__":
    main()
