"""``hub replay`` (wav files through the turn graph) and ``hub ask`` (text through it).

One JSON trace line per input on stdout; progress and errors on stderr.
"""

from __future__ import annotations

import json
import logging
import sys
import threading
from pathlib import Path

from hub.cli.args import answer_names, expand_paths, make_hub
from hub.cli.summary import score_lines, summary_line
from hub.errors import BadInputError, HubError
from hub.intents.score import OOV_RULE, read_expect
from hub.intents.utterance import MAX_TEXT_CHARS, text_problem

log = logging.getLogger("hub.cli.replay")


def add_parsers(sub, *, common, inject, store) -> None:
    """Register ``replay`` and ``ask``; ``common``, ``inject``, ``store`` add the options
    every command shares (``hub.cli.args``)."""

    def shared(p) -> None:
        common(p)
        inject(p)
        store(p)

    _add_replay(sub, shared)
    _add_ask(sub, shared)


def _add_replay(sub, shared) -> None:
    """The ``replay`` parser: ``shared(p)`` first, then its own arguments."""
    p = sub.add_parser(
        "replay",
        help="run recorded wav files through the pipeline",
        description="Run wav files (or a folder's audio files, sorted) through "
        "the same turn graph as the microphone. Prints one JSON trace line per "
        "file (a folder's non-WAV audio, e.g. .flac or .mp3, gets one 'unsupported' "
        "line each; only WAV is read); writes each spoken answer as OUT/<name>.wav. "
        "Timers, alarms and reminders a file sets live only while this replay runs: they are not "
        "stored (nor are stored ones restored), so they never ring in `hub run`.",
    )
    shared(p)
    p.add_argument("paths", nargs="+", metavar="PATH", help="wav files or folders")
    p.add_argument(
        "--out",
        metavar="DIR",
        default="replies",
        help="folder for the answer wavs (default: ./replies)",
    )
    p.add_argument("--no-audio", action="store_true", help="do not synthesize answers")
    p.add_argument(
        "--realtime",
        action="store_true",
        help="feed audio at real speed into streaming ASR, as a microphone would",
    )
    p.add_argument(
        "--engine",
        choices=("auto", "vosk", "pocketsphinx"),
        help="ASR engine (default: [asr] engine)",
    )
    p.add_argument(
        "--no-llm", action="store_true", help="rules only: no local language model for this run"
    )
    said = p.add_mutually_exclusive_group()  # --score and --expect both say what was said
    said.add_argument(
        "--score",
        action="store_true",
        help=f"file names are what was said: print the accuracy and each miss; {OOV_RULE}",
    )
    said.add_argument(
        "--expect",
        metavar="FILE",
        help="what was said per file (NAME<TAB>SENTENCE lines): print the accuracy",
    )
    p.set_defaults(func=run_replay)


def _add_ask(sub, shared) -> None:
    """The ``ask`` parser: ``shared(p)`` first, then its own arguments."""
    p = sub.add_parser(
        "ask",
        help="run a text utterance through the pipeline",
        description="Run TEXT as if it had been said. With '-', read one "
        "utterance per line from stdin and print one JSON line each. A line longer than "
        f"{MAX_TEXT_CHARS} characters or with control characters (binary input) is no "
        "utterance: one line on stderr, skipped, and the exit code is 2.",
    )
    shared(p)
    p.add_argument(
        "text",
        metavar="TEXT",
        nargs="+",
        type=str,
        help="what was said (quoted or not: the words are joined), or - for stdin lines",
    )
    p.add_argument("--json", action="store_true", help="print the whole trace as JSON")
    p.add_argument(
        "--out",
        metavar="DIR",
        help="also synthesize each answer into DIR: DIR/ask.wav for TEXT; with '-', "
        "DIR/ask-NNNN.wav numbered like its stdin line (ask-0003.wav for line 3), "
        "timer alerts as DIR/timer-finished-ID.wav",
    )
    p.add_argument(
        "--no-llm", action="store_true", help="rules only: no local language model for this run"
    )
    p.set_defaults(func=run_ask)


