"""``hub say``: synthesize text with the configured Piper voice into a wav file or stdout."""

from __future__ import annotations

import sys

from hub.errors import FatalError, TransientError
from hub.intents.utterance import not_text
from hub.settings import load_settings


def add_parsers(sub, *, common, inject, store) -> None:
    """Register ``say``."""
    p = sub.add_parser(
        "say",
        help="synthesize TEXT into a wav file",
        description="Synthesize TEXT with the configured Piper voice "
        "(normalized: numbers, times, units). '--out -' streams to stdout.",
    )
    common(p)
    p.add_argument(
        "text", metavar="TEXT", nargs="+", help="what to say (quoted or not: words are joined)"
    )
    p.add_argument("--out", metavar="FILE.wav", required=True, help="output wav, or - for stdout")
    p.set_defaults(func=run_say)


def run_say(args) -> int:
    """Write the speech of ``args.text`` to ``args.out``: 0 on success; 2 (one line on stderr,
    nothing written) when TEXT has nothing to say or the voice is missing or unloadable."""
    if isinstance(args.text, list):
        args.text = " ".join(args.text)
    # lazy: hub --help imports every command's module; this loads only when the command runs
    from hub.audio.wav import write_wav

    # lazy: hub --help imports every command's module; this loads only when the command runs
    from hub.tts.piper import make_tts
    from hub.tts.textnorm import speakable

    problem = not_text(args.text)
    if problem:  # as hub ask: undecodable bytes or control characters are no text to say
        print(f"hub: nothing to say: TEXT is {problem}", file=sys.stderr)
        return 2
    settings = load_settings(args.config, warn_no_home=False)
    if not speakable(args.text):
        print("hub: nothing to say: TEXT has no letters or digits", file=sys.stderr)
        return 2
    try:
        tts = make_tts(settings.tts)
    except FatalError as exc:  # the voice is missing or broken: the user's to fix (exit 2)
        print(f"hub: {exc.message}", file=sys.stderr)
        return 2
    chunks = tts.synthesize(args.text)
    if args.out == "-":
        try:
            write_wav(chunks, sys.stdout.buffer, tts.rate)
        except TransientError:  # the reader went away (| head): not an error of ours
            return 0
    else:
        frames = write_wav(chunks, args.out, tts.rate)
        print(f"hub: wrote {args.out} ({frames / tts.rate:.1f} s)", file=sys.stderr)
    return 0
