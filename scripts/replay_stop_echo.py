"""Record what the echo check of ``hub run`` was given, and replay it offline (issue 18).

``record`` runs ``scripts/measure_stop_echo.py`` (same options) with a hook in the daemon that
writes every block played and heard, with its time, and each block the stop listener was fed
to ``DIR/dump.pkl``. ``replay`` feeds such recordings to an echo check (this checkout's
:class:`hub.service.echo.EchoGate`, or ``--gate FILE``, e.g. main's echo.py) and to the stop
listener's endpointer, and counts the stretches of the hub's own voice that pass the check
(each would pause playback) and the user's that are taken for echo. A replay can change what
the microphone heard: ``--pause-at S --pause-ms MS`` pauses the output MS ms at S s into each
playback (an underrun: the echo after it comes later), ``--user TEXT --user-at S`` adds the
user saying TEXT (Piper, at ``--user-level``) S s into each playback after the first,
``--no-echo RMS`` replaces what was heard by noise of that RMS (0: silence) under the user's
speech: a device without an echo path.

    nice .venv/bin/python scripts/replay_stop_echo.py record DIR --seconds 60 --noise 300
    .venv/bin/python scripts/replay_stop_echo.py replay DIR... [--pause-at 1.0 --pause-ms 150]
    git show main:hub/service/echo.py > /tmp/main_echo.py
    .venv/bin/python scripts/replay_stop_echo.py replay DIR... --gate /tmp/main_echo.py
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import pickle
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "scripts")]

HOOK = """
import os, pickle, threading, time
import numpy as np
import hub.service.echo as _echo
import hub.service.stopword as _stop
_lock, _file = threading.Lock(), open(os.environ["HUB_ECHO_RECORD"], "wb")
def _dump(record):
    with _lock:
        pickle.dump(record, _file)
        _file.flush()
_played, _heard, _push = _echo.EchoGate.played, _echo.EchoGate.heard, _stop.StopListener.push
def played(self, pcm, rate=16000, channels=1):
    _dump(("p", time.monotonic(), bytes(pcm), rate, channels))
    return _played(self, pcm, rate, channels)
def heard(self, samples, at=None):
    _dump(("h", time.monotonic(), at, np.array(samples, np.int16)))
    return _heard(self, samples, at)
def push(self, block):
    _dump(("s", time.monotonic()))
    return _push(self, block)
_echo.EchoGate.played, _echo.EchoGate.heard, _stop.StopListener.push = played, heard, push
"""
"""The daemon's hook (a ``sitecustomize`` module on its ``PYTHONPATH``)."""
RATE = 16000


def record(folder: Path, argv: list[str]) -> None:
    """``measure_stop_echo.py argv`` with the hook writing ``folder/dump.pkl``."""
    import measure_stop_echo as measure

    folder.mkdir(parents=True, exist_ok=True)
    hook = Path(tempfile.mkdtemp(prefix="echo-hook-"))
    (hook / "sitecustomize.py").write_text(HOOK)
    extra = {"PYTHONPATH": f"{hook}:{ROOT}", "HUB_ECHO_RECORD": str(folder / "dump.pkl")}

    class Recorded(measure.TimedDaemon):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, extra_env=extra, **kwargs)

    measure.TimedDaemon = Recorded
    sys.argv = ["measure_stop_echo.py", *argv]
    measure.main()


def load(folder: Path) -> list[tuple]:
    """The records of ``folder/dump.pkl``, in order."""
    out = []
    with open(folder / "dump.pkl", "rb") as f:
        while True:
            try:
                out.append(pickle.load(f))
            except EOFError:
                return out


def playbacks(records: list[tuple], gap_s: float = 0.3) -> list[list[float]]:
    """[start, end] (s) of each playback: played blocks placed as the echo check places them."""
    spans: list[list[float]] = []
    until = -1.0
    for r in records:
        if r[0] == "p":
            start = max(until, r[1])
            if not spans or start > until + gap_s:
                spans.append([start, start])
            until = spans[-1][1] = start + len(r[2]) // 2 // r[4] / r[3]
    return spans


