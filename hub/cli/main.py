"""The ``hub`` command line: argparse front end; each subcommand's work lives in its module.

Exit codes (README, "Exit codes"): 0 every input handled (``no_speech`` and ``degraded``
included); 1 internal error; 2 at least one input unreadable or unsupported, or bad usage or
config; 4 audio device unavailable; 5 the user's data changed but not saved when the command
ended (in place of 0, 130, 143); 130 Ctrl-C; 143 SIGTERM (0 for the daemons: run, wyoming,
serve). Expected failures print one line, never a traceback. A SIGTERM or a second Ctrl-C
while the command ends stops its wait for a locked store at once.
"""

from __future__ import annotations

import argparse
import logging
import re
import signal
import sys

from hub import __version__
from hub.bench import suites as bench
from hub.cli import config, home, models, replay, run, serve, stats, wyoming
from hub.cli import doctor as tools
from hub.cli import say as speak
from hub.cli.args import STOP_WAITING, end_command
from hub.errors import ConfigError, DeviceUnavailableError, ExitCode, HubError

EXIT_OK, EXIT_INTERNAL, EXIT_BAD_INPUT, EXIT_DEVICE, EXIT_INTERRUPTED, EXIT_TERMINATED = (
    ExitCode.OK,
    ExitCode.INTERNAL,
    ExitCode.BAD_INPUT,
    ExitCode.DEVICE,
    ExitCode.INTERRUPTED,
    ExitCode.TERMINATED,
)
EXIT_NOT_SAVED = ExitCode.NOT_SAVED

LOSS_REPLACES = frozenset({EXIT_OK, EXIT_INTERRUPTED, EXIT_TERMINATED})
"""Exit codes that :data:`EXIT_NOT_SAVED` replaces when the user's data was lost (a stop is
no error; an error's own code is kept)."""

DAEMONS = frozenset({"run", "wyoming", "serve"})
"""Commands that serve until stopped: SIGTERM is their normal stop (exit 0)."""

DESCRIPTION = """\
hub: an offline voice hub that keeps answering.

It hears a wake word, recognizes speech (Vosk, or PocketSphinx when no Vosk model is
installed), matches Home Assistant intents, acts on the home, and answers with Piper speech.
Nothing reaches the network at run time."""

EPILOG = """\
examples:
  hub replay samples --out replies                  one JSON trace line per wav file
  hub ask "turn on the kitchen light"               text instead of audio
  hub say "Hello there" --out hello.wav             synthesize speech
  hub doctor                                        what is installed, load and heat factors
  hub config example > hub.toml                     every config key, commented
  hub home import --out home.toml                   the home as Home Assistant exposes it

exit codes: 0 ok (no_speech and degraded included), 1 internal error,
            2 unreadable/unsupported input or bad config, 3 network unreachable
            (models fetch), 4 audio device unavailable, 5 a list, timer or alarm
            changed but not saved (store locked past [store] save_wait_s; stderr
            names it; in place of 0/130/143), 130 interrupted (Ctrl-C),
            143 terminated (SIGTERM; run, wyoming and serve stop with 0)
config: --config FILE, else $HUB_CONFIG, else /etc/hub/hub.toml, else built-in defaults
        (the sample home); the microphone is [audio] input_device (see `hub doctor`)"""


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--config",
        metavar="FILE",
        help="TOML config (default: $HUB_CONFIG, /etc/hub/hub.toml, built-in)",
    )
    p.add_argument(
        "-v", "--verbose", action="count", default=0, help="log more to stderr (-v info, -vv debug)"
    )


def _inject(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--inject",
        action="append",
        default=[],
        metavar="NODE=FAULT",
        help="inject a fault: NODE in asr, rules, llm_intent, llm_answer, act, tts; "
        "FAULT in hang, slow:MS, error, garbage, crash (repeatable)",
    )


