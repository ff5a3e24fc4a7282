"""``hub replay`` (wav files through the turn graph) and ``hub ask`` (text through it).

One JSON trace line per input on stdout; progress and errors on stderr.
"""

from __future__ import annotations

import json
import logging
import sys
import threading
import time
from pathlib import Path

from hub.act import timer_out
from hub.core.replay import answer_names, expand_paths, make_hub, replay_file
from hub.errors import BadInputError, HubError

log = logging.getLogger("hub.cli.replay")


def add_parsers(sub, *, common, inject, store) -> None:
    """Register ``replay`` and ``ask``."""
    p = sub.add_parser("replay", help="run recorded wav files through the pipeline",
                       description="Run wav files (or every .wav in a folder, sorted) through "
                       "the same turn graph as the microphone. Prints one JSON trace line per "
                       "file; writes each spoken answer as OUT/<name>.wav.")
    common(p)
    inject(p)
    store(p)
    p.add_argument("paths", nargs="+", metavar="PATH", help="wav files or folders")
    p.add_argument("--out", metavar="DIR", default="replies",
                   help="folder for the answer wavs (default: ./replies)")
    p.add_argument("--no-audio", action="store_true", help="do not synthesize answers")
    p.add_argument("--realtime", action="store_true",
                   help="feed audio at real speed into streaming ASR, as a microphone would")
    p.add_argument("--engine", choices=("auto", "vosk", "pocketsphinx"),
                   help="ASR engine (default: [asr] engine)")
    p.add_argument("--no-llm", action="store_true",
                   help="rules only: no local language model for this run")
    p.set_defaults(func=run_replay)

    p = sub.add_parser("ask", help="run a text utterance through the pipeline",
                       description="Run TEXT as if it had been said. With '-', read one "
                       "utterance per line from stdin and print one JSON line each.")
    common(p)
    inject(p)
    store(p)
    p.add_argument("text", metavar="TEXT|-", help="what was said, or - for stdin lines")
    p.add_argument("--json", action="store_true", help="print the whole trace as JSON")
    p.add_argument("--out", metavar="DIR", help="also synthesize each answer into DIR")
    p.add_argument("--no-llm", action="store_true",
                   help="rules only: no local language model for this run")
    p.set_defaults(func=run_ask)






_OUT = threading.Lock()  # traces and timer events come from two threads


def _emit(trace: dict) -> None:
    with _OUT:
        sys.stdout.write(json.dumps(trace, ensure_ascii=False) + "\n")
        sys.stdout.flush()


def _progress(i: int, n: int, trace: dict) -> None:
    if not sys.stderr.isatty():
        return
    what = trace["intent"] or trace["status"]
    sys.stderr.write(f"\r[{i}/{n}] {Path(trace['file'] or '').name[:40]:40} {what:24}")
    sys.stderr.flush()








def run_replay(args) -> int:
    """``hub replay``: exit 2 when any file was unreadable, else 0."""
    paths = expand_paths(args.paths)
    if not paths:
        print("hub: no wav files in " + ", ".join(args.paths), file=sys.stderr)
        return 2
    hub = make_hub(args, "replay", speak=not args.no_audio)
    # The LLM loads on the first turn that needs it: most replays never do, and it costs memory.
    hub.engines.warm(["asr", "rules", "devices"] + ([] if args.no_audio else ["tts"]))
    if hub.settings.asr.engine != "auto" and not hub.engines.loaded("asr"):
        print(f"hub: asr.engine {hub.settings.asr.engine} cannot be used (see the warning "
              "above)", file=sys.stderr)
        return 2
    out_dir = None if args.no_audio else Path(args.out)
    if out_dir is not None and out_dir.exists() and not out_dir.is_dir():
        print(f"hub: --out {out_dir} exists and is not a folder", file=sys.stderr)
        return 2
    timer_out.print_events(hub, out_dir, _emit)
    counts: dict[str, int] = {}
    for i, (path, name) in enumerate(zip(paths, answer_names(paths)), 1):
        trace = replay_file(hub, path, out_dir, args.realtime, name)
        counts[trace["status"]] = counts.get(trace["status"], 0) + 1
        _emit(trace)
        _progress(i, len(paths), trace)
    timer_out.finish(hub)
    summary = ", ".join(f"{v} {k}" for k, v in sorted(counts.items()))
    noun = "file" if len(paths) == 1 else "files"
    print(("\n" if sys.stderr.isatty() else "") + f"hub: {len(paths)} {noun}: {summary}",
          file=sys.stderr)
    return 2 if counts.get("bad_input") else 0


def run_ask(args) -> int:
    """``hub ask``: one utterance, or one per stdin line with ``-``."""
    hub = make_hub(args, "ask", speak=bool(args.out))
    hub.engines.warm(["rules"] + (["tts"] if args.out else []))
    out_dir = Path(args.out) if args.out else None
    if args.text == "-":
        timer_out.print_events(hub, out_dir, _emit)
        for n, line in enumerate(sys.stdin, 1):
            line = line.encode("utf-8", "replace").decode("utf-8")  # undecodable bytes
            if line.strip():
                out = str(out_dir / f"ask-{n:04d}.wav") if out_dir else None
                _emit(hub.turn_text(line.strip(), out_path=out))
        timer_out.finish(hub)  # timers up within [timers] exit_grace_s still ring
        return 0
    if not args.text.strip():
        print("hub: nothing to ask: TEXT is empty", file=sys.stderr)
        return 2
    out = str(out_dir / "ask.wav") if out_dir else None
    trace = hub.turn_text(args.text, out_path=out)
    if args.json:
        _emit(trace)
    else:
        print(trace["response"])
    return 0