def llm_warm(hub, entry: str) -> list[str]:
    """``["llm"]`` when the LLM is on for ``entry`` (``[llm] intents_on``/``answers_on``)."""
    llm = hub.settings.llm
    return ["llm"] if entry in llm.intents_on or entry in llm.answers_on else []


def _valid_text(value):
    """A string made valid UTF-8 (a non-UTF-8 file name's bytes shown as U+FFFD)."""
    if isinstance(value, str):
        return value.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    return value


_OUT = threading.Lock()  # traces and timer events come from two threads


def _emit(trace: dict) -> None:
    """One trace (or event) as one JSON line on stdout (valid UTF-8 whatever the file names)."""
    trace = {k: _valid_text(v) if k in ("file", "audio") else v for k, v in trace.items()}
    with _OUT:
        sys.stdout.write(json.dumps(trace, ensure_ascii=False) + "\n")
        sys.stdout.flush()


def _progress(i: int, n: int, trace: dict) -> None:
    if not sys.stderr.isatty():
        return
    what = trace["intent"] or trace["status"]
    sys.stderr.write(f"\r[{i}/{n}] {Path(trace['file'] or '').name[:40]:40} {what:24}")
    sys.stderr.flush()


def _sentences(args, paths: list[Path]) -> dict[str, str | None]:
    """What was said in each file, for ``--score`` (its name) or ``--expect FILE``."""
    if args.expect:
        try:
            table = read_expect(Path(args.expect))
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            why = getattr(exc, "strerror", None) or exc
            raise BadInputError(f"--expect {args.expect}: {why}") from exc
        return {str(p): table.get(p.name, table.get(p.stem)) for p in paths}
    if args.score:
        return {str(p): p.stem for p in paths}
    return {}


def run_replay(args) -> int:
    """``hub replay``: exit 2 when any file was unreadable, else 0."""
    paths = expand_paths(args.paths)
    if not paths:
        print("hub: no audio files in " + ", ".join(args.paths), file=sys.stderr)
        return 2
    from hub.act import timer_out  # lazy: hub --help loads no engine part (act, audio)
    from hub.core.replay import replay_file  # lazy: numpy (audio) is not for hub --help

    sentences = _sentences(args, paths)
    hub = make_hub(args, "replay", speak=not args.no_audio)
    # Every engine a turn may need, the LLM's prompt cache included, is ready before the first.
    # The LLM first and alone: its cache is built (or read) and the model freed until a file
    # needs it, so it never adds to the other engines' memory at start (peak RSS).
    hub.engines.warm(llm_warm(hub, "replay"))
    hub.engines.warm(["asr", "rules", "devices"] + ([] if args.no_audio else ["tts"]))
    if hub.settings.asr.second_pass:  # its model too: a load in the first rejected turn is late
        _preload_second_pass(hub)
    if hub.settings.asr.engine != "auto" and not hub.engines.loaded("asr"):
        print(
            f"hub: asr.engine {hub.settings.asr.engine} cannot be used (see the warning above)",
            file=sys.stderr,
        )
        return 2
    out_dir = None if args.no_audio else Path(args.out)
    if out_dir is not None and out_dir.exists() and not out_dir.is_dir():
        print(f"hub: --out {out_dir} exists and is not a folder", file=sys.stderr)
        return 2
    timer_out.print_events(hub.events, out_dir, _emit)
    traces = []
    for i, (path, name) in enumerate(zip(paths, answer_names(paths), strict=True), 1):
        trace = replay_file(hub, path, out_dir, args.realtime, name)
        traces.append(trace)
        _emit(trace)
        _progress(i, len(paths), trace)
    timer_out.finish(hub.events, hub.settings.timers.exit_grace_s)
    lines = [summary_line(traces)]
    if sentences:
        lines += score_lines(hub.engines.rules(), traces, sentences)
    print(
        ("\n" if sys.stderr.isatty() else "") + "\n".join(f"hub: {x}" for x in lines),
        file=sys.stderr,
    )
    return 2 if any(t["status"] == "bad_input" for t in traces) else 0


