"""How much of the hub's own voice gets past the echo check (issue 18; cases.md BC-26, BC-27).

``hub run`` on a test sound server of its own (``scripts/start-test-audio.sh``), its FIFO
microphone fed the speaker's monitor through an echo path (the one of cases.md: gain 0.5,
60 ms; ``--gain``, ``--delay-ms``; optionally white room noise of ``--noise`` RMS and a room's
reverberation made by sox, ``--reverb`` percent), while a scenario plays:

- ``timer``: "okay nabu, set a timer for 2 seconds" once: the answer, then the ring (chime and
  "Your 2 second timer is done.") every 8 s;
- ``answers``: "okay nabu" and a rules-path command every 8 s (short answers);
- ``long``: "okay nabu, what can you do" every 45 s, answered with a 40 s LLM-like answer (a
  FAQ file of its own) that says "stop", "cancel", "enough", "silence" and "okay nabu".

Counts, from the daemon's log (each line timed as it arrives) and the speaker's monitor:
stretches the stop listener took while the hub played and judged the hub's own voice
(``echo``; ``echo_unmeasured`` of them before the device's coupling was measured), those held
for a decode (``held``: each one pauses playback; ``held_into_s``: how far into its playback,
``held_late``: more than 1 s), false stops (``stopped`` events), false wakes (a wake word
heard that was not judged echo: captures opened beyond the scenario's own wake words), and
wake detections judged echo (``echo_wakes``). With ``--user-stop S`` the user says "stop" S
seconds into a repeated ring (a ``timer`` scenario): ``user_stop`` says whether it stopped
the timer (its own hold is not counted). Prints one JSON line; what the held stretches were
read as on stderr.

    nice .venv/bin/python scripts/measure_stop_echo.py --seconds 60
    nice .venv/bin/python scripts/measure_stop_echo.py --scenario long --gain 1.0 --delay-ms 200
    nice .venv/bin/python scripts/measure_stop_echo.py --noise 300 --reverb 50 --user-stop 1.2
    nice .venv/bin/python scripts/measure_stop_echo.py --no-echo --user-stop 1.0   # no echo path
    nice .venv/bin/python scripts/measure_stop_echo.py --aec --user-stop 1.2 --runs 10

With ``--aec`` the hub hears the microphone through PulseAudio's acoustic echo canceller
(``scripts/echo-cancel.sh``: ``module-echo-cancel``, WebRTC's): the canceller's source
``hub_ec_mic`` (its mic: ``hub_mic``, the FIFO) and sink ``hub_ec_speaker`` (it passes what the
hub plays on to ``hub_speaker`` and keeps it as its reference) are the server's defaults, so the
hub records and plays through them; the echo path is still simulated after the speaker (the
null sink's monitor, delayed and scaled, mixed into the FIFO), so the canceller sees the
speaker's stream as reference and the microphone with its echo as mic. ``pulse_cpu`` is the
sound server's CPU (psutil: its CPU seconds over the wall seconds of the run, in percent of one
core). ``--runs N`` repeats the run (a server and a daemon each) and ends with a summary line.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
import psutil

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from daemon_live import (
    BLOCK,
    Daemon,
    Feeder,
    Recorder,
    start_server,
    stop_server,
    write_config,
)
from live_audio import silence, synth

NO_LLM = "[llm]\nintents_on = []\nanswers_on = []\n"
LONG_ANSWER = (
    "Here is what I can do. I switch lights and devices, and I can stop them too. Say okay "
    "nabu and then what you need. Timers ring until you say stop or cancel; when that is "
    "enough, say silence. I tell you the state of your home, the time and the weather. I "
    "can cancel what I just did if you ask. Don't stop stirring the soup until it thickens, "
    "then turn off the stove. Okay nabu is my name. I answer simple questions and I keep "
    "everything on this device. That is enough for now; ask me again any time, and I will "
    "tell you more about lights, timers, alarms, reminders, lists and the weather outside."
)
"""The ``long`` scenario's answer (about 40 s of speech, within ``[tts] max_chars``)."""
SCENARIOS = {
    "timer": (["set a timer for 2 seconds"], 1e9),
    "answers": (
        ["what time is it", "turn on the kitchen light", "turn off the kitchen light", "hello"],
        8.0,
    ),
    "long": (["what can you do"], 45.0),
}
"""Scenario -> (commands said after "okay nabu", in turn; seconds between them)."""
LOUD_RMS = 300.0
"""A speaker block louder than this (int16 RMS) is playback."""
START_QUIET_S = 1.0
"""A loud speaker block after this long without one starts a playback."""


class TimedDaemon(Daemon):
    """``hub run`` whose stderr lines are also kept with their arrival time (:data:`TIMED`)."""

    @staticmethod
    def _pump(stream, put) -> None:
        for line in stream:
            TIMED.append((time.monotonic(), line.rstrip("\n")))
            put(line.rstrip("\n"))


TIMED: list[tuple[float, str]] = []
"""(monotonic arrival time, line) of the daemon's output lines."""


