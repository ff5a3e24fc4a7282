"""Benchmark the hub serving real ``wyoming-satellite`` 1.0.0 processes (issue 21).

``latency``: three satellites connected (Kitchen, Office, Bedroom), each mic plays Piper's
"turn on the lights" at real speed after a tone its wake service detects; measured from the
end of speech (the instant the mic "spoke" the utterance's last loud sample) to the first
answer bytes written by the satellite's ``--snd-command``; split into the endpoint part (end
of speech -> the hub endpointed the utterance) and the rest (ASR, rules, action, TTS, back to
the satellite). The hub runs in this process, built as ``hub serve`` builds it.

``cpu``: CPU seconds per minute of a ``hub serve`` process (its own and its children's) with
0, 1 and 3 idle satellites connected ("0": one configured whose port is closed, so the hub
probes it every 2 s).

``pings``: ping -> pong round trips of a connected satellite (every 100 ms) while the hub's
real LLM generates for 12 s on the satellites' thread pool.

    nice .venv/bin/python scripts/bench_satellites.py latency --turns 12
    nice .venv/bin/python scripts/bench_satellites.py cpu --seconds 60
    nice .venv/bin/python scripts/bench_satellites.py pings --seconds 12
Needs ``scripts/wyoming-satellite.sh`` (the satellites' own venv).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "tests" / "satellites")]

from real_satellite import AREAS, RealSatellite, wait  # noqa: E402

SPEECH_RMS = 500
"""An utterance's end of speech: the end of its last 10 ms window louder than this RMS."""


def pctl(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, round(q * (len(values) - 1)))]


def home_dict(sats):
    return {
        "home": {
            "areas": [{"name": a} for a in AREAS],
            "entities": [
                {"name": f"{a} Light", "domain": "light", "area": a, "state": "off"} for a in AREAS
            ],
        },
        "llm": {"intents_on": [], "answers_on": []},
        "satellites": [
            {"uri": f"tcp://127.0.0.1:{s.port}", "name": f"sat{s.i}", "area": AREAS[s.i]}
            for s in sats
        ],
    }


