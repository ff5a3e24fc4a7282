"""The in-memory LSH index of the stored fingerprints (one per store, all contexts).

Buckets ``(context, band hash) -> row ids`` and the compact vectors (one matrix), loaded from
the file once and kept current: this connection's inserts are added as they are made, and a
change by any other connection (``PRAGMA data_version``, which SQLite bumps on another
connection's commit: another process, the maintenance thread's evictions) reloads it. A lookup
then needs one query by primary key for the frames of the few best candidates.
"""

from __future__ import annotations

import threading

import numpy as np


class FingerprintIndex:
    """LSH buckets and vectors of the ``fingerprints`` table (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._version: tuple | None = None
        self._clear()

    def _clear(self) -> None:
        self._buckets: dict[tuple[str, int], list[int]] = {}
        self._rows: dict[int, int] = {}
        self._matrix = np.zeros((0, 0), dtype=np.float32)

    def _put_vector(self, fid: int, vector: np.ndarray) -> None:
        n = len(self._rows)
        if n == len(self._matrix):  # grow by doubling
            grown = np.zeros((max(64, 2 * n), len(vector)), dtype=np.float32)
            if n:
                grown[:n] = self._matrix[:n]
            self._matrix = grown
        self._matrix[n] = vector
        self._rows[fid] = n

    def _load(self, db) -> None:
        self._clear()
        for fid, vector in db.execute("SELECT id, vector FROM fingerprints"):
            self._put_vector(fid, np.frombuffer(vector, dtype=np.float32))
        for context, band, fid in db.execute("SELECT context, band_hash, fp_id FROM fp_bands"):
            self._buckets.setdefault((context, band), []).append(fid)

    def current(self, db) -> None:
        """Reload when another connection changed the file since the last look.

        Raises:
            sqlite3.Error: the file cannot be read.
        """
        version = (id(db.conn), db.execute("PRAGMA data_version").fetchone()[0])
        with self._lock:
            if version != self._version:
                self._load(db)
                self._version = version

    def add(self, context: str, fid: int, vector: np.ndarray, bands) -> None:
        """Note this connection's own insert (SQLite does not bump its data_version)."""
        with self._lock:
            self._put_vector(fid, vector)
            for b in bands:
                self._buckets.setdefault((context, b), []).append(fid)

    def candidates(self, context: str, vector: np.ndarray, bands, n: int) -> list[int]:
        """Ids of the ``n`` rows sharing a band with ``bands`` that are most cosine-similar."""
        with self._lock:
            ids = list({fid for b in bands for fid in self._buckets.get((context, b), ())
                        if fid in self._rows})
            if not ids:
                return []
            scores = self._matrix[[self._rows[i] for i in ids]] @ vector
        return [ids[i] for i in np.argsort(-scores)[:n]]
