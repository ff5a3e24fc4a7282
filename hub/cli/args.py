"""What the commands share about their arguments: the settings, the store and the Hub built
from them, and the audio files a list of paths names (``hub replay``, ``hub ask``, ``hub run``,
``hub wyoming``, ``hub stats``, ``hub doctor``).
"""

from __future__ import annotations

import dataclasses
import logging
import threading
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from hub.errors import BadInputError
from hub.settings import Settings, config_path, load_settings

if TYPE_CHECKING:
    from hub.core.hub import Hub

log = logging.getLogger("hub.cli.args")


AUDIO_SUFFIXES = (
    ".wav",
    ".wave",
    ".flac",
    ".mp3",
    ".ogg",
    ".oga",
    ".opus",
    ".m4a",
    ".aac",
    ".aif",
    ".aiff",
    ".wma",
    ".webm",
    ".pcm",
    ".raw",
    ".au",
    ".snd",
    ".aifc",
    ".caf",
    ".amr",
    ".3gp",
    ".mka",
    ".mp2",
    ".mp4",
    ".ac3",
    ".wv",
    ".ape",
    ".spx",
)
"""Files a folder contributes (sox's and ffmpeg's audio file types, headerless ``.pcm`` and
``.raw`` captures included): WAV is read; the others are reported one by one as unsupported
(``bad_input``), never skipped in silence."""


def expand_paths(paths: list[str]) -> list[Path]:
    """Files as given, folders as their audio files (:data:`AUDIO_SUFFIXES`, any case) sorted
    by name (not recursive)."""
    out: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            out.extend(
                sorted(
                    p
                    for p in path.iterdir()
                    if p.suffix.lower() in AUDIO_SUFFIXES and not p.is_dir()
                )
            )
        else:
            out.append(path)
    return out


def store_location(args, settings) -> str:
    """The store file: ``--store``, else ``[store] path``, else the user's store for this
    config file (:func:`hub.store.db.default_store_path`).

    A given file that is damaged (not even its SQLite header is left: a torn first page)
    is opened like the default one: the store moves it aside and salvages it (BC-33). Only a
    text file (a config or notes file named by mistake) is refused: it is no store, and
    moving it aside would move someone's file.

    Raises:
        BadInputError: the folder of a ``--store`` or ``[store] path`` does not exist and
            ``--store-create`` was not given (a typo must not create folders); the file is
            a text file, not a store.
    """
    # lazy: hub --help imports every command's module; the store (numpy, SQLite) only here
    from hub.store.db import default_store_path

    given = getattr(args, "store", None) or settings.store.path
    if not given:
        path = default_store_path(config_path(getattr(args, "config", None)))
        log.info("store %s", path)
        return str(path)
    if given == ":memory:":
        return given
    path = Path(given).expanduser()
    if path.exists() and not path.is_file():
        raise BadInputError(
            f"store {given}: is a folder or not a regular file (give a file "
            "name, e.g. {given}/hub.db)".replace("{given}", str(given).rstrip("/"))
        )
    if path.is_file() and path.stat().st_size and not _is_sqlite(path) and _is_text(path):
        raise BadInputError(
            f"store {given}: not a hub store (a text file, not an SQLite file); give a new "
            "file name or an existing store"
        )
    if not path.parent.is_dir() and not getattr(args, "store_create", False):
        raise BadInputError(
            f"store {given}: folder {path.parent} does not exist (check the "
            "path, or add --store-create to create it)"
        )
    if not path.exists():
        log.info("new store %s (no such file before)", path)
    return str(path)


def _is_sqlite(path: Path) -> bool:
    """True when ``path`` starts like an SQLite database (its 16-byte header)."""
    try:
        with open(path, "rb") as f:
            return f.read(16) == b"SQLite format 3\x00"
    except OSError:
        return True  # unreadable: the store itself reports it and runs without it


def _is_text(path: Path) -> bool:
    """True when ``path`` starts like a text file (UTF-8, no NUL byte in its first 4 KB): a
    damaged database is binary."""
    try:
        with open(path, "rb") as f:
            head = f.read(4096)
    except OSError:
        return False
    if b"\0" in head:
        return False
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.start >= len(head) - 3  # a character cut at the 4 KB boundary
    return True