class RoomFeeder(Feeder):
    """The echo path of :class:`daemon_live.Feeder` with a room's reverberation (an impulse
    response convolved, overlap-add) and white noise added to what the microphone hears."""

    def __init__(self, fifo, echo, gain: float, delay_s: float, noise: float, ir):
        self._noise, self._rng = noise, np.random.default_rng(1)
        self._ir_fft, self._size, self._tail = None, 0, np.zeros(0)
        if ir is not None:
            self._size = 1 << int(np.ceil(np.log2(BLOCK + len(ir) - 1)))
            self._ir_fft, self._tail = np.fft.rfft(ir, self._size), np.zeros(len(ir) - 1)
        super().__init__(fifo, echo=echo, gain=gain, delay_s=delay_s)

    def _echo_block(self) -> np.ndarray:
        block = super()._echo_block().astype(np.float64)
        if self._ir_fft is not None:
            y = np.fft.irfft(np.fft.rfft(block, self._size) * self._ir_fft, self._size)
            y = y[: BLOCK + len(self._tail)]
            y[: len(self._tail)] += self._tail
            block, self._tail = y[:BLOCK], y[BLOCK:]
        if self._noise:
            block = block + self._rng.normal(0.0, self._noise, BLOCK)
        return np.clip(block, -32768, 32767).astype(np.int16)


def room_ir(reverberance: float) -> np.ndarray:
    """The impulse response of sox's ``reverb`` effect at ``reverberance`` percent (dry path
    included), 16 kHz, cut where it falls below -80 dB."""
    impulse = np.zeros(16000, np.int16)
    impulse[0] = 32767
    out = subprocess.run(
        ["sox", "-t", "raw", "-r", "16000", "-e", "signed", "-b", "16", "-c", "1", "-"]
        + ["-t", "raw", "-", "reverb", str(reverberance)],
        input=impulse.tobytes(),
        capture_output=True,
        check=True,
    ).stdout
    ir = np.frombuffer(out, np.int16).astype(np.float64) / 32767
    return ir[: int(np.flatnonzero(np.abs(ir) > 1e-4)[-1]) + 1]


def playback_starts(recorder: Recorder) -> list[float]:
    """Arrival times of the speaker blocks that start a playback (loud after a quiet)."""
    starts, last = [], -1e9
    for t in recorder.loud_times(0.0, LOUD_RMS):
        if t - last > START_QUIET_S:
            starts.append(t)
        last = t
    return starts


def speak(feeder: Feeder, text: str) -> None:
    """ "okay nabu", then ``text``, into the microphone."""
    feeder.say(np.concatenate([synth("okay nabu"), silence(0.5), synth(text), silence(1.0)]))


def user_stop(feeder: Feeder, recorder: Recorder, after_s: float, end: float) -> None:
    """Say "stop" ``after_s`` into a repeated ring: the first playback that starts more than
    5 s after the first one (the answer and the first ring may run together)."""
    while time.monotonic() < end:
        starts = playback_starts(recorder)
        if len(starts) >= 2 and starts[-1] - starts[0] > 5.0:
            time.sleep(max(0.0, starts[-1] + after_s - time.monotonic()))
            feeder.say(np.concatenate([synth("stop"), silence(0.5)]))
            return
        time.sleep(0.05)


def count(args, recorder: Recorder, feeder: Feeder, wakes_said: int) -> dict:
    """The JSON line's counts (see the module doc); a hold within 2 s after the user's "stop"
    (the last thing said, with ``--user-stop``) is the user's, not counted."""
    log = list(TIMED)
    starts = playback_starts(recorder)
    user = feeder.said_at[-1] if args.user_stop is not None and feeder.said_at else (0, -1)
    held = [  # each decode held playback from its start: the line's time less the decode's
        t - int(m.group(1)) / 1000
        for t, line in log
        if (m := re.search(r"decoded in (\d+) ms", line))
    ]
    held = [t for t in held if not user[0] <= t <= user[1] + 2.0]
    into = [round(t - max((s for s in starts if s <= t), default=t), 2) for t in held]
    events = [json.loads(line) for _, line in log if line.startswith("{")]
    stopped = [e for e in events if e.get("event") == "stopped"]
    captures = sum("state: capturing" in line for _, line in log)
    return {
        "scenario": args.scenario,
        "seconds": args.seconds,
        "echo_path": None
        if args.no_echo
        else {
            "gain": args.gain,
            "delay_ms": args.delay_ms,
            "noise_rms": args.noise,
            "reverb": args.reverb,
        },
        "playbacks": len(starts),
        "echo": sum("of the hub's own voice ignored" in line for _, line in log),
        "echo_unmeasured": sum(
            "own voice ignored" in line and "not measured yet" in line for _, line in log
        ),
        "held": len(held),
        "held_late": sum(x > 1.0 for x in into),
        "held_into_s": into,
        "false_stops": len(stopped) - (1 if args.user_stop is not None and stopped else 0),
        "false_wakes": max(0, captures - wakes_said),
        "echo_wakes": sum(
            "wake/stop word in the hub's own playback ignored" in line for _, line in log
        ),
        "user_stop": None if args.user_stop is None else bool(stopped),
        "turns": sum(1 for e in events if "event" not in e),
        "aec": args.aec,
    }


