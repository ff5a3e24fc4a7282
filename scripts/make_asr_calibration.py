"""Synthesize the ASR calibration set (never the test set in shared/audio).

In-grammar commands are random walks through the home's recognizer grammar (``grammar.fsg``)
that the rules turn into an intent and that are not a file name of shared/audio;
out-of-grammar speech is :data:`OOV_SENTENCES` (chit-chat, questions, long sentences,
commands this home cannot do), each checked to give no intent. Every sentence is spoken by
espeak-ng (several voices and speeds) or Piper joe (varied ``length_scale``/noise), then sox
makes a 16 kHz mono 16-bit file with a random room: reverb, background noise at 10-30 dB SNR,
band limiting, gain, and sometimes a short click before the speech (a button or mic bump).
File names are what was said (``oov_`` prefix for out-of-grammar), as in shared/audio, so
``scripts/eval_asr.py DIR`` scores them. Seeded: the same set comes out every run.

Usage::

    .venv/bin/python scripts/make_asr_calibration.py [--out DIR] [--commands 70] [--seed 7]
"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hub.asr.vocab import build_vocab
from hub.home import Home
from hub.intents.rules import Rules
from hub.settings import load_settings

OOV_SENTENCES = (
    "play some jazz in the living room",
    "how are you doing today",
    "tell me a joke",
    "what is the capital of france",
    "who won the football game last night",
    "remind me to call my mother tomorrow",
    "order a large pizza with mushrooms",
    "what does the fox say",
    "i think we should go to the beach this weekend",
    "can you recommend a good book",
    "turn on the sprinklers in the garden",
    "add thirty seconds to the timer",
    "open the bedroom curtains",
    "play the next episode",
    "call the plumber",
    "lock the back gate",
    "set the oven to two hundred degrees",
    "start the dishwasher",
    "feed the cat",
    "how tall is mount everest",
    "thank you very much",
    "good morning",
    "my favorite color is blue but my sister likes green",
    "yesterday i went to the store and bought some bread and milk and eggs",
    "the quick brown fox jumps over the lazy dog",
    "when does the train to boston leave in the morning",
    "i am not sure what you mean by that",
    "please spell the word necessary",
    "turn up the heat in the basement",
    "vacuum the living room floor",
    "show me pictures of my holiday",
    "send a message to john saying i will be late",
    "how many ounces are in a pound",
    "what movies are playing tonight",
    "close the garage in the attic",
    "dim the porch lamp",
    "set an alarm for seven",
    "it was a dark and stormy night and the wind was howling through the trees",
    "could you check whether the package arrived",
    "translate good night into spanish",
    "let's listen to the radio",
    "what is the meaning of life",
    "start the car",
    "make me a coffee",
)
"""Out-of-grammar speech: none of it is a command the home's rules accept."""

SHORT_OOV = (
    "hello",
    "okay",
    "thanks",
    "what",
    "banana",
    "help",
    "louder",
    "hey there",
    "go away",
    "good night",
    "maybe later",
    "open sesame",
    "turn around",
    "lights",
    "the door",
    "coffee",
    "weather",
    "hmm",
    "oh well",
    "right",
    "start",
    "switch",
    "play",
    "hurry up",
    "wait",
)
"""Out-of-grammar one- and two-word speech: short utterances fit any short grammar word."""

SHORT_COMMANDS = (
    "stop",
    "yes",
    "no",
    "sure",
    "cancel",
    "never mind",
    "skip",
    "pause",
    "resume the TV",
    "next song",
    "pause the TV",
    "stop the timer",
    "cancel the timer",
    "skip song",
    "unpause",
    "yeah",
    "do it",
    "timer status",
    "pause music",
    "resume music",
    "next track on the TV",
)
"""Short in-grammar speech (kept only when the grammar and the rules or the turn take it)."""

ESPEAK_VOICES = ("en-us+m3", "en-us+f2", "en-us+m7", "en+m1", "en-us+f4", "en-us")