def _store(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--store",
        metavar="FILE",
        help="SQLite store (default: [store] path, "
        "else one per user and config file in ~/.local/state/hub/); ':memory:' "
        "keeps nothing",
    )
    p.add_argument(
        "--store-create", action="store_true", help="create the store's folder if it does not exist"
    )


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``hub`` with all subcommands."""
    parser = argparse.ArgumentParser(
        prog="hub",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"hub {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for module in (replay, speak, run, serve, tools, stats, config, wyoming, home, bench):
        module.add_parsers(sub, common=_common, inject=_inject, store=_store)
    models.add_models_parser(sub)
    return parser


_DASHED_VALUE = re.compile(r"-\.?\d")
"""A value that starts like a negative number ("-1h", "-5", "-.5"): argparse reads "-1h" as an
option and says only "expected one argument"."""


def _values_joined(parser: argparse.ArgumentParser, argv: list[str]) -> list[str]:
    """``argv`` with ``--opt -1h`` written ``--opt=-1h`` for each option of ``parser`` (or of
    its subcommands) that takes one value, so the option's own check says what it takes
    ("argument --since: expected an age: a positive number and a unit ...; got '-1h'")."""
    takes_value = set()
    stack = [parser]
    while stack:
        for action in stack.pop()._actions:
            if isinstance(action, argparse._SubParsersAction):
                stack.extend(action.choices.values())
            elif action.option_strings and action.nargs is None:
                takes_value.update(s for s in action.option_strings if s.startswith("--"))
    out: list[str] = []
    for i, arg in enumerate(argv):
        if arg == "--":  # what follows is words, never an option's value
            return out + argv[i:]
        if out and out[-1] in takes_value and _DASHED_VALUE.match(arg):
            out[-1] = f"{out[-1]}={arg}"
        else:
            out.append(arg)
    return out


def _parse(parser: argparse.ArgumentParser, argv: list[str]) -> argparse.Namespace:
    """``parser.parse_args(argv)``, but the words of ``hub ask``/``hub say`` may have options
    between them (joined in order), and an unknown option is reported by its subcommand's
    parser (``hub replay: error: unrecognized arguments: --bogus`` under ``hub replay``'s
    usage; argparse's own says ``hub``'s). Exits 2 on a usage error, as argparse does."""
    args, extra = parser.parse_known_args(argv)
    words = getattr(args, "text", None)
    if extra and isinstance(words, list) and not any(e.startswith("-") for e in extra):
        args.text, extra = words + extra, []  # "hub ask turn on --json the light": in order
    if extra:
        subparsers = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        owner = subparsers.choices.get(args.command, parser)
        owner.error(f"unrecognized arguments: {' '.join(extra)} (see {owner.prog} --help)")
    return args


def _setup_logging(verbose: int) -> None:
    level = logging.WARNING if verbose == 0 else logging.INFO if verbose == 1 else logging.DEBUG
    logging.basicConfig(
        level=level, stream=sys.stderr, format="hub: %(levelname)s %(name)s: %(message)s"
    )


class Terminated(BaseException):
    """SIGTERM, raised in the main thread (like KeyboardInterrupt for Ctrl-C) so a command
    unwinds and closes what it opened (:func:`hub.cli.args.end_command`)."""


def _raise_terminated(signum, frame) -> None:
    raise Terminated


def _on_signal(signum: int, handler):
    """Install ``handler`` for ``signum``; the previous one, or None off the main thread."""
    try:
        return signal.signal(signum, handler)
    except (ValueError, OSError):  # not the main thread, or no signals here
        return None


def _on_sigterm(handler):
    """Install ``handler`` for SIGTERM; the previous one, or None off the main thread."""
    return _on_signal(signal.SIGTERM, handler)


def main(argv: list[str] | None = None) -> int:
    """Run ``hub`` with ``argv``; returns the exit code.

    However the command ends (normally, an error, Ctrl-C, SIGTERM) what it opened is closed:
    timer threads, then stores (what they hold written, waiting for a locked file; WAL
    checkpointed, row counts recorded beside them: BC-33). The user's data not saved then
    gives :data:`EXIT_NOT_SAVED` in place of 0, 130 or 143.
    """
    parser = build_parser()
    args = _parse(parser, _values_joined(parser, sys.argv[1:] if argv is None else argv))
    _setup_logging(getattr(args, "verbose", 0))
    previous = _on_sigterm(_raise_terminated)  # the daemons install their own while they serve
    try:
        code = _run(args)
    except BaseException:
        _end(previous)
        raise
    if code in (EXIT_INTERRUPTED, EXIT_TERMINATED):  # a stop signal ended the command:
        STOP_WAITING.set()  # what waits in memory gets one try, no wait for a locked store
    lost = _end(previous)
    return EXIT_NOT_SAVED if lost and code in LOSS_REPLACES else code


def _stop_waiting(signum, frame) -> None:
    """A SIGTERM or Ctrl-C while the command ends: the stores stop waiting for a locked file
    (what is not saved is said, one line); a further one has its usual effect."""
    STOP_WAITING.set()
    if signum == signal.SIGINT:
        _on_signal(signal.SIGINT, signal.default_int_handler)


def _end(previous) -> list[str]:
    """:func:`hub.cli.args.end_command` with SIGTERM and SIGINT ending any wait for a locked
    store (:func:`_stop_waiting`; a second SIGTERM is ignored, a second Ctrl-C interrupts);
    the labels of the user's data not saved."""
    _on_sigterm(_stop_waiting)
    interrupt = _on_signal(signal.SIGINT, _stop_waiting)
    try:
        return end_command()
    finally:
        _on_sigterm(previous if previous is not None else signal.SIG_DFL)
        if interrupt is not None:
            _on_signal(signal.SIGINT, interrupt)


def _run(args) -> int:
    """``args.func(args)`` with every expected failure mapped to its exit code."""
    try:
        return int(args.func(args) or 0)
    except Terminated:
        print("hub: terminated", file=sys.stderr)
        return EXIT_OK if args.command in DAEMONS else EXIT_TERMINATED
    except DeviceUnavailableError as exc:
        print(f"hub: {exc.message}", file=sys.stderr)
        return EXIT_DEVICE
    except ConfigError as exc:
        print(f"hub: config: {exc.message}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except HubError as exc:
        print(f"hub: {exc.message}", file=sys.stderr)
        return EXIT_BAD_INPUT if exc.kind == "bad_input" else EXIT_INTERNAL
    except KeyboardInterrupt:
        print("hub: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        return EXIT_OK
    except OSError as exc:  # a path the user gave: missing folder, no permission, ...
        where = f": {exc.filename}" if exc.filename else ""
        print(f"hub: {exc.strerror or exc}{where}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except Exception as exc:
        if getattr(args, "verbose", 0) >= 2:
            raise
        print(
            f"hub: internal error: {type(exc).__name__}: {exc} (run with -vv for details)",
            file=sys.stderr,
        )
        return EXIT_INTERNAL