def _preload_second_pass(hub) -> None:
    """Load the second recognizer's model before the first file; a failure is logged (the
    turns then report it as the second pass's own error)."""
    try:
        getattr(hub.engines.get("asr2"), "preload", lambda: None)()
    except HubError as exc:
        log.warning("second pass not preloaded: %s", exc.message)


LINE_CAP_BYTES = MAX_TEXT_CHARS * 4 + 2
"""Bytes of a stdin line kept (UTF-8 takes at most 4 a character, and the line end): a longer
line is read on to its end without being kept (``hub ask - < /dev/zero`` grew 320 MB a
second until the kernel killed it)."""
SKIP_CAP_BYTES = 64 << 20
"""Bytes read on past :data:`LINE_CAP_BYTES` looking for the line's end: none within them and
the input is no text of lines (binary, ``/dev/zero``): reading stops there."""


def _stdin_lines():
    """stdin's lines as text, each undecodable byte as U+FFFD (so :func:`text_problem`
    refuses the line), whatever the locale's error handler (strict or surrogateescape).

    A line over :data:`LINE_CAP_BYTES` is yielded as its length in bytes (an int), read to its
    end in pieces, never whole in memory; with no end within :data:`SKIP_CAP_BYTES` more, as
    ``-1``, the last item (the rest of stdin is not read)."""
    raw = getattr(sys.stdin, "buffer", None)
    if raw is None:  # a text stream put in place of stdin
        for line in sys.stdin:
            yield line.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
        return
    while data := raw.readline(LINE_CAP_BYTES):
        if len(data) < LINE_CAP_BYTES or data.endswith(b"\n"):
            yield data.decode("utf-8", "replace")
            continue
        size, skipped = len(data), b""
        while size < LINE_CAP_BYTES + SKIP_CAP_BYTES:
            skipped = raw.readline(64 * 1024)
            size += len(skipped)
            if not skipped or skipped.endswith(b"\n"):
                break
        else:
            yield -1
            return
        yield size


def _line_problem(line) -> str | None:
    """:func:`text_problem` of a stdin line from :func:`_stdin_lines` (its length when long)."""
    if line == -1:
        return (
            f"no line end within {SKIP_CAP_BYTES >> 20} MiB: not lines of text (binary input); "
            "the rest of stdin is not read"
        )
    if isinstance(line, int):
        return f"too long ({line} bytes; at most {MAX_TEXT_CHARS} characters)"
    return text_problem(line.strip())


def run_ask(args) -> int:
    """``hub ask``: one utterance (TEXT's words joined), or one per stdin line with ``-``."""
    if isinstance(args.text, list):
        args.text = " ".join(args.text)
    from hub.act import timer_out  # lazy: hub --help loads no engine part (act, audio)

    hub = make_hub(args, "ask", speak=bool(args.out))
    # The LLM (and its prompt cache) is made ready here, never inside a turn's deadline.
    hub.engines.warm(["rules", "devices"] + (["tts"] if args.out else []) + llm_warm(hub, "ask"))
    out_dir = Path(args.out) if args.out else None
    if args.text == "-":
        timer_out.print_events(hub.events, out_dir, _emit)
        bad = 0
        for n, line in enumerate(_stdin_lines(), 1):
            problem = _line_problem(line)
            if problem:  # one line on stderr, the line skipped; exit code 2 at the end
                print(f"hub: line {n}: {problem}", file=sys.stderr)
                bad += 1
            elif line.strip():
                out = str(out_dir / f"ask-{n:04d}.wav") if out_dir else None
                _emit(hub.turn_text(line.strip(), out_path=out))
        # timers up within [timers] exit_grace_s still ring
        timer_out.finish(hub.events, hub.settings.timers.exit_grace_s)
        return 2 if bad else 0
    if not args.text.strip():
        print("hub: nothing to ask: TEXT is empty", file=sys.stderr)
        return 2
    problem = text_problem(args.text.strip())
    if problem:
        print(f"hub: nothing to ask: TEXT is {problem}", file=sys.stderr)
        return 2
    out = str(out_dir / "ask.wav") if out_dir else None
    trace = hub.turn_text(args.text, out_path=out)
    if args.json:
        _emit(trace)
    else:
        print(trace["response"])
    return 0