def fsg_walks(fsg: Path, count: int, rng: random.Random) -> list[str]:
    """``count`` random walks from the start to the final state of a Sphinx FSG file."""
    arcs: dict[int, list[tuple[int, str]]] = {}
    start = final = 0
    for line in fsg.read_text(encoding="utf-8").splitlines():
        parts = line.split()
        if parts[:1] == ["START_STATE"]:
            start = int(parts[1])
        elif parts[:1] == ["FINAL_STATE"]:
            final = int(parts[1])
        elif parts[:1] == ["TRANSITION"]:
            arcs.setdefault(int(parts[1]), []).append((int(parts[2]), parts[4]))
    walks = []
    for _ in range(count):
        state, words = start, []
        while state != final:
            state, word = rng.choice(arcs[state])
            words.append(word)
        walks.append(" ".join(words))
    return walks


def commands(settings, rules: Rules, count: int, rng: random.Random, exclude: set) -> list:
    """In-grammar sentences the rules match, one per intent in turn for variety."""
    vocab = build_vocab(settings.home)
    by_intent: dict[str, list[str]] = {}
    for text in fsg_walks(vocab.fsg_path, count * 40, rng):
        match = rules.recognize(text)
        if match is not None and text not in exclude:
            by_intent.setdefault(match.intent, []).append(text)
    pools = [list(dict.fromkeys(texts)) for texts in by_intent.values()]
    chosen: list[str] = []
    while len(chosen) < count and any(pools):
        for pool in pools:
            if pool and len(chosen) < count:
                chosen.append(pool.pop(0))
    return chosen


def swap_commands(settings, rules: Rules, count: int, rng: random.Random, exclude: set) -> list:
    """In-grammar commands holding an action-changing word (:data:`hub.asr.confusion.SWAPS`:
    on/off, open/close, ...), spread over those words, to calibrate the confusion margin."""
    from hub.asr.confusion import SWAPS

    swaps = {w for pair in SWAPS for w in pair}
    vocab = build_vocab(settings.home)
    by_word: dict[str, list[str]] = {}
    for text in fsg_walks(vocab.fsg_path, count * 200, rng):
        hits = swaps.intersection(text.split())
        if (
            len(hits) == 1
            and text not in exclude
            and "&" not in text
            and rules.recognize(text) is not None
        ):
            by_word.setdefault(hits.pop(), []).append(text)
    pools = [list(dict.fromkeys(texts)) for _, texts in sorted(by_word.items())]
    chosen: list[str] = []
    while len(chosen) < count and any(pools):
        for pool in pools:
            if pool and len(chosen) < count:
                chosen.append(pool.pop(rng.randrange(len(pool))))
    return chosen


def short_commands(settings, exclude: set) -> list[str]:
    """:data:`SHORT_COMMANDS` that the home's grammar holds, minus the test set's names."""
    from hub.asr.coverage import fsg_accepts

    fsg = build_vocab(settings.home).fsg_path.read_text(encoding="utf-8")
    return [
        t
        for t in SHORT_COMMANDS
        if t.lower() not in exclude and fsg_accepts(fsg, t.lower().split())
    ]


def speak(text: str, out: Path, rng: random.Random, piper_voice: Path) -> None:
    """Synthesize ``text`` into ``out`` (any wav) with a random voice."""
    spoken = text.replace(" tv", " TV")
    if rng.random() < 0.5:
        subprocess.run(
            [
                "espeak-ng",
                "-v",
                rng.choice(ESPEAK_VOICES),
                "-s",
                str(rng.randint(130, 185)),
                "-w",
                str(out),
                spoken,
            ],
            check=True,
        )
    else:
        subprocess.run(
            [
                sys.executable,
                "-m",
                "piper",
                "-m",
                str(piper_voice),
                "-f",
                str(out),
                "--length-scale",
                f"{rng.uniform(0.8, 1.25):.2f}",
                "--noise-scale",
                f"{rng.uniform(0.5, 0.9):.2f}",
                "--noise-w-scale",
                f"{rng.uniform(0.6, 1.0):.2f}",
            ],
            input=spoken,
            text=True,
            check=True,
            capture_output=True,
        )


