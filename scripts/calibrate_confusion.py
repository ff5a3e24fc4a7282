"""Calibrate ``asr.confusion_margin``: the acoustic margin of each contested command reading.

For every wav (file name = what was said, as in shared/audio), the whole file is decoded as
one segment with the home's grammar; when the reading is an accepted command with
competitors (:func:`hub.asr.confusion.competitors`: on/off, open/close, numbers, ...), the
margin of the reading over its closest competitor is printed with whether the reading gives
the intent and slots of what was said. Choose the threshold on synthetic sets only
(``scripts/make_asr_calibration.py --swaps 90 --out DIR``), never on the test recordings.

Usage::

    .venv/bin/python scripts/calibrate_confusion.py DIR [DIR ...]
"""

from __future__ import annotations

import dataclasses
import json
import sys
import wave
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hub.asr import make_asr_engine
from hub.asr.confusion import competitors, extra_margin, grammar_text, margin
from hub.asr.coverage import fsg_accepts
from hub.asr.pocketsphinx_engine import decode_segment
from hub.home import Home
from hub.intents.rules import Rules
from hub.settings import load_settings


def key(match):
    return None if match is None else (match.intent, json.dumps(match.slots, sort_keys=True))


def main(argv: list[str]) -> int:
    settings = load_settings()
    asr = dataclasses.replace(settings.asr, engine="pocketsphinx", confusion_margin=None)
    engine = make_asr_engine(asr, settings.home)
    rules = Rules(Home.from_settings(settings.home), settings.intents)
    grammar = grammar_text(engine.vocab.fsg_path)
    rows = []
    for path in sorted(p for d in argv for p in Path(d).glob("*.wav")):
        with wave.open(str(path)) as wav:
            audio = wav.readframes(wav.getnframes())
        seg = decode_segment(engine, audio)
        if seg.rejected or not seg.text or engine.is_question(seg.text):
            continue
        rivals = competitors(seg.text, seg.alternatives, lambda w: fsg_accepts(grammar, w))
        with engine.lock:
            mean = engine.passes.mean(audio)
            value = margin(
                lambda t, a=audio, m=mean: engine.passes.align(a, m, t), seg.text, rivals
            )
        if value is None:
            continue
        said = path.stem
        right = not said.startswith("oov_") and key(rules.recognize(seg.text)) == key(
            rules.recognize(said)
        )
        rows.append((value, right))
        print(
            json.dumps(
                {
                    "said": said,
                    "heard": seg.text,
                    "margin": round(value, 1),
                    "right": right,
                    "rivals": rivals,
                    "on_off": any(extra_margin(seg.text, r) for r in rivals),
                }
            )
        )
    for threshold in (0, 10, 20, 30):
        wrong = sum(not r and v >= threshold for v, r in rows)
        asked = sum(r and v < threshold for v, r in rows)
        print(
            f"margin {threshold}: wrong readings acted on {wrong}/{sum(not r for _, r in rows)}"
            f", right readings asked back {asked}/{sum(r for _, r in rows)}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
