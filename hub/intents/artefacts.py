"""Built artefacts kept on disk between runs, keyed by a hash of everything they are built from.

Parsing the hassil sentence templates and reading the fuzzy matcher's YAML vocabulary take
about 0.3 s of every start (2-core machine; see BENCHMARKS.md "start-up"); their results are
plain Python objects, so they are pickled under ``$XDG_CACHE_HOME/hub/artefacts/`` and
loaded in milliseconds next time. The key is a SHA-256 of the inputs (the sentence data, the
library versions), so a changed home, sentence file or library builds anew; an unreadable or
stale file is rebuilt and replaced, never trusted. The folder is the user's own cache, which
only the hub writes (pickle files must not come from elsewhere).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import pickle
import tempfile
from collections.abc import Callable
from importlib import metadata
from typing import TypeVar

from hub.paths import cache_dir

log = logging.getLogger("hub.intents")

T = TypeVar("T")

FORMAT = 1
"""Bumped when what is stored changes shape."""


def key_of(kind: str, inputs, packages: tuple[str, ...] = ()) -> str:
    """SHA-256 hex of ``kind``, JSON of ``inputs`` and the installed versions of ``packages``."""
    versions = {p: _version(p) for p in packages}
    text = json.dumps([FORMAT, kind, inputs, versions], sort_keys=True, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "?"


def cached(kind: str, key: str, build: Callable[[], T]) -> T:
    """The artefact ``kind`` for ``key`` from the cache, else ``build()`` (then stored).

    A cache that cannot be read or written is logged at debug level and ignored: the result
    is the same, only slower.
    """
    path = cache_dir("artefacts", f"{kind}-{key[:32]}.pickle")
    try:
        with open(path, "rb") as f:
            return pickle.load(f)
    except FileNotFoundError:
        pass
    except Exception as exc:
        log.debug("cached %s unreadable (%s): rebuilding", kind, exc)
    value = build()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".part")
        with os.fdopen(fd, "wb") as f:
            pickle.dump(value, f, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, path)
    except Exception as exc:
        log.debug("cannot cache %s: %s", kind, exc)
    return value