MONO16 = ("-r", "16000", "-c", "1", "-b", "16")
"""sox's output format options: 16 kHz, mono, 16-bit."""


def sox(*args) -> None:
    """Run ``sox`` with ``args`` (paths or strings); raises CalledProcessError on failure."""
    subprocess.run(["sox", *map(str, args)], check=True, capture_output=True)


def seconds(wav: Path) -> float:
    """The length of ``wav`` (``soxi -D``)."""
    done = subprocess.run(["soxi", "-D", wav], capture_output=True, text=True, check=True)
    return float(done.stdout)


def noise(out: Path, length_s: float, colour: str, volume: str, *effects: str) -> None:
    """``length_s`` of ``colour`` noise (``pinknoise`` ...) at ``volume``, then ``effects``."""
    sox("-n", *MONO16, out, "synth", f"{length_s:.3f}", colour, "vol", volume, *effects)


def room(dry: Path, out: Path, rng: random.Random, tmp: Path) -> None:
    """``dry`` in a random room: 16 kHz mono, reverb, band limit, noise, maybe a click."""
    clean = tmp / "clean.wav"
    sox(
        dry,
        *MONO16,
        clean,
        "pad",
        f"{rng.uniform(0.2, 0.6):.2f}",
        f"{rng.uniform(0.6, 1.2):.2f}",
        "reverb",
        str(rng.randint(10, 60)),
        "highpass",
        str(rng.randint(80, 200)),
        "lowpass",
        str(rng.randint(3800, 7500)),
        "norm",
        f"-{rng.randint(3, 15)}",
    )
    hiss = tmp / "noise.wav"
    colour = rng.choice(["pinknoise", "brownnoise", "whitenoise"])
    noise(hiss, seconds(clean), colour, f"{10 ** (-(rng.uniform(10, 30) + 12) / 20):.5f}")
    if rng.random() < 0.35:
        click = tmp / "click.wav"
        noise(
            click,
            rng.uniform(0.02, 0.12),
            "whitenoise",
            "0.3",
            "pad",
            "0",
            f"{rng.uniform(0.1, 0.3):.2f}",
        )
        joined = tmp / "joined.wav"
        sox(click, clean, joined)
        clean = joined
        noise(hiss, seconds(clean), "pinknoise", "0.01")
    sox("-m", clean, hiss, "-b", "16", out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=Path("/tmp/hub-asr-calibration"))
    parser.add_argument("--commands", type=int, default=70)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--swaps",
        type=int,
        default=0,
        help="only this many commands with an on/off-like word (no oov)",
    )
    parser.add_argument(
        "--short", action="store_true", help="add the short commands and short oov phrases"
    )
    parser.add_argument("--settings", default=None, help="hub.toml with the home")
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    settings = load_settings(args.settings)
    rules = Rules(Home.from_settings(settings.home), settings.intents)
    shared = Path(__file__).resolve().parents[2] / "shared" / "audio"
    exclude = {p.stem.lower() for p in shared.glob("*/*.wav")}
    oov = [
        t for t in OOV_SENTENCES + (SHORT_OOV if args.short else ()) if rules.recognize(t) is None
    ]
    short = short_commands(settings, exclude) if args.short else []
    sentences = (
        commands(settings, rules, args.commands, rng, exclude) + short + [f"oov_{t}" for t in oov]
    )
    if args.swaps:
        oov, sentences = [], swap_commands(settings, rules, args.swaps, rng, exclude)
    from hub.tts.piper import default_voice_paths  # the joe voice of the piper wheel

    piper_voice = default_voice_paths()[0]
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        for text in sentences:
            speak(text.removeprefix("oov_"), tmp / "dry.wav", rng, piper_voice)
            room(tmp / "dry.wav", args.out / f"{text}.wav", rng, tmp)
    print(f"{len(sentences) - len(oov)} commands + {len(oov)} oov -> {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
