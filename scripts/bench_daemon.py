#!/usr/bin/env python3
"""Daemon benchmarks on a real PulseAudio server of their own (scripts/start-test-audio.sh).

    python scripts/bench_daemon.py idle [--seconds 60] [--no-llm]
                                                           idle RSS and CPU-seconds per minute
    python scripts/bench_daemon.py barge-in [--rounds 5]   wake word 0.3 s into a 4 s answer:
                                                           end of wake word -> answer silent
    python scripts/bench_daemon.py echo [--answers 100]    own answers played back into the mic
    python scripts/bench_daemon.py speech [--seconds 600]  speech without the wake word
                                                           (shared/audio looped): wakes

Each prints one JSON line. ``idle`` runs ``python -m hub run`` with the default config (the
sample home, LLM on) as a child process; the others run the supervisor in this process
with a stub turn, as tests/test_daemon_duplex.py does. Set HUB_SHARED to the shared folder.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "tests")]


def idle(seconds: float, no_llm: bool = False) -> dict:
    """RSS, USS, PSS, anonymous and file-backed resident memory (MB) and CPU-seconds per
    minute of ``hub run`` listening to silence; ``no_llm``: with ``[llm]`` off in ``run``
    (the LLM is then not loaded at start)."""
    import psutil

    from daemon_live import Daemon, Feeder, start_server, stop_server, write_config

    folder = Path(tempfile.mkdtemp(prefix="hub-bench-"))
    env = start_server(folder / "pulse")
    extra = "[llm]\nintents_on = []\nanswers_on = []\n" if no_llm else ""
    daemon = Daemon(write_config(folder / "hub.toml", extra), env, folder / "hub.db")
    feeder = None
    try:
        if not daemon.wait_log("state: listening", 600):  # loading takes minutes on a busy machine
            raise SystemExit("hub run did not start: " + "\n".join(daemon.stderr[-10:]))
        feeder = Feeder(env["HUB_TEST_MIC_FIFO"])
        proc = psutil.Process(daemon.proc.pid)
        time.sleep(5)
        cpu0, t0 = sum(proc.cpu_times()[:2]), time.monotonic()
        time.sleep(seconds)
        cpu = sum(proc.cpu_times()[:2]) - cpu0
        elapsed = time.monotonic() - t0
        mem = proc.memory_full_info()
        rollup = _smaps_rollup(daemon.proc.pid)
        return {
            "bench": "idle",
            "llm": not no_llm,
            "seconds": round(elapsed, 1),
            "cpu_s_per_min": round(cpu / elapsed * 60, 2),
            "rss_mb": round(mem.rss / 2**20),
            "uss_mb": round(mem.uss / 2**20),
            "pss_mb": round(mem.pss / 2**20),
            "anon_mb": round(rollup["Anonymous"] / 1024),
            "file_mb": round((rollup["Rss"] - rollup["Anonymous"]) / 1024),
            "threads": proc.num_threads(),
            "load_avg": [round(x, 2) for x in os.getloadavg()],
            "largest_mappings_mb": _largest_mappings(daemon.proc.pid, 12),
        }
    finally:
        daemon.stop()
        if feeder is not None:
            feeder.close()
        stop_server(env)


def _largest_mappings(pid: int, count: int) -> dict:
    """The ``count`` largest resident mappings of ``/proc/PID/smaps`` (MB), summed by name
    (a file's path, ``[heap]``, or ``[anon]`` for nameless anonymous mappings)."""
    sizes: dict[str, int] = {}
    name = "[anon]"
    for line in Path(f"/proc/{pid}/smaps").read_text().splitlines():
        fields = line.split()
        if fields and "-" in fields[0] and ":" not in fields[0]:  # a mapping's header line
            name = fields[5] if len(fields) > 5 else "[anon]"
        elif fields and fields[0] == "Rss:":
            sizes[name] = sizes.get(name, 0) + int(fields[1])
    top = sorted(sizes.items(), key=lambda item: -item[1])[:count]
    return {Path(k).name if k.startswith("/") else k: round(v / 1024, 1) for k, v in top}


def _smaps_rollup(pid: int) -> dict:
    """``/proc/PID/smaps_rollup`` as {field: kB}."""
    fields = {}
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines()[1:]:
        key, _, value = line.partition(":")
        fields[key] = int(value.split()[0])
    return fields


def _in_process(folder: Path):
    """A server of its own, sounddevice re-initialised to see it; returns its environment."""
    import os

    from daemon_live import start_server

    env = start_server(folder)
    os.environ.update(env)
    import sounddevice

    sounddevice._terminate()
    sounddevice._initialize()
    return env


def barge_in(rounds: int) -> dict:
    """Per round: ms from the end of the wake word (fed 0.3 s into the answer) to the last
    loud block of the answer at the sink monitor."""
    from test_daemon_duplex import LONG_ANSWER, Lines, StubHub, supervisor_for, wait_for, wake_and

    from hub.settings import Settings

    from daemon_live import Feeder, Recorder, stop_server
    from live_audio import generated_commands, read_wav, synth

    env = _in_process(Path(tempfile.mkdtemp(prefix="hub-bench-")))
    latencies = []
    wake_s = len(synth("okay nabu")) / 16000
    command = read_wav(generated_commands()[0])
    try:
        for _ in range(rounds):
            hub = StubHub([LONG_ANSWER, "Done."], Settings())
            recorder, feeder = Recorder(env), Feeder(env["HUB_TEST_MIC_FIFO"])
            sup = supervisor_for(hub, env, Lines())
            sup.start()
            feeder.say(wake_and(command))
            wait_for(lambda h=hub: len(h.turns) == 1, 30)
            wait_for(lambda h=hub, r=recorder: r.loud_times(h.turns[0][0]), 10)
            time.sleep(0.3)
            feeder.say(wake_and(command))
            wait_for(lambda h=hub: len(h.turns) == 2, 30)
            sup.stop()
            feeder.close()
            recorder.close()
            wake_end = feeder.said_at[1][0] + wake_s
            loud = [t for t in recorder.loud_times(0) if t < hub.turns[1][0]]
            latencies.append(round((loud[-1] - wake_end) * 1000))
    finally:
        stop_server(env)
    return {
        "bench": "barge-in",
        "rounds": rounds,
        "stop_after_wake_end_ms": latencies,
        "max_ms": max(latencies),
    }


ANSWERS = [
    "It is {h}:{m:02d} {ap}.",
    "The timer for {h} minutes is done.",
    "Turned on the Kitchen Light.",
    "The temperature is {m} degrees.",
    "Today is Tuesday, December {h}.",
    "Sorry, I did not understand that.",
    "The Office Light is off.",
    "Set the brightness to {m} percent.",
]


def echo(answers: int) -> dict:
    """Own answers played into the null sink while its monitor feeds the mic (gain 0.5,
    60 ms): wakes acted on (must be 0), and detections the echo check ignored."""
    from test_daemon_duplex import Lines, StubHub, supervisor_for

    from hub.audio.pcm import AudioChunk
    from hub.settings import Settings

    from daemon_live import Feeder, Recorder, stop_server
    from live_audio import synth

    env = _in_process(Path(tempfile.mkdtemp(prefix="hub-bench-")))
    hub = StubHub(["Done."], Settings())
    recorder = Recorder(env)
    feeder = Feeder(env["HUB_TEST_MIC_FIFO"], echo=recorder)
    sup = supervisor_for(hub, env, Lines())
    sup.start()
    try:
        for i in range(answers):
            text = ANSWERS[i % len(ANSWERS)].format(
                h=1 + i % 12, m=(i * 7) % 60, ap="AM" if i % 2 else "PM"
            )
            sup.speaker.say(AudioChunk(pcm=synth(text).tobytes(), rate=16000, text=text))
            sup.speaker.wait(30)
            time.sleep(0.6)
    finally:
        sup.stop()
        feeder.close()
        recorder.close()
        stop_server(env)
    return {
        "bench": "echo",
        "answers": answers,
        "wakes_acted": len(hub.turns),
        "echo_detections_ignored": sup.echoes_ignored,
    }


def speech(seconds: float) -> dict:
    """Wake detections in ``seconds`` of speech without the wake word: the recordings of
    ``$HUB_SHARED/audio/{generated,real}`` looped, 0.5 s apart, through the daemon's detector
    in 50 ms blocks (as fast as it runs; the detector has no notion of wall time)."""
    import numpy as np

    from hub.audio import load_wav
    from hub.settings import WakeSettings
    from hub.wake.detector import make_wake

    from live_audio import shared_dir, silence

    clips = [
        load_wav(p).samples
        for folder in ("generated", "real")
        for p in sorted((shared_dir() / "audio" / folder).glob("*.wav"))
    ]
    wake, gap = make_wake(WakeSettings()), silence(0.5)
    fed, wakes, i = 0, 0, 0
    while fed < seconds * 16000:
        audio = np.concatenate([clips[i % len(clips)], gap])
        for start in range(0, len(audio), 800):
            if wake.process(audio[start : start + 800]):
                wakes += 1
                wake.reset()
        fed += len(audio)
        i += 1
    return {"bench": "speech", "seconds": round(fed / 16000), "clips": len(clips), "wakes": wakes}


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("bench", choices=["idle", "barge-in", "echo", "speech"])
    parser.add_argument(
        "--seconds",
        type=float,
        default=None,
        help="idle: 60 s of listening; speech: 600 s of audio",
    )
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--answers", type=int, default=100)
    parser.add_argument(
        "--no-llm",
        action="store_true",
        help="idle: [llm] off in run (intents_on/answers_on without run)",
    )
    args = parser.parse_args()
    result = {
        "idle": lambda: idle(args.seconds or 60.0, args.no_llm),
        "barge-in": lambda: barge_in(args.rounds),
        "echo": lambda: echo(args.answers),
        "speech": lambda: speech(args.seconds or 600.0),
    }[args.bench]()
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