def change(records: list[tuple], args) -> tuple[list[tuple], list[tuple[float, float]]]:
    """The records with the heard audio changed as ``args`` say (see the module doc), and the
    (start, end) times of the user's speech added."""
    heard = [r for r in records if r[0] == "h"]
    stream = np.concatenate([r[3] for r in heard]).astype(np.float64)
    times = np.concatenate([r[2] - (len(r[3]) - np.arange(len(r[3]))) / RATE for r in heard])
    spans = playbacks(records)
    if args.pause_at is not None:
        pause = round(args.pause_ms * RATE / 1000)
        for start, end in spans:
            a, b = np.searchsorted(times, [start + args.pause_at, end + 1.0])
            if start + args.pause_at < end:
                stream[a:b] = np.concatenate([np.zeros(pause), stream[a:b]])[: b - a]
    if args.no_echo is not None:
        stream = np.random.default_rng(2).normal(0.0, args.no_echo, len(stream))
    said = []
    if args.user:
        from live_audio import synth

        speech = synth(args.user).astype(np.float64) * args.user_level
        for start, _end in spans[1:]:
            a = int(np.searchsorted(times, start + args.user_at))
            if a + len(speech) < len(stream):
                stream[a : a + len(speech)] += speech
                said.append((float(times[a]), float(times[a]) + len(speech) / RATE))
    stream = np.clip(stream, -32768, 32767).astype(np.int16)
    out, at = [], 0
    for r in records:
        if r[0] == "h":
            out.append((r[0], r[1], r[2], stream[at : at + len(r[3])]))
            at += len(r[3])
        else:
            out.append(r)
    return out, said


def gate_class(path: str | None):
    """``EchoGate`` of this checkout, or of the module file ``path``."""
    if path is None:
        from hub.service.echo import EchoGate

        return EchoGate
    spec = importlib.util.spec_from_file_location("replayed_echo", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.EchoGate


def replay(records: list[tuple], gate_cls) -> list[tuple[float, float, bool]]:
    """Each stretch the stop listener would cut: (end time, span s, judged echo)."""
    from hub.audio.endpoint import Endpointer

    now = [0.0]
    gate = gate_cls(0.7, 0.5, clock=lambda: now[0])
    span_arg = "span_s" in gate.is_echo.__code__.co_varnames
    endpointer, block, fed, out = None, None, True, []
    for r in records:
        now[0] = r[1]
        if r[0] == "p":
            gate.played(r[2], r[3], r[4])
        elif r[0] == "h":
            endpointer = endpointer if fed else None  # not fed: the listener was disarmed
            gate.heard(r[3], at=r[2])
            block, fed = r[3], False
        elif r[0] == "s":
            fed = True
            endpointer = endpointer or Endpointer(150, 2.5, RATE, preroll_s=0.3)
            if endpointer.push(block):
                audio, reason, endpointer = endpointer.audio(), endpointer.reason, None
                if audio.size and reason != "cap":
                    span = len(audio) / RATE
                    echo = gate.is_echo(span) if span_arg else gate.is_echo()
                    out.append((r[1], span, bool(echo)))
    return out


def main() -> int:
    """``record`` or ``replay`` (see the module doc); replay prints one JSON line."""
    if len(sys.argv) > 2 and sys.argv[1] == "record":
        record(Path(sys.argv[2]), sys.argv[3:])
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=["replay"])
    parser.add_argument("folders", nargs="+", type=Path)
    parser.add_argument("--gate", help="an echo.py to replay instead of this checkout's")
    parser.add_argument("--pause-at", type=float, help="output paused this far into playbacks")
    parser.add_argument("--pause-ms", type=float, default=150.0)
    parser.add_argument("--user", help="what the user says into each playback after the first")
    parser.add_argument("--user-at", type=float, default=1.0)
    parser.add_argument("--user-level", type=float, default=1.0)
    parser.add_argument("--no-echo", type=float, help="no echo path: noise of this RMS heard")
    args = parser.parse_args()
    counts = {"own_voice": 0, "own_voice_passed": 0, "user": 0, "user_taken_for_echo": 0}
    for folder in args.folders:
        records, said = change(load(folder), args)
        for end, span, echo in replay(records, gate_class(args.gate)):
            user = any(min(end, b) - max(end - span, a) > 0.2 for a, b in said)
            counts["user" if user else "own_voice"] += 1
            counts["user_taken_for_echo" if user else "own_voice_passed"] += echo == user
    print(json.dumps({"recordings": len(args.folders), **counts}))
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONWARNINGS", "ignore")
    sys.exit(main())
