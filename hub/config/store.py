"""The ``[store]`` section of the settings (:class:`hub.settings.Settings` ``.store``): the
SQLite store's retention, caches, fingerprint thresholds and WAL bounds (:mod:`hub.store`)."""

from __future__ import annotations

from typing import Annotated

from pydantic import ConfigDict, Field
from pydantic.dataclasses import dataclass

_CONFIG = ConfigDict(extra="forbid", strict=True, use_attribute_docstrings=True)


@dataclass(frozen=True, config=_CONFIG)
class StoreSettings:
    """SQLite store: caches, journal, outbox."""

    path: str = ""
    """Database file; empty: one per config file (or per install with the built-in config)
    in ``$XDG_STATE_HOME/hub`` (``~/.local/state/hub``)."""
    journal_days: Annotated[float, Field(ge=0.01, le=3650)] = 30
    """Turn journal and breaker events are kept this many days."""
    cache_mb: Annotated[float, Field(ge=0.1, le=100_000)] = 20
    """Transcript and answer-audio caches together stay under this many MB (LRU eviction)."""
    fingerprint_strict: Annotated[float, Field(ge=0, le=1)] = 0.9
    """Audio fingerprint similarity (0..1) at which a cached transcript replaces ASR."""
    fingerprint_loose: Annotated[float, Field(ge=0, le=1)] = 0.76
    """Similarity at which a cached transcript is used when ASR failed (L1)."""
    maintenance_s: Annotated[float, Field(ge=1, le=86400)] = 300
    """Seconds between background prunes and WAL checkpoints."""
    wal_limit_mb: Annotated[float, Field(ge=0.1, le=100_000)] = 16
    """The WAL file is kept at most this many MB (``journal_size_limit``; a checkpoint when it is
    over)."""
    wal_check_s: Annotated[float, Field(ge=1, le=60)] = 15
    """Seconds between checks of the WAL's size (a write over the limit checks at once)."""
    txn_guard_s: Annotated[float, Field(ge=0, le=3600)] = 2.0
    """A store read or open transaction longer than this many seconds is logged; 0: off."""
    save_wait_s: Annotated[float, Field(ge=0, le=600)] = 10.0
    """When a command ends with changes the store could not take yet (it was locked by another
    process), how long it waits for the store to take them; what is still not saved then is
    said on stderr (seconds)."""
