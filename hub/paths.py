"""Where the hub keeps things: the data it ships, and the per-user cache, state and data folders.

The per-user folders follow the XDG base directory spec through ``platformdirs``
(``$XDG_CACHE_HOME/hub``, else ``~/.cache/hub``; likewise state and data).
"""

from __future__ import annotations

from pathlib import Path

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