def settings_for(args) -> Settings:
    """The settings of a command: its config file with ``--engine`` and ``--no-llm`` applied.

    Raises:
        hub.errors.ConfigError: the config file is unreadable or wrong.
    """
    settings = load_settings(args.config)
    if getattr(args, "engine", None):
        settings = dataclasses.replace(
            settings, asr=dataclasses.replace(settings.asr, engine=args.engine)
        )
    if getattr(args, "no_llm", False):
        settings = dataclasses.replace(
            settings, llm=dataclasses.replace(settings.llm, intents_on=(), answers_on=())
        )
    return settings


def make_hub(args, entry: str, *, speak: bool) -> Hub:
    """Build the :class:`hub.core.hub.Hub` for a command's arguments; its timer thread and its
    store are closed when the command ends (:func:`end_command`). A replay's timers, alarms and
    reminders are kept in memory only (``keep_timers=False``): a recorded "set a timer" must
    never ring later in ``hub run``, which shares the store.

    Raises:
        hub.errors.ConfigError: the config file is unreadable or wrong.
        BadInputError: a ``--store`` whose folder does not exist (see :func:`store_location`).
    """
    # lazy: hub --help imports every command's module; the Hub (langgraph) only here
    from hub.core.hub import Hub

    settings = settings_for(args)
    store = open_cli_store(args, settings, background=entry == "run")
    hub = Hub(
        settings,
        entry=entry,
        store=store,
        speak=speak,
        inject=args.inject,
        keep_timers=entry != "replay",
    )
    _AT_END.append(hub.events.close)  # before the store is finished (last registered first)
    return hub


_AT_END: list[Callable[[], object]] = []
"""What :func:`end_command` runs, last registered first."""

STOP_WAITING = threading.Event()
"""Set (by :func:`hub.cli.main.main`'s handler of a SIGTERM or a second Ctrl-C while the
command ends): the stores stop waiting for a locked file (:func:`hub.store.retention.finish`)."""


def open_cli_store(args, settings: Settings, *, background: bool = False):
    """The :class:`hub.store.db.Store` of a command (:func:`store_location`), finished when the
    command ends, however it ends (:func:`end_command`).

    Raises:
        BadInputError: see :func:`store_location`.
    """
    # lazy: hub --help imports every command's module; the store (numpy, SQLite) only here
    from hub.store.db import open_store
    from hub.store.retention import finish

    store = open_store(store_location(args, settings), settings.store, background=background)
    _AT_END.append(partial(finish, store, STOP_WAITING.is_set))
    return store


def end_command() -> list[str]:
    """Close what the command opened, last first, on every exit path (a normal end, an error,
    Ctrl-C, SIGTERM; :func:`hub.cli.main.main`): each Hub's timer thread (an alert being
    synthesized is finished: onnxruntime aborts the process when the interpreter ends under a
    synthesis), then each store (:func:`hub.store.retention.finish`: what it holds written,
    waiting for a locked file until ``[store] save_wait_s`` or :data:`STOP_WAITING`; WAL
    checkpointed, row counts recorded in ``<db>.rows``, so a store later found emptied or
    damaged is reported with the rows it lost, BC-33). Returns the labels of the user's data
    not saved (lost). Never raises."""
    lost: list[str] = []
    while _AT_END:
        try:
            done = _AT_END.pop()()
        except Exception as exc:
            log.warning("not closed cleanly at the end: %s", exc)
            continue
        if isinstance(done, list):
            lost.extend(done)
    return lost


def answer_names(paths: list[Path]) -> list[str]:
    """A distinct answer file name per input: the input's name when it is a WAV (``UPPER.WAV``
    stays ``UPPER.WAV``), else ``<stem>.wav``; then ``<stem>-2.wav``, ..."""
    seen: dict[str, int] = {}
    names = []
    for path in paths:
        suffix = path.suffix if path.suffix.lower() in (".wav", ".wave") else ".wav"
        n = seen[path.stem.lower()] = seen.get(path.stem.lower(), 0) + 1
        names.append(f"{path.stem}{suffix}" if n == 1 else f"{path.stem}-{n}{suffix}")
    return names
