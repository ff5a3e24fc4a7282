"""Where the hub keeps things: the data it ships, and the per-user cache, state and data folders.

The per-user folders follow the XDG base directory spec through ``platformdirs``
(``$XDG_CACHE_HOME/hub``, else ``~/.cache/hub``; likewise state and data).

Files a user names (the config, an audio file, ``--expect``, a FAQ or sentence file, a token
file) are opened with :func:`open_regular` and read with a cap (:func:`read_capped`,
:func:`read_user_text`): a device, FIFO or socket (``/dev/zero``, a named pipe) is refused
before anything is read, and nothing is read without limit.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import BinaryIO

import platformdirs

PACKAGE_DIR = Path(__file__).resolve().parent
DATA_DIR = PACKAGE_DIR / "data"
"""Data files that ship inside the package (sample home, FAQ, placeholder speech, manifests)."""


def cache_dir(*parts: str) -> Path:
    """``$XDG_CACHE_HOME/hub/<parts>`` (``~/.cache/hub``): things that can be rebuilt."""
    return Path(platformdirs.user_cache_dir("hub")).joinpath(*parts)


def state_dir(*parts: str) -> Path:
    """``$XDG_STATE_HOME/hub/<parts>`` (``~/.local/state/hub``): the store."""
    return Path(platformdirs.user_state_dir("hub")).joinpath(*parts)


def data_dir(*parts: str) -> Path:
    """``$XDG_DATA_HOME/hub/<parts>`` (``~/.local/share/hub``): downloaded models."""
    return Path(platformdirs.user_data_dir("hub")).joinpath(*parts)


MAX_TEXT_BYTES = 16 << 20
"""Largest text file the hub reads from a path a user gives (config, FAQ, sentences,
``--expect``, token file, model manifest): a bigger one is refused, never read whole."""


class NotRegularFileError(OSError):
    """The path is a device, FIFO or socket (``/dev/zero``, a named pipe): reading it may
    never end, so it is refused before a byte is read. ``strerror`` is "not a regular file"."""


class FileTooLargeError(OSError):
    """The file is larger than the reader's limit; ``strerror`` names the limit."""


def open_regular(path: str | Path) -> BinaryIO:
    """``path`` opened for binary reading, only when it is a regular file (symlinks
    followed). The open never blocks: a FIFO is opened non-blocking, then refused.

    Raises:
        NotRegularFileError: a device, FIFO or socket.
        OSError: it cannot be opened (missing, no permission; a folder: EISDIR).
    """
    _check_regular(os.stat(path).st_mode, path)  # a socket cannot even be opened
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        _check_regular(os.fstat(fd).st_mode, path)  # what was opened, if it changed since
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return os.fdopen(fd, "rb")


def _check_regular(mode: int, path) -> None:
    if stat.S_ISDIR(mode):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
    if not stat.S_ISREG(mode):
        raise NotRegularFileError(errno.EINVAL, "not a regular file", str(path))


def read_capped(handle: BinaryIO, limit: int, path: str | Path) -> bytes:
    """At most ``limit`` bytes of an open file, read to its end.

    Raises:
        FileTooLargeError: more than ``limit`` bytes are there (only ``limit + 1`` are read).
    """
    data = handle.read(limit + 1)
    if len(data) > limit:
        raise FileTooLargeError(errno.EFBIG, f"larger than {limit / 2**20:g} MB", str(path))
    return data


def read_user_text(path: str | Path, limit: int = MAX_TEXT_BYTES) -> str:
    """The UTF-8 text of a file a user named, a leading byte-order mark dropped (as Windows
    editors write it).

    Raises:
        NotRegularFileError, FileTooLargeError, OSError: see :func:`open_regular` and
            :func:`read_capped`; ``strerror`` is one line for the user.
        UnicodeDecodeError: not UTF-8.
    """
    with open_regular(path) as handle:
        return read_capped(handle, limit, path).decode("utf-8-sig")