def utterance(tmp: Path) -> tuple[Path, int]:
    """Piper's "turn on the lights" at 22050 Hz as raw PCM, and its end of speech (bytes)."""
    import wave

    import numpy as np

    from wyoming_support import say

    with wave.open(str(say("turn on the lights", tmp / "lights.wav", rate16k=False))) as w:
        pcm = w.readframes(w.getnframes())
    x = np.frombuffer(pcm, np.int16).astype(np.float64)
    win = 220
    rms = np.sqrt(np.mean(x[: len(x) // win * win].reshape(-1, win) ** 2, axis=1))
    end = (int(np.nonzero(rms > SPEECH_RMS)[0][-1]) + 1) * win
    raw = tmp / "lights.raw"
    raw.write_bytes(pcm + bytes(2 * 22050 * 2))
    return raw, 2 * end


def vary(raw: Path, take: bytes, rng) -> None:
    """A new take of the utterance: another gain (±2 dB) and low noise (-60 dBFS), so no turn
    hears byte-identical audio (the store's exact-audio cache would answer it)."""
    import numpy as np

    x = np.frombuffer(take, np.int16).astype(np.float64)
    x = x * rng.uniform(0.8, 1.25) + rng.normal(0, 30, len(x))
    raw.write_bytes(np.clip(x, -32768, 32767).astype("<i2").tobytes())


def latency(args) -> None:
    import numpy as np

    from hub.core.hub import Hub
    from hub.satellites.serve import start_satellites
    from hub.settings import settings_from_dict
    from hub.store.db import open_store

    tmp = Path(tempfile.mkdtemp(prefix="bench-sats-"))
    raw, end = utterance(tmp)
    take = raw.read_bytes()
    sats = [RealSatellite(tmp, i, raw, speech_end=end) for i in range(3)]
    try:
        settings = settings_from_dict(home_dict(sats))
        store = (
            None if args.no_store else open_store(tmp / "store.db", settings.store, background=True)
        )  # as `hub serve` does
        hub = Hub(settings, entry="run", store=store, speak=True)
        hub.engines.warm(["asr", "rules", "tts", "devices"])
        turns, stop = start_satellites(hub)
        wait(lambda: all(x.sessions >= 1 for x in turns.links), 60, "three sessions")
        rows, rng = [], np.random.default_rng(21)
        print(f"seed 21, store {'none' if args.no_store else 'on'}")
        for n in range(args.turns + 1):  # the first turn warms the caches: not counted
            vary(raw, take, rng)
            row = one_turn(sats[n % 3], turns, n)
            if n:
                rows.append(row)
            time.sleep(1.5)  # its remaining silence; outside the duplicate window
        stop()
    finally:
        for s in sats:
            s.stop()
    report(rows)


def one_turn(sat, turns, n: int) -> tuple[float, float, str, bool]:
    """Fire ``sat``'s mic; ``(latency s, endpoint part s, endpoint reason, recognizer ran)``."""
    before, mics, snds = turns.turns, len(sat.marks("mic")), len(sat.marks("snd"))
    sat.fire()
    wait(lambda: len(sat.marks("snd")) > snds and turns.turns > before, 90, "answer")
    trace = turns.traces[-1]
    spoken, heard = sat.marks("mic")[mics], sat.marks("snd")[snds]
    timings = trace.get("timings_ms") or {}
    row = (heard - spoken, trace["endpointed_at"] - spoken, trace["endpoint"], "asr" in timings)
    print(f"turn {n} sat{sat.i}: {row[0]:.3f} s (endpoint {row[1]:.3f} s, {row[2]}) {timings}")
    return row


def report(rows) -> None:
    total, part = [r[0] for r in rows], [r[1] for r in rows]
    reasons = {r: sum(1 for x in rows if x[2] == r) for r in {x[2] for x in rows}}
    print(
        f"end of speech -> first answer audio at --snd-command, {len(rows)} turns: "
        f"p50 {pctl(total, 0.5):.3f} s, p95 {pctl(total, 0.95):.3f} s; endpoint part p50 "
        f"{pctl(part, 0.5):.3f} s, p95 {pctl(part, 0.95):.3f} s; rest p50 "
        f"{pctl([a - b for a, b in zip(total, part, strict=True)], 0.5):.3f} s; "
        f"endpoints {reasons}; recognizer ran in {sum(r[3] for r in rows)} (else the "
        f"store's fingerprint answered); load {os.getloadavg()[0]:.1f}"
    )


def cpu(args) -> None:
    import subprocess

    import psutil

    tmp = Path(tempfile.mkdtemp(prefix="bench-sats-cpu-"))
    raw, _ = utterance(tmp)
    for n in (0, 1, 3):
        sats = [RealSatellite(tmp, i, raw) for i in range(max(1, n))]
        if n == 0:
            sats[0].stop()  # configured, its port closed
        config = tmp / f"hub{n}.toml"
        config.write_text(_toml(home_dict(sats)))
        log = open(tmp / f"serve{n}.log", "wb")  # noqa: SIM115
        proc = subprocess.Popen(
            [sys.executable, "-m", "hub", "serve", "-v", "--config", str(config)]
            + ["--store", str(tmp / f"store{n}.db")],
            cwd=ROOT,
            stderr=log,
            stdout=subprocess.DEVNULL,
        )
        try:
            wait(
                lambda n=n: (
                    (tmp / f"serve{n}.log").read_text().count("connected: session") >= n
                    and "serving" in (tmp / f"serve{n}.log").read_text()
                ),
                300,
                "hub serve connected",
            )
            time.sleep(5)  # settle
            p = psutil.Process(proc.pid)
            t0 = _cpu(p)
            load0 = os.getloadavg()[0]
            time.sleep(args.seconds)
            used = (_cpu(p) - t0) * 60 / args.seconds
            print(
                f"hub serve, {n} satellites connected: {used:.2f} CPU-s per minute "
                f"(load {load0:.1f}-{os.getloadavg()[0]:.1f})"
            )
        finally:
            proc.terminate()
            proc.wait(30)
            for s in sats:
                s.stop()


def _cpu(p) -> float:
    t = p.cpu_times()
    return t.user + t.system + t.children_user + t.children_system


def _toml(d) -> str:
    lines = [
        "[home]",
        "areas = [" + ", ".join(f'{{name = "{a["name"]}"}}' for a in d["home"]["areas"]) + "]",
    ]
    lines.append("entities = [")
    for e in d["home"]["entities"]:
        lines.append(
            f'  {{name = "{e["name"]}", domain = "light", area = "{e["area"]}", state = "off"}},'
        )
    lines += ["]", "[llm]", "intents_on = []", "answers_on = []"]
    for s in d["satellites"]:
        lines += [
            "[[satellites]]",
            f'uri = "{s["uri"]}"',
            f'name = "{s["name"]}"',
            f'area = "{s["area"]}"',
        ]
    return "\n".join(lines) + "\n"


def pings(args) -> None:
    import asyncio
    import threading
    from concurrent.futures import ThreadPoolExecutor

    from fake_satellite import CountingEndpointer, FakeSatellite
    from wyoming.ping import Ping

    from hub.config.satellites import SatelliteSettings
    from hub.core.hub import Hub
    from hub.satellites.claims import WakeClaims
    from hub.satellites.link import SatelliteLink
    from hub.satellites.turns import SatelliteTurns
    from hub.settings import load_settings

    hub = Hub(load_settings(None), entry="run", speak=True)
    hub.engines.warm(["llm"])
    llm = hub.engines.llm()
    executor = ThreadPoolExecutor(3)
    busy = threading.Event()

    def generate():  # the real LLM, answering for args.seconds
        end = time.monotonic() + args.seconds
        words = 0
        busy.set()
        while time.monotonic() < end:
            for sentence in llm.answer("Tell me the long history of the bicycle in detail."):
                words += len(sentence.split())
        return words

    async def main():
        turns = SatelliteTurns(hub, executor, CountingEndpointer)
        sat = FakeSatellite()
        uri = await sat.start()
        link = SatelliteLink(
            SatelliteSettings(uri=uri, name="sat0"), turns, WakeClaims(time.monotonic)
        )
        turns.links = [link]
        stop = asyncio.Event()
        task = asyncio.create_task(link.run(stop))
        await sat.wait_for(lambda: link.sessions == 1)
        loop = asyncio.get_running_loop()
        job = loop.run_in_executor(executor, generate)
        await loop.run_in_executor(None, busy.wait)
        rtts, i = [], 0
        while not job.done():
            sent = time.monotonic()
            await sat.handler.write_event(Ping(text=f"b{i}").event())
            await sat.wait_for(lambda i=i: f"b{i}" in [e.data.get("text") for e in sat.events])
            rtts.append(time.monotonic() - sent)
            i += 1
            await asyncio.sleep(0.1)
        words = await job
        stop.set()
        await task
        return rtts, words

    rtts, words = asyncio.run(main())
    print(
        f"pings during {args.seconds:g} s of real LLM generation ({words} words): {len(rtts)} "
        f"pongs, p50 {1000 * pctl(rtts, 0.5):.1f} ms, p95 {1000 * pctl(rtts, 0.95):.1f} ms, "
        f"max {1000 * max(rtts):.1f} ms; load {os.getloadavg()[0]:.1f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="what", required=True)
    lat = sub.add_parser("latency")
    lat.add_argument("--turns", type=int, default=12)
    lat.add_argument("--no-store", action="store_true", help="no caches: every stage computed")
    sub.add_parser("cpu").add_argument("--seconds", type=float, default=60.0)
    sub.add_parser("pings").add_argument("--seconds", type=float, default=12.0)
    args = parser.parse_args()
    {"latency": latency, "cpu": cpu, "pings": pings}[args.what](args)


if __name__ == "__main__":
    main()
