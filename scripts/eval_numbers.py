"""Numbers said in commands: how often a misheard number is acted on, asked back, or right.

Makes (``--make``) a set of number commands, the same on every run (:data:`TEMPLATES`:
durations, percentages, a temperature, the volume, clock times; -teen/-ty pairs and other
numbers), each spoken by the hub's Piper voice (``hub say``'s path) and by espeak-ng, at
:data:`VARIANTS` (tempo and level through sox, 16 kHz mono int16), then runs ``hub replay``
on them (and on any other folders given, whose file names are what was said, as in
shared/audio) with one fresh store (so the fingerprint cache is exercised: a clip may be
answered from an earlier one's transcript) and counts per clip:

- ``right``: the intent and slots of what was said, not asked back (done, or a read);
- ``asked``: asked back ("Do you want me to ...?"), nothing done; ``asked_wrong`` counts the
  questions that name another reading than what was said;
- ``wrong``: another intent or other slots than what was said carried out (an ``oov_*``
  file: any command carried out);
- ``missed``: nothing done and nothing asked ("didn't catch", not understood).

The reference of a sentence is the rules' match of its text (``hub ask --no-llm``). Usage::

    .venv/bin/python scripts/eval_numbers.py [--make] [--no-llm] [--verbose] SET [DIR ...]

``--make`` (re)creates the set in SET first; without it, SET must already hold it
(``SET/<variant>/<sentence>.wav``). Prints the wrong and asked-wrong clips (every clip with
``--verbose``), then a Markdown table per folder (BENCHMARKS.md, "Numbers said in commands").
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hub.home import Home
from hub.intents.rules import Rules
from hub.settings import load_settings

TEMPLATES = {
    "set a timer for {} minutes": (13, 30, 14, 40, 15, 50, 16, 60, 17, 70, 18, 80, 19, 90, 5, 25),
    "start a timer for {} seconds": (40, 14, 90, 20),
    "set the bed light brightness to {} percent": (30, 13, 60, 16, 80, 18, 75, 50),
    "set the kitchen light to {} percent": (60, 15, 50, 90, 19, 40),
    "remind me to call mum in {} minutes": (70, 17, 50, 15, 30, 13, 40),
    "turn off the kitchen light in {} minutes": (14, 40, 16, 60, 20),
    "set an alarm for 7:{} am": (15, 50, 13, 30, 14, 40),
    "set the volume to {}": (70, 17, 30, 13, 45),
    "open the sliding door to {} percent": (30, 13, 80, 18),
    "set the temperature to {} degrees": (16, 17, 18, 19, 20, 21, 22),
}
"""Sentence templates and the numbers said in them (``{}``)."""

VARIANTS = {
    "piper": ("piper", 1.0, ("0",)),
    "piper-fast-quiet": ("piper", 1.15, ("-12",)),
    "espeak": ("espeak", 1.0, ("0",)),
    "espeak-slow-loud": ("espeak-slow", 0.9, ("-n", "-2")),
}
"""Name -> (voice, sox tempo, sox ``gain`` arguments: dB, or ``-n -2``: normalized to -2 dBFS)."""

CLOCK_CHECK = ('clock_check = "adjtimex"', 'clock_check = "off"')
"""Changed in the example config: clock-time alarms are set even when the machine's clock is
not synchronized (this container's is not, which would refuse them all)."""


def sentences() -> list[str]:
    """Every sentence of the set (the number as digits)."""
    return [t.format(n) for t, numbers in TEMPLATES.items() for n in numbers]


def _file_name(text: str) -> str:
    return text.replace(":", " ")  # what was said; "7:15" is "7 15" in the grammar's words


def make(out: Path) -> None:
    """Synthesize the set into ``out`` (``<variant>/<sentence>.wav``)."""
    # lazy: only --make needs the voice
    from hub.audio.wav import write_wav
    from hub.tts.piper import make_tts

    tts = make_tts(load_settings(None, warn_no_home=False).tts)
    with tempfile.TemporaryDirectory() as tmp:
        for text in sentences():
            raw = {"piper": Path(tmp) / "piper.wav", "espeak": Path(tmp) / "espeak.wav"}
            write_wav(tts.synthesize(text), raw["piper"], tts.rate)
            subprocess.run(["espeak-ng", "-v", "en-us", "-w", raw["espeak"], text], check=True)
            raw["espeak-slow"] = Path(tmp) / "espeak-slow.wav"
            subprocess.run(
                ["espeak-ng", "-v", "en-us+m3", "-s", "150", "-w", raw["espeak-slow"], text],
                check=True,
            )
            for variant, (voice, tempo, gain) in VARIANTS.items():
                dest = out / variant / f"{_file_name(text)}.wav"
                dest.parent.mkdir(parents=True, exist_ok=True)
                effects = ["tempo", str(tempo)] if tempo != 1.0 else []
                subprocess.run(
                    ["sox", raw[voice], "-r", "16000", "-c", "1", "-b", "16", dest,
                     *effects, "gain", *gain],
                    check=True,
                )  # fmt: skip


def replay(paths: list[Path], no_llm: bool) -> list[dict]:
    """``hub replay`` traces of ``paths`` (folders), one fresh store for all of them."""
    with tempfile.TemporaryDirectory() as tmp:
        config = Path(tmp) / "hub.toml"
        example = subprocess.run(
            [sys.executable, "-m", "hub", "config", "example"], capture_output=True, text=True
        ).stdout
        config.write_text(example.replace(*CLOCK_CHECK), encoding="utf-8")
        command = [sys.executable, "-m", "hub", "replay", "--config", str(config)]
        command += ["--store", str(Path(tmp) / "store.db"), "--out", str(Path(tmp) / "replies")]
        command += ["--no-llm"] if no_llm else []
        run = subprocess.run(
            [*command, *map(str, paths)], capture_output=True, text=True, check=False
        )
    if run.returncode not in (0, 2):
        sys.exit(f"hub replay failed ({run.returncode}): {run.stderr[-2000:]}")
    lines = [json.loads(line) for line in run.stdout.splitlines() if line.startswith("{")]
    return [t for t in lines if "event" not in t]


SAME = (("mum", "mom"), ("lights", "light"))
"""Words a slot may hold either way for the same command (a reminder to "call mum" or "call
mom"; a delayed "turn off the kitchen lights" or "... light")."""


def key(intent, slots) -> tuple | None:
    """What a turn does: its intent and slots (the duration's seconds left out: its parts say
    it; :data:`SAME` words folded)."""
    if intent is None:
        return None
    kept = {k: v for k, v in (slots or {}).items() if k != "duration_s"}
    text = json.dumps(kept, sort_keys=True, default=str).lower()
    for word, same in SAME:
        text = text.replace(word, same)
    return intent, text


def outcome(trace: dict, expected: tuple | None) -> str:
    """``right``, ``asked``, ``asked_wrong``, ``wrong`` or ``missed`` (see the module doc);
    ``expected``: the key of what was said, None for no command (``oov_*``)."""
    got = key(trace.get("intent"), trace.get("slots"))
    if (trace.get("response") or "").startswith("Do you want me to"):
        return "asked" if got == expected else "asked_wrong"  # the trace holds what is asked
    if expected is None:
        return "wrong" if trace.get("acted") else "right"
    if got == expected:
        return "right"
    return "wrong" if trace.get("acted") else "missed"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("set", type=Path, help="the number set's folder")
    parser.add_argument("others", type=Path, nargs="*", help="more folders (names = said)")
    parser.add_argument("--make", action="store_true", help="synthesize the set first")
    parser.add_argument("--no-llm", action="store_true", help="replay without the LLM")
    parser.add_argument("--verbose", action="store_true", help="one line per clip")
    args = parser.parse_args(argv)
    if args.make:
        make(args.set)
    settings = load_settings(None, warn_no_home=False)
    rules = Rules(Home.from_settings(settings.home), settings.intents)
    folders = [p for p in sorted(args.set.iterdir()) if p.is_dir()] + args.others
    traces = replay(folders, args.no_llm)
    table: dict[str, Counter] = {}
    for trace in traces:
        path = Path(trace["file"])
        said = path.stem
        expected = None
        if not said.startswith("oov_"):
            match = rules.recognize(said)
            expected = None if match is None else key(match.intent, match.slots)
        group = path.parent.name
        result = outcome(trace, expected)
        table.setdefault(group, Counter())[result] += 1
        if args.verbose or result in ("wrong", "asked_wrong"):
            print(f"{result:11} {group}/{said} | {trace.get('transcript')!r} | "
                  f"{trace.get('response')!r} | {trace.get('source')}")  # fmt: skip
    columns = ("right", "asked", "asked_wrong", "wrong", "missed")
    print("| set | clips | " + " | ".join(columns) + " |")
    print("|---|---|" + "---|" * len(columns))
    total: Counter = Counter()
    for group, counts in table.items():
        total.update(counts)
        row = " | ".join(str(counts[c]) for c in columns)
        print(f"| {group} | {sum(counts.values())} | {row} |")
    print(f"| all | {sum(total.values())} | " + " | ".join(str(total[c]) for c in columns) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