def run(args) -> dict:
    """One run of the scenario; returns the counts."""
    folder = Path(tempfile.mkdtemp(prefix="stop-echo-"))
    env = start_server(folder)
    if args.aec:
        subprocess.run(
            ["bash", str(Path(__file__).with_name("echo-cancel.sh"))],
            env={**os.environ, **env},
            check=True,
        )
    pulse = psutil.Process(int((Path(env["XDG_RUNTIME_DIR"]) / "pulse" / "pid").read_text()))
    extra = NO_LLM
    if args.scenario == "long":
        faq = folder / "faq.toml"
        faq.write_text(f'[[faq]]\nquestions = ["what can you do"]\nanswer = "{LONG_ANSWER}"\n')
        extra += f'[resilience]\nfaq = "{faq}"\n'
    daemon = TimedDaemon(write_config(folder / "hub.toml", extra), env, folder / "hub.db")
    recorder = feeder = None
    wakes = 0
    try:
        if not daemon.wait_log("state: listening", 240):
            raise SystemExit("\n".join(daemon.stderr[-20:]))
        recorder = Recorder(env)
        ir = room_ir(args.reverb) if args.reverb else None
        echo = None if args.no_echo else recorder
        feeder = RoomFeeder(
            env["HUB_TEST_MIC_FIFO"], echo, args.gain, args.delay_ms / 1000, args.noise, ir
        )
        time.sleep(1.0)
        end = time.monotonic() + args.seconds
        cpu0, wall0 = sum(pulse.cpu_times()[:2]), time.monotonic()
        if args.user_stop is not None:
            threading.Thread(
                target=user_stop, args=(feeder, recorder, args.user_stop, end), daemon=True
            ).start()
        commands, every_s = SCENARIOS[args.scenario]
        while time.monotonic() < end:
            speak(feeder, commands[wakes % len(commands)])
            wakes += 1
            time.sleep(max(0.0, min(every_s, end - time.monotonic())))
        cpu = 100 * (sum(pulse.cpu_times()[:2]) - cpu0) / (time.monotonic() - wall0)
    finally:
        daemon.stop(signal.SIGTERM)
        for part in (feeder, recorder):
            if part is not None:
                part.close()
        stop_server(env)
    for _, line in TIMED:
        if m := re.search(r"stop listener:? (heard .+|.+ held for a decode.*)", line):
            print(f"  {m.group(1)}", file=sys.stderr)
    return {**count(args, recorder, feeder, wakes), "pulse_cpu": round(cpu, 1)}


def main() -> int:
    """Run once; print the counts as one JSON line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0, help="how long to listen")
    parser.add_argument("--scenario", choices=sorted(SCENARIOS), default="timer")
    parser.add_argument("--gain", type=float, default=0.5, help="echo path gain")
    parser.add_argument("--delay-ms", type=float, default=60.0, help="echo path delay (ms)")
    parser.add_argument("--noise", type=float, default=0.0, help="white noise RMS (int16)")
    parser.add_argument("--reverb", type=float, default=0.0, help="sox reverberance (%%)")
    parser.add_argument("--no-echo", action="store_true", help="no echo path (the test FIFO)")
    parser.add_argument("--user-stop", type=float, help='say "stop" this far into ring 2 (s)')
    parser.add_argument("--aec", action="store_true", help="through module-echo-cancel")
    parser.add_argument("--runs", type=int, default=1, help="runs (a summary line after them)")
    parser.add_argument("--log", type=Path, help="append the daemon's lines to this file")
    args = parser.parse_args()
    results = []
    for _ in range(args.runs):
        TIMED.clear()
        results.append(run(args))
        if args.log:
            with args.log.open("a", encoding="utf-8") as f:
                f.writelines(f"{t:.2f} {line}\n" for t, line in TIMED)
        print(json.dumps(results[-1]), flush=True)
    if args.runs > 1:
        print(json.dumps(summary(results)))
    return 0


def summary(results: list[dict]) -> dict:
    """Totals over the runs: user stops heard (of runs), false stops, false wakes, held
    stretches, echo stretches, and the sound server's CPU (mean, max)."""
    cpu = [r["pulse_cpu"] for r in results]
    return {
        "runs": len(results),
        "aec": results[0]["aec"],
        "user_stop": sum(bool(r["user_stop"]) for r in results),
        **{k: sum(r[k] for r in results) for k in ("false_stops", "false_wakes", "held", "echo")},
        "pulse_cpu_mean": round(sum(cpu) / len(cpu), 1),
        "pulse_cpu_max": max(cpu),
    }


if __name__ == "__main__":
    sys.exit(main())
